#include "app/bench_read_ceiling.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "app/bench_device_memory.h"
#include "core/error.h"

#ifdef LATHE_HAVE_CUDA
#include <cuda_runtime.h>

#include "backends/cuda/check.h"
#include "backends/cuda/probe.h"
#endif

namespace lathe::app {

#ifdef LATHE_HAVE_CUDA
namespace {

class Events {
 public:
  Events() {
    LATHE_CUDA_CHECK(cudaEventCreate(&start));
    LATHE_CUDA_CHECK(cudaEventCreate(&stop));
    LATHE_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  }
  ~Events() {
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    cudaStreamDestroy(stream);
  }
  Events(const Events&) = delete;
  Events& operator=(const Events&) = delete;
  cudaEvent_t start = nullptr, stop = nullptr;
  cudaStream_t stream = nullptr;
};

}  // namespace
#endif

std::optional<ReadCeiling> measure_read_ceiling(ops::Backend& backend, int runs) {
  if (backend.kind() != ops::DeviceKind::kCuda) return std::nullopt;
#ifdef LATHE_HAVE_CUDA
  constexpr size_t kBytes = size_t{4} << 30;
  backend.synchronize();
  ScopedDeviceMemory data(backend, kBytes);
  ScopedDeviceMemory sink(backend, 256);
  Events ev;
  cuda::fill_random(data.get(), kBytes, cuda::FillKind::kFp8E4M3, 7, ev.stream);
  cuda::read_probe(data.get(), kBytes, static_cast<unsigned*>(sink.get()), ev.stream);  // warm-up
  std::vector<double> rates;
  for (int i = 0; i < std::max(runs, 1); ++i) {
    LATHE_CUDA_CHECK(cudaEventRecord(ev.start, ev.stream));
    cuda::read_probe(data.get(), kBytes, static_cast<unsigned*>(sink.get()), ev.stream);
    LATHE_CUDA_CHECK(cudaEventRecord(ev.stop, ev.stream));
    LATHE_CUDA_CHECK(cudaEventSynchronize(ev.stop));
    float ms = 0.0f;
    LATHE_CUDA_CHECK(cudaEventElapsedTime(&ms, ev.start, ev.stop));
    if (ms > 0.0f) rates.push_back(static_cast<double>(kBytes) / (static_cast<double>(ms) * 1e-3));
  }
  LATHE_CUDA_CHECK(cudaStreamSynchronize(ev.stream));
  if (rates.empty()) fail("read ceiling: no timed pass produced a positive time");
  std::sort(rates.begin(), rates.end());
  ReadCeiling out;
  out.best_bytes_per_s = rates.back();
  out.median_bytes_per_s = rates[rates.size() / 2];
  out.description = fmt::format("read ceiling {:.0f} GB/s best, {:.0f} GB/s median (16-byte loads over 4 GiB, {} runs)",
                                out.best_bytes_per_s / 1e9, out.median_bytes_per_s / 1e9, rates.size());
  return out;
#else
  (void)runs;
  return std::nullopt;
#endif
}

}  // namespace lathe::app
