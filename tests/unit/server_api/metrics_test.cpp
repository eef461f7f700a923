#include "server/metrics.h"

#include <gtest/gtest.h>

namespace lathe::server {
namespace {

TEST(Metrics, RendersCountersHistogramsAndGauges) {
  Metrics metrics;
  metrics.count_request("/v1/completions", 200);
  metrics.count_request("/v1/completions", 200);
  metrics.count_request("/v1/completions", 400);
  metrics.add_tokens(10, 4);
  metrics.observe_ttft(0.003);
  metrics.observe_ttft(100.0);
  const std::string text = metrics.render(EngineGauges{2, 1, 5, 100, 0});
  EXPECT_NE(text.find("lathe_requests_total{route=\"/v1/completions\",status=\"200\"} 2"), std::string::npos);
  EXPECT_NE(text.find("lathe_requests_total{route=\"/v1/completions\",status=\"400\"} 1"), std::string::npos);
  EXPECT_NE(text.find("lathe_prompt_tokens_total 10"), std::string::npos);
  EXPECT_NE(text.find("lathe_time_to_first_token_seconds_bucket{le=\"0.005\"} 1"), std::string::npos);
  EXPECT_NE(text.find("lathe_time_to_first_token_seconds_bucket{le=\"+Inf\"} 2"), std::string::npos);
  EXPECT_NE(text.find("lathe_time_to_first_token_seconds_count 2"), std::string::npos);
  EXPECT_NE(text.find("lathe_kv_blocks_used 5"), std::string::npos);
  EXPECT_NE(text.find("lathe_num_requests_running 2"), std::string::npos);
}

}  // namespace
}  // namespace lathe::server
