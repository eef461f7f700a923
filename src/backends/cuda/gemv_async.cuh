#pragma once
// Device helpers shared by the decode GEMV kernels that stream weights through shared memory
// with the asynchronous copy engines (gemv_stream.cu: bulk and tensor copies; gemv_wgmma.cu):
// mbarrier waits and arrivals, the copy instructions, and the cursor over a CTA's unit range.
#include <cuda.h>

#include <cstdint>

namespace lathe::cuda::gemv_detail {

__device__ __forceinline__ uint32_t smem_u32(const void* ptr) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(ptr));
}

__device__ __forceinline__ void mbar_init(uint64_t* bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_u32(bar)), "r"(count) : "memory");
}

__device__ __forceinline__ void mbar_expect_tx(uint64_t* bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_u32(bar)), "r"(bytes)
               : "memory");
}

__device__ __forceinline__ void mbar_arrive(uint64_t* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem_u32(bar)) : "memory");
}

__device__ __forceinline__ void mbar_wait(uint64_t* bar, uint32_t parity) {
  uint32_t done = 0;
  do {
    asm volatile(
        "{\n\t.reg .pred p;\n\tmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\tselp.u32 %0, 1, 0, "
        "p;\n\t}"
        : "=r"(done)
        : "r"(smem_u32(bar)), "r"(parity)
        : "memory");
  } while (done == 0);
}

__device__ __forceinline__ void bulk_copy(void* dst, const void* src, uint32_t bytes, uint64_t* bar) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
          smem_u32(dst)),
      "l"(src), "r"(bytes), "r"(smem_u32(bar))
      : "memory");
}

__device__ __forceinline__ void tensor_copy_2d(void* dst, const CUtensorMap* map, int c0, int c1,
                                               uint64_t* bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, "
      "%3}], [%4];" ::"r"(smem_u32(dst)),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(smem_u32(bar))
      : "memory");
}

// Walks a CTA's unit range stage by stage: each stage covers up to `stage_steps` steps of one
// row block, never crossing a block or the range end (one division at the start only).
struct Cursor {
  int64_t f;      // next unit
  int64_t block;  // its row block
  int step;       // its step within the block
  int count;      // steps in the stage starting at f

  __device__ __forceinline__ void start(int64_t unit, int64_t end, int64_t ksteps, int stage_steps) {
    f = unit;
    block = unit / ksteps;
    step = static_cast<int>(unit - block * ksteps);
    fit(end, ksteps, stage_steps);
  }
  __device__ __forceinline__ void fit(int64_t end, int64_t ksteps, int stage_steps) {
    count = static_cast<int>(min(static_cast<int64_t>(stage_steps), min(ksteps - step, end - f)));
  }
  __device__ __forceinline__ void next(int64_t end, int64_t ksteps, int stage_steps) {
    f += count;
    step += count;
    if (step == ksteps) {
      step = 0;
      ++block;
    }
    if (f < end) fit(end, ksteps, stage_steps);
  }
};

}  // namespace lathe::cuda::gemv_detail
