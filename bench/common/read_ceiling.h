#pragma once
// The device's read ceiling as the CUDA benchmarks and probes measure it in the run that quotes it:
// the read kernel (backends/cuda/probe.h) over 4 GiB of random bytes, one warm-up pass, then 10
// timed passes with events; the best pass is the ceiling, the median is reported beside it.
#include <cuda_runtime.h>

namespace lathe::bench {

struct ReadCeiling {
  double best_gbs = 0.0;
  double median_gbs = 0.0;
};

// Throws lathe::Error on a failed CUDA call.
ReadCeiling measure_read_ceiling(cudaStream_t stream);

}  // namespace lathe::bench
