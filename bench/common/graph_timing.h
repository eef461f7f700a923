#pragma once
// How the CUDA benchmarks time a kernel: launches captured into one CUDA graph, the graph replayed,
// the median replay taken per launch. Graph replay removes host launch gaps, so the figure is the
// kernels' own back-to-back time; callers rotate inputs across launches so nothing is timed out of L2.
#include <cuda_runtime.h>

#include <functional>

namespace lathe::bench {

// Captures launch(0) .. launch(per_graph - 1) on `stream` into a graph, replays it `warmups`
// times, then times `replays` replays with events; returns the median replay's microseconds
// divided by per_graph (for an even count, the upper median).
double graph_us_per_launch(cudaStream_t stream, int per_graph, int replays, int warmups,
                           const std::function<void(int)>& launch);

}  // namespace lathe::bench
