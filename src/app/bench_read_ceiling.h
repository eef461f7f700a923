#pragma once
// The device's read ceiling, measured in the run that quotes it (ARCHITECTURE "Performance
// method"): a 16-byte-load read kernel (backends/cuda/probe.h) over a 4 GiB buffer of random
// bytes, one warm-up then `runs` timed passes; the best pass counts (what the memory system can
// deliver), the median is reported beside it.
#include <optional>
#include <string>

#include "ops/backend.h"

namespace lathe::app {

struct ReadCeiling {
  double best_bytes_per_s = 0.0;
  double median_bytes_per_s = 0.0;
  std::string description;  // one line for the report
};

// nullopt when the backend has no device to measure (CPU, or a build without CUDA).
std::optional<ReadCeiling> measure_read_ceiling(ops::Backend& backend, int runs = 10);

}  // namespace lathe::app
