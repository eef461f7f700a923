#pragma once
// Prometheus text exposition for /metrics: request counts by status, token counters, latency
// histograms (TTFT, TPOT, end-to-end) and gauges sampled from the engine at scrape time.
#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace lathe::server {

class Histogram {
 public:
  explicit Histogram(std::vector<double> bounds);
  void observe(double value);
  // Appends the _bucket/_sum/_count lines for `name`.
  void render(const std::string& name, const std::string& help, std::string& out) const;

 private:
  std::vector<double> bounds_;
  std::vector<uint64_t> counts_;  // per bucket, non-cumulative; last is +Inf
  double sum_ = 0.0;
  uint64_t count_ = 0;
};

struct EngineGauges {
  int64_t running = 0;
  int64_t waiting = 0;
  int64_t kv_blocks_used = 0;
  int64_t kv_blocks_total = 0;
  int64_t preemptions = 0;
};

class Metrics {
 public:
  Metrics();
  // One finished HTTP request on an API route, by status code.
  void count_request(const std::string& route, int status);
  void add_tokens(int64_t prompt_tokens, int64_t generation_tokens);
  void observe_ttft(double seconds);
  void observe_tpot(double seconds);
  void observe_e2e(double seconds);
  std::string render(const EngineGauges& gauges) const;

 private:
  mutable std::mutex mutex_;
  std::map<std::pair<std::string, int>, uint64_t> requests_;
  uint64_t prompt_tokens_ = 0;
  uint64_t generation_tokens_ = 0;
  Histogram ttft_;
  Histogram tpot_;
  Histogram e2e_;
};

}  // namespace lathe::server
