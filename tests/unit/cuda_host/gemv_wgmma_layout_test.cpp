// The :wg / :wgn x layouts (backends/cuda/gemv_wgmma_layout.h) against the two mappings they must join:
// wgmma's reading of a 128-byte-swizzled, K-major B operand (element (column n, logical k L) of the
// chunk whose descriptor starts at byte S, S = A + 32q inside a 1024-byte aligned atom run A, at
// byte A + (n / 8) * SBO + (n % 8) * 128 + (((32q + 2L) / 16) ^ (n % 8)) * 16 + (2L) % 16 with the
// descriptor's SBO = 1024: the swizzle XORs address bits 4-6 with bits 7-9), and the GEMV's K
// permutation (gemv_common.cuh: MMA q of a 64-k half takes physical k c * 16 + 4q + {0, 1, 2, 3}
// as logical {2c, 2c + 1, 2c + 8, 2c + 9}). Every element wgmma reads must be the x the
// permutation asks for, staging must fill each byte of a group once, and a warp's 32 consecutive
// words of one column (wg_for_each_unit) must fall in 32 different banks. With fp8 weights (stored
// order of fp8_weight_layout.h) logical k is natural k and x goes in 16-byte units
// (wg_x_unit_offset): the same three properties, each 8 consecutive units of a column a
// conflict-free quarter of a warp's stores. Every form: 32 columns (n32) in groups of 2 steps, 16
// (n16) in groups of 4, 8 (n8) in groups of 8.
#include <gtest/gtest.h>

#include <vector>

#include "backends/cuda/gemv_wgmma_layout.h"

namespace {

using lathe::cuda::gemv_detail::kWgAtomBytes;
using lathe::cuda::gemv_detail::kWgHalfBytes;
using lathe::cuda::gemv_detail::kWgStepBytes;
using lathe::cuda::gemv_detail::wg_chunk_offset;
using lathe::cuda::gemv_detail::wg_row_column;
using lathe::cuda::gemv_detail::wg_x_offset;
using lathe::cuda::gemv_detail::wg_x_unit_offset;

constexpr int kSbo = 1024;

// wgmma's reading, written from the swizzle's definition (address bits 4-6 ^= bits 7-9) rather than
// from the layout's formula: the byte of (column n, logical k L) for a descriptor starting at byte
// `start` of a 1024-byte aligned buffer.
int swizzled_read(int start, int n, int logical) {
  const int linear = start + (n / 8) * kSbo + (n % 8) * 128 + logical * 2;
  return linear ^ (((linear >> 7) & 7) << 4);
}

// kCols columns staged kSteps steps per group (gemv_ring_kernel.cuh: the 32-row tier 32 x 2, the 16-row tier
// 16 x 4, tiers 1 and 4 8 x 8).
template <int kCols, int kSteps>
void expect_wgmma_reads_the_permuted_x() {
  for (int t = 0; t < kSteps; ++t) {
    for (int h = 0; h < 2; ++h) {
      for (int q = 0; q < 4; ++q) {
        const int start = t * kWgStepBytes<kCols> + wg_chunk_offset<kCols>(h, q);
        EXPECT_EQ((start - q * 32) % kWgAtomBytes, 0) << "a chunk starts inside an aligned atom row";
        for (int n = 0; n < kCols; ++n) {
          for (int logical = 0; logical < 16; logical += 2) {  // bf16 pairs: one 4-byte word
            const int read = swizzled_read(start, n, logical);
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

template <int kCols, int kSteps>
void expect_a_warp_of_words_hits_every_bank() {
  for (int base = 0; base < kSteps * 64; base += 32) {
    for (int n = 0; n < kCols; ++n) {
      std::vector<int> banks(32, 0);
      for (int lane = 0; lane < 32; ++lane) ++banks[(wg_x_offset<kCols>(base + lane, n) / 4) % 32];
      for (int bank = 0; bank < 32; ++bank)
        EXPECT_EQ(banks[bank], 1) << kCols << " columns, words " << base << "+, column " << n << ", bank " << bank;
    }
  }
}

template <int kCols, int kSteps>
void expect_wgmma_reads_natural_x_from_units() {
  for (int t = 0; t < kSteps; ++t) {
    for (int h = 0; h < 2; ++h) {
      for (int q = 0; q < 4; ++q) {
        const int start = t * kWgStepBytes<kCols> + wg_chunk_offset<kCols>(h, q);
        for (int n = 0; n < kCols; ++n) {
          for (int logical = 0; logical < 16; ++logical) {
            const int natural = t * 128 + h * 64 + 16 * q + logical;
            EXPECT_EQ(wg_x_unit_offset<kCols>(natural / 8, n) + (natural % 8) * 2, swizzled_read(start, n, logical))
                << kCols << " columns: step " << t << " half " << h << " mma " << q << " column " << n
                << " logical k " << logical;
          }
        }
      }
    }
  }
}

template <int kCols, int kSteps>
void expect_unit_staging_writes_every_byte_once_without_conflicts() {
  std::vector<int> writes(kSteps * kWgStepBytes<kCols> / 16, 0);
  for (int n = 0; n < kCols; ++n) {
    for (int u = 0; u < kSteps * 16; ++u) {
      const int offset = wg_x_unit_offset<kCols>(u, n);
      ASSERT_EQ(offset % 16, 0);
      ASSERT_GE(offset, 0);
      ASSERT_LT(offset, kSteps * kWgStepBytes<kCols>);
      ++writes[offset / 16];
    }
    for (int base = 0; base < kSteps * 16; base += 8) {  // 8 lanes' 16-byte stores: one wavefront
      std::vector<int> groups(8, 0);
      for (int lane = 0; lane < 8; ++lane) ++groups[(wg_x_unit_offset<kCols>(base + lane, n) / 16) % 8];
      for (int g = 0; g < 8; ++g) EXPECT_EQ(groups[g], 1) << kCols << " columns, units " << base << "+, column " << n;
    }
  }
  for (size_t i = 0; i < writes.size(); ++i) EXPECT_EQ(writes[i], 1) << kCols << " columns, unit " << i;
}

TEST(GemvWgmmaLayout, Fp8WeightsWgmmaReadsNaturalXFromWholeUnits) {
  expect_wgmma_reads_natural_x_from_units<32, 2>();
  expect_wgmma_reads_natural_x_from_units<16, 4>();
  expect_wgmma_reads_natural_x_from_units<8, 8>();
}

TEST(GemvWgmmaLayout, Fp8WeightsUnitStagingWritesEveryByteOnceWithoutConflicts) {
  expect_unit_staging_writes_every_byte_once_without_conflicts<32, 2>();
  expect_unit_staging_writes_every_byte_once_without_conflicts<16, 4>();
  expect_unit_staging_writes_every_byte_once_without_conflicts<8, 8>();
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

TEST(GemvWgmmaLayout, AWarpsStagingStoresFallInDifferentBanks) {
  expect_a_warp_of_words_hits_every_bank<32, 2>();
  expect_a_warp_of_words_hits_every_bank<16, 4>();
  expect_a_warp_of_words_hits_every_bank<8, 8>();
}

}  // namespace
