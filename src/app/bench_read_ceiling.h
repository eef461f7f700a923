#pragma once
// The device's read ceiling, measured in the run that quotes it (ARCHITECTURE "Performance
// method"): on CUDA a 16-byte-load read kernel (backends/cuda/probe.h) over a 4 GiB buffer of
// random bytes; on the CPU every worker thread of the CPU backend streaming its share of 512 MiB
// of host memory (backends/cpu/read_probe.h). One warm-up then `runs` timed passes; the best pass
// counts (what the memory system can deliver), the median is reported beside it.
#include <optional>
#include <string>

#include "ops/backend.h"

namespace lathe::app {

struct ReadCeiling {
  double best_bytes_per_s = 0.0;
  double median_bytes_per_s = 0.0;
  std::string description;  // one line for the report
};

// A value for the CPU and CUDA backends; nullopt (the report says n/a) for one without a probe.
std::optional<ReadCeiling> measure_read_ceiling(ops::Backend& backend, int runs = 10);

}  // namespace lathe::app
