// `lathe tokenize DIR` and `lathe detokenize DIR` (docs: ARCHITECTURE.md, CLI contract).
//
//   tokenize:   stdin, one JSON string per line -> stdout, one JSON array of ids per line.
//               No special tokens are added; added tokens written in the text are matched.
//   detokenize: stdin, one JSON array of ids per line -> stdout, one JSON string per line
//               (--skip-special-tokens drops special added tokens, like HF decode).
//
// DIR is a checkpoint directory holding tokenizer.json, or the tokenizer.json file itself. A line
// that is not the expected JSON stops the command with "error: stdin line N: ..." (status 1);
// the lines before it have already been answered.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <iostream>
#include <limits>
#include <string>
#include <vector>

#include "app/commands.h"
#include "core/error.h"
#include "tokenizer/tokenizer.h"

namespace lathe::app {
namespace {

using nlohmann::json;

json parse_line(const std::string& line, size_t line_number) {
  try {
    return json::parse(line);
  } catch (const json::parse_error& error) {
    fail("stdin line {}: invalid JSON: {}", line_number, error.what());
  }
}

int run_tokenize(const std::string& dir) {
  tokenizer::Tokenizer tok = tokenizer::Tokenizer::load(dir);
  std::string line;
  size_t line_number = 0;
  while (std::getline(std::cin, line)) {
    ++line_number;
    json value = parse_line(line, line_number);
    if (!value.is_string()) fail("stdin line {}: expected a JSON string, got {}", line_number, value.type_name());
    std::vector<int32_t> ids;
    try {
      ids = tok.encode(value.get_ref<const std::string&>());
    } catch (const Error& error) {
      fail("stdin line {}: {}", line_number, error.what());
    }
    std::cout << json(ids).dump() << '\n' << std::flush;
  }
  return 0;
}

int run_detokenize(const std::string& dir, bool skip_special) {
  tokenizer::Tokenizer tok = tokenizer::Tokenizer::load(dir);
  std::string line;
  size_t line_number = 0;
  while (std::getline(std::cin, line)) {
    ++line_number;
    json value = parse_line(line, line_number);
    if (!value.is_array()) fail("stdin line {}: expected a JSON array of token ids, got {}", line_number, value.type_name());
    std::vector<int32_t> ids;
    ids.reserve(value.size());
    for (size_t i = 0; i < value.size(); ++i) {
      const json& id = value[i];
      if (!id.is_number_integer()) fail("stdin line {}: element {} is not an integer token id: {}", line_number, i, id.dump());
      int64_t wide = id.is_number_unsigned() && id.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)
                         ? INT64_MAX
                         : id.get<int64_t>();
      if (wide < 0 || wide > std::numeric_limits<int32_t>::max()) {
        fail("stdin line {}: element {}: token id {} is out of range", line_number, i, id.dump());
      }
      ids.push_back(static_cast<int32_t>(wide));
    }
    std::cout << json(tok.decode(ids, skip_special)).dump() << '\n' << std::flush;
  }
  return 0;
}

const Registration kTokenize{"tokenize", "Encode JSON strings (one per line on stdin) to JSON arrays of token ids",
                             [](CLI::App& cmd) -> CommandAction {
                               auto dir = std::make_shared<std::string>();
                               cmd.add_option("DIR", *dir, "Checkpoint directory or tokenizer.json")->required();
                               return [dir]() { return run_tokenize(*dir); };
                             }};

const Registration kDetokenize{"detokenize",
                               "Decode JSON arrays of token ids (one per line on stdin) to JSON strings",
                               [](CLI::App& cmd) -> CommandAction {
                                 auto dir = std::make_shared<std::string>();
                                 auto skip = std::make_shared<bool>(false);
                                 cmd.add_option("DIR", *dir, "Checkpoint directory or tokenizer.json")->required();
                                 cmd.add_flag("--skip-special-tokens", *skip, "Drop special added tokens");
                                 return [dir, skip]() { return run_detokenize(*dir, *skip); };
                               }};

}  // namespace
}  // namespace lathe::app
