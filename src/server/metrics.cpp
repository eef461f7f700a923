#include "server/metrics.h"

#include <fmt/format.h>

namespace lathe::server {

Histogram::Histogram(std::vector<double> bounds) : bounds_(std::move(bounds)), counts_(bounds_.size() + 1, 0) {}

void Histogram::observe(double value) {
  size_t bucket = 0;
  while (bucket < bounds_.size() && value > bounds_[bucket]) ++bucket;
  counts_[bucket]++;
  sum_ += value;
  count_++;
}

void Histogram::render(const std::string& name, const std::string& help, std::string& out) const {
  out += fmt::format("# HELP {} {}\n# TYPE {} histogram\n", name, help, name);
  uint64_t cumulative = 0;
  for (size_t i = 0; i < bounds_.size(); ++i) {
    cumulative += counts_[i];
    out += fmt::format("{}_bucket{{le=\"{}\"}} {}\n", name, bounds_[i], cumulative);
  }
  cumulative += counts_.back();
  out += fmt::format("{}_bucket{{le=\"+Inf\"}} {}\n{}_sum {}\n{}_count {}\n", name, cumulative, name, sum_, name, count_);
}

Metrics::Metrics()
    : ttft_({0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 10.0, 20.0, 40.0}),
      tpot_({0.001, 0.0025, 0.005, 0.0075, 0.01, 0.015, 0.02, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 1.0, 2.5}),
      e2e_({0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 20.0, 40.0, 80.0, 160.0}) {}

void Metrics::count_request(const std::string& route, int status) {
  std::lock_guard<std::mutex> lock(mutex_);
  requests_[{route, status}]++;
}

void Metrics::add_tokens(int64_t prompt_tokens, int64_t generation_tokens) {
  std::lock_guard<std::mutex> lock(mutex_);
  prompt_tokens_ += static_cast<uint64_t>(prompt_tokens);
  generation_tokens_ += static_cast<uint64_t>(generation_tokens);
}

void Metrics::observe_ttft(double seconds) {
  std::lock_guard<std::mutex> lock(mutex_);
  ttft_.observe(seconds);
}

void Metrics::observe_tpot(double seconds) {
  std::lock_guard<std::mutex> lock(mutex_);
  tpot_.observe(seconds);
}

void Metrics::observe_e2e(double seconds) {
  std::lock_guard<std::mutex> lock(mutex_);
  e2e_.observe(seconds);
}

std::string Metrics::render(const EngineGauges& gauges) const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::string out;
  out += "# HELP lathe_requests_total Finished HTTP requests by route and status code.\n";
  out += "# TYPE lathe_requests_total counter\n";
  for (const auto& [key, count] : requests_) {
    out += fmt::format("lathe_requests_total{{route=\"{}\",status=\"{}\"}} {}\n", key.first, key.second, count);
  }
  out += fmt::format("# HELP lathe_prompt_tokens_total Prompt tokens processed.\n# TYPE lathe_prompt_tokens_total counter\n"
                     "lathe_prompt_tokens_total {}\n", prompt_tokens_);
  out += fmt::format("# HELP lathe_generation_tokens_total Tokens generated.\n# TYPE lathe_generation_tokens_total counter\n"
                     "lathe_generation_tokens_total {}\n", generation_tokens_);
  ttft_.render("lathe_time_to_first_token_seconds", "Time from request arrival to its first token.", out);
  tpot_.render("lathe_time_per_output_token_seconds", "Mean time between output tokens of a request.", out);
  e2e_.render("lathe_e2e_request_latency_seconds", "Time from request arrival to its end.", out);
  out += fmt::format("# HELP lathe_num_requests_running Sequences in the running batch.\n# TYPE lathe_num_requests_running gauge\n"
                     "lathe_num_requests_running {}\n", gauges.running);
  out += fmt::format("# HELP lathe_num_requests_waiting Sequences waiting for admission.\n# TYPE lathe_num_requests_waiting gauge\n"
                     "lathe_num_requests_waiting {}\n", gauges.waiting);
  out += fmt::format("# HELP lathe_kv_blocks_used KV-cache blocks owned by sequences.\n# TYPE lathe_kv_blocks_used gauge\n"
                     "lathe_kv_blocks_used {}\n", gauges.kv_blocks_used);
  out += fmt::format("# HELP lathe_kv_blocks_total KV-cache blocks that sequences can own.\n# TYPE lathe_kv_blocks_total gauge\n"
                     "lathe_kv_blocks_total {}\n", gauges.kv_blocks_total);
  out += fmt::format("# HELP lathe_preemptions_total Sequences preempted for KV space.\n# TYPE lathe_preemptions_total counter\n"
                     "lathe_preemptions_total {}\n", gauges.preemptions);
  return out;
}

}  // namespace lathe::server
