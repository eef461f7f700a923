#pragma once
// The copy engine of sm_90 (Hopper) from device code: shared-memory mbarriers that count arrivals
// and transferred bytes, 1-D bulk copies and tiled tensor copies (TMA) from global into shared
// memory that complete on such a barrier. Used by the bulk-copy GEMV (gemv_stream.cu) and the
// tensor-copy split-K decode (paged_attention_splitk.cuh). The tensor maps are encoded on the
// host (tensor_map.h).
//
// Protocol, per barrier and phase: one thread announces the bytes it is about to request
// (mbar_expect_tx, which is also that phase's arrival), issues the copies, and every consumer
// waits on the phase's parity (0, 1, 0, ... for uses 0, 1, 2, ... of the barrier).
#include <cuda.h>

#include <cstdint>

namespace lathe::cuda::bulk {

__device__ __forceinline__ uint32_t smem_u32(const void* ptr) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(ptr));
}

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
// Below sm_90 (an sm_80 build) there is no copy engine and no transaction count: the functions
// below trap there, and the launchers never pick a kernel that calls them on such a device.
__device__ __forceinline__ void mbar_init(uint64_t*, uint32_t) { __trap(); }
__device__ __forceinline__ void mbar_init_fence() { __trap(); }
__device__ __forceinline__ void mbar_expect_tx(uint64_t*, uint32_t) { __trap(); }
__device__ __forceinline__ void mbar_arrive(uint64_t*) { __trap(); }
__device__ __forceinline__ void mbar_wait(uint64_t*, uint32_t) { __trap(); }
__device__ __forceinline__ void bulk_copy(void*, const void*, uint32_t, uint64_t*) { __trap(); }
__device__ __forceinline__ void tensor_copy_2d(void*, const CUtensorMap*, int, int, uint64_t*) { __trap(); }
__device__ __forceinline__ uint64_t l2_evict_first_policy() {
  __trap();
  return 0;
}
__device__ __forceinline__ uint64_t l2_evict_normal_policy() {
  __trap();
  return 0;
}
__device__ __forceinline__ void tensor_copy_5d(void*, const CUtensorMap*, int, int, int, int, int, uint64_t*,
                                               uint64_t) {
  __trap();
}
#else
// Initialises a barrier that completes a phase after `count` arrivals (and its announced bytes).
__device__ __forceinline__ void mbar_init(uint64_t* bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_u32(bar)), "r"(count) : "memory");
}

// Makes barrier initialisations visible to the copy engine (before any copy names the barrier).
__device__ __forceinline__ void mbar_init_fence() { asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory"); }

// Arrives on `bar` and adds `bytes` to the bytes its current phase waits for.
__device__ __forceinline__ void mbar_expect_tx(uint64_t* bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_u32(bar)), "r"(bytes)
               : "memory");
}

__device__ __forceinline__ void mbar_arrive(uint64_t* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem_u32(bar)) : "memory");
}

// Spins until the phase of `bar` with this parity has completed.
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

// `bytes` (a multiple of 16; both addresses 16-byte aligned) from global `src` to shared `dst`.
__device__ __forceinline__ void bulk_copy(void* dst, const void* src, uint32_t bytes, uint64_t* bar) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
          smem_u32(dst)),
      "l"(src), "r"(bytes), "r"(smem_u32(bar))
      : "memory");
}

// One box of a 2-D / 5-D tensor map at element coordinates (c0 innermost, ...) into `dst`
// (aligned as the map's swizzle requires: 128 bytes unswizzled, 1024 for the 128-byte swizzle).
// Box elements outside the tensor are written as zeros and still count towards the bytes.
// `map` must live in kernel-parameter (__grid_constant__), constant or global memory.
__device__ __forceinline__ void tensor_copy_2d(void* dst, const CUtensorMap* map, int c0, int c1, uint64_t* bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, "
      "%3}], [%4];" ::"r"(smem_u32(dst)),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(smem_u32(bar))
      : "memory");
}

// An L2 cache policy for data read once: its lines are the first evicted (createpolicy, 100% of
// the accesses that carry it).
__device__ __forceinline__ uint64_t l2_evict_first_policy() {
  uint64_t policy;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
  return policy;
}

// An L2 cache policy for data other CTAs read again soon (the default priority, as a hint operand).
__device__ __forceinline__ uint64_t l2_evict_normal_policy() {
  uint64_t policy;
  asm volatile("createpolicy.fractional.L2::evict_normal.b64 %0, 1.0;" : "=l"(policy));
  return policy;
}

// The 5-D box at coordinates (c0 innermost .. c4) into `dst`, completing on `bar`, its lines
// kept in L2 under `policy` (l2_evict_first_policy for a stream read once).
__device__ __forceinline__ void tensor_copy_5d(void* dst, const CUtensorMap* map, int c0, int c1, int c2,
                                               int c3, int c4, uint64_t* bar, uint64_t policy) {
  asm volatile(
      "cp.async.bulk.tensor.5d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.L2::cache_hint "
      "[%0], [%1, {%2, %3, %4, %5, %6}], [%7], %8;" ::"r"(smem_u32(dst)),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(c4), "r"(smem_u32(bar)),
      "l"(policy)
      : "memory");
}

#endif

}  // namespace lathe::cuda::bulk
