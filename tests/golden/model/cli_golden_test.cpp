// End-to-end tests of `lathe logits` and `lathe generate` (the built binary, LATHE_BINARY) on
// the golden fixtures, against the HF references, plus bad-input handling: one "error:" line
// and exit status 1, never a crash.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "lathe_cli.h"
#include <vector>

#include "golden_util.h"
#include "io/safetensors.h"
#include "model/config.h"
#include "tokenizer/tokenizer.h"

namespace lathe::golden {
namespace {

constexpr double kF32RelBound = 1e-4;  // as in qwen3_golden_test.cpp

using Outcome = lathe::testing::CliOutcome;
using lathe::testing::read_file;

std::filesystem::path temp_dir() { return lathe::testing::temp_dir("cli_golden"); }

// Runs `lathe ARGS` (ARGS already shell-quoted where needed).
Outcome run_lathe(const std::string& args) { return lathe::testing::run_lathe("cli_golden", args); }

std::string quoted(const std::filesystem::path& path) {
  std::string text = "'";
  text.append(path.string());
  text.push_back('\'');
  return text;
}

std::string join(const std::vector<int32_t>& ids, char sep) {
  std::string text;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i > 0) text.push_back(sep);
    text.append(std::to_string(ids[i]));
  }
  return text;
}

std::vector<int32_t> parse_ids(const std::string& line) {
  std::vector<int32_t> ids;
  std::istringstream in(line);
  int32_t id = 0;
  while (in >> id) ids.push_back(id);
  return ids;
}

// The HF greedy ids cut after the first eos id of the model's config (the CLI stops there and
// prints the stop id too).
std::vector<int32_t> expected_generation(const std::filesystem::path& dir, const Reference& ref, size_t max_tokens) {
  const model::ModelConfig config = model::load_model_config(dir);
  std::vector<int32_t> ids;
  for (int32_t id : ref.greedy) {
    if (ids.size() == max_tokens) break;
    ids.push_back(id);
    if (std::find(config.eos_token_ids.begin(), config.eos_token_ids.end(), id) != config.eos_token_ids.end()) break;
  }
  return ids;
}

class CliGolden : public ::testing::TestWithParam<std::string> {
 protected:
  std::filesystem::path dir() const { return fixture_dir(GetParam()); }
};

TEST_P(CliGolden, LogitsCommandMatchesHf) {
  const Reference ref = load_reference(dir());
  const auto out = temp_dir() / (GetParam() + ".logits.safetensors");
  const Outcome run = run_lathe("logits " + quoted(dir()) + " --prompt-ids " + join(ref.prompt, ',') + " --out " +
                                quoted(out) + " --device cpu");
  ASSERT_EQ(run.status, 0) << run.err;
  const auto file = io::SafetensorsFile::open(out);
  const io::TensorInfo* logits = file->find("logits");
  ASSERT_NE(logits, nullptr);
  ASSERT_EQ(logits->dtype, DType::kF32);
  ASSERT_EQ(logits->shape, (std::vector<int64_t>{static_cast<int64_t>(ref.prompt.size()), ref.vocab}));
  const ErrorStats err = compare(io::read_f32(*logits), ref.logits);
  std::printf("[%s] lathe logits: max abs err %.3g, rel %.3g (bound %.1g)\n", GetParam().c_str(), err.max_abs,
              err.rel(), kF32RelBound);
  EXPECT_LE(err.rel(), kF32RelBound);
}

TEST_P(CliGolden, GenerateIdsMatchHfGreedy) {
  const Reference ref = load_reference(dir());
  const Outcome run = run_lathe("generate " + quoted(dir()) + " --prompt-ids " + join(ref.prompt, ',') +
                                " --ids --temperature 0 --max-tokens " + std::to_string(ref.greedy.size()));
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(std::count(run.out.begin(), run.out.end(), '\n'), 1) << run.out;
  EXPECT_EQ(parse_ids(run.out), expected_generation(dir(), ref, ref.greedy.size()));
  EXPECT_NE(run.err.find("tok/s"), std::string::npos) << "decode speed not logged: " << run.err;
}

INSTANTIATE_TEST_SUITE_P(Fixtures, CliGolden, ::testing::ValuesIn(fixture_names()), fixture_test_name);

const char* kChat = "qwen3-tiny-chat";

TEST(Cli, GenerateTextWithTokenizer) {
  const auto dir = fixture_dir(kChat);
  const Reference ref = load_reference(dir);
  const Outcome run = run_lathe("generate " + quoted(dir) + " --prompt-ids " + join(ref.prompt, ',') +
                                " --temperature 0 --max-tokens 12");
  ASSERT_EQ(run.status, 0) << run.err;
  const tokenizer::Tokenizer tok = tokenizer::Tokenizer::load(dir);
  EXPECT_EQ(run.out, tok.decode(expected_generation(dir, ref, 12), true) + "\n");
}

TEST(Cli, ChunkedPrefillAndKvDtypeFlags) {
  const auto dir = fixture_dir(kChat);
  const Reference ref = load_reference(dir);
  const auto tmp = temp_dir();
  const std::string prompt = " --prompt-ids " + join(ref.prompt, ',');
  ASSERT_EQ(run_lathe("logits " + quoted(dir) + prompt + " --out " + quoted(tmp / "whole.st")).status, 0);
  const Outcome chunked =
      run_lathe("logits " + quoted(dir) + prompt + " --out " + quoted(tmp / "chunked.st") + " --max-num-batched-tokens 3");
  ASSERT_EQ(chunked.status, 0) << chunked.err;
  EXPECT_EQ(read_file(tmp / "whole.st"), read_file(tmp / "chunked.st"));
  for (const char* kv : {"bf16", "fp8"}) {
    const Outcome run = run_lathe("generate " + quoted(dir) + prompt + " --ids --temperature 0 --max-tokens 4 " +
                                  "--kv-cache-dtype " + kv);
    EXPECT_EQ(run.status, 0) << kv << ": " << run.err;
    EXPECT_EQ(parse_ids(run.out).size(), 4u) << kv;
  }
}

// The KV block size changes where a sequence's positions live, never what they hold: the same
// greedy continuation at 1, 16, 64 (the default) and 1024 tokens a block.
TEST(Cli, BlockSizeDoesNotChangeTheOutput) {
  const auto dir = fixture_dir(kChat);
  const Reference ref = load_reference(dir);
  const std::string args = "generate " + quoted(dir) + " --prompt-ids " + join(ref.prompt, ',') +
                           " --ids --temperature 0 --max-tokens 6";
  const Outcome base = run_lathe(args);
  ASSERT_EQ(base.status, 0) << base.err;
  ASSERT_EQ(parse_ids(base.out).size(), 6u);
  for (const char* size : {"1", "16", "1024"}) {
    const Outcome run = run_lathe(args + " --block-size " + size);
    ASSERT_EQ(run.status, 0) << size << ": " << run.err;
    EXPECT_EQ(run.out, base.out) << "block size " << size;
  }
}

TEST(Cli, MaxModelLenCapsGeneration) {
  const auto dir = fixture_dir("qwen3-untied-sharded");
  const Reference ref = load_reference(dir);
  const size_t len = ref.prompt.size() + 3;
  const Outcome run = run_lathe("generate " + quoted(dir) + " --prompt-ids " + join(ref.prompt, ',') +
                                " --ids --temperature 0 --max-tokens 12 --max-model-len " + std::to_string(len));
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(parse_ids(run.out), expected_generation(dir, ref, 3));
}

TEST(Cli, SamplingIsReproducible) {
  const auto dir = fixture_dir("qwen3-attn-bias");
  const Reference ref = load_reference(dir);
  const std::string args = "generate " + quoted(dir) + " --prompt-ids " + join(ref.prompt, ',') +
                           " --ids --temperature 0.9 --top-p 0.95 --top-k 50 --min-p 0.01 --seed 7 --max-tokens 10";
  const Outcome first = run_lathe(args);
  const Outcome second = run_lathe(args);
  ASSERT_EQ(first.status, 0) << first.err;
  EXPECT_EQ(first.out, second.out);
  const std::vector<int32_t> ids = parse_ids(first.out);
  EXPECT_FALSE(ids.empty());
  for (int32_t id : ids) EXPECT_TRUE(id >= 0 && id < 384) << id;
}

// Bad input: exit status 1, nothing on stdout, and stderr ending with exactly one line
// "error: ..." that names the culprit (info log lines may precede it); never a signal.
void expect_clean_error(const Outcome& run, const std::string& needle) {
  EXPECT_EQ(run.status, 1) << run.err;
  EXPECT_TRUE(run.out.empty()) << run.out;
  ASSERT_FALSE(run.err.empty());
  ASSERT_EQ(run.err.back(), '\n') << run.err;
  const size_t line_start = run.err.rfind('\n', run.err.size() - 2);
  const std::string last = run.err.substr(line_start == std::string::npos ? 0 : line_start + 1);
  EXPECT_EQ(last.rfind("error: ", 0), 0u) << run.err;
  size_t errors = 0;
  for (size_t at = run.err.find("error"); at != std::string::npos; at = run.err.find("error", at + 1)) ++errors;
  EXPECT_EQ(errors, 1u) << run.err;
  EXPECT_NE(last.find(needle), std::string::npos) << "expected '" << needle << "' in: " << run.err;
}

TEST(Cli, BadInputGivesOneErrorLine) {
  const auto dir = fixture_dir(kChat);
  const std::string model = quoted(dir);
  expect_clean_error(run_lathe("generate /nonexistent/model --prompt-ids 1,2"), "/nonexistent/model");
  expect_clean_error(run_lathe("generate " + model + " --prompt-ids 1,x,3 --ids"), "--prompt-ids");
  expect_clean_error(run_lathe("generate " + model + " --prompt-ids 1,384 --ids"), "384");
  expect_clean_error(run_lathe("generate " + model + " --prompt-ids 1,2 --device cuda"), "--device cuda");
  expect_clean_error(run_lathe("generate " + model + " --prompt-ids 1,2 --kv-cache-dtype int4"), "--kv-cache-dtype");
  expect_clean_error(run_lathe("generate " + model + " --prompt-ids 1,2,3,4 --max-model-len 4"), "maximum model length");
  expect_clean_error(run_lathe("generate " + model + " --prompt-ids 1,2 --block-size 0"), "--block-size");
  expect_clean_error(run_lathe("logits " + model + " --prompt-ids 1,2 --out x.st --block-size 4096"),
                     "--block-size");
  expect_clean_error(run_lathe("logits " + model + " --prompt-ids 1,2 --out /nonexistent/dir/x.safetensors"),
                     "/nonexistent/dir");

  // A truncated weights file.
  const auto broken = temp_dir() / "broken-model";
  std::filesystem::remove_all(broken);
  std::filesystem::create_directories(broken);
  for (const char* name : {"config.json", "generation_config.json"}) std::filesystem::copy(dir / name, broken / name);
  const std::string weights = read_file(dir / "model.safetensors");
  std::ofstream(broken / "model.safetensors", std::ios::binary).write(weights.data(), 5000);
  expect_clean_error(run_lathe("generate " + quoted(broken) + " --prompt-ids 1,2 --ids"), "model.safetensors");
}

}  // namespace
}  // namespace lathe::golden
