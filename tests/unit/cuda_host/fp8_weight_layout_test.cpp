// The stored order of fp8 weight rows on the CUDA backend (backends/cuda/fp8_weight_layout.h):
// a permutation inside each 64-k block whose 16-byte quarter c, word q holds exactly the natural k
// the GEMV's MMA q fragments of thread quarter c take ({16q + 2c, +1} then {16q + 8 + 2c, +1}),
// scale blocks untouched, and rows of other lengths left as they are.
#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <vector>

#include "backends/cuda/fp8_weight_layout.h"

namespace {

using lathe::cuda::fp8_natural_column;
using lathe::cuda::fp8_natural_of_stored;
using lathe::cuda::fp8_rows_permuted;
using lathe::cuda::fp8_stored_column;
using lathe::cuda::fp8_stored_of_natural;
using lathe::cuda::permuted_fp8_rows;

TEST(Fp8WeightLayout, IsAPermutationOfEachBlockWithItsInverse) {
  std::vector<int> hits(64, 0);
  for (int s = 0; s < 64; ++s) {
    const int k = fp8_natural_of_stored(s);
    ASSERT_GE(k, 0);
    ASSERT_LT(k, 64);
    ++hits[k];
    EXPECT_EQ(fp8_stored_of_natural(k), s);
  }
  for (int k = 0; k < 64; ++k) EXPECT_EQ(hits[k], 1) << "natural k " << k;
}

TEST(Fp8WeightLayout, EachThreadsWordIsItsMmaFragment) {
  for (int c = 0; c < 4; ++c) {      // the thread's quarter of the block (lane % 4)
    for (int q = 0; q < 4; ++q) {    // the MMA (16 natural k) of the half
      for (int j = 0; j < 2; ++j) {  // fragment register a0 / a2: logical k 2c (+8j)
        for (int e = 0; e < 2; ++e) {
          const int stored = 16 * c + 4 * q + 2 * j + e;
          EXPECT_EQ(fp8_natural_of_stored(stored), 16 * q + 8 * j + 2 * c + e) << "c " << c << " q " << q;
        }
      }
    }
  }
}

TEST(Fp8WeightLayout, PermutesRowsInPlaceOfTheirBlocksAndLeavesOtherLengths) {
  constexpr int64_t kRows = 3, kK = 256;
  std::vector<uint8_t> natural(kRows * kK);
  std::iota(natural.begin(), natural.end(), uint8_t{0});
  const std::vector<uint8_t> stored = permuted_fp8_rows(natural, kRows, kK);
  ASSERT_TRUE(fp8_rows_permuted(kK));
  for (int64_t r = 0; r < kRows; ++r) {
    for (int64_t col = 0; col < kK; ++col) {
      const int64_t at = fp8_stored_column(col, kK);
      EXPECT_EQ(at / 128, col / 128) << "a 128-k scale block keeps its columns";
      EXPECT_EQ(stored[r * kK + at], natural[r * kK + col]) << "row " << r << " column " << col;
      EXPECT_EQ(fp8_natural_column(at, kK), col);
    }
  }
  EXPECT_NE(stored, natural);

  constexpr int64_t kOdd = 96;  // not a multiple of 64: natural order
  ASSERT_FALSE(fp8_rows_permuted(kOdd));
  std::vector<uint8_t> odd(2 * kOdd);
  std::iota(odd.begin(), odd.end(), uint8_t{7});
  EXPECT_EQ(permuted_fp8_rows(odd, 2, kOdd), odd);
  EXPECT_EQ(fp8_stored_column(70, kOdd), 70);
  EXPECT_EQ(fp8_natural_column(70, kOdd), 70);
}

}  // namespace
