#pragma once
// Chained launches: programmatic dependent launch (PDL, sm_90+) for the kernels of the decode
// step, so a kernel's launch and CTA start-up overlap the tail of the kernel before it.
//
// Contract, for every kernel launched through launch_chained:
//   - every thread calls chained_kernel_begin() before anything else touches memory: it waits
//     until the previous grid of the stream has COMPLETED and its memory is visible, then lets
//     the next chained grid start launching (chained_kernel_wait() and chained_kernel_release(): the
//     two halves, for a kernel whose CTAs release the next grid later or not at all; it then
//     launches as they exit). Nothing is written before it, and nothing is read
//     before it that a kernel still running may write. Two kernels read early: the decode GEMV
//     its weights (written only when the model loads; gemv.h, gemv_early_weights) and split-K
//     decode attention the K/V rows before len - 1 (written by earlier steps;
//     paged_attention.h, splitk_early_kv). The split kernel and its reduce read the sequence
//     lengths early (uploaded before the step's first kernel).
//   - Because every chained kernel waits for its predecessor's completion before it can itself
//     complete, "complete" is transitive along the stream: a kernel also sees the results of
//     every earlier kernel, chained or not. Kernels launched the ordinary way (<<<>>>, cuBLASLt)
//     keep full stream order on both sides.
// By construction the results are those of ordinary launches (same kernels, every read after the
// writes it depends on); only the idle gap between kernels shrinks. Launches are ordinary unless
// the backend switched chaining on (chained_launch.h: sm_90+, LATHE_CHAINED_LAUNCH not off).
#include <cuda_runtime.h>

#include "backends/cuda/chained_launch.h"
#include "backends/cuda/check.h"

namespace lathe::cuda {

// The two halves of chained_kernel_begin, for a kernel whose CTAs decide whether to release the
// next grid: the next grid launches once every CTA has released it or exited. The split-K
// attention kernels only wait, so their dependents launch as their CTAs exit (an early release
// there measured slower on the chained Qwen3-32B steps; paged_attention_splitk.cuh).
__device__ __forceinline__ void chained_kernel_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
__device__ __forceinline__ void chained_kernel_release() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

// The wait, then the release of the next chained grid.
__device__ __forceinline__ void chained_kernel_begin() {
  chained_kernel_wait();
  chained_kernel_release();
}

// Launches `kernel` chained to the previous grid of `stream` (when enabled) and returns the
// launch status; the kernel must begin with chained_kernel_begin().
template <typename... Params, typename... Args>
cudaError_t launch_chained_status(void (*kernel)(Params...), dim3 grid, dim3 block, size_t smem_bytes,
                                  cudaStream_t stream, Args... args) {
  cudaLaunchAttribute attribute{};
  attribute.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attribute.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t config{};
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = smem_bytes;
  config.stream = stream;
  config.attrs = &attribute;
  config.numAttrs = chained_launch_enabled() ? 1 : 0;
  return cudaLaunchKernelEx(&config, kernel, static_cast<Params>(args)...);
}

// As launch_chained_status, throwing lathe::Error on a failed launch.
template <typename... Params, typename... Args>
void launch_chained(void (*kernel)(Params...), dim3 grid, dim3 block, size_t smem_bytes, cudaStream_t stream,
                    Args... args) {
  LATHE_CUDA_CHECK(launch_chained_status(kernel, grid, block, smem_bytes, stream, args...));
}

}  // namespace lathe::cuda
