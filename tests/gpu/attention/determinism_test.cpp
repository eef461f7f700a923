// Batch invariance of decode (ARCHITECTURE rule 6): a sequence's output bytes are the same alone
// and beside 1, 3, 15 and 31 other sequences of different lengths, at different batch slots,
// under auto, pinned and packed configurations. A control that lets the split count follow the
// batch (legacy with a reference batch of 1) must FAIL the same check. Graph replay with new
// device-side lengths must give the eager bytes.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <tuple>

#include "attention_fixture.h"
#include "backends/cuda/paged_attention.h"
#include "ops/cuda/attention_dispatch.h"
#include "ops/splitk_policy.h"

namespace lathe::attn_test {
namespace {

using target::SplitkPolicy;
using Step = std::vector<PagedCase::StepSeq>;

constexpr int32_t kOthers = 31;

// Sequence 0 is the one watched (length 4099 by default); 1..31 are others of assorted lengths.
std::vector<SeqSpec> cobatch_seqs(int32_t watched_len = 4099) {
  std::vector<SeqSpec> seqs{{watched_len, 1}};
  std::mt19937 rng(2024);
  std::uniform_int_distribution<int32_t> len(1, 6000);
  for (int32_t i = 0; i < kOthers; ++i) seqs.push_back({len(rng), 1});
  return seqs;
}

// The watched sequence's output row alone and beside n others (placed at slot n / 2).
std::vector<std::vector<uint16_t>> watched_rows(PagedCase& c, const ops::AttentionConfig& config) {
  std::vector<std::vector<uint16_t>> rows;
  const size_t row = static_cast<size_t>(c.row_elems());
  for (int32_t n : {0, 1, 3, 15, 31}) {
    Step step;
    for (int32_t i = 1; i <= n; ++i) step.push_back({i, c.seqs()[i].context_len, 1});
    const size_t slot = static_cast<size_t>(n / 2);
    step.insert(step.begin() + static_cast<std::ptrdiff_t>(slot), {0, c.seqs()[0].context_len, 1});
    const std::vector<uint16_t> out = c.run(ops::Phase::kDecode, step, config);
    rows.emplace_back(out.begin() + slot * row, out.begin() + (slot + 1) * row);
  }
  return rows;
}

struct Policy {
  const char* name;
  SplitkPolicy policy;
  bool pack;
  int32_t slices = 4;  // make_config's default; 1: whole splits
};

// Under every split-K geometry a serve may take (ops/splitk_policy.h: decode_splitk_kernel; the
// narrow one switches between two pipeline depths with the launch's width; the single-sequence
// one is built for one CTA per SM but must keep the property on any grid) and the narrow and wide
// ones' cp.async twins (5, 6), and the wide one's per-split form (14; the serve's wide geometry, 22,
// runs it on a persistent grid whose CTAs deal out a launch's units by their number, so a
// sequence's units land on other CTAs in every co-batch), for each KV dtype: one test each, so
// gtest shards spread them; likewise the opt-in geometries below (the serve geometries of sessions
// 12-36, 21 and 22, the position-row ones the serves do not take, 23 and 24, 27: 14 with FP8 KV
// in groups of 8 at head dim 128, else 25, 28: 25 with FP8 KV on the persistent grid too, and 29
// and 30: 26 with 16 warps or with 32-position tiles for FP8 KV at head dim 128).
constexpr int kPerSplitWide = 14;
class CoBatch : public ::testing::TestWithParam<std::tuple<int, DType>> {};

// make_config slices the splits (a pinned 4); a split is sliced only when it holds at least two
// slices' worth of positions, so the 20011-token watched sequence (2224 / 1820 positions per split
// under auto) takes the sliced path and 4099 (456 / 373) does not. The persistent grid (22, 25, 28)
// runs only unsliced launches of at most 8 splits a sequence past one wave
// (backends/cuda/wave_fill.h, persistent_grid_pays): "pinned 4 whole" gives it 32/8/128 unpacked
// beside 3, 15 or 31 others (512, 2048 or 4096 units), against the per-split launch alone or
// beside 1.
TEST_P(CoBatch, DecodeBytesDoNotDependOnTheCoBatch) {
  const auto [variant, dtype] = GetParam();
  const int saved_variant = cuda::splitk_kernel_variant();
  ASSERT_TRUE(cuda::set_splitk_kernel_variant(variant));
  for (const auto& [heads, kv_heads, hd] : {std::tuple{32, 8, 128}, std::tuple{24, 4, 256}}) {
    for (const int32_t watched_len : {4099, 20011}) {
      PagedCase c(heads, kv_heads, hd, dtype, cobatch_seqs(watched_len), 31337);
      for (const Policy& p : {Policy{"auto", SplitkPolicy::automatic(), false},
                              Policy{"pinned 4", SplitkPolicy::pinned_to(4), false},
                              Policy{"pinned 16", SplitkPolicy::pinned_to(16), false},
                              Policy{"non-split", SplitkPolicy::pinned_to(1), false},
                              Policy{"packed", SplitkPolicy::pinned_to(1), true},
                              Policy{"auto packed", SplitkPolicy::automatic(), true},
                              Policy{"pinned 16 packed", SplitkPolicy::pinned_to(16), true},
                              Policy{"pinned 4 whole", SplitkPolicy::pinned_to(4), false, 1}}) {
        const std::vector<std::vector<uint16_t>> rows =
            watched_rows(c, make_config(p.policy, p.pack, 132, 32, p.slices));
        ASSERT_FALSE(any_nan(rows[0]));
        for (size_t i = 1; i < rows.size(); ++i) {
          EXPECT_EQ(rows[i], rows[0]) << p.name << " hd " << hd << " watched length " << watched_len
                                      << " co-batch #" << i;
        }
      }
    }
  }
  cuda::set_splitk_kernel_variant(saved_variant);
}

INSTANTIATE_TEST_SUITE_P(Determinism, CoBatch,
                         ::testing::Combine(::testing::Values(ops::kSplitkKernelSingle,
                                                              ops::kSplitkKernelNarrow,
                                                              ops::kSplitkKernelWide, 5, 6, kPerSplitWide),
                                            ::testing::Values(DType::kBF16, DType::kF8E4M3)),
                         [](const ::testing::TestParamInfo<std::tuple<int, DType>>& param) {
                           return "variant" + std::to_string(std::get<0>(param.param)) +
                                  (std::get<1>(param.param) == DType::kBF16 ? "_bf16" : "_fp8");
                         });
INSTANTIATE_TEST_SUITE_P(OptIn, CoBatch,
                         ::testing::Combine(::testing::Values(21, 22, 23, 24, 27, 28, 29, 30),
                                            ::testing::Values(DType::kBF16, DType::kF8E4M3)),
                         [](const ::testing::TestParamInfo<std::tuple<int, DType>>& param) {
                           return "variant" + std::to_string(std::get<0>(param.param)) +
                                  (std::get<1>(param.param) == DType::kBF16 ? "_bf16" : "_fp8");
                         });

// The control: legacy with a reference batch of 1 gives 16 / 8 / 4 / 1 / 1 splits for 8 heads on
// 132 SMs at batch 1 / 2 / 4 / 16 / 32, so the watched row's merge tree changes with the batch.
// The determinism check above must catch that; this asserts that it does.
TEST(Determinism, KnownBadControlFailsTheCheck) {
  PagedCase c(8, 2, 128, DType::kBF16, cobatch_seqs(), 4242);
  const ops::AttentionConfig legacy = make_config(SplitkPolicy::legacy(), false, 132, 1);
  EXPECT_EQ(ops::plan_attention(ops::Phase::kDecode, 1, c.shape(), c.cache_shape(), legacy).num_splits, 16);
  EXPECT_EQ(ops::plan_attention(ops::Phase::kDecode, 2, c.shape(), c.cache_shape(), legacy).num_splits, 8);
  const std::vector<std::vector<uint16_t>> rows = watched_rows(c, legacy);
  int32_t differing = 0;
  for (size_t i = 1; i < rows.size(); ++i) differing += rows[i] != rows[0] ? 1 : 0;
  EXPECT_GT(differing, 0) << "the batch-following split count went undetected";
  // ... while auto on the same data passes.
  const std::vector<std::vector<uint16_t>> fixed = watched_rows(c, make_config(SplitkPolicy::automatic(), false, 132, 32));
  for (size_t i = 1; i < fixed.size(); ++i) EXPECT_EQ(fixed[i], fixed[0]);
}

// A captured launch replays correctly with new device-side lengths (the host never reads them).
TEST(Determinism, GraphReplayReadsDeviceLengths) {
  for (ops::Phase phase : {ops::Phase::kDecode, ops::Phase::kPrefill}) {
    // Query rows for positions 2998.., 699.. and 2.. exist, so both steps below can be formed.
    PagedCase c(32, 8, 128, DType::kBF16, {{3000, 2}, {1500, 801}, {20, 18}}, 555);
    const ops::AttentionConfig config = make_config(SplitkPolicy::automatic(), false, 132, 8);
    const Step first = {{0, 3000, 1}, {1, 1500, 1}, {2, 20, 1}};
    const Step second = {{0, 2999, 1}, {1, 700, 1}, {2, 3, 1}};  // same shapes, new lengths
    const std::vector<uint16_t> eager = c.run(phase, second, config);

    cudaStream_t stream;
    ATTN_CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    const ops::DeviceBatch batch = c.upload_step(phase, first);
    const size_t ws_bytes = ops::attention_workspace_bytes(c.shape(), config);
    DeviceBuffer workspace(ws_bytes);
    const int64_t cols = c.row_elems();
    const ops::Act q{c.q_device(), DType::kBF16, 3, cols, cols};
    const ops::Act out{c.out_device(), DType::kBF16, 3, cols, cols};
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    ATTN_CUDA_OK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    ops::cuda::attention_forward(batch, q, c.shape(), c.cache_shape(), c.layer(), out, workspace.get(), ws_bytes, config,
                                 stream);
    ATTN_CUDA_OK(cudaStreamEndCapture(stream, &graph));
    ATTN_CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
    // New contents in the same device buffers, then replay.
    const ops::DeviceBatch again = c.upload_step(phase, second);
    ASSERT_EQ(again.context_lens, batch.context_lens);
    c.poison_output();
    ATTN_CUDA_OK(cudaGraphLaunch(exec, stream));
    ATTN_CUDA_OK(cudaStreamSynchronize(stream));
    EXPECT_EQ(c.download_output(3), eager) << (phase == ops::Phase::kDecode ? "decode" : "prefill");
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
    cudaStreamDestroy(stream);
  }
}

// A decode row that shares its step with prefill chunks (the leading num_decode_rows sequences of
// a mixed step) gets the bytes it gets in a pure decode step; the chunks get the bytes of a
// prefill-only step.
TEST(Determinism, MixedStepDecodeRowsMatchAPureDecodeStep) {
  if (!batch_has_decode_rows()) GTEST_SKIP() << "ops::DeviceBatch has no num_decode_rows in this build";
  for (const auto& [policy, pack] : {std::pair{SplitkPolicy::automatic(), true}, std::pair{SplitkPolicy::pinned_to(1), false}}) {
    PagedCase c(24, 4, 256, DType::kBF16, {{5000, 1}, {77, 1}, {1200, 1}, {300, 120}, {64, 64}}, 808);
    const ops::AttentionConfig config = make_config(policy, pack, 132, 16);
    const Step decode = {{0, 5000, 1}, {1, 77, 1}, {2, 1200, 1}};
    const Step prefill = {{3, 300, 120}, {4, 64, 64}};
    Step mixed = decode;
    mixed.insert(mixed.end(), prefill.begin(), prefill.end());
    const std::vector<uint16_t> pure_decode = c.run(ops::Phase::kDecode, decode, config);
    const std::vector<uint16_t> pure_prefill = c.run(ops::Phase::kPrefill, prefill, config);
    const std::vector<uint16_t> both = c.run(ops::Phase::kPrefill, mixed, config, nullptr, 3);
    ASSERT_FALSE(any_nan(both));
    const size_t split = pure_decode.size();
    EXPECT_EQ(std::vector<uint16_t>(both.begin(), both.begin() + static_cast<std::ptrdiff_t>(split)), pure_decode);
    EXPECT_EQ(std::vector<uint16_t>(both.begin() + static_cast<std::ptrdiff_t>(split), both.end()), pure_prefill);
  }
}

}  // namespace
}  // namespace lathe::attn_test
