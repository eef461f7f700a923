#include "server/metrics.h"

#include <gtest/gtest.h>

namespace lathe::server {
namespace {

bool contains(const std::string& text, const std::string& line) { return text.find(line) != std::string::npos; }

TEST(Metrics, RendersRequestCountsEngineCountersHistogramsAndGauges) {
  Metrics metrics;
  metrics.count_request("/v1/completions", 200);
  metrics.count_request("/v1/completions", 200);
  metrics.count_request("/v1/completions", 400);
  EXPECT_EQ(metrics.requests("/v1/completions", 200), 2u);
  EXPECT_EQ(metrics.requests("/v1/chat/completions", 200), 0u);

  engine::EngineStats stats;
  stats.num_running = 2;
  stats.num_waiting = 1;
  stats.kv_blocks_used = 5;
  stats.kv_blocks_total = 100;
  stats.block_size = 16;
  stats.prompt_tokens_total = 10;
  stats.generation_tokens_total = 4;
  stats.requests_finished[static_cast<size_t>(engine::FinishReason::kLength)] = 3;
  stats.time_to_first_token_seconds.observe(0.003);
  stats.time_to_first_token_seconds.observe(100.0);
  const std::string text = metrics.render(stats);

  EXPECT_TRUE(contains(text, "lathe_http_requests_total{route=\"/v1/completions\",status=\"200\"} 2\n"));
  EXPECT_TRUE(contains(text, "lathe_http_requests_total{route=\"/v1/completions\",status=\"400\"} 1\n"));
  EXPECT_TRUE(contains(text, "lathe_requests_finished_total{finish_reason=\"length\"} 3\n"));
  EXPECT_TRUE(contains(text, "lathe_requests_finished_total{finish_reason=\"stop\"} 0\n"));
  EXPECT_TRUE(contains(text, "lathe_prompt_tokens_total 10\n"));
  EXPECT_TRUE(contains(text, "lathe_generation_tokens_total 4\n"));
  // Cumulative buckets: 0.003 falls in le=0.005 and every later bucket; 100 s only in +Inf.
  EXPECT_TRUE(contains(text, "lathe_time_to_first_token_seconds_bucket{le=\"0.001\"} 0\n"));
  EXPECT_TRUE(contains(text, "lathe_time_to_first_token_seconds_bucket{le=\"0.005\"} 1\n"));
  EXPECT_TRUE(contains(text, "lathe_time_to_first_token_seconds_bucket{le=\"80\"} 1\n"));
  EXPECT_TRUE(contains(text, "lathe_time_to_first_token_seconds_bucket{le=\"+Inf\"} 2\n"));
  EXPECT_TRUE(contains(text, "lathe_time_to_first_token_seconds_count 2\n"));
  EXPECT_TRUE(contains(text, "lathe_time_to_first_token_seconds_sum 100.003\n"));
  EXPECT_TRUE(contains(text, "lathe_kv_blocks_used 5\n"));
  EXPECT_TRUE(contains(text, "lathe_kv_blocks_total 100\n"));
  EXPECT_TRUE(contains(text, "lathe_kv_cache_usage_ratio 0.05\n"));
  EXPECT_TRUE(contains(text, "lathe_num_requests_running 2\n"));
  EXPECT_TRUE(contains(text, "lathe_num_requests_waiting 1\n"));
  // Every sample line belongs to a declared family (HELP and TYPE precede it).
  EXPECT_TRUE(contains(text, "# TYPE lathe_kv_blocks_used gauge\n"));
  EXPECT_TRUE(contains(text, "# TYPE lathe_time_to_first_token_seconds histogram\n"));
}

}  // namespace
}  // namespace lathe::server
