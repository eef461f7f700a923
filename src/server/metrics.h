#pragma once
// Prometheus text exposition for /metrics. The server counts finished HTTP requests by route and
// status; everything about generation (token counters, TTFT / TPOT / end-to-end histograms,
// running and waiting sequences, KV blocks) is the engine's own bookkeeping
// (engine/engine_stats.h), snapshotted at scrape time, so there is one source of truth for it.
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "engine/engine_stats.h"

namespace lathe::server {

// Appends one histogram (Prometheus cumulative buckets, _sum and _count) to `out`.
void render_histogram(const engine::Histogram& histogram, const std::string& name, const std::string& help,
                      std::string& out);

class Metrics {
 public:
  // One finished HTTP request by route ("/v1/completions", ...; "other" for unknown paths) and
  // status code. Thread-safe.
  void count_request(const std::string& route, int status);
  uint64_t requests(const std::string& route, int status) const;
  // The exposition text: request counts, then the engine snapshot (`model` labels nothing here:
  // one model per process).
  std::string render(const engine::EngineStats& stats) const;

 private:
  mutable std::mutex mutex_;
  std::map<std::pair<std::string, int>, uint64_t> requests_;
};

}  // namespace lathe::server
