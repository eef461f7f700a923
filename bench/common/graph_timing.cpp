#include "common/graph_timing.h"

#include <algorithm>
#include <vector>

#include "backends/cuda/check.h"

namespace lathe::bench {

double graph_us_per_launch(cudaStream_t stream, int per_graph, int replays, int warmups,
                           const std::function<void(int)>& launch) {
  cudaGraph_t graph;
  LATHE_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  for (int i = 0; i < per_graph; ++i) launch(i);
  LATHE_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
  cudaGraphExec_t exec;
  LATHE_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  cudaEvent_t start, stop;
  LATHE_CUDA_CHECK(cudaEventCreate(&start));
  LATHE_CUDA_CHECK(cudaEventCreate(&stop));
  for (int i = 0; i < warmups; ++i) LATHE_CUDA_CHECK(cudaGraphLaunch(exec, stream));
  std::vector<double> times;
  for (int i = 0; i < replays; ++i) {
    LATHE_CUDA_CHECK(cudaEventRecord(start, stream));
    LATHE_CUDA_CHECK(cudaGraphLaunch(exec, stream));
    LATHE_CUDA_CHECK(cudaEventRecord(stop, stream));
    LATHE_CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    LATHE_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    times.push_back(static_cast<double>(ms) * 1000.0 / per_graph);
  }
  std::sort(times.begin(), times.end());
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  return times[times.size() / 2];
}

}  // namespace lathe::bench
