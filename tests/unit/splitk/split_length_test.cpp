// The split-K kernel's KV ranges (backends/cuda/split_length.h), checked on the host for every
// length up to 5000 and the split counts and floors the policies produce: the splits of a
// sequence cover [0, len) exactly once and in order; no more than `splits` are non-empty; the
// seed rule is max(ceil(len / splits), floor); the even rule uses exactly u = clamp(len / floor,
// 1, splits) splits (true whenever splits <= floor + 1: (u - 1) * ceil(len / u) < len), whose
// lengths differ by less than u (no ragged tail), none shorter than floor - u when len >= floor;
// the aligned rule is the seed's length rounded up to the granule (64 here: 4 warps x 16), so it
// uses no more splits than the seed's.
#include <gtest/gtest.h>

#include <algorithm>

#include "backends/cuda/split_length.h"

namespace {

using lathe::cuda::split_length;
using lathe::cuda::split_slices_used;
using lathe::cuda::SplitRule;

constexpr int kSeed = static_cast<int>(SplitRule::kSeed);
constexpr int kEven = static_cast<int>(SplitRule::kEven);
constexpr int kAligned = static_cast<int>(SplitRule::kAligned);
constexpr int kGranule = 64;

TEST(SplitLength, EverySplitRangeCoversTheSequenceOnceInOrder) {
  for (const int rule : {kSeed, kEven, kAligned}) {
    for (const int splits : {1, 2, 5, 9, 16}) {
      for (const int floor : {16, 128, 256, 512}) {
        for (int len = 1; len <= 5000; ++len) {
          const int n = split_length(len, splits, floor, rule, kGranule);
          ASSERT_GE(n, 1);
          int covered = 0, non_empty = 0, shortest = len, longest = 0;
          for (int s = 0; s < splits; ++s) {
            const int64_t first = static_cast<int64_t>(s) * n;
            const int start = static_cast<int>(std::min<int64_t>(first, len));
            const int end = static_cast<int>(std::min<int64_t>(first + n, len));
            ASSERT_EQ(start, covered) << "rule " << rule << " len " << len << " split " << s;
            covered = end;
            if (end > start) {
              ++non_empty;
              shortest = std::min(shortest, end - start);
              longest = std::max(longest, end - start);
            }
          }
          ASSERT_EQ(covered, len) << "rule " << rule << " splits " << splits << " floor " << floor << " len " << len;
          ASSERT_LE(non_empty, splits);
          const int seed = std::max((len + splits - 1) / splits, floor);
          if (rule == kSeed) {
            ASSERT_EQ(n, seed);
          } else if (rule == kAligned) {
            ASSERT_EQ(n % kGranule, 0);
            ASSERT_GE(n, seed);
            ASSERT_LT(n - seed, kGranule);
            ASSERT_LE(non_empty, (len + seed - 1) / seed) << "len " << len;
          } else {
            // u = clamp(len / floor, 1, splits) splits of ceil(len / u): every split but the last
            // is n long and the last is short by less than u positions.
            const int used = std::clamp(len / floor, 1, splits);
            ASSERT_EQ(non_empty, used) << "len " << len;
            ASSERT_LT(longest - shortest, used) << "len " << len << " floor " << floor;
            if (len >= floor) {
              ASSERT_GE(shortest, floor - used) << "len " << len;
            }
          }
        }
      }
    }
  }
}

// Slices (split_slices_used): u = clamp(floor(n / floor), 1, cap) slices of ceil(n / u) cover
// the split [0, n) once and in order, none empty, each at least the floor except the last, which
// is short by less than u; an empty split has no slices.
TEST(SplitSlices, CoverTheSplitOnceInOrder) {
  for (const int cap : {1, 2, 3, 6, 8}) {
    for (const int floor : {16, 256, 512}) {
      EXPECT_EQ(split_slices_used(0, cap, floor), 0);
      for (int n = 1; n <= 6000; ++n) {
        const int used = split_slices_used(n, cap, floor);
        ASSERT_EQ(used, std::clamp(n / floor, 1, cap)) << "n " << n;
        const int len = (n + used - 1) / used;
        int covered = 0;
        for (int i = 0; i < used; ++i) {
          const int start = i * len, end = std::min(start + len, n);
          ASSERT_EQ(start, covered) << "n " << n << " slice " << i;
          ASSERT_GT(end, start) << "n " << n << " cap " << cap << " floor " << floor << " slice " << i;
          if (n >= floor && i + 1 < used) {
            ASSERT_GE(end - start, floor);
          }
          if (n >= floor) {
            ASSERT_GT(end - start, floor - used) << "n " << n;
          }
          covered = end;
        }
        ASSERT_EQ(covered, n);
      }
    }
  }
}

// Qwen3-8B at 4k: the seed's 456 positions per split are 29 tiles of 16 for 4 warps (8, 7, 7, 7);
// aligned to 64 they are 512, 8 tiles per warp, in 8 splits (the ninth empty).
TEST(SplitLength, TheAlignedRuleGivesEveryWarpOfAFullSplitTheSameTiles) {
  EXPECT_EQ(split_length(4096, 9, 128, kSeed), 456);
  EXPECT_EQ(split_length(4096, 9, 128, kAligned, 64), 512);
  EXPECT_EQ(split_length(1024, 9, 128, kAligned, 64), 128);  // the floor is already aligned
  EXPECT_EQ(split_length(4096, 9, 128, kAligned, 1), split_length(4096, 9, 128, kSeed));
}

TEST(SplitLength, RuleNamesAreTheLeverSpellings) {
  EXPECT_STREQ(lathe::cuda::split_rule_name(SplitRule::kSeed), "seed");
  EXPECT_STREQ(lathe::cuda::split_rule_name(SplitRule::kEven), "even");
  EXPECT_STREQ(lathe::cuda::split_rule_name(SplitRule::kAligned), "aligned");
}

TEST(SplitLength, TheEvenRuleRemovesTheRaggedTailTheSeedRuleLeaves) {
  // Qwen3-32B at 1k context: 5 splits; a floor of 256 leaves 4 x 256 + 16 under the seed rule,
  // 4 x 260 under the even rule. Qwen3-8B: 9 splits, floor 128: 8 x 128 + 16 against 8 x 130.
  EXPECT_EQ(split_length(1040, 5, 256, kSeed), 256);
  EXPECT_EQ(split_length(1040, 5, 256, kEven), 260);
  EXPECT_EQ(split_length(1040, 9, 128, kSeed), 128);
  EXPECT_EQ(split_length(1040, 9, 128, kEven), 130);
  // Short sequences take one split under both rules when shorter than the floor.
  EXPECT_EQ(split_length(100, 9, 128, kSeed), 128);
  EXPECT_EQ(split_length(100, 9, 128, kEven), 100);
  // Long sequences: both rules use every split.
  EXPECT_EQ(split_length(65536, 9, 128, kSeed), split_length(65536, 9, 128, kEven));
}

}  // namespace
