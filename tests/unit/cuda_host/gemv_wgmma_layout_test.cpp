// The :wg / :wgn x layouts (backends/cuda/gemv_wgmma_layout.h) against the two mappings they must join:
// wgmma's reading of a no-swizzle, K-major B operand (element (column n, logical k L) of a chunk at
// byte (n / 8) * SBO + (L / 8) * LBO + (n % 8) * 16 + (L % 8) * 2, with the descriptor's LBO = 128
// and SBO = 256), and the GEMV's K permutation (gemv_common.cuh: MMA q of a 64-k half takes
// physical k c * 16 + 4q + {0, 1, 2, 3} as logical {2c, 2c + 1, 2c + 8, 2c + 9}). Every element
// wgmma reads must be the x the permutation asks for, and staging must fill each byte of a group
// once. Every form: 32 columns (n32) in groups of 2 steps, 16 (n16) in groups of 4, 8 (n8) in groups of 8.
#include <gtest/gtest.h>

#include <vector>

#include "backends/cuda/gemv_wgmma_layout.h"

namespace {

using lathe::cuda::gemv_detail::kWgChunkBytes;
using lathe::cuda::gemv_detail::kWgStepBytes;
using lathe::cuda::gemv_detail::wg_row_column;
using lathe::cuda::gemv_detail::wg_x_offset;

constexpr int kLbo = 128;
constexpr int kSbo = 256;

// kCols columns staged kSteps steps per group (gemv.cu: the 32-row tier 32 x 2, the 16-row tier
// 16 x 4, tiers 1 and 4 8 x 8).
template <int kCols, int kSteps>
void expect_wgmma_reads_the_permuted_x() {
  for (int t = 0; t < kSteps; ++t) {
    for (int h = 0; h < 2; ++h) {
      for (int q = 0; q < 4; ++q) {
        const int chunk = t * kWgStepBytes<kCols> + (h * 4 + q) * kWgChunkBytes<kCols>;
        for (int n = 0; n < kCols; ++n) {
          for (int logical = 0; logical < 16; logical += 2) {  // bf16 pairs: one 4-byte word
            const int read = chunk + (n / 8) * kSbo + (logical / 8) * kLbo + (n % 8) * 16 + (logical % 8) * 2;
            const int c = (logical % 8) / 2;
            const int physical = t * 128 + h * 64 + c * 16 + 4 * q + (logical >= 8 ? 2 : 0);
            EXPECT_EQ(wg_x_offset<kCols>(physical / 2, n), read)
                << kCols << " columns: step " << t << " half " << h << " mma " << q << " column " << n
                << " logical k " << logical;
            // The row the launch zeroes for columns past m is this column's.
            EXPECT_EQ(wg_row_column<kCols>(read / 16), n) << kCols << " columns, byte " << read;
          }
        }
      }
    }
  }
}

template <int kCols, int kSteps>
void expect_staging_writes_every_byte_once() {
  std::vector<int> writes(kSteps * kWgStepBytes<kCols> / 4, 0);
  for (int u = 0; u < kSteps * 64; ++u) {
    for (int n = 0; n < kCols; ++n) {
      const int offset = wg_x_offset<kCols>(u, n);
      ASSERT_EQ(offset % 4, 0);
      ASSERT_GE(offset, 0);
      ASSERT_LT(offset, kSteps * kWgStepBytes<kCols>);
      ++writes[offset / 4];
    }
  }
  for (size_t i = 0; i < writes.size(); ++i) EXPECT_EQ(writes[i], 1) << kCols << " columns, word " << i;
}

TEST(GemvWgmmaLayout, EveryElementWgmmaReadsIsTheXThePermutationAsksFor) {
  expect_wgmma_reads_the_permuted_x<32, 2>();
  expect_wgmma_reads_the_permuted_x<16, 4>();
  expect_wgmma_reads_the_permuted_x<8, 8>();
}

TEST(GemvWgmmaLayout, StagingWritesEveryByteOfAGroupOnce) {
  expect_staging_writes_every_byte_once<32, 2>();
  expect_staging_writes_every_byte_once<16, 4>();
  expect_staging_writes_every_byte_once<8, 8>();
}

}  // namespace
