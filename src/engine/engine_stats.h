#pragma once
// Engine counters and latency histograms, snapshotted for /metrics (Prometheus-style).
#include <array>
#include <cstdint>
#include <vector>

#include "engine/stop.h"

namespace lathe::engine {

// Fixed-bucket histogram. counts[i] counts observations v <= bounds[i] not counted by an earlier
// bucket; counts.back() counts those above every bound (+Inf). Prometheus exposition sums the
// counts cumulatively.
struct Histogram {
  std::vector<double> bounds;
  std::vector<uint64_t> counts;
  double sum = 0.0;
  uint64_t count = 0;

  explicit Histogram(std::vector<double> upper_bounds = {});
  void observe(double value);
};

// Bucket bounds in seconds used for the latency histograms (first token, per output token,
// whole request).
std::vector<double> latency_buckets_seconds();

struct EngineStats {
  int32_t num_running = 0;
  int32_t num_waiting = 0;  // queued in the scheduler or submitted but not yet picked up
  int32_t kv_blocks_used = 0;
  int32_t kv_blocks_total = 0;  // usable blocks (the scratch block excluded)
  int32_t block_size = 0;

  uint64_t requests_submitted = 0;              // accepted by submit()
  uint64_t requests_rejected = 0;               // refused by submit() (bad request)
  std::array<uint64_t, 4> requests_finished{};  // indexed by FinishReason
  uint64_t prompt_tokens_total = 0;             // prompt tokens of accepted requests
  uint64_t generation_tokens_total = 0;         // tokens generated
  uint64_t computed_tokens_total = 0;           // rows run through the model (recompute included)
  uint64_t steps_total = 0;
  uint64_t preemptions_total = 0;

  Histogram time_to_first_token_seconds{latency_buckets_seconds()};
  Histogram time_per_output_token_seconds{latency_buckets_seconds()};  // per request, when > 1 token
  Histogram e2e_request_latency_seconds{latency_buckets_seconds()};

  uint64_t finished(FinishReason reason) const { return requests_finished[static_cast<size_t>(reason)]; }
  double kv_usage() const {
    return kv_blocks_total > 0 ? static_cast<double>(kv_blocks_used) / kv_blocks_total : 0.0;
  }
};

}  // namespace lathe::engine
