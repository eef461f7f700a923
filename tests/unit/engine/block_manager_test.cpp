#include "engine/block_manager.h"

#include <gtest/gtest.h>

#include <random>
#include <set>

#include "core/error.h"

namespace lathe::engine {
namespace {

TEST(BlockManager, ReservesTheScratchBlockAndMapsSlots) {
  BlockManager blocks(5, 4);
  EXPECT_EQ(blocks.num_usable(), 4);
  ASSERT_TRUE(blocks.ensure_capacity(7, 6));  // 6 tokens -> 2 blocks
  EXPECT_EQ(blocks.block_table(7).size(), 2u);
  for (int32_t block : blocks.block_table(7)) EXPECT_NE(block, BlockManager::kScratchBlock);
  const auto& table = blocks.block_table(7);
  EXPECT_EQ(blocks.slot(7, 5), table[1] * 4 + 1);
  EXPECT_EQ(blocks.capacity(7), 8);
  EXPECT_THROW(blocks.slot(7, 8), Error);
}

TEST(BlockManager, AllocationIsAllOrNothing) {
  BlockManager blocks(4, 2);  // 3 usable
  ASSERT_TRUE(blocks.ensure_capacity(1, 4));
  EXPECT_FALSE(blocks.ensure_capacity(2, 4));
  EXPECT_FALSE(blocks.has(2));
  EXPECT_EQ(blocks.num_free(), 1);
  blocks.release(1);
  EXPECT_EQ(blocks.num_free(), 3);
  EXPECT_TRUE(blocks.ensure_capacity(2, 6));
  EXPECT_TRUE(blocks.check_invariants());
}

TEST(BlockManager, RandomisedGrowAndReleaseNeverLeaksOrDoubleOwns) {
  std::mt19937 rng(1234);
  BlockManager blocks(64, 16);
  std::set<SeqId> live;
  for (int step = 0; step < 20000; ++step) {
    const SeqId seq = static_cast<SeqId>(rng() % 24);
    if (rng() % 5 == 0) {
      blocks.release(seq);
      live.erase(seq);
    } else {
      const int64_t tokens = blocks.capacity(seq) + static_cast<int64_t>(rng() % 40);
      if (blocks.ensure_capacity(seq, tokens)) live.insert(seq);
    }
    ASSERT_TRUE(blocks.check_invariants()) << "step " << step;
  }
  for (SeqId seq : live) blocks.release(seq);
  EXPECT_EQ(blocks.num_used(), 0);
  EXPECT_EQ(blocks.num_sequences(), 0u);
}

}  // namespace
}  // namespace lathe::engine
