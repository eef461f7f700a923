#include "app/bench_gemm_ceiling.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "app/bench_device_memory.h"
#include "core/error.h"

#ifdef LATHE_HAVE_CUDA
#include <cuda_runtime.h>

#include "backends/cuda/check.h"
#include "backends/cuda/gemm_lt.h"
#include "backends/cuda/probe.h"
#endif

namespace lathe::app {

#ifdef LATHE_HAVE_CUDA
namespace {

constexpr int64_t kSide = 8192;
constexpr size_t kWorkspaceBytes = size_t{32} << 20;

}  // namespace
#endif

std::optional<GemmCeiling> measure_gemm_ceiling(ops::Backend& backend, int runs) {
  if (backend.kind() != ops::DeviceKind::kCuda) return std::nullopt;
#ifdef LATHE_HAVE_CUDA
  const auto n = static_cast<size_t>(kSide);
  const int64_t kb = kSide / 128;
  const int64_t pitch = cuda::lt_act_scale_pitch(kSide);
  backend.synchronize();
  ScopedDeviceMemory w(backend, n * n * 2), x(backend, n * n * 2), y(backend, n * n * 2),
      workspace(backend, kWorkspaceBytes);
  ScopedDeviceMemory w_scale(backend, static_cast<size_t>(kb * kb) * sizeof(float));
  ScopedDeviceMemory x_scale(backend, static_cast<size_t>(kb * pitch) * sizeof(float));
  cudaStream_t stream = nullptr;
  LATHE_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  GemmCeiling out;
  try {
    // Finite e4m3 codes: as FP8 operands, and two at a time as (finite) BF16 values.
    cuda::fill_random(w.get(), n * n * 2, cuda::FillKind::kFp8E4M3, 11, stream);
    cuda::fill_random(x.get(), n * n * 2, cuda::FillKind::kFp8E4M3, 12, stream);
    const std::vector<float> ones(static_cast<size_t>(kb * std::max(kb, pitch)), 1.0f);
    LATHE_CUDA_CHECK(cudaMemcpyAsync(w_scale.get(), ones.data(), static_cast<size_t>(kb * kb) * sizeof(float),
                                     cudaMemcpyHostToDevice, stream));
    LATHE_CUDA_CHECK(cudaMemcpyAsync(x_scale.get(), ones.data(),
                                     static_cast<size_t>(kb * pitch) * sizeof(float), cudaMemcpyHostToDevice,
                                     stream));
    // The heuristic asked about this very shape: cuBLASLt at its best here.
    cuda::LtGemm lt(workspace.get(), kWorkspaceBytes, kSide);
    const cuda::LtOperands bf16{w.get(), x.get(), kSide, y.get(), kSide, false};
    out.bf16_flops_per_s =
        cuda::lt_best_flops(lt, cuda::LtKind::kBf16, kSide, kSide, kSide, bf16, runs, stream);
    if (lt.available(cuda::LtKind::kFp8Block, kSide, kSide, false)) {
      const cuda::LtOperands fp8{w.get(),
                                 x.get(),
                                 kSide,
                                 y.get(),
                                 kSide,
                                 false,
                                 static_cast<const float*>(w_scale.get()),
                                 static_cast<const float*>(x_scale.get())};
      out.fp8_block_flops_per_s =
          cuda::lt_best_flops(lt, cuda::LtKind::kFp8Block, kSide, kSide, kSide, fp8, runs, stream);
    }
    LATHE_CUDA_CHECK(cudaStreamSynchronize(stream));
  } catch (...) {
    cudaStreamSynchronize(stream);
    cudaStreamDestroy(stream);
    throw;
  }
  cudaStreamDestroy(stream);
  out.description = fmt::format(
      "GEMM reference {:.0f} TFLOP/s BF16, {} W8A8 block-128 (cuBLASLt, {}^3, best of {})",
      out.bf16_flops_per_s / 1e12,
      out.fp8_block_flops_per_s > 0 ? fmt::format("{:.0f} TFLOP/s", out.fp8_block_flops_per_s / 1e12)
                                    : std::string("no algorithm for"),
      kSide, std::max(runs, 1));
  return out;
#else
  (void)runs;
  return std::nullopt;
#endif
}

}  // namespace lathe::app
