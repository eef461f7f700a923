#include "app/bench_read_ceiling.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <vector>

#include "app/bench_device_memory.h"
#include "backends/cpu/read_probe.h"
#include "core/error.h"
#include "core/parallel.h"

#ifdef LATHE_HAVE_CUDA
#include <cuda_runtime.h>

#include "backends/cuda/check.h"
#include "backends/cuda/probe.h"
#endif

namespace lathe::app {

namespace {

ReadCeiling summarize(std::vector<double> rates, const std::string& method) {
  if (rates.empty()) fail("read ceiling: no timed pass produced a positive time");
  std::sort(rates.begin(), rates.end());
  ReadCeiling out;
  out.best_bytes_per_s = rates.back();
  out.median_bytes_per_s = rates[rates.size() / 2];
  out.description =
      fmt::format("read ceiling {:.0f} GB/s best, {:.0f} GB/s median ({}, {} runs)",
                  out.best_bytes_per_s / 1e9, out.median_bytes_per_s / 1e9, method, rates.size());
  return out;
}

// The host: 512 MiB, far beyond any last-level cache a core can see, read by every worker thread
// the CPU backend uses, timed on the host's steady clock.
ReadCeiling measure_host_read_ceiling(int runs) {
  constexpr size_t kWords = (size_t{512} << 20) / sizeof(uint64_t);
  const auto data = std::make_unique_for_overwrite<uint64_t[]>(kWords);
  cpu::fill_read_probe(data.get(), kWords, 7);
  uint64_t checksum = cpu::read_probe(data.get(), kWords);  // warm-up
  std::vector<double> rates;
  for (int i = 0; i < std::max(runs, 1); ++i) {
    const auto start = std::chrono::steady_clock::now();
    checksum += cpu::read_probe(data.get(), kWords);
    const std::chrono::duration<double> s = std::chrono::steady_clock::now() - start;
    if (s.count() > 0) rates.push_back(static_cast<double>(kWords * sizeof(uint64_t)) / s.count());
  }
  // Stored through a volatile, so no pass can be elided; its value does not matter.
  [[maybe_unused]] volatile uint64_t sink = checksum;
  return summarize(std::move(rates), fmt::format("8-byte loads on {} thread{} over 512 MiB of host memory",
                                                 cpu_threads(), cpu_threads() == 1 ? "" : "s"));
}

}  // namespace

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
  if (backend.kind() == ops::DeviceKind::kCpu) return measure_host_read_ceiling(runs);
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
  return summarize(std::move(rates), "16-byte loads over 4 GiB");
#else
  (void)runs;
  return std::nullopt;
#endif
}

}  // namespace lathe::app
