// lathe_probe_layer_chain: what do kernel boundaries cost a decode step that streams its weights?
//
// A measurement tool, not a kernel of the engine. It reads the weight bytes of a Qwen3-8B-FP8 batch-1
// decode step's GEMVs (36 layers x q|k|v 6144x4096, o 4096x4096, gate|up 24576x4096, down
// 4096x12288 in fp8: 6.95 GB, far beyond L2) with 16-byte loads and nothing else, and times the
// whole step six ways (one CUDA graph each, median of the replays):
//   plain:            one read launch per matrix (144 launches), ordinary stream order;
//   chained:          the same launches chained as the backend chains its kernels (PDL): each CTA
//                     waits for the previous launch, releases the next one, then reads;
//   chained, early:   each CTA first requests its first loads, then waits (the GEMV's early weights);
//   persistent:       ONE launch of resident CTAs reading matrix after matrix with a grid-wide barrier
//                     between matrices (the data dependency between a layer's GEMVs), each CTA
//                     requesting its first loads of the next matrix before it waits at the barrier;
//   persistent, late: the same, the next matrix's loads requested only after the barrier;
//   streaming:        the persistent launch without barriers (the bytes' own time).
// Every mode reads the same vectors with the same grid (2 CTAs of 256 threads per SM, each thread
// 8 x 16 bytes in flight, grid-stride over each matrix), so the differences are what the
// boundaries cost. Beside them, the engine's own decode GEMV (gemv_launch, tier 1, one token row,
// block-128 scales, its default per-shape kernel, chained and early weights as the backend runs it)
// over the same matrices: the step's GEMVs without the kernels between them. Then per shape: its
// 36 copies read by chained launches against its 36 copies through the GEMV, so the GEMVs' excess
// over their bytes' read can be placed shape by shape. The read ceiling (4 GiB, the benchmarks'
// read kernel) is measured in the same run.
//
// Usage: lathe_probe_layer_chain [layers]   (default 36)
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "backends/cuda/chained_launch.h"
#include "backends/cuda/gemv.h"
#include "backends/cuda/probe.h"
#include "common/graph_timing.h"
#include "common/read_ceiling.h"
#include "probe_check.h"

namespace {

constexpr int kThreads = 256;
constexpr int kCtasPerSm = 2;
constexpr int kBatch = 4;  // loads per batch; two batches in flight per thread

struct Span {
  const uint4* base;
  size_t count;  // 16-byte vectors
};

__device__ __forceinline__ uint4 load_stream(const uint4* p) {
  uint4 v;
  asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p));
  return v;
}

// Requests this thread's batch of vectors first, first + stride, ... (those below count).
__device__ __forceinline__ void issue(const Span& s, size_t first, size_t stride, uint4 (&regs)[kBatch]) {
#pragma unroll
  for (int u = 0; u < kBatch; ++u) {
    const size_t i = first + u * stride;
    regs[u] = i < s.count ? load_stream(s.base + i) : make_uint4(0, 0, 0, 0);
  }
}

__device__ __forceinline__ unsigned fold(const uint4 (&regs)[kBatch]) {
  unsigned acc = 0;
#pragma unroll
  for (int u = 0; u < kBatch; ++u) acc ^= regs[u].x ^ regs[u].y ^ regs[u].z ^ regs[u].w;
  return acc;
}

// Reads span s grid-stride, two batches in flight; `a` already holds the first batch when
// `primed`. Returns the fold of every vector read.
__device__ __forceinline__ unsigned read_span(const Span& s, uint4 (&a)[kBatch], bool primed) {
  const size_t stride = static_cast<size_t>(gridDim.x) * kThreads;
  const size_t step = stride * kBatch;
  size_t first = static_cast<size_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (!primed) issue(s, first, stride, a);
  unsigned acc = 0;
  for (; first < s.count; first += 2 * step) {
    uint4 b[kBatch];
    issue(s, first + step, stride, b);
    acc ^= fold(a);
    issue(s, first + 2 * step, stride, a);
    acc ^= fold(b);
  }
  return acc;
}

// One matrix per launch. kChained: the backend's chained-launch contract (wait, release, read);
// kEarly: the first batch is requested before the wait.
template <bool kChained, bool kEarly>
__global__ void __launch_bounds__(kThreads, kCtasPerSm) read_matrix(Span s, unsigned* sink) {
  uint4 a[kBatch];
  const size_t stride = static_cast<size_t>(gridDim.x) * kThreads;
  if (kEarly) issue(s, static_cast<size_t>(blockIdx.x) * kThreads + threadIdx.x, stride, a);
  if (kChained) {
    asm volatile("griddepcontrol.wait;" ::: "memory");
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  }
  const unsigned acc = read_span(s, a, kEarly);
  if (acc == 0x9e3779b9u) atomicAdd(sink, 1u);  // keeps the loads; practically never taken
}

// Waits until every CTA of the grid has arrived `generation` times (counter zeroed before launch).
__device__ __forceinline__ void grid_barrier(unsigned* counter, unsigned generation) {
  __syncthreads();
  if (threadIdx.x == 0) {
    asm volatile("red.release.gpu.global.add.u32 [%0], 1;" ::"l"(counter) : "memory");
    const unsigned target = generation * gridDim.x;
    unsigned seen = 0;
    do {
      asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(seen) : "l"(counter) : "memory");
    } while (seen < target);
  }
  __syncthreads();
}

// Every matrix in one launch. kBarrier: a grid barrier between matrices; kEarly: the next matrix's
// first batch is requested before the barrier.
template <bool kBarrier, bool kEarly>
__global__ void __launch_bounds__(kThreads, kCtasPerSm)
    read_all(const Span* spans, int count, unsigned* counter, unsigned* sink) {
  const size_t stride = static_cast<size_t>(gridDim.x) * kThreads;
  const size_t first = static_cast<size_t>(blockIdx.x) * kThreads + threadIdx.x;
  uint4 a[kBatch];
  unsigned acc = 0;
  bool primed = false;
  for (int j = 0; j < count; ++j) {
    acc ^= read_span(spans[j], a, primed);
    primed = false;
    if (j + 1 < count) {
      if (kEarly) {
        issue(spans[j + 1], first, stride, a);
        primed = true;
      }
      if (kBarrier) grid_barrier(counter, static_cast<unsigned>(j + 1));
    }
  }
  if (acc == 0x9e3779b9u) atomicAdd(sink, 1u);
}

template <typename Kernel, typename... Args>
void launch(Kernel kernel, int grid, bool chained, cudaStream_t stream, Args... args) {
  cudaLaunchAttribute attribute{};
  attribute.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attribute.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(grid);
  config.blockDim = dim3(kThreads);
  config.stream = stream;
  config.attrs = &attribute;
  config.numAttrs = chained ? 1 : 0;
  PROBE_CHECK(cudaLaunchKernelEx(&config, kernel, args...));
}

}  // namespace

int main(int argc, char** argv) {
  const int layers = argc > 1 ? std::atoi(argv[1]) : 36;
  if (layers < 1 || layers > 64) {
    std::fprintf(stderr, "usage: lathe_probe_layer_chain [layers 1..64]\n");
    return 2;
  }
  cudaStream_t stream;
  PROBE_CHECK(cudaStreamCreate(&stream));
  int sms = 0;
  PROBE_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  int resident = 0;
  PROBE_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, read_all<true, true>, kThreads, 0));
  if (resident < kCtasPerSm) {
    std::fprintf(stderr, "the persistent grid needs %d resident CTAs per SM, the device holds %d\n",
                 kCtasPerSm, resident);
    return 1;
  }
  const int grid = sms * kCtasPerSm;
  const lathe::bench::ReadCeiling ceiling = lathe::bench::measure_read_ceiling(stream);

  // fp8 bytes of one layer's GEMV matrices (n x k), in the step's order.
  const size_t shapes[4][2] = {{6144, 4096}, {4096, 4096}, {24576, 4096}, {4096, 12288}};
  size_t layer_bytes = 0;
  for (const auto& s : shapes) layer_bytes += s[0] * s[1];
  const size_t total = layer_bytes * layers;
  uint8_t* weights = nullptr;
  PROBE_CHECK(cudaMalloc(&weights, total));
  PROBE_CHECK(cudaMemset(weights, 0x3c, total));
  std::vector<Span> spans;
  size_t offset = 0;
  for (int l = 0; l < layers; ++l) {
    for (const auto& s : shapes) {
      spans.push_back({reinterpret_cast<const uint4*>(weights + offset), s[0] * s[1] / 16});
      offset += s[0] * s[1];
    }
  }
  Span* d_spans = nullptr;
  unsigned *counter = nullptr, *sink = nullptr;
  PROBE_CHECK(cudaMalloc(&d_spans, spans.size() * sizeof(Span)));
  PROBE_CHECK(cudaMemcpy(d_spans, spans.data(), spans.size() * sizeof(Span), cudaMemcpyHostToDevice));
  PROBE_CHECK(cudaMalloc(&counter, 4));
  PROBE_CHECK(cudaMalloc(&sink, 4));
  PROBE_CHECK(cudaMemset(sink, 0, 4));
  const int count = static_cast<int>(spans.size());

  struct Mode {
    const char* name;
    void (*run)(const std::vector<Span>&, const Span*, int, unsigned*, unsigned*, int, cudaStream_t);
  };
  const Mode modes[] = {
      {"plain",
       [](const std::vector<Span>& s, const Span*, int, unsigned*, unsigned* sk, int g, cudaStream_t st) {
         for (const Span& m : s) launch(read_matrix<false, false>, g, false, st, m, sk);
       }},
      {"chained",
       [](const std::vector<Span>& s, const Span*, int, unsigned*, unsigned* sk, int g, cudaStream_t st) {
         for (const Span& m : s) launch(read_matrix<true, false>, g, true, st, m, sk);
       }},
      {"chained, early",
       [](const std::vector<Span>& s, const Span*, int, unsigned*, unsigned* sk, int g, cudaStream_t st) {
         for (const Span& m : s) launch(read_matrix<true, true>, g, true, st, m, sk);
       }},
      {"persistent",
       [](const std::vector<Span>&, const Span* d, int n, unsigned* c, unsigned* sk, int g, cudaStream_t st) {
         PROBE_CHECK(cudaMemsetAsync(c, 0, 4, st));
         launch(read_all<true, true>, g, false, st, d, n, c, sk);
       }},
      {"persistent, late",
       [](const std::vector<Span>&, const Span* d, int n, unsigned* c, unsigned* sk, int g, cudaStream_t st) {
         PROBE_CHECK(cudaMemsetAsync(c, 0, 4, st));
         launch(read_all<true, false>, g, false, st, d, n, c, sk);
       }},
      {"streaming", [](const std::vector<Span>&, const Span* d, int n, unsigned* c, unsigned* sk, int g,
                       cudaStream_t st) { launch(read_all<false, true>, g, false, st, d, n, c, sk); }},
  };
  const double floor_us = static_cast<double>(total) / (ceiling.best_gbs * 1e3);
  std::printf("read ceiling %.0f GB/s (median %.0f); %d layers x %.1f MB = %.2f GB; floor %.1f us/layer\n",
              ceiling.best_gbs, ceiling.median_gbs, layers, layer_bytes / 1e6, total / 1e9,
              floor_us / layers);
  std::printf("%-18s %12s %10s %8s %8s\n", "mode", "us/step", "us/layer", "GB/s", "%ceil");
  for (const Mode& mode : modes) {
    const double us = lathe::bench::graph_us_per_launch(
        stream, 1, 10, 2, [&](int) { mode.run(spans, d_spans, count, counter, sink, grid, stream); });
    const double gbs = static_cast<double>(total) / (us * 1e3);
    std::printf("%-18s %12.1f %10.2f %8.0f %7.1f%%\n", mode.name, us, us / layers, gbs,
                100.0 * gbs / ceiling.best_gbs);
  }

  // The engine's GEMV over the same matrices (weights as E4M3 codes 0x3c = 1.5; the values do not
  // change the time), chained as the backend launches it.
  lathe::cuda::set_chained_launch(true);
  lathe::cuda::set_gemv_early_weights(0);
  float* scales = nullptr;
  uint16_t *x = nullptr, *y = nullptr;
  void* gemv_ws_bytes = nullptr;
  const size_t max_scales = (24576 / 128) * (12288 / 128);
  PROBE_CHECK(cudaMalloc(&scales, max_scales * 4));
  PROBE_CHECK(cudaMemset(scales, 0, max_scales * 4));
  PROBE_CHECK(cudaMalloc(&x, 12288 * 2));
  PROBE_CHECK(cudaMemset(x, 0, 12288 * 2));
  PROBE_CHECK(cudaMalloc(&y, 24576 * 2));
  PROBE_CHECK(cudaMalloc(&gemv_ws_bytes, lathe::cuda::gemv_workspace_bytes()));
  const lathe::cuda::GemvWorkspace ws = lathe::cuda::gemv_workspace_in(gemv_ws_bytes, nullptr);
  auto gemv = [&](int span) {
    const size_t* shape = shapes[span % 4];
    lathe::cuda::GemvProblem p;
    p.w = spans[span].base;
    p.weight = lathe::cuda::GemvWeight::kFp8E4M3;
    p.n = static_cast<int64_t>(shape[0]);
    p.k = static_cast<int64_t>(shape[1]);
    p.scale_kind = lathe::cuda::GemvScale::kBlock128;
    p.scale = scales;
    p.x = x;
    p.x_stride = p.k;
    p.y = y;
    p.y_stride = p.n;
    p.m = 1;
    lathe::cuda::gemv_launch(1, p, ws, stream);
  };
  for (int i = 0; i < 4; ++i) gemv(i);  // first launches (function attributes) outside capture
  PROBE_CHECK(cudaStreamSynchronize(stream));
  {
    const double us = lathe::bench::graph_us_per_launch(stream, 1, 10, 2, [&](int) {
      for (int j = 0; j < count; ++j) gemv(j);
    });
    const double gbs = static_cast<double>(total) / (us * 1e3);
    std::printf("%-18s %12.1f %10.2f %8.0f %7.1f%%\n", "gemv, chained", us, us / layers, gbs,
                100.0 * gbs / ceiling.best_gbs);
  }
  // Shape by shape: the shape's copies (one per layer) as chained reads and through the GEMV.
  const char* names[4] = {"q|k|v", "o", "gate|up", "down"};
  std::printf("%-8s %10s %10s %10s %10s %10s\n", "shape", "MB", "floor us", "read us", "gemv us", "gemv-read");
  for (int sh = 0; sh < 4; ++sh) {
    const double mb = static_cast<double>(shapes[sh][0] * shapes[sh][1]) / 1e6;
    const double read_us = lathe::bench::graph_us_per_launch(stream, 1, 10, 2, [&](int) {
                             for (int l = 0; l < layers; ++l)
                               launch(read_matrix<true, true>, grid, true, stream, spans[l * 4 + sh], sink);
                           }) /
                           layers;
    const double gemv_us = lathe::bench::graph_us_per_launch(stream, 1, 10, 2, [&](int) {
                             for (int l = 0; l < layers; ++l) gemv(l * 4 + sh);
                           }) /
                           layers;
    std::printf("%-8s %10.1f %10.2f %10.2f %10.2f %10.2f\n", names[sh], mb, mb / (ceiling.best_gbs * 1e-3),
                read_us, gemv_us, gemv_us - read_us);
  }
  PROBE_CHECK(cudaFree(scales));
  PROBE_CHECK(cudaFree(x));
  PROBE_CHECK(cudaFree(y));
  PROBE_CHECK(cudaFree(gemv_ws_bytes));
  PROBE_CHECK(cudaFree(weights));
  PROBE_CHECK(cudaFree(d_spans));
  PROBE_CHECK(cudaFree(counter));
  PROBE_CHECK(cudaFree(sink));
  return 0;
}
