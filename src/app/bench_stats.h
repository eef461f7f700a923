#pragma once
// Summary statistics of the benchmarks. Percentiles interpolate linearly between the two
// nearest ranks (rank = p/100 * (n - 1), numpy's default and what vLLM's serving benchmark
// reports), so p50 of an even count is the mean of the middle two.
#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace lathe::app {

// p in [0, 100] of values sorted ascending; 0 for an empty span.
double percentile_sorted(std::span<const double> sorted, double p);

struct Summary {
  size_t count = 0;
  double mean = 0.0;
  double p50 = 0.0;
  double p90 = 0.0;
  double p99 = 0.0;
  double min = 0.0;
  double max = 0.0;
};

// All zeros for no values.
Summary summarize(std::vector<double> values);

// {"mean", "p50", "p90", "p99", "min", "max", "count"}, each value multiplied by `scale` (e.g.
// 1e3 to report seconds as milliseconds).
nlohmann::ordered_json summary_json(const Summary& summary, double scale = 1.0);

// The current time, UTC, ISO 8601 ("2026-11-30T07:30:00Z"), for the reports' headers.
std::string utc_timestamp();

}  // namespace lathe::app
