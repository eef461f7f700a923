#pragma once
// UTF-8 helpers shared by the tokenizer: validation, lossy decoding with U+FFFD replacement and
// a byte-level streaming decoder.
//
// Replacement policy ("maximal subpart", Unicode ch. 3 / W3C; the policy of Rust's
// String::from_utf8_lossy, which HF tokenizers' decode uses): every maximal prefix of a
// well-formed sequence that cannot be completed, and every byte that cannot start one, becomes
// one U+FFFD. The policy is prefix-determined, so a stream decoder that emits a code point as soon
// as it is complete and a replacement as soon as a sequence is known to be broken produces exactly
// the lossy decoding of the whole byte string, however the bytes were split.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace lathe::tokenizer {

inline constexpr std::string_view kReplacementChar = "\xEF\xBF\xBD";  // U+FFFD

// Byte offset of the first ill-formed byte in `text`, or nullopt when it is valid UTF-8.
std::optional<size_t> find_invalid_utf8(std::string_view text);

// `bytes` decoded with U+FFFD replacement (identical to String::from_utf8_lossy).
std::string utf8_lossy(std::string_view bytes);

// Appends the UTF-8 encoding of code point `cp` (< 0x110000, not a surrogate) to `out`.
void append_utf8(std::string& out, char32_t cp);

// Byte-level streaming decoder. push() returns the text that is final after these bytes: complete
// code points and replacements for sequences already known to be broken; an incomplete but still
// possibly valid tail (at most 3 bytes) is held back. flush() returns the held tail as one U+FFFD
// (or "" when nothing is held) and resets. Concatenating every push() and the flush() equals
// utf8_lossy() of all bytes pushed, and every returned piece is valid UTF-8.
class Utf8StreamDecoder {
 public:
  std::string push(std::string_view bytes);
  std::string flush();
  // Bytes held back waiting for the rest of a sequence (0..3).
  size_t pending_bytes() const { return pending_.size(); }

 private:
  std::string pending_;
};

}  // namespace lathe::tokenizer
