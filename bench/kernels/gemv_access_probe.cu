// lathe_probe_gemv_access: how fast can the decode GEMV's weight ACCESS PATTERN alone go?
//
// A measurement tool, not a kernel of the engine: it reads an N x K fp8 weight matrix exactly as
// the register-ring GEMV (src/backends/cuda/gemv.cu) walks it, but instead of converting and
// multiplying it only folds the loaded words into a checksum (plus an optional chain of dependent
// integer operations per step that stands in for the arithmetic). Comparing its variants with one
// another and with a linear read of the same bytes separates "the pattern / grid cannot go
// faster" from "the arithmetic between the loads holds the loads back".
//
// Work unit: one 128-row block x one 128-byte step of K (8 warps x 16 rows x 128 bytes). CTA b
// walks units [b * U, (b + 1) * U) in order (U = K / 128 gives one CTA per row block, as the ring
// does without a K split; a smaller U balances the grid as the ringbal variant does), keeping
// kStages units of loads in flight per thread.
//
// Usage: lathe_probe_gemv_access [N K]   (default 24576 4096: Qwen3-8B gate|up in fp8)
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "backends/cuda/probe.h"
#include "common/graph_timing.h"
#include "probe_check.h"

namespace {


constexpr int kWarps = 8;
constexpr int kThreads = kWarps * 32;
constexpr int kStepBytes = 128;
cudaStream_t g_stream = nullptr;  // the stream being captured (launches go there)

template <bool kHint>
__device__ __forceinline__ uint4 load16(const uint8_t* ptr) {
  uint4 v;
  if constexpr (kHint) {
    asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(ptr));
  } else {
    asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(ptr));
  }
  return v;
}

// kLayout 0: the ring's lane map (a warp load covers 8 rows x 64 bytes: lane g = lane / 4 takes
// rows g and g + 8, lane c = lane % 4 bytes h * 64 + c * 16 of the step, h = half).
// kLayout 1: a warp load covers 4 rows x 128 bytes (lane / 8 = row in the group, lane % 8 = 16-byte
// column), four loads for the warp's 16 rows.
template <int kStages, bool kHint, int kLayout, int kWork, int kMinBlocks = (kStages <= 4 ? 2 : 1)>
__global__ void __launch_bounds__(kThreads, kMinBlocks)
    pattern_kernel(const uint8_t* w, int64_t n, int64_t k, int64_t units_per_cta, unsigned* sink) {
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  const int64_t ksteps = k / kStepBytes;
  const int64_t total = ((n + 127) / 128) * ksteps;
  const int64_t begin = blockIdx.x * units_per_cta;
  const int64_t end = begin + units_per_cta < total ? begin + units_per_cta : total;

  auto address = [&](int64_t unit, int i) -> const uint8_t* {
    const int64_t block = unit / ksteps;
    const int64_t step = unit - block * ksteps;
    int64_t row;
    int64_t byte;
    if constexpr (kLayout == 0) {
      row = block * 128 + warp * 16 + (lane >> 2) + (i & 1) * 8;
      byte = step * kStepBytes + (i >> 1) * 64 + (lane & 3) * 16;
    } else {
      row = block * 128 + warp * 16 + i * 4 + (lane >> 3);
      byte = step * kStepBytes + (lane & 7) * 16;
    }
    row = row < n ? row : n - 1;
    return w + row * k + byte;
  };

  uint4 ring[kStages][4];
  unsigned acc = 0;
#pragma unroll
  for (int s = 0; s < kStages; ++s) {
    if (begin + s < end) {
#pragma unroll
      for (int i = 0; i < 4; ++i) ring[s][i] = load16<kHint>(address(begin + s, i));
    }
  }
  for (int64_t base = begin; base < end; base += kStages) {
#pragma unroll
    for (int s = 0; s < kStages; ++s) {
      const int64_t unit = base + s;
      if (unit < end) {
#pragma unroll
        for (int i = 0; i < 4; ++i) acc ^= ring[s][i].x ^ ring[s][i].y ^ ring[s][i].z ^ ring[s][i].w;
        if (unit + kStages < end) {
#pragma unroll
          for (int i = 0; i < 4; ++i) ring[s][i] = load16<kHint>(address(unit + kStages, i));
        }
#pragma unroll
        for (int j = 0; j < kWork; ++j) acc = acc * 1664525u + 1013904223u;
      }
    }
  }
  if (acc == 0x9e3779b9u) *sink = acc;
}

// Median microseconds per launch over `replays` replays of a graph of 20 launches, each on the
// next of the rotating copies (bench/common/graph_timing.h, as lathe_bench_kernels times the GEMV,
// so the two tools' figures compare).
double median_us(const std::function<void(int)>& launch, int copies, int replays) {
  cudaStream_t stream;
  PROBE_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  g_stream = stream;
  const double us = lathe::bench::graph_us_per_launch(stream, 20, replays, /*warmups=*/1,
                                                      [&](int i) { launch(i % copies); });
  PROBE_CHECK(cudaGetLastError());
  cudaStreamDestroy(stream);
  return us;
}

}  // namespace

int main(int argc, char** argv) {
  const int64_t n = argc > 2 ? std::atoll(argv[1]) : 24576;
  const int64_t k = argc > 2 ? std::atoll(argv[2]) : 4096;
  if (n <= 0 || k <= 0 || k % kStepBytes != 0) {
    std::fprintf(stderr, "usage: lathe_probe_gemv_access [N K] (K a multiple of 128)\n");
    return 2;
  }
  int sms = 0;
  PROBE_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const size_t bytes = static_cast<size_t>(n * k);
  const int copies = static_cast<int>(std::max<size_t>(2, (size_t{400} << 20) / bytes + 1));  // > 6x the L2
  std::vector<uint8_t*> w(copies);
  for (auto& p : w) {
    PROBE_CHECK(cudaMalloc(&p, bytes));
    PROBE_CHECK(cudaMemset(p, 0x5a, bytes));
  }
  unsigned* sink = nullptr;
  PROBE_CHECK(cudaMalloc(&sink, sizeof(unsigned)));
  const int64_t ksteps = k / kStepBytes;
  const int64_t total = ((n + 127) / 128) * ksteps;
  const int launches = 15;

  std::printf("weights %lld x %lld fp8 = %.1f MB, %d copies rotated, %d SMs, median of %d graph replays (20 launches each)\n",
              static_cast<long long>(n), static_cast<long long>(k), bytes / 1e6, copies, sms, launches);
  std::printf("%-44s %6s %9s %8s %7s\n", "pattern", "ctas", "us", "GB/s", "%lin");
  const double lin_us = median_us(
      [&](int c) { lathe::cuda::read_probe(w[c], bytes, sink, g_stream); }, copies,
      launches);
  const double lin_gbs = bytes / (lin_us * 1e-6) / 1e9;
  std::printf("%-44s %6d %9.2f %8.0f %6.1f%%\n", "linear read (same bytes, read_probe)", sms * 4, lin_us, lin_gbs, 100.0);

  auto run = [&](const char* name, auto kernel, int64_t units) {
    const int64_t grid = (total + units - 1) / units;
    const double us = median_us([&](int c) { kernel<<<grid, kThreads, 0, g_stream>>>(w[c], n, k, units, sink); }, copies, launches);
    const double gbs = bytes / (us * 1e-6) / 1e9;
    std::printf("%-44s %6lld %9.2f %8.0f %6.1f%%\n", name, static_cast<long long>(grid), us, gbs, 100.0 * gbs / lin_gbs);
  };
  const int64_t per_block = ksteps;                                // ring: one CTA per row block
  const int64_t bal2 = (total + 2 * sms - 1) / (2 * sms);          // balanced over 2 CTAs per SM
  const int64_t bal1 = (total + sms - 1) / sms;                    // balanced over 1 CTA per SM
  run("ring map, block grid, s4, L2::256B", pattern_kernel<4, true, 0, 0>, per_block);
  run("ring map, block grid, s4, no hint", pattern_kernel<4, false, 0, 0>, per_block);
  run("ring map, block grid, s2, L2::256B", pattern_kernel<2, true, 0, 0>, per_block);
  run("ring map, balanced 2/SM, s4, L2::256B", pattern_kernel<4, true, 0, 0>, bal2);
  run("ring map, balanced 2/SM, s4, no hint", pattern_kernel<4, false, 0, 0>, bal2);
  run("ring map, balanced 1/SM, s8, L2::256B", pattern_kernel<8, true, 0, 0>, bal1);
  run("4x128B map, block grid, s4, L2::256B", pattern_kernel<4, true, 1, 0>, per_block);
  run("4x128B map, balanced 2/SM, s4, L2::256B", pattern_kernel<4, true, 1, 0>, bal2);
  const int64_t bal3 = (total + 3 * sms - 1) / (3 * sms);
  const int64_t bal4 = (total + 4 * sms - 1) / (4 * sms);
  run("ring map, balanced 3/SM, s2, L2::256B", pattern_kernel<2, true, 0, 0, 3>, bal3);
  run("ring map, balanced 4/SM, s2, L2::256B", pattern_kernel<2, true, 0, 0, 4>, bal4);
  run("ring map, balanced 3/SM, s3, L2::256B", pattern_kernel<3, true, 0, 0, 3>, bal3);
  run("ring map, block grid, s2, 4/SM regs", pattern_kernel<2, true, 0, 0, 4>, per_block);
  run("ring map, block grid, s4, +64 dep ops/step", pattern_kernel<4, true, 0, 64>, per_block);
  run("ring map, block grid, s4, +192 dep ops/step", pattern_kernel<4, true, 0, 192>, per_block);
  run("ring map, balanced 2/SM, s4, +64 dep ops", pattern_kernel<4, true, 0, 64>, bal2);
  run("ring map, balanced 2/SM, s4, +192 dep ops", pattern_kernel<4, true, 0, 192>, bal2);
  for (auto* p : w) cudaFree(p);
  cudaFree(sink);
  return 0;
}
