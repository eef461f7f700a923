#pragma once
// A byte-level BPE tokenizer loaded from a Hugging Face tokenizer.json (tokenizer_json.h lists
// what is supported). Encoding follows HF tokenizers' `encode(text, add_special_tokens=False)`:
//   1. added tokens with normalized=false are matched in the raw text (added_tokens.h);
//   2. the text between them is normalised (NFC for Qwen3); added tokens with normalized=true
//      are then matched in the normalised text;
//   3. the remaining text is split by the Split regex(es) (pre_tokenizer.h);
//   4. each piece is BPE-encoded over its bytes (bpe.h).
// Decoding follows HF `decode(ids, skip_special_tokens)`: each token contributes its bytes (a
// vocabulary token's byte-level symbols mapped back to bytes; a token holding any other code
// point contributes its text unchanged), ids the tokenizer does not know contribute nothing, and
// the bytes are read as UTF-8 with U+FFFD replacement (utf8.h).
//
// A Tokenizer is cheap to copy (shared immutable state) and safe to use from many threads.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/tokenizer_json.h"

namespace lathe::tokenizer {

class Tokenizer {
 public:
  // `path` is a checkpoint directory (its tokenizer.json is read) or a tokenizer.json file.
  static Tokenizer load(const std::filesystem::path& path);
  // Builds from the text of a tokenizer.json; `source` names it in error messages.
  static Tokenizer from_json(std::string_view json_text, const std::string& source);

  // Token ids of `text`; no special tokens are added. Throws lathe::Error when `text` is not
  // valid UTF-8 (naming the byte offset).
  std::vector<int32_t> encode(std::string_view text) const;

  // Text of `ids`. skip_special drops added tokens flagged special (for Qwen3: <|endoftext|>,
  // <|im_start|>, <|im_end|>, ...; not <think> or <tool_call>). Unknown ids are skipped.
  std::string decode(std::span<const int32_t> ids, bool skip_special = false) const;

  // One more than the largest id the tokenizer knows (vocabulary and added tokens). Ids below it
  // may still be unknown when the file leaves holes.
  int32_t vocab_size() const;
  // Id of a token written as in tokenizer.json: an added token's content ("<|im_end|>") or a
  // vocabulary entry in byte-level form ("Ġthe").
  std::optional<int32_t> token_id(std::string_view token) const;
  // The inverse of token_id (HF id_to_token). Throws lathe::Error for an unknown id.
  std::string token_text(int32_t id) const;
  // The bytes `id` contributes to decode() before UTF-8 decoding (may be a partial character);
  // empty for an unknown id.
  std::string_view token_bytes(int32_t id) const;
  bool is_known(int32_t id) const;
  bool is_added(int32_t id) const;
  bool is_special(int32_t id) const;
  // The added tokens, in tokenizer.json order.
  const std::vector<AddedTokenSpec>& added_tokens() const;
  // Where the tokenizer was loaded from.
  const std::string& source() const;

 private:
  struct Impl;
  explicit Tokenizer(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<const Impl> impl_;
};

}  // namespace lathe::tokenizer
