#pragma once
// Matching of added tokens (<|im_start|>, <think>, ...) in text, as HF tokenizers does it:
// scanning left to right, at the first position where any token matches the longest one wins
// (leftmost-longest, non-overlapping). Then, per matched token:
//   single_word  the match is dropped (the text stays ordinary text) when the character before
//                or after it is a word character (letter, number or '_');
//   lstrip       the match also swallows the whitespace directly before it (not reaching back
//                into the previous match);
//   rstrip       the match also swallows the whitespace directly after it.
// Whitespace is the Unicode White_Space property. A word character is approximated as general
// category L* or N* or '_' (Rust's char::is_alphanumeric also counts Other_Alphabetic marks;
// no Qwen token uses single_word).
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/tokenizer_json.h"

namespace lathe::tokenizer {

struct AddedTokenMatch {
  size_t begin;  // byte span in the text, including stripped whitespace
  size_t end;
  int32_t id;
};

class AddedTokenMatcher {
 public:
  AddedTokenMatcher() = default;
  // `tokens` are the tokens this matcher looks for; `contents[i]` is the text searched for token
  // i (its content, or its normalised content for a matcher run on normalised text).
  AddedTokenMatcher(const std::vector<AddedTokenSpec>& tokens, const std::vector<std::string>& contents);

  bool empty() const { return entries_.empty(); }
  // Appends the matches in `text` (valid UTF-8), in order, to `matches`.
  void find(std::string_view text, std::vector<AddedTokenMatch>& matches) const;

 private:
  struct Entry {
    std::string content;
    int32_t id;
    bool lstrip, rstrip, single_word;
  };
  std::vector<Entry> entries_;
  // For each first byte, indices into entries_ ordered by content length, longest first.
  std::array<std::vector<uint32_t>, 256> by_first_byte_;
  std::array<bool, 256> starts_{};  // some token starts with this byte
};

}  // namespace lathe::tokenizer
