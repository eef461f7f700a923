#include "test_support.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <fstream>
#include <stdexcept>

namespace lathe::tokenizer::test {

std::string fixture_path(const std::string& relative) { return std::string(LATHE_FIXTURES_DIR) + "/" + relative; }
std::string qwen3_dir() {
  const char* override_dir = std::getenv("LATHE_QWEN3_TOKENIZER_DIR");
  return override_dir != nullptr ? override_dir : std::string(LATHE_SHARED_DIR) + "/tokenizers/qwen3";
}
std::string tiny_dir() { return fixture_path("tiny_tokenizer"); }

ReferenceFile read_references(const std::string& relative_path) {
  std::string path = fixture_path(relative_path);
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path);
  ReferenceFile file;
  std::string line;
  bool header = true;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    nlohmann::json record = nlohmann::json::parse(line);
    if (header) {
      file.tokenizers_version = record.at("tokenizers_version").get<std::string>();
      file.tokenizer = record.at("tokenizer").get<std::string>();
      header = false;
      continue;
    }
    Reference ref;
    if (record.contains("text")) ref.text = record["text"].get<std::string>();
    ref.ids = record.at("ids").get<std::vector<int32_t>>();
    ref.decode = record.at("decode").get<std::string>();
    ref.decode_skip_special = record.at("decode_skip_special").get<std::string>();
    file.records.push_back(std::move(ref));
  }
  return file;
}

const Tokenizer& qwen3() {
  static const Tokenizer tokenizer = Tokenizer::load(qwen3_dir());
  return tokenizer;
}

std::string escaped(const std::string& text) {
  std::string out;
  for (unsigned char c : text) {
    if (c >= 0x20 && c < 0x7F && c != '\\') {
      out += static_cast<char>(c);
    } else {
      out += fmt::format("\\x{:02x}", c);
    }
  }
  return out;
}

}  // namespace lathe::tokenizer::test
