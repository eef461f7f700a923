// Paged prefill against the double reference, and its invariances: a row's bytes do not depend on
// how the prompt was chunked or on the other sequences of the step.
#include <gtest/gtest.h>

#include <string>
#include <tuple>

#include "attention_fixture.h"
#include "backends/cuda/paged_attention.h"

namespace lathe::attn_test {
namespace {

using target::SplitkPolicy;
using Step = std::vector<PagedCase::StepSeq>;

// BF16 output rounding (~1.1e-3 rms) plus the BF16 rounding of the probabilities fed to the
// tensor cores (of the same order).
constexpr double kPrefillTolerance = 6e-3;

struct Geometry {
  int32_t heads, kv_heads, head_dim;
};

class Prefill : public ::testing::TestWithParam<std::tuple<DType, Geometry>> {};

TEST_P(Prefill, MatchesTheReference) {
  const auto [dtype, geo] = GetParam();
  // Whole prompts, chunks over a cached prefix, a single-row chunk, and a decode row in the step.
  PagedCase c(geo.heads, geo.kv_heads, geo.head_dim, dtype,
              {{100, 100}, {300, 37}, {65, 1}, {129, 64}, {17, 17}, {400, 130}}, 4321);
  const Step step = c.full_step();
  const std::vector<uint16_t> out = c.run(ops::Phase::kPrefill, step, make_config(SplitkPolicy::automatic(), false));
  ASSERT_FALSE(any_nan(out));
  EXPECT_LE(rel_rms(out, c.reference(step)), kPrefillTolerance);
}

// Head dim 128 takes the warp-specialised warpgroup-MMA kernel on sm_90a; the mma.sync kernel must
// give every row the same bytes (so a serve's bytes do not depend on which of the two its GPU runs).
// Long prompts (several query tiles, up to 32 KV tiles through the producer's 4-slot ring) and chunks
// over a cached prefix (tiles not aligned with the chunk's rows).
TEST_P(Prefill, WarpSpecialisedAndMmaSyncKernelsGiveTheSameBytes) {
  const auto [dtype, geo] = GetParam();
  if (!cuda::prefill_uses_wgmma(geo.head_dim))
    GTEST_SKIP() << "no warpgroup-MMA prefill for this head dim here";
  // Block sizes: the tensor copies take 16-position boxes at 16 and 48 (starting anywhere in a
  // block), whole 64-position tiles at 64 and 128. The f64 reference is checked at the first only
  // (it is the slow part); at the others the two kernels must agree byte for byte.
  bool first = true;
  for (const int32_t block_size : {16, 48, 64, 128}) {
    PagedCase c(geo.heads, geo.kv_heads, geo.head_dim, dtype,
                {{100, 100}, {300, 37}, {65, 1}, {129, 64}, {17, 17}, {400, 130}, {1000, 1000}, {2000, 333}},
                4321, block_size);
    const Step step = c.full_step();
    const ops::AttentionConfig config = make_config(SplitkPolicy::automatic(), false);
    const std::vector<uint16_t> warpgroup = c.run(ops::Phase::kPrefill, step, config);
    cuda::set_prefill_wgmma(false);
    const std::vector<uint16_t> warp = c.run(ops::Phase::kPrefill, step, config);
    cuda::set_prefill_wgmma(true);
    ASSERT_FALSE(any_nan(warpgroup)) << "block size " << block_size;
    EXPECT_EQ(warpgroup, warp) << "block size " << block_size;
    if (first) {
      EXPECT_LE(rel_rms(warpgroup, c.reference(step)), kPrefillTolerance) << "block size " << block_size;
    }
    first = false;
  }
}

TEST_P(Prefill, ChunkingDoesNotChangeARowsBytes) {
  const auto [dtype, geo] = GetParam();
  const int32_t len = 333;
  PagedCase c(geo.heads, geo.kv_heads, geo.head_dim, dtype, {{len, len}, {250, 250}}, 99);
  const ops::AttentionConfig config = make_config(SplitkPolicy::automatic(), false);
  const std::vector<uint16_t> whole = c.run(ops::Phase::kPrefill, {{0, len, len}}, config);
  ASSERT_FALSE(any_nan(whole));
  const size_t row = static_cast<size_t>(c.row_elems());
  for (const std::vector<int32_t>& chunks : std::vector<std::vector<int32_t>>{
           {100, 133, 100}, {1, 64, 268}, {64, 64, 64, 64, 64, 13}, {332, 1}, {7, 300, 26}}) {
    int32_t done = 0;
    for (int32_t chunk : chunks) {
      done += chunk;
      // The chunk runs beside another sequence's prompt, which must not matter either.
      const std::vector<uint16_t> part = c.run(ops::Phase::kPrefill, {{1, 250, 250}, {0, done, chunk}}, config);
      const std::vector<uint16_t> mine(part.begin() + 250 * row, part.end());
      const std::vector<uint16_t> expected(whole.begin() + static_cast<size_t>(done - chunk) * row,
                                           whole.begin() + static_cast<size_t>(done) * row);
      ASSERT_EQ(mine, expected) << "chunk ending at " << done;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, Prefill,
                         ::testing::Combine(::testing::Values(DType::kBF16, DType::kF8E4M3),
                                            ::testing::Values(Geometry{8, 2, 128}, Geometry{6, 1, 256},
                                                              Geometry{4, 4, 64})),
                         [](const auto& param_info) {
                           const Geometry g = std::get<1>(param_info.param);
                           return std::string(std::get<0>(param_info.param) == DType::kBF16 ? "bf16" : "fp8") + "_nq" +
                                  std::to_string(g.heads) + "_nkv" + std::to_string(g.kv_heads) + "_hd" +
                                  std::to_string(g.head_dim);
                         });

}  // namespace
}  // namespace lathe::attn_test
