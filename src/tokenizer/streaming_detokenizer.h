#pragma once
// Incremental detokenization for streamed generation. Feed token ids one at a time; each push()
// returns the text that became final: complete UTF-8 only, a token that ends inside a multi-byte
// character is held until the character completes (or is known to be broken, which yields
// U+FFFD exactly where Tokenizer::decode puts it). flush() at the end of the sequence returns
// the held remainder (an incomplete character becomes one U+FFFD).
//
// Contract: the concatenation of every push() and the final flush() equals
// tokenizer.decode(all ids, skip_special), and every returned piece is valid UTF-8.
// One instance per sequence; not thread-safe itself (the Tokenizer it reads is).
#include <cstdint>
#include <span>
#include <string>

#include "tokenizer/tokenizer.h"
#include "tokenizer/utf8.h"

namespace lathe::tokenizer {

class StreamingDetokenizer {
 public:
  explicit StreamingDetokenizer(Tokenizer tokenizer, bool skip_special = false)
      : tokenizer_(std::move(tokenizer)), skip_special_(skip_special) {}

  std::string push(int32_t id);
  std::string push(std::span<const int32_t> ids);
  std::string flush();
  // Bytes held back waiting for the rest of a character (0..3).
  size_t pending_bytes() const { return utf8_.pending_bytes(); }

 private:
  Tokenizer tokenizer_;
  bool skip_special_;
  Utf8StreamDecoder utf8_;
};

}  // namespace lathe::tokenizer
