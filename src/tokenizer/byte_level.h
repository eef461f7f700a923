#pragma once
// The GPT-2 byte-to-unicode map of byte-level BPE. Every byte gets a printable code point:
// bytes 0x21-0x7E, 0xA1-0xAC and 0xAE-0xFF map to the code point of the same value; the other 68
// bytes, in ascending order, map to U+0100, U+0101, ... (space 0x20 -> U+0120 'Ġ', newline 0x0A
// -> U+010A 'Ċ'). Vocabulary strings are written in these code points.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace lathe::tokenizer {

class ByteLevelMap {
 public:
  // The map is a process-wide constant.
  static const ByteLevelMap& get();

  // Code point that stands for `byte`.
  char32_t code_point(uint8_t byte) const { return to_cp_[byte]; }
  // UTF-8 of code_point(byte) (1 or 2 bytes).
  const std::string& symbol(uint8_t byte) const { return symbols_[byte]; }
  // Byte a code point stands for, or nullopt when `cp` is not one of the 256 symbols.
  std::optional<uint8_t> byte(char32_t cp) const;

  // Raw bytes -> vocabulary form ("a b" -> "aĠb").
  std::string encode(std::string_view bytes) const;
  // Vocabulary form -> raw bytes, or nullopt when `text` holds a code point that is not a symbol
  // or is not valid UTF-8 (HF's ByteLevel decoder then keeps the token's text as it is).
  std::optional<std::string> decode(std::string_view text) const;

 private:
  ByteLevelMap();
  std::array<char32_t, 256> to_cp_{};
  std::array<std::string, 256> symbols_{};
  std::array<int16_t, 0x144> from_cp_{};  // every symbol is < U+0144; -1 = not a symbol
};

}  // namespace lathe::tokenizer
