// BoundedMemo (backends/cuda/bounded_memo.h): each key is made once while stored, a refused make
// stores nothing, the capacity bounds it, and concurrent callers share one made value per key.
#include "backends/cuda/bounded_memo.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace lathe::cuda {
namespace {

using Key = std::array<uint64_t, 2>;
using Memo = BoundedMemo<Key, int, WordsHash<2>>;

TEST(BoundedMemo, MakesEachKeyOnceAndReturnsTheStoredValue) {
  Memo memo(8);
  int makes = 0;
  auto make_from = [&](int value) {
    return [&makes, value](int& out) {
      ++makes;
      out = value;
      return true;
    };
  };
  int got = 0;
  ASSERT_TRUE(memo.get_or_make({1, 2}, got, make_from(10)));
  EXPECT_EQ(got, 10);
  ASSERT_TRUE(memo.get_or_make({1, 2}, got, make_from(99)));  // stored: 99 is never made
  EXPECT_EQ(got, 10);
  ASSERT_TRUE(memo.get_or_make({2, 1}, got, make_from(20)));  // word order is part of the key
  EXPECT_EQ(got, 20);
  EXPECT_EQ(makes, 2);
  EXPECT_EQ(memo.size(), 2u);
}

TEST(BoundedMemo, ARefusedMakeStoresNothing) {
  Memo memo(8);
  int calls = 0;
  int got = -1;
  EXPECT_FALSE(memo.get_or_make({3, 3}, got, [&](int&) {
    ++calls;
    return false;
  }));
  EXPECT_EQ(memo.size(), 0u);
  EXPECT_FALSE(memo.get_or_make({3, 3}, got, [&](int&) {
    ++calls;
    return false;
  }));
  EXPECT_EQ(calls, 2);  // tried again, not remembered as a failure
}

TEST(BoundedMemo, ANewKeyPastTheCapacityClearsIt) {
  Memo memo(3);
  int got = 0;
  for (uint64_t k = 0; k < 3; ++k) {
    ASSERT_TRUE(memo.get_or_make({k, 0}, got, [&](int& out) {
      out = static_cast<int>(k);
      return true;
    }));
  }
  EXPECT_EQ(memo.size(), 3u);
  ASSERT_TRUE(memo.get_or_make({7, 0}, got, [&](int& out) {
    out = 7;
    return true;
  }));
  EXPECT_EQ(memo.size(), 1u);
  int remade = 0;
  ASSERT_TRUE(memo.get_or_make({0, 0}, got, [&](int& out) {
    ++remade;
    out = 0;
    return true;
  }));
  EXPECT_EQ(remade, 1);  // cleared with the rest
}

TEST(BoundedMemo, ConcurrentCallersShareOneValuePerKey) {
  Memo memo(64);
  std::atomic<int> makes{0};
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int round = 0; round < 200; ++round) {
        const uint64_t k = static_cast<uint64_t>(round % 16);
        int got = -1;
        const bool ok = memo.get_or_make({k, k}, got, [&](int& out) {
          makes.fetch_add(1);
          out = static_cast<int>(k) * 3;
          return true;
        });
        if (!ok || got != static_cast<int>(k) * 3) wrong.fetch_add(1);
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(makes.load(), 16);
}

TEST(WordsHash, DependsOnEveryWordAndItsPosition) {
  const WordsHash<3> hash;
  const size_t base = hash({1, 2, 3});
  EXPECT_NE(base, hash({1, 2, 4}));
  EXPECT_NE(base, hash({3, 2, 1}));
  EXPECT_EQ(base, hash({1, 2, 3}));
}

}  // namespace
}  // namespace lathe::cuda
