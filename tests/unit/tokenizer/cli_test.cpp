// `lathe tokenize` / `lathe detokenize` end to end: the whole Qwen3 reference corpus through the
// binary, and the error path for bad lines.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/wait.h>

#include "test_support.h"

namespace lathe::tokenizer::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct CliRun {
  int status;
  std::vector<std::string> lines;
  std::string stderr_text;
};

CliRun run_lathe(const std::string& args, const std::string& input) {
  fs::path dir = fs::temp_directory_path() /
                 ("lathe_tok_cli_" + std::to_string(::getpid()) + "_" +
                  ::testing::UnitTest::GetInstance()->current_test_info()->name());
  fs::create_directories(dir);
  std::ofstream(dir / "in", std::ios::binary) << input;
  std::string command = std::string(LATHE_BINARY) + " " + args + " < " + (dir / "in").string() + " > " +
                        (dir / "out").string() + " 2> " + (dir / "err").string();
  int raw = std::system(command.c_str());
  CliRun run{WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, {}, {}};
  std::ifstream out(dir / "out", std::ios::binary);
  for (std::string line; std::getline(out, line);) run.lines.push_back(line);
  std::stringstream err;
  err << std::ifstream(dir / "err").rdbuf();
  run.stderr_text = err.str();
  fs::remove_all(dir);
  return run;
}

TEST(TokenizeCli, Qwen3CorpusThroughTheBinaryMatchesHf) {
  ASSERT_TRUE(fs::exists(LATHE_BINARY)) << "build the lathe binary first: " << LATHE_BINARY;
  ReferenceFile file = read_references("tokenizer/qwen3_refs.jsonl");
  std::string strings, arrays;
  for (const Reference& ref : file.records) {
    strings += json(*ref.text).dump() + "\n";
    arrays += json(ref.ids).dump() + "\n";
  }
  CliRun tokenized = run_lathe("tokenize " + qwen3_dir(), strings);
  ASSERT_EQ(tokenized.status, 0) << tokenized.stderr_text;
  ASSERT_EQ(tokenized.lines.size(), file.records.size());
  for (size_t i = 0; i < file.records.size(); ++i) {
    EXPECT_EQ(json::parse(tokenized.lines[i]).get<std::vector<int32_t>>(), file.records[i].ids) << "line " << i + 1;
  }
  CliRun decoded = run_lathe("detokenize " + qwen3_dir(), arrays);
  ASSERT_EQ(decoded.status, 0) << decoded.stderr_text;
  ASSERT_EQ(decoded.lines.size(), file.records.size());
  for (size_t i = 0; i < file.records.size(); ++i) {
    EXPECT_EQ(json::parse(decoded.lines[i]).get<std::string>(), file.records[i].decode) << "line " << i + 1;
  }
  CliRun skipped = run_lathe("detokenize --skip-special-tokens " + qwen3_dir(), arrays);
  ASSERT_EQ(skipped.status, 0) << skipped.stderr_text;
  for (size_t i = 0; i < file.records.size(); ++i) {
    EXPECT_EQ(json::parse(skipped.lines[i]).get<std::string>(), file.records[i].decode_skip_special);
  }
}

TEST(TokenizeCli, BadLinesAreClearErrors) {
  CliRun bad_json = run_lathe("tokenize " + tiny_dir(), "\"fine\"\n{oops\n\"never reached\"\n");
  EXPECT_EQ(bad_json.status, 1);
  EXPECT_EQ(bad_json.lines.size(), 1u);  // the good line before the error was answered
  EXPECT_NE(bad_json.stderr_text.find("stdin line 2"), std::string::npos) << bad_json.stderr_text;

  CliRun not_string = run_lathe("tokenize " + tiny_dir(), "[1, 2]\n");
  EXPECT_EQ(not_string.status, 1);
  EXPECT_NE(not_string.stderr_text.find("expected a JSON string"), std::string::npos) << not_string.stderr_text;

  CliRun not_int = run_lathe("detokenize " + tiny_dir(), "[1, 2.5]\n");
  EXPECT_EQ(not_int.status, 1);
  EXPECT_NE(not_int.stderr_text.find("element 1"), std::string::npos) << not_int.stderr_text;

  CliRun negative = run_lathe("detokenize " + tiny_dir(), "[-1]\n");
  EXPECT_EQ(negative.status, 1);
  EXPECT_NE(negative.stderr_text.find("out of range"), std::string::npos) << negative.stderr_text;

  CliRun missing = run_lathe("tokenize /nonexistent/lathe/model", "\"x\"\n");
  EXPECT_EQ(missing.status, 1);
  EXPECT_NE(missing.stderr_text.find("/nonexistent/lathe/model"), std::string::npos) << missing.stderr_text;
}

}  // namespace
}  // namespace lathe::tokenizer::test
