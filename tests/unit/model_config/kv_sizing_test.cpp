// KV-cache sizing from --gpu-memory-utilization (model/kv_sizing.h).
#include "model/kv_sizing.h"

#include <gtest/gtest.h>

#include <string>

#include "core/error.h"

namespace lathe::model {
namespace {

constexpr size_t kGiB = size_t{1} << 30;

TEST(KvSizing, TheCacheTakesWhatUtilizationLeavesAfterUseAndReserve) {
  KvMemoryBudget b;
  b.utilization = 0.9;
  b.total_bytes = 100 * kGiB;
  b.free_bytes = 80 * kGiB;  // 20 GiB in use (weights, workspaces)
  b.reserve_bytes = 2 * kGiB;
  // 90 - 20 - 2 = 68 GiB of 1 MiB blocks.
  EXPECT_EQ(kv_blocks_for_budget(b, size_t{1} << 20, 2), 68 * 1024);
  b.utilization = 1.0;
  EXPECT_EQ(kv_blocks_for_budget(b, size_t{1} << 20, 2), 78 * 1024);
}

TEST(KvSizing, TooLittleMemoryIsAnErrorNamingTheFlagAndTheSizes) {
  KvMemoryBudget b;
  b.utilization = 0.5;
  b.total_bytes = 10 * kGiB;
  b.free_bytes = 5 * kGiB;  // already 5 GiB in use: nothing left at 0.5
  b.reserve_bytes = 0;
  try {
    kv_blocks_for_budget(b, size_t{1} << 20, 3);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("--gpu-memory-utilization 0.5"), std::string::npos) << what;
    EXPECT_NE(what.find("--max-model-len"), std::string::npos) << what;
  }
  b.utilization = 0.0;
  EXPECT_THROW(kv_blocks_for_budget(b, 1, 1), Error);
  b.utilization = 1.5;
  EXPECT_THROW(kv_blocks_for_budget(b, 1, 1), Error);
}

TEST(KvSizing, TheMinimumIsReturnedWhenItJustFits) {
  KvMemoryBudget b;
  b.utilization = 1.0;
  b.total_bytes = 10 * kGiB;
  b.free_bytes = 10 * kGiB;
  b.reserve_bytes = 10 * kGiB - 5 * (size_t{1} << 20);
  EXPECT_EQ(kv_blocks_for_budget(b, size_t{1} << 20, 5), 5);
  EXPECT_THROW(kv_blocks_for_budget(b, size_t{1} << 20, 6), Error);
}

}  // namespace
}  // namespace lathe::model
