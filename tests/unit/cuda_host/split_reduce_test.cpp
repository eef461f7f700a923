// Which reduce merges a split-K launch's records (backends/cuda/split_reduce.h).
#include "backends/cuda/split_reduce.h"

#include <gtest/gtest.h>

namespace lathe::cuda {
namespace {

constexpr int kMaxWarpSplits = 16;

TEST(SplitReduce, AutoTakesTheHeadCtasForOneSequenceAndTheWarpsFromTwo) {
  EXPECT_FALSE(reduce_by_warps(SplitReduce::kAuto, 1, 1, 9, kMaxWarpSplits));
  for (int seqs : {2, 4, 16, 64})
    EXPECT_TRUE(reduce_by_warps(SplitReduce::kAuto, seqs, 1, 9, kMaxWarpSplits)) << seqs;
}

TEST(SplitReduce, PinnedModesIgnoreTheBatch) {
  for (int seqs : {1, 2, 64}) {
    EXPECT_TRUE(reduce_by_warps(SplitReduce::kWarps, seqs, 1, 5, kMaxWarpSplits)) << seqs;
    EXPECT_FALSE(reduce_by_warps(SplitReduce::kHeadCtas, seqs, 1, 5, kMaxWarpSplits)) << seqs;
  }
}

TEST(SplitReduce, WarpsOnlyWhereTheyAreBuilt) {
  for (SplitReduce mode : {SplitReduce::kAuto, SplitReduce::kWarps}) {
    EXPECT_FALSE(reduce_by_warps(mode, 4, 2, 9, kMaxWarpSplits)) << "sliced launch";
    EXPECT_FALSE(reduce_by_warps(mode, 4, 1, kMaxWarpSplits + 1, kMaxWarpSplits)) << "more splits than lanes";
    EXPECT_TRUE(reduce_by_warps(mode, 4, 1, kMaxWarpSplits, kMaxWarpSplits));
  }
}

TEST(SplitReduce, NamesAreTheLeverSpellings) {
  EXPECT_STREQ(split_reduce_name(SplitReduce::kAuto), "auto");
  EXPECT_STREQ(split_reduce_name(SplitReduce::kHeadCtas), "heads");
  EXPECT_STREQ(split_reduce_name(SplitReduce::kWarps), "warps");
}

}  // namespace
}  // namespace lathe::cuda
