#include "tokenizer/byte_level.h"

#include "tokenizer/utf8.h"

namespace lathe::tokenizer {

ByteLevelMap::ByteLevelMap() {
  from_cp_.fill(-1);
  char32_t next_extra = 0x100;
  for (int b = 0; b < 256; ++b) {
    bool printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
    char32_t cp = printable ? static_cast<char32_t>(b) : next_extra++;
    to_cp_[b] = cp;
    append_utf8(symbols_[b], cp);
    from_cp_[cp] = static_cast<int16_t>(b);
  }
}

const ByteLevelMap& ByteLevelMap::get() {
  static const ByteLevelMap map;
  return map;
}

std::optional<uint8_t> ByteLevelMap::byte(char32_t cp) const {
  if (cp >= from_cp_.size() || from_cp_[cp] < 0) return std::nullopt;
  return static_cast<uint8_t>(from_cp_[cp]);
}

std::string ByteLevelMap::encode(std::string_view bytes) const {
  std::string out;
  out.reserve(bytes.size() * 2);
  for (char c : bytes) out += symbols_[static_cast<uint8_t>(c)];
  return out;
}

std::optional<std::string> ByteLevelMap::decode(std::string_view text) const {
  std::string out;
  out.reserve(text.size());
  const auto* data = reinterpret_cast<const uint8_t*>(text.data());
  size_t pos = 0;
  while (pos < text.size()) {
    // Symbols are U+0021..U+0143: one byte (< 0x80) or two bytes with lead C2..C5.
    char32_t cp = 0;
    if (data[pos] < 0x80) {
      cp = data[pos];
      pos += 1;
    } else if (data[pos] >= 0xC2 && data[pos] <= 0xC5 && pos + 1 < text.size() && (data[pos + 1] & 0xC0) == 0x80) {
      cp = (static_cast<char32_t>(data[pos] & 0x1F) << 6) | (data[pos + 1] & 0x3F);
      pos += 2;
    } else {
      return std::nullopt;
    }
    std::optional<uint8_t> b = byte(cp);
    if (!b) return std::nullopt;
    out.push_back(static_cast<char>(*b));
  }
  return out;
}

}  // namespace lathe::tokenizer
