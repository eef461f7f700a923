#include "common/read_ceiling.h"

#include <algorithm>
#include <vector>

#include "backends/cuda/check.h"
#include "backends/cuda/probe.h"

namespace lathe::bench {

ReadCeiling measure_read_ceiling(cudaStream_t stream) {
  constexpr size_t kBytes = size_t{4} << 30;
  constexpr int kRuns = 10;
  void* data = nullptr;
  unsigned* sink = nullptr;
  LATHE_CUDA_CHECK(cudaMalloc(&data, kBytes));
  LATHE_CUDA_CHECK(cudaMalloc(&sink, 16));
  cuda::fill_random(data, kBytes, cuda::FillKind::kFp8E4M3, 7, stream);
  cudaEvent_t start, stop;
  LATHE_CUDA_CHECK(cudaEventCreate(&start));
  LATHE_CUDA_CHECK(cudaEventCreate(&stop));
  cuda::read_probe(data, kBytes, sink, stream);  // warm-up
  std::vector<double> gbs;
  for (int i = 0; i < kRuns; ++i) {
    LATHE_CUDA_CHECK(cudaEventRecord(start, stream));
    cuda::read_probe(data, kBytes, sink, stream);
    LATHE_CUDA_CHECK(cudaEventRecord(stop, stream));
    LATHE_CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    LATHE_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    gbs.push_back(static_cast<double>(kBytes) / (ms * 1e-3) / 1e9);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  cudaFree(sink);
  cudaFree(data);
  std::sort(gbs.begin(), gbs.end());
  return ReadCeiling{gbs.back(), gbs[gbs.size() / 2]};
}

}  // namespace lathe::bench
