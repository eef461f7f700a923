#include "app/bench_stats.h"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <numeric>

namespace lathe::app {

double percentile_sorted(std::span<const double> sorted, double p) {
  if (sorted.empty()) return 0.0;
  const double rank = std::clamp(p, 0.0, 100.0) / 100.0 * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<size_t>(std::floor(rank));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  const double frac = rank - static_cast<double>(lo);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

Summary summarize(std::vector<double> values) {
  Summary s;
  if (values.empty()) return s;
  std::sort(values.begin(), values.end());
  s.count = values.size();
  s.mean = std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
  s.p50 = percentile_sorted(values, 50.0);
  s.p90 = percentile_sorted(values, 90.0);
  s.p99 = percentile_sorted(values, 99.0);
  s.min = values.front();
  s.max = values.back();
  return s;
}

nlohmann::ordered_json summary_json(const Summary& s, double scale) {
  nlohmann::ordered_json out;
  out["mean"] = s.mean * scale;
  out["p50"] = s.p50 * scale;
  out["p90"] = s.p90 * scale;
  out["p99"] = s.p99 * scale;
  out["min"] = s.min * scale;
  out["max"] = s.max * scale;
  out["count"] = s.count;
  return out;
}

std::string utc_timestamp() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

}  // namespace lathe::app
