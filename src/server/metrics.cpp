#include "server/metrics.h"

#include <fmt/format.h>

namespace lathe::server {
namespace {

void counter(std::string& out, const char* name, const char* help, uint64_t value) {
  out += fmt::format("# HELP {} {}\n# TYPE {} counter\n{} {}\n", name, help, name, name, value);
}

void gauge(std::string& out, const char* name, const char* help, double value) {
  out += fmt::format("# HELP {} {}\n# TYPE {} gauge\n{} {}\n", name, help, name, name, value);
}

}  // namespace

void render_histogram(const engine::Histogram& histogram, const std::string& name, const std::string& help,
                      std::string& out) {
  out += fmt::format("# HELP {} {}\n# TYPE {} histogram\n", name, help, name);
  uint64_t cumulative = 0;
  for (size_t i = 0; i < histogram.bounds.size(); ++i) {
    cumulative += i < histogram.counts.size() ? histogram.counts[i] : 0;
    out += fmt::format("{}_bucket{{le=\"{}\"}} {}\n", name, histogram.bounds[i], cumulative);
  }
  // The +Inf bucket is the total count by definition.
  out += fmt::format("{}_bucket{{le=\"+Inf\"}} {}\n{}_sum {}\n{}_count {}\n", name, histogram.count, name,
                     histogram.sum, name, histogram.count);
}

void Metrics::count_request(const std::string& route, int status) {
  std::lock_guard<std::mutex> lock(mutex_);
  requests_[{route, status}]++;
}

uint64_t Metrics::requests(const std::string& route, int status) const {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = requests_.find({route, status});
  return it == requests_.end() ? 0 : it->second;
}

std::string Metrics::render(const engine::EngineStats& stats) const {
  std::string out;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    out += "# HELP lathe_http_requests_total Finished HTTP requests by route and status code.\n";
    out += "# TYPE lathe_http_requests_total counter\n";
    for (const auto& [key, count] : requests_) {
      out += fmt::format("lathe_http_requests_total{{route=\"{}\",status=\"{}\"}} {}\n", key.first, key.second, count);
    }
  }
  out += "# HELP lathe_requests_finished_total Generation requests ended, by finish reason.\n";
  out += "# TYPE lathe_requests_finished_total counter\n";
  for (engine::FinishReason reason : {engine::FinishReason::kStop, engine::FinishReason::kLength,
                                      engine::FinishReason::kCancelled, engine::FinishReason::kError}) {
    out += fmt::format("lathe_requests_finished_total{{finish_reason=\"{}\"}} {}\n", engine::finish_reason_name(reason),
                       stats.finished(reason));
  }
  counter(out, "lathe_requests_submitted_total", "Generation requests accepted by the engine.", stats.requests_submitted);
  counter(out, "lathe_requests_rejected_total", "Generation requests the engine refused as invalid.",
          stats.requests_rejected);
  counter(out, "lathe_prompt_tokens_total", "Prompt tokens of accepted requests.", stats.prompt_tokens_total);
  counter(out, "lathe_generation_tokens_total", "Tokens generated.", stats.generation_tokens_total);
  counter(out, "lathe_computed_tokens_total", "Token rows run through the model (recomputation included).",
          stats.computed_tokens_total);
  counter(out, "lathe_engine_steps_total", "Engine steps run.", stats.steps_total);
  counter(out, "lathe_preemptions_total", "Sequences preempted (by recompute) for KV space.", stats.preemptions_total);
  render_histogram(stats.time_to_first_token_seconds, "lathe_time_to_first_token_seconds",
                   "Time from submission to a request's first token.", out);
  render_histogram(stats.time_per_output_token_seconds, "lathe_time_per_output_token_seconds",
                   "Mean time between output tokens of a request (requests with more than one token).", out);
  render_histogram(stats.e2e_request_latency_seconds, "lathe_e2e_request_latency_seconds",
                   "Time from submission to the end of a request that stopped or hit its length.", out);
  gauge(out, "lathe_num_requests_running", "Sequences in the running batch.", stats.num_running);
  gauge(out, "lathe_num_requests_waiting", "Sequences waiting for admission.", stats.num_waiting);
  gauge(out, "lathe_kv_blocks_used", "KV-cache blocks owned by sequences.", stats.kv_blocks_used);
  gauge(out, "lathe_kv_blocks_total", "KV-cache blocks that sequences can own (the scratch block excluded).",
        stats.kv_blocks_total);
  gauge(out, "lathe_kv_block_size", "Tokens per KV-cache block.", stats.block_size);
  gauge(out, "lathe_kv_cache_usage_ratio", "Fraction of the usable KV-cache blocks in use.", stats.kv_usage());
  return out;
}

}  // namespace lathe::server
