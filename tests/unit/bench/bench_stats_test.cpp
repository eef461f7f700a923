// Percentiles and summaries. Expected values were produced with numpy.percentile (its default
// linear interpolation, which vLLM's serving benchmark reports).
#include <gtest/gtest.h>

#include <vector>

#include "app/bench_stats.h"

namespace lathe::app {
namespace {

TEST(BenchStats, PercentilesMatchNumpy) {
  // numpy.percentile([5, 1, 4, 2, 3, 10], [0, 50, 90, 99, 100]) = [1, 3.5, 7.5, 9.75, 10]
  const Summary s = summarize({5.0, 1.0, 4.0, 2.0, 3.0, 10.0});
  EXPECT_EQ(s.count, 6u);
  EXPECT_DOUBLE_EQ(s.min, 1.0);
  EXPECT_DOUBLE_EQ(s.p50, 3.5);
  EXPECT_DOUBLE_EQ(s.p90, 7.5);
  EXPECT_DOUBLE_EQ(s.p99, 9.75);
  EXPECT_DOUBLE_EQ(s.max, 10.0);
  EXPECT_DOUBLE_EQ(s.mean, 25.0 / 6.0);
  // numpy.percentile([1, 2, 3, 4], [50, 90, 99]) = [2.5, 3.7, 3.97]
  const std::vector<double> sorted = {1, 2, 3, 4};
  EXPECT_DOUBLE_EQ(percentile_sorted(sorted, 50), 2.5);
  EXPECT_NEAR(percentile_sorted(sorted, 90), 3.7, 1e-12);
  EXPECT_NEAR(percentile_sorted(sorted, 99), 3.97, 1e-12);
}

TEST(BenchStats, EdgeCases) {
  const Summary one = summarize({0.25});
  EXPECT_DOUBLE_EQ(one.p50, 0.25);
  EXPECT_DOUBLE_EQ(one.p99, 0.25);
  const Summary none = summarize({});
  EXPECT_EQ(none.count, 0u);
  EXPECT_DOUBLE_EQ(none.p99, 0.0);
  EXPECT_DOUBLE_EQ(percentile_sorted({}, 50), 0.0);
  const std::vector<double> two = {1, 3};
  EXPECT_DOUBLE_EQ(percentile_sorted(two, -5), 1.0);   // clamped to [0, 100]
  EXPECT_DOUBLE_EQ(percentile_sorted(two, 500), 3.0);
}

TEST(BenchStats, JsonScalesEveryField) {
  const nlohmann::ordered_json j = summary_json(summarize({0.001, 0.003}), 1e3);
  EXPECT_DOUBLE_EQ(j["mean"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(j["p50"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(j["min"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(j["max"].get<double>(), 3.0);
  EXPECT_EQ(j["count"], 2);
}

}  // namespace
}  // namespace lathe::app
