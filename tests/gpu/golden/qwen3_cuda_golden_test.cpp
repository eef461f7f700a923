// Qwen3 on the CUDA backend against the float32 HF references of every tiny fixture, and the
// batch-invariance promise (ARCHITECTURE rule 6) on the GPU.
//
// Bounds (error = max |lathe - HF| / max |HF|):
//   Prompt logits: 0.1. The CUDA path keeps activations and the KV cache in BF16 (8 significant
//   bits: every op boundary rounds by up to 2^-9 relative) and, for per-channel FP8 checkpoints,
//   quantizes prefill activations to E4M3 (W8A8: up to 2^-4 relative per element, averaged over
//   K), against an f32 W8A16 reference. Measured errors are printed; a wrong layout, scale, norm or
//   RoPE pairing gives errors of order 1.
//   Greedy: identical token for token, except where the reference's top-2 margin is below twice
//   the fixture's measured prompt-logit error (a tie at BF16 resolution); the test says so.
//   Invariance: byte-identical, no tolerance, with a BF16 and with an FP8 E4M3 KV cache.
//   FP8 KV cache (scale 1), teacher-forced decode logits: the CPU backend's error with the same
//   FP8 cache (the quantization's own damage, measured in the same test against the same HF
//   steps) plus the BF16 activation allowance above (0.1), and never more than the CPU golden
//   suite's FP8 sanity bound (0.3). A wrong FP8 layout, scale or dequantization gives errors of
//   order 1.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "app/backend_factory.h"
#include "app/model_runner.h"
#include "golden_util.h"
#include "model/decode_graphs.h"
#include "model/device_buffer.h"
#include "model/qwen3.h"
#include "ops/cuda_backend.h"

namespace lathe::golden {
namespace {

constexpr double kPromptRelBound = 0.1;
constexpr double kFp8KvRelBound = 0.3;  // tests/golden/model/qwen3_golden_test.cpp's FP8 KV bound

const char* kv_name(DType kv) {
  return kv == DType::kF8E4M3 ? "fp8 KV" : "bf16 KV";
}

class Qwen3CudaGolden : public ::testing::TestWithParam<std::string> {
 protected:
  std::filesystem::path dir() const { return fixture_dir(GetParam()); }
};

app::RunnerOptions cuda_options(int32_t chunk = 0) {
  app::RunnerOptions options;
  options.device = "cuda";
  options.prefill_chunk = chunk;
  return options;
}

// A CUDA model driven step by step (the CUDA twin of DirectModel).
struct CudaModel {
  std::unique_ptr<ops::Backend> backend;
  std::unique_ptr<model::Qwen3Model> model;
  std::unique_ptr<engine::BlockManager> blocks;

  CudaModel(const std::filesystem::path& dir, int32_t max_tokens, int32_t num_blocks,
            DType kv_dtype = DType::kBF16) {
    model::ModelConfig config = model::load_model_config(dir);
    model::Qwen3Weights weights = model::load_qwen3_weights(config);
    app::BackendRequest request;
    request.device = "cuda";
    request.max_decode_seqs = 64;
    backend = app::make_backend(request);
    model::Qwen3Options options;
    options.max_tokens_per_step = max_tokens;
    options.max_logits_rows = max_tokens;
    options.num_kv_blocks = num_blocks;
    options.kv_block_size = 16;
    options.kv_dtype = kv_dtype;
    model = std::make_unique<model::Qwen3Model>(*backend, std::move(config), std::move(weights), options);
    blocks = std::make_unique<engine::BlockManager>(num_blocks, 16);
  }

  std::vector<float> run(const ops::ForwardBatch& batch) {
    const auto rows = static_cast<int64_t>(batch.logits_rows.size());
    const int64_t vocab = model->vocab_size();
    model::DeviceBuffer buffer(*backend, static_cast<size_t>(std::max<int64_t>(rows, 1) * vocab) * sizeof(float),
                               "test logits");
    ops::Act logits{buffer.data(), DType::kF32, rows, vocab, vocab};
    model->forward(batch, logits);
    std::vector<float> out(static_cast<size_t>(rows * vocab));
    backend->download(out.data(), buffer.data(), out.size() * sizeof(float));
    return out;
  }
};

TEST_P(Qwen3CudaGolden, PromptLogitsAndGreedyMatchHf) {
  const Reference ref = load_reference(dir());
  const auto t = static_cast<int64_t>(ref.prompt.size());
  const auto n = static_cast<int64_t>(ref.greedy.size());
  app::ModelRunner runner(dir(), cuda_options(), t, t + n);
  const ErrorStats err = compare(runner.prompt_logits(ref.prompt), ref.logits);
  std::printf("[%s] cuda prompt logits vs HF f32: max abs %.3g, rel %.3g (bound %.0e)\n", GetParam().c_str(),
              err.max_abs, err.rel(), kPromptRelBound);
  EXPECT_LE(err.rel(), kPromptRelBound);

  app::ModelRunner gen(dir(), cuda_options(), t, t + n);
  app::GenerateOptions options;
  options.max_tokens = n;
  options.sampling.temperature = 0.0f;
  const app::GenerateResult result = gen.generate(ref.prompt, options);
  ASSERT_EQ(static_cast<int64_t>(result.ids.size()), n);
  const double tie = 2.0 * err.max_abs;
  for (int64_t i = 0; i < n; ++i) {
    const auto s = static_cast<size_t>(i);
    if (result.ids[s] == ref.greedy[s]) continue;
    if (ref.greedy_margins[s] < tie) {
      std::printf("[%s] step %lld: reference margin %.3g < 2 x measured error %.3g: a BF16 tie, stop comparing\n",
                  GetParam().c_str(), static_cast<long long>(i), ref.greedy_margins[s], tie);
      return;
    }
    FAIL() << "step " << i << ": lathe " << result.ids[s] << " vs HF " << ref.greedy[s] << " (HF margin "
           << ref.greedy_margins[s] << ", measured logit error " << err.max_abs << ")";
  }
  std::printf("[%s] cuda greedy: %lld tokens identical to HF\n", GetParam().c_str(), static_cast<long long>(n));
}

// A sequence's decode logits are the same bytes alone, beside other decode rows, and beside a
// prefill chunk in a mixed step (decode rows keep their decode arms: ForwardBatch::num_decode_rows),
// with either KV cache dtype.
void expect_decode_bytes_independent_of_the_batch(const std::string& name, const std::filesystem::path& dir,
                                                  DType kv) {
  const Reference ref = load_reference(dir);
  const std::vector<int32_t>& a = ref.prompt;
  const auto ta = static_cast<int64_t>(a.size());
  const int32_t next = ref.greedy.front();
  std::vector<int32_t> b(a.rbegin(), a.rend());
  b.resize(b.size() - 2);
  const auto tb = static_cast<int64_t>(b.size());
  const auto max_tokens = static_cast<int32_t>(ta + tb + 8);

  std::vector<float> alone;
  {
    CudaModel m(dir, max_tokens, 64, kv);
    ASSERT_TRUE(m.blocks->ensure_capacity(1, ta + 1));
    m.run(app::plan_step({{1, a, 0, false, true}}, *m.blocks));
    alone = m.run(app::plan_step({{1, {next}, ta, false, true}}, *m.blocks));
  }
  // Beside another decode row (b already prefilled) and beside b's prefill chunk.
  CudaModel m(dir, max_tokens, 64, kv);
  ASSERT_TRUE(m.blocks->ensure_capacity(2, tb + 1));
  ASSERT_TRUE(m.blocks->ensure_capacity(1, ta + 1));
  ASSERT_TRUE(m.blocks->ensure_capacity(3, tb));
  m.run(app::plan_step({{2, b, 0, false, true}, {1, a, 0, false, true}}, *m.blocks));
  const std::vector<float> pair = m.run(app::plan_step({{1, {next}, ta, false, true}, {2, {next}, tb, false, true}}, *m.blocks));
  const auto v = static_cast<ptrdiff_t>(ref.vocab);
  const std::vector<float> beside_decode(pair.begin(), pair.begin() + v);

  CudaModel mixed_model(dir, max_tokens, 64, kv);
  ASSERT_TRUE(mixed_model.blocks->ensure_capacity(1, ta + 1));
  ASSERT_TRUE(mixed_model.blocks->ensure_capacity(3, tb));
  mixed_model.run(app::plan_step({{1, a, 0, false, true}}, *mixed_model.blocks));
  ops::ForwardBatch mixed = app::plan_step({{1, {next}, ta, false, true}, {3, b, 0, false, true}}, *mixed_model.blocks);
  mixed.num_decode_rows = 1;  // row 0 decodes; the rest is a prefill chunk
  const std::vector<float> mixed_logits = mixed_model.run(mixed);
  const std::vector<float> beside_prefill(mixed_logits.begin(), mixed_logits.begin() + v);

  const int64_t d1 = count_bit_differences(beside_decode, alone);
  const int64_t d2 = count_bit_differences(beside_prefill, alone);
  std::printf("[%s] cuda decode bytes, %s: %lld differ beside a decode row, %lld beside a prefill chunk\n",
              name.c_str(), kv_name(kv), static_cast<long long>(d1), static_cast<long long>(d2));
  EXPECT_EQ(d1, 0) << kv_name(kv);
  EXPECT_EQ(d2, 0) << kv_name(kv);
}

TEST_P(Qwen3CudaGolden, DecodeBytesDoNotDependOnTheBatch) {
  expect_decode_bytes_independent_of_the_batch(GetParam(), dir(), DType::kBF16);
}

TEST_P(Qwen3CudaGolden, Fp8KvDecodeBytesDoNotDependOnTheBatch) {
  expect_decode_bytes_independent_of_the_batch(GetParam(), dir(), DType::kF8E4M3);
}

// Prefill, then decode one row per step feeding the reference's greedy tokens (teacher forcing),
// with an FP8 E4M3 KV cache on the GPU and, for the quantization's own error, on the CPU backend
// (f32 activations, the same FP8 cache): every step's logits against HF's f32 ones (bounds above).
TEST_P(Qwen3CudaGolden, Fp8KvDecodeLogitsTrackHf) {
  const Reference ref = load_reference(dir());
  const auto t = static_cast<int64_t>(ref.prompt.size());
  const auto n = static_cast<int64_t>(ref.greedy.size());
  CudaModel gpu(dir(), static_cast<int32_t>(t), 32, DType::kF8E4M3);
  DirectModel cpu(dir(), static_cast<int32_t>(t), 32, DType::kF8E4M3);
  const ErrorStats gpu_err = compare(teacher_forced_logits(gpu, ref), ref.greedy_logits);
  const ErrorStats cpu_err = compare(teacher_forced_logits(cpu, ref), ref.greedy_logits);
  const double bound = std::min(cpu_err.rel() + kPromptRelBound, kFp8KvRelBound);
  std::printf(
      "[%s] fp8 KV, last-prompt + %lld decode-step logits vs HF f32: cuda rel %.3g, cpu rel %.3g (bound "
      "%.3g)\n",
      GetParam().c_str(), static_cast<long long>(n - 1), gpu_err.rel(), cpu_err.rel(), bound);
  EXPECT_LE(gpu_err.rel(), bound);
}

// Prefilling in chunks of 5 gives the same last-row logits as the whole prompt.
TEST_P(Qwen3CudaGolden, ChunkedPrefillBytes) {
  const Reference ref = load_reference(dir());
  const auto t = static_cast<int64_t>(ref.prompt.size());
  app::ModelRunner whole(dir(), cuda_options(), t, t);
  app::ModelRunner chunked(dir(), cuda_options(5), t, t);
  const std::vector<float> a = whole.prompt_logits(ref.prompt);
  const std::vector<float> b = chunked.prompt_logits(ref.prompt);
  const int64_t diffs = count_bit_differences(a, b);
  std::printf("[%s] cuda chunks of 5 vs whole prompt: %lld of %zu logits differ (max abs %.3g)\n",
              GetParam().c_str(), static_cast<long long>(diffs), a.size(), compare(b, a).max_abs);
  EXPECT_EQ(diffs, 0);
}

// Decode steps replayed from CUDA graphs, padded to their bucket, give the bytes of the same
// steps run eagerly, with either KV cache dtype: one sequence (bucket 1) and three (padded to
// bucket 4), and the eager path still agrees after the graphs were recorded. Rerunning a decode
// step rewrites its KV slot with the same bytes, so the steps can be repeated on one cache.
void expect_graphs_replay_the_eager_bytes(const std::string& name, const std::filesystem::path& dir,
                                          DType kv) {
  const Reference ref = load_reference(dir);
  const std::vector<int32_t>& a = ref.prompt;
  const std::vector<int32_t> b(a.rbegin(), a.rend());
  const std::vector<int32_t> c(a.begin() + 1, a.end());
  const int32_t next = ref.greedy.front();
  constexpr int32_t kMaxSeqs = 8;
  CudaModel m(dir, static_cast<int32_t>(3 * a.size() + 8), 64, kv);
  std::vector<app::SeqRows> prefill;
  std::vector<app::SeqRows> decode;
  engine::SeqId id = 1;
  for (const std::vector<int32_t>* prompt : {&a, &b, &c}) {
    const auto len = static_cast<int64_t>(prompt->size());
    ASSERT_TRUE(m.blocks->ensure_capacity(id, len + 1));
    prefill.push_back({id, *prompt, 0, false, true});
    decode.push_back({id, {next}, len, false, true});
    ++id;
  }
  m.run(app::plan_step(prefill, *m.blocks));
  const ops::ForwardBatch one = app::plan_step({decode[0]}, *m.blocks);
  const ops::ForwardBatch three = app::plan_step(decode, *m.blocks);
  const std::vector<float> eager_one = m.run(one);
  const std::vector<float> eager_three = m.run(three);

  const int64_t vocab = m.model->vocab_size();
  model::DeviceBuffer logits(*m.backend, static_cast<size_t>(kMaxSeqs * vocab) * sizeof(float), "graph logits");
  const int32_t width = 8;  // wider than the steps' own tables: the graphs' fixed table width
  ASSERT_LE(three.max_blocks_per_seq, width);
  model::DecodeGraphs graphs(*m.model, kMaxSeqs, width, logits.data());
  const auto replay = [&](const ops::ForwardBatch& batch) {
    const ops::Act out = graphs.run(batch);
    EXPECT_EQ(out.rows, batch.num_seqs());
    std::vector<float> host(static_cast<size_t>(out.rows * vocab));
    m.backend->download(host.data(), out.data, host.size() * sizeof(float));
    return host;
  };
  const int64_t d1 = count_bit_differences(replay(one), eager_one);
  const int64_t d3 = count_bit_differences(replay(three), eager_three);
  const int64_t again = count_bit_differences(m.run(three), eager_three);
  std::printf(
      "[%s] decode graphs, %s (buckets %zu): %lld / %lld logits differ from eager (1 / 3 rows), %lld eager "
      "after\n",
      name.c_str(), kv_name(kv), graphs.buckets().size(), static_cast<long long>(d1),
      static_cast<long long>(d3), static_cast<long long>(again));
  EXPECT_EQ(d1, 0) << kv_name(kv);
  EXPECT_EQ(d3, 0) << kv_name(kv);
  EXPECT_EQ(again, 0) << kv_name(kv);
  // A prefill step is not a graph step.
  EXPECT_EQ(graphs.run(app::plan_step({prefill[0]}, *m.blocks)).rows, 0);
}

TEST_P(Qwen3CudaGolden, DecodeGraphsReplayTheEagerBytes) {
  for (const DType kv : {DType::kBF16, DType::kF8E4M3})
    expect_graphs_replay_the_eager_bytes(GetParam(), dir(), kv);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, Qwen3CudaGolden, ::testing::ValuesIn(fixture_names()), fixture_test_name);

}  // namespace
}  // namespace lathe::golden

int main(int argc, char** argv) {
  if (!lathe::ops::cuda_available()) {
    std::printf("no CUDA device: gpu_golden_qwen3 skipped\n");
    return 77;
  }
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
