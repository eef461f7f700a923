#pragma once
// tokenizer.json (Hugging Face `tokenizers` serialisation) parsed and checked against what lathe
// implements: a byte-level BPE model. Anything else is refused with an error naming the file,
// the field and the unsupported value, never silently approximated.
//
// Supported:
//   model            {"type": "BPE"}, merges as "a b" strings or ["a", "b"] pairs, no dropout,
//                    no continuing_subword_prefix / end_of_word_suffix, ignore_merges honoured;
//                    every one of the 256 byte-level symbols must be in the vocabulary.
//   added_tokens     content, id, special, lstrip, rstrip, single_word, normalized.
//   normalizer       null, NFC, NFD, NFKC, NFKD, or a Sequence of those.
//   pre_tokenizer    Sequence [Split(Regex, behavior Isolated, invert false)..., ByteLevel(
//                    add_prefix_space false, use_regex false)], or a lone ByteLevel with
//                    use_regex false. ByteLevel must be last.
//   decoder          ByteLevel (or null, read as ByteLevel).
//   post_processor   ignored: lathe's encode never adds special tokens.
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace lathe::tokenizer {

enum class NormalForm { kNfc, kNfd, kNfkc, kNfkd };

struct AddedTokenSpec {
  int32_t id = 0;
  std::string content;
  bool special = false;      // skipped by decode(skip_special=true)
  bool lstrip = false;       // the match swallows whitespace on its left
  bool rstrip = false;       // the match swallows whitespace on its right
  bool single_word = false;  // matches only when not touching a word character
  bool normalized = false;   // matched in the normalised text instead of the raw text
};

struct TokenizerSpec {
  std::string source;  // file path, for messages
  std::vector<std::pair<std::string, int32_t>> vocab;     // byte-level form -> id
  std::vector<std::pair<std::string, std::string>> merges;  // by rank (index)
  bool ignore_merges = false;
  std::vector<AddedTokenSpec> added_tokens;
  std::vector<NormalForm> normalizers;     // applied in order
  std::vector<std::string> split_regexes;  // Split pre-tokenizers, applied in order
};

// Parses and validates the text of a tokenizer.json; `source` names it in errors.
TokenizerSpec parse_tokenizer_json(std::string_view json_text, const std::string& source);

}  // namespace lathe::tokenizer
