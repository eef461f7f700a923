#pragma once
// Shared helpers of the tokenizer unit tests: paths of the fixtures and a reader for the
// reference files written by tools/make_tokenizer_refs.py (HF tokenizers output).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tokenizer/tokenizer.h"

namespace lathe::tokenizer::test {

struct Reference {
  std::optional<std::string> text;  // absent in the decode-only refs
  std::vector<int32_t> ids;
  std::string decode;
  std::string decode_skip_special;
};

struct ReferenceFile {
  std::string tokenizers_version;
  std::string tokenizer;  // path relative to the source root
  std::vector<Reference> records;
};

std::string fixture_path(const std::string& relative);  // under tests/fixtures
std::string qwen3_dir();  // shared/tokenizers/qwen3, or $LATHE_QWEN3_TOKENIZER_DIR
std::string tiny_dir();                                  // tests/fixtures/tiny_tokenizer

ReferenceFile read_references(const std::string& relative_path);

// The Qwen3 tokenizer, loaded once per test binary (loading parses an 11 MB JSON file).
const Tokenizer& qwen3();

// Printable form of a string for failure messages (non-ASCII and controls escaped).
std::string escaped(const std::string& text);

}  // namespace lathe::tokenizer::test
