// Golden tests of the Qwen3 forward on the CPU backend against float32 HF references
// (tools/make_fixtures.py; every fixture under tests/fixtures/models).
//
// Bounds (error = max |lathe - HF| / max |HF| over all logits compared):
//   F32 activations and F32 KV cache: 1e-4. Both sides compute in f32 from the same
//   bf16-representable (or identically dequantised FP8) weights; they differ only in summation
//   order (HF: blocked sgemm; lathe: 8-lane dot products) and in libm transcendental rounding,
//   i.e. ~sqrt(K) * 2^-24 ~ 1e-6 relative per dot product, grown by a few layers of norms and
//   softmax to ~1e-5 at most. 1e-4 leaves 10x headroom and is still far below what any real
//   mistake (a wrong norm, rope pairing, scale or GQA mapping) produces (>1e-2).
//   BF16 KV cache: 3e-2 (K and V rounded to 8 significant bits: relative step 2^-8 per element).
//   FP8 E4M3 KV cache (scale 1): 0.3 (3 mantissa bits: relative step 2^-3 per element); a
//   sanity bound that a wrong layout or scale would exceed by far.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "app/model_runner.h"
#include "golden_util.h"

namespace lathe::golden {
namespace {

constexpr double kF32RelBound = 1e-4;
constexpr double kBf16KvRelBound = 3e-2;
constexpr double kFp8KvRelBound = 0.3;
constexpr float kNearTie = 1e-3f;

class Qwen3Golden : public ::testing::TestWithParam<std::string> {
 protected:
  std::filesystem::path dir() const { return fixture_dir(GetParam()); }
};

app::RunnerOptions cpu_options(int32_t chunk = 0, const std::string& kv = "auto") {
  app::RunnerOptions options;
  options.device = "cpu";
  options.prefill_chunk = chunk;
  options.kv_cache_dtype = kv;
  return options;
}

TEST_P(Qwen3Golden, PromptLogitsMatchHf) {
  const Reference ref = load_reference(dir());
  const auto t = static_cast<int64_t>(ref.prompt.size());
  app::ModelRunner runner(dir(), cpu_options(), t, t);
  const std::vector<float> logits = runner.prompt_logits(ref.prompt);
  const ErrorStats err = compare(logits, ref.logits);
  std::printf("[%s] prompt logits (%lld x %lld): max abs err %.3g, max |ref| %.3g, rel %.3g (bound %.1g)\n",
              GetParam().c_str(), static_cast<long long>(t), static_cast<long long>(ref.vocab), err.max_abs,
              err.max_ref, err.rel(), kF32RelBound);
  EXPECT_LE(err.rel(), kF32RelBound);
}

// Prefill, then decode one row per step feeding the reference's greedy tokens (teacher
// forcing): every decode step's logits are compared, independent of sampling.
TEST_P(Qwen3Golden, DecodeLogitsMatchHf) {
  const Reference ref = load_reference(dir());
  const auto t = static_cast<int64_t>(ref.prompt.size());
  const auto n = static_cast<int64_t>(ref.greedy.size());
  DirectModel m(dir(), static_cast<int32_t>(t), 32, DType::kF32, 4);  // block size 4: many blocks per sequence
  const std::vector<float> got = teacher_forced_logits(m, ref);
  const ErrorStats err = compare(got, ref.greedy_logits);
  std::printf("[%s] last-prompt + %lld decode-step logits: max abs err %.3g, rel %.3g (bound %.1g)\n",
              GetParam().c_str(), static_cast<long long>(n - 1), err.max_abs, err.rel(), kF32RelBound);
  EXPECT_LE(err.rel(), kF32RelBound);
}

TEST_P(Qwen3Golden, GreedyMatchesHf) {
  const Reference ref = load_reference(dir());
  const auto t = static_cast<int64_t>(ref.prompt.size());
  const auto n = static_cast<int64_t>(ref.greedy.size());
  app::ModelRunner runner(dir(), cpu_options(), t, t + n);
  app::GenerateOptions options;
  options.max_tokens = n;
  options.sampling.temperature = 0.0f;  // argmax; no stop ids: the reference does not stop either
  const app::GenerateResult result = runner.generate(ref.prompt, options);
  ASSERT_EQ(static_cast<int64_t>(result.ids.size()), n);
  EXPECT_EQ(result.finish_reason, "length");
  for (int64_t i = 0; i < n; ++i) {
    const auto s = static_cast<size_t>(i);
    if (result.ids[s] == ref.greedy[s]) continue;
    if (ref.greedy_margins[s] < kNearTie) {
      std::printf("[%s] step %lld: near-tie (margin %.3g < %.0e): %d vs HF %d, stop comparing\n", GetParam().c_str(),
                  static_cast<long long>(i), ref.greedy_margins[s], kNearTie, result.ids[s], ref.greedy[s]);
      return;
    }
    FAIL() << "step " << i << ": lathe " << result.ids[s] << " vs HF " << ref.greedy[s] << " (HF margin "
           << ref.greedy_margins[s] << ")";
  }
  std::printf("[%s] greedy: %lld tokens identical to HF (min margin %.3g)\n", GetParam().c_str(),
              static_cast<long long>(n), *std::min_element(ref.greedy_margins.begin(), ref.greedy_margins.end()));
}

// Batch invariance (ARCHITECTURE rule 6): prefilling in chunks of 3 gives the same bytes as
// one whole-prompt step.
TEST_P(Qwen3Golden, ChunkedPrefillIsBitwiseInvariant) {
  const Reference ref = load_reference(dir());
  const auto t = static_cast<int64_t>(ref.prompt.size());
  app::ModelRunner whole(dir(), cpu_options(), t, t);
  app::ModelRunner chunked(dir(), cpu_options(3), t, t);
  const std::vector<float> a = whole.prompt_logits(ref.prompt);
  const std::vector<float> b = chunked.prompt_logits(ref.prompt);
  const int64_t diffs = count_bit_differences(a, b);
  std::printf("[%s] chunks of 3 vs whole prompt: %lld of %zu logits differ (max abs %.3g)\n", GetParam().c_str(),
              static_cast<long long>(diffs), a.size(), compare(b, a).max_abs);
  EXPECT_EQ(diffs, 0);
}

// Two sequences in one step give the same bytes as each alone: a whole prefill beside a chunked
// one, then a decode row beside the second chunk.
TEST_P(Qwen3Golden, BatchedSequencesMatchAlone) {
  const Reference ref = load_reference(dir());
  const std::vector<int32_t> a = ref.prompt;
  std::vector<int32_t> b(ref.prompt.rbegin(), ref.prompt.rend() - 3);  // different tokens and length
  const auto ta = static_cast<int64_t>(a.size());
  const auto tb = static_cast<int64_t>(b.size());
  const int32_t next = ref.greedy.front();
  const auto half = tb / 2;
  const std::vector<int32_t> b1(b.begin(), b.begin() + half);
  const std::vector<int32_t> b2(b.begin() + half, b.end());

  // Alone (sequence ids 1 and 2, one per step).
  std::vector<float> alone_a_prefill, alone_a_decode, alone_b;
  {
    DirectModel m(dir(), static_cast<int32_t>(ta + tb), 64, DType::kF32, 8);
    ASSERT_TRUE(m.blocks->ensure_capacity(1, ta + 1));
    alone_a_prefill = m.run(app::plan_step({{1, a, 0, true, true}}, *m.blocks));
    alone_a_decode = m.run(app::plan_step({{1, {next}, ta, false, true}}, *m.blocks));
    ASSERT_TRUE(m.blocks->ensure_capacity(2, tb));
    alone_b = m.run(app::plan_step({{2, b, 0, true, true}}, *m.blocks));
  }
  // Together: step 1 = [a whole, b first half], step 2 = [a decode, b second half].
  DirectModel m(dir(), static_cast<int32_t>(ta + tb), 64, DType::kF32, 8);
  ASSERT_TRUE(m.blocks->ensure_capacity(2, tb));  // b first so that the two get other block ids
  ASSERT_TRUE(m.blocks->ensure_capacity(1, ta + 1));
  const std::vector<float> step1 = m.run(app::plan_step({{1, a, 0, true, true}, {2, b1, 0, true, true}}, *m.blocks));
  const std::vector<float> step2 =
      m.run(app::plan_step({{1, {next}, ta, false, true}, {2, b2, half, true, true}}, *m.blocks));
  const auto v = static_cast<size_t>(ref.vocab);
  const std::vector<float> together_a_prefill(step1.begin(), step1.begin() + static_cast<ptrdiff_t>(ta * ref.vocab));
  std::vector<float> together_b(step1.begin() + static_cast<ptrdiff_t>(ta * ref.vocab), step1.end());
  const std::vector<float> together_a_decode(step2.begin(), step2.begin() + static_cast<ptrdiff_t>(v));
  together_b.insert(together_b.end(), step2.begin() + static_cast<ptrdiff_t>(v), step2.end());

  const int64_t d1 = count_bit_differences(together_a_prefill, alone_a_prefill);
  const int64_t d2 = count_bit_differences(together_a_decode, alone_a_decode);
  const int64_t d3 = count_bit_differences(together_b, alone_b);
  std::printf("[%s] batched vs alone: %lld / %lld / %lld logits differ (a prefill, a decode, b chunked)\n",
              GetParam().c_str(), static_cast<long long>(d1), static_cast<long long>(d2), static_cast<long long>(d3));
  EXPECT_EQ(d1, 0);
  EXPECT_EQ(d2, 0);
  EXPECT_EQ(d3, 0);
  // And the batched logits are still the HF ones.
  EXPECT_LE(compare(together_a_prefill, ref.logits).rel(), kF32RelBound);
}

TEST_P(Qwen3Golden, ReducedPrecisionKvCache) {
  const Reference ref = load_reference(dir());
  const auto t = static_cast<int64_t>(ref.prompt.size());
  for (const auto& [kv, bound] : {std::pair<std::string, double>{"bf16", kBf16KvRelBound}, {"fp8", kFp8KvRelBound}}) {
    app::ModelRunner runner(dir(), cpu_options(0, kv), t, t);
    const ErrorStats err = compare(runner.prompt_logits(ref.prompt), ref.logits);
    std::printf("[%s] %s KV cache: prompt logits rel err %.3g (bound %.1g)\n", GetParam().c_str(), kv.c_str(),
                err.rel(), bound);
    EXPECT_LE(err.rel(), bound) << kv;
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, Qwen3Golden, ::testing::ValuesIn(fixture_names()), fixture_test_name);

// The fixtures themselves: enough of them, and greedy references that are not near-ties (else
// the greedy comparison above would prove little).
TEST(Qwen3Fixtures, CoverageAndMargins) {
  const std::vector<std::string> names = fixture_names();
  EXPECT_GE(names.size(), 8u);
  int near_ties = 0;
  for (const std::string& name : names) {
    const Reference ref = load_reference(fixture_dir(name));
    EXPECT_EQ(ref.vocab, 384) << name;
    if (*std::min_element(ref.greedy_margins.begin(), ref.greedy_margins.end()) < kNearTie) ++near_ties;
  }
  EXPECT_LE(near_ties, 1);
}

// qwen3-tiny-chat is a complete HF directory: its tokenizer files are copies of the tokenizer
// fixture, and its prompt was tokenized with them. A change there needs
// `python3 tools/make_fixtures.py` to refresh the copy and the references.
TEST(Qwen3Fixtures, ChatFixtureTokenizerIsCurrent) {
  const std::filesystem::path tok = std::filesystem::path(LATHE_FIXTURES_DIR) / "tiny_tokenizer";
  const std::filesystem::path chat = fixture_dir("qwen3-tiny-chat");
  for (const char* name : {"tokenizer.json", "tokenizer_config.json"}) {
    ASSERT_TRUE(std::filesystem::exists(chat / name)) << name;
    std::ifstream a(tok / name, std::ios::binary);
    std::ifstream b(chat / name, std::ios::binary);
    const std::string sa((std::istreambuf_iterator<char>(a)), std::istreambuf_iterator<char>());
    const std::string sb((std::istreambuf_iterator<char>(b)), std::istreambuf_iterator<char>());
    EXPECT_EQ(sa, sb) << name << " differs from tests/fixtures/tiny_tokenizer: rerun tools/make_fixtures.py";
  }
  EXPECT_TRUE(std::filesystem::exists(chat / "generation_config.json"));
}

}  // namespace
}  // namespace lathe::golden
