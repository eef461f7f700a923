#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <vector>

#include "core/parallel.h"

namespace lathe {
namespace {

TEST(ParallelFor, CoversEveryIndexExactlyOnce) {
  for (int64_t n : {0, 1, 2, 3, 17, 1000}) {
    std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
    parallel_for(n, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) hits[static_cast<size_t>(i)]++;
    });
    for (auto& hit : hits) EXPECT_EQ(hit.load(), 1);
  }
}

TEST(ParallelFor, RethrowsWorkerExceptions) {
  EXPECT_THROW(parallel_for(100, [](int64_t, int64_t end) {
                 if (end == 100) throw std::runtime_error("boom");
               }),
               std::runtime_error);
}

}  // namespace
}  // namespace lathe
