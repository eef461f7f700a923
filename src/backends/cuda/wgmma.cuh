#pragma once
// Warpgroup MMA (sm_90a wgmma) building blocks shared by the kernels that use it (the GEMV's
// ":wg" tiers, the prefill attention): the ordering instructions, shared-memory matrix
// descriptors without swizzle, and m64 x n x k16 products of BF16 or f16 operands (f32
// accumulators) with A from registers (rs) or shared memory (ss).
//
// A descriptor's canonical no-swizzle layout is built of core matrices: 8 rows of 16 contiguous
// bytes (8 BF16), 128 bytes in all. For a K-major operand (a row of the matrix runs along k) the
// 16 bytes lie along k and the 8 rows along m/n; for an MN-major one (transposed, trans-b = 1)
// the 16 bytes lie along n and the 8 rows along k. The leading byte offset steps between core
// matrices along k, the stride byte offset between core matrices along m/n.
//
// Compiled only for the host pass and the sm_90a device pass; callers guard their kernels the same
// way and launch them only where device_has_wgmma() (device.h).
#include <cstdint>

#if !defined(__CUDA_ARCH__) || defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define LATHE_WGMMA_COMPILED 1

namespace lathe::cuda {

__device__ __forceinline__ void wgmma_fence() {
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
}

__device__ __forceinline__ void wgmma_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
}

// Waits until at most kPending committed groups of this warpgroup are still running.
template <int kPending>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(kPending) : "memory");
}

// Warpgroup-wide register reallocation (warp-specialised kernels): the warpgroup's threads give
// registers back to the SM's pool down to kRegs a thread (dec), or wait for the pool until they
// hold kRegs (inc). kRegs: a multiple of 8 in 24..256.
template <int kRegs>
__device__ __forceinline__ void warpgroup_release_registers() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(kRegs));
}
template <int kRegs>
__device__ __forceinline__ void warpgroup_claim_registers() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(kRegs));
}

// Makes this thread's shared-memory writes (cp.async, stores) visible to wgmma's operand reads.
__device__ __forceinline__ void fence_shared_for_wgmma() {
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

// No-swizzle shared-memory matrix descriptor: start address, leading and stride byte offsets (all
// multiples of 16 bytes; the fields count 16-byte units, so adding n * 16 bytes to the start is
// adding n to the descriptor).
__device__ __forceinline__ uint64_t wgmma_desc(const void* smem, uint32_t leading_bytes,
                                               uint32_t stride_bytes) {
  const uint32_t addr = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
  return static_cast<uint64_t>((addr & 0x3ffff) >> 4) | (static_cast<uint64_t>(leading_bytes >> 4) << 16) |
         (static_cast<uint64_t>(stride_bytes >> 4) << 32);
}

// The same for the 128-byte swizzled layout (layout type 1 in bits 62-63): 8 rows of 128 bytes a
// swizzle atom (1024-byte aligned), the 16-byte unit c of row r stored at unit c ^ (r % 8) of its
// 128 bytes, as the copy engine writes a box with CU_TENSOR_MAP_SWIZZLE_128B. K-major: the stride
// byte offset steps between 8-row groups, the leading one is unused; a k16 step inside the atom
// adds 32 bytes to the start. MN-major: the leading byte offset steps between atoms along n (64
// BF16), the stride byte offset between 8-row groups along k.
__device__ __forceinline__ uint64_t wgmma_desc_sw128(const void* smem, uint32_t leading_bytes,
                                                     uint32_t stride_bytes) {
  return wgmma_desc(smem, leading_bytes, stride_bytes) | (uint64_t{1} << 62);
}

// Accumulator layout of every product here: d[j][i] is row g (+ 8 for i >= 2) of the warp's 16
// (warp w of the warpgroup holds rows 16w .. 16w + 15), column 8j + 2t + (i & 1), i.e. the mma.sync
// m16n8 accumulators of n8 tile j (g = lane / 4, t = lane % 4).

// The accumulator operands of an n64 (32 registers) and an n128 (64) product, and their names in
// the instruction text.
// clang-format off
#define LATHE_WGMMA_D_N64 \
    "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]), "+f"(d[1][0]), "+f"(d[1][1]), \
    "+f"(d[1][2]), "+f"(d[1][3]), "+f"(d[2][0]), "+f"(d[2][1]), "+f"(d[2][2]), "+f"(d[2][3]), \
    "+f"(d[3][0]), "+f"(d[3][1]), "+f"(d[3][2]), "+f"(d[3][3]), "+f"(d[4][0]), "+f"(d[4][1]), \
    "+f"(d[4][2]), "+f"(d[4][3]), "+f"(d[5][0]), "+f"(d[5][1]), "+f"(d[5][2]), "+f"(d[5][3]), \
    "+f"(d[6][0]), "+f"(d[6][1]), "+f"(d[6][2]), "+f"(d[6][3]), "+f"(d[7][0]), "+f"(d[7][1]), \
    "+f"(d[7][2]), "+f"(d[7][3])
#define LATHE_WGMMA_D_N128 \
    LATHE_WGMMA_D_N64, \
    "+f"(d[8][0]), "+f"(d[8][1]), "+f"(d[8][2]), "+f"(d[8][3]), "+f"(d[9][0]), "+f"(d[9][1]), \
    "+f"(d[9][2]), "+f"(d[9][3]), "+f"(d[10][0]), "+f"(d[10][1]), "+f"(d[10][2]), "+f"(d[10][3]), \
    "+f"(d[11][0]), "+f"(d[11][1]), "+f"(d[11][2]), "+f"(d[11][3]), "+f"(d[12][0]), "+f"(d[12][1]), \
    "+f"(d[12][2]), "+f"(d[12][3]), "+f"(d[13][0]), "+f"(d[13][1]), "+f"(d[13][2]), "+f"(d[13][3]), \
    "+f"(d[14][0]), "+f"(d[14][1]), "+f"(d[14][2]), "+f"(d[14][3]), "+f"(d[15][0]), "+f"(d[15][1]), \
    "+f"(d[15][2]), "+f"(d[15][3])
#define LATHE_WGMMA_REGS_N64 \
  "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
  "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
#define LATHE_WGMMA_REGS_N128 \
  LATHE_WGMMA_REGS_N64 ", " \
  "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, " \
  "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"

// The product instructions, as text: `types` is ".f32.bf16.bf16" or ".f32.f16.f16".
#define LATHE_WGMMA_N64_SS(types)                                                              \
  "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\nwgmma.mma_async.sync.aligned.m64n64k16" types " {" \
      LATHE_WGMMA_REGS_N64 "}, %32, %33, p, 1, 1, 0, 0;\n}\n"
#define LATHE_WGMMA_N64_RS(types)                                                              \
  "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\nwgmma.mma_async.sync.aligned.m64n64k16" types " {" \
      LATHE_WGMMA_REGS_N64 "}, {%32, %33, %34, %35}, %36, p, 1, 1, 0;\n}\n"
#define LATHE_WGMMA_N128_RS(types)                                                              \
  "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\nwgmma.mma_async.sync.aligned.m64n128k16" types " {" \
      LATHE_WGMMA_REGS_N128 "}, {%64, %65, %66, %67}, %68, p, 1, 1, %69;\n}\n"
// clang-format on

// d (64 x 64, f32) += A (64 x 16) * B (16 x 64), BF16 or (kF16) f16, both K-major and read from
// shared memory through descriptors a and b.
template <bool kF16 = false>
__device__ __forceinline__ void wgmma_m64n64k16_ss(float (&d)[8][4], uint64_t a, uint64_t b) {
  if constexpr (kF16) {
    asm volatile(LATHE_WGMMA_N64_SS(".f32.f16.f16") : LATHE_WGMMA_D_N64 : "l"(a), "l"(b));
  } else {
    asm volatile(LATHE_WGMMA_N64_SS(".f32.bf16.bf16") : LATHE_WGMMA_D_N64 : "l"(a), "l"(b));
  }
}

// d (64 x 64, f32) += A (64 x 16, registers) * B (16 x 64, K-major, descriptor b), BF16 or (kF16)
// f16. A: each warp supplies its 16 rows as its mma.sync m16n8k16 A fragment.
template <bool kF16 = false>
__device__ __forceinline__ void wgmma_m64n64k16_rs(float (&d)[8][4], const uint32_t (&a)[4], uint64_t b) {
  if constexpr (kF16) {
    asm volatile(LATHE_WGMMA_N64_RS(".f32.f16.f16")
                 : LATHE_WGMMA_D_N64
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b));
  } else {
    asm volatile(LATHE_WGMMA_N64_RS(".f32.bf16.bf16")
                 : LATHE_WGMMA_D_N64
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b));
  }
}

// d (64 x 128, f32) += A (64 x 16, registers) * B (16 x 128, descriptor b; kTransB = 1 for an
// MN-major B), BF16 or (kF16) f16. A: each warp supplies its 16 rows as its mma.sync m16n8k16 A
// fragment (paged_attention_mma.cuh's convention).
template <int kTransB, bool kF16 = false>
__device__ __forceinline__ void wgmma_m64n128k16_rs(float (&d)[16][4], const uint32_t (&a)[4], uint64_t b) {
  if constexpr (kF16) {
    asm volatile(LATHE_WGMMA_N128_RS(".f32.f16.f16")
                 : LATHE_WGMMA_D_N128
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "n"(kTransB));
  } else {
    asm volatile(LATHE_WGMMA_N128_RS(".f32.bf16.bf16")
                 : LATHE_WGMMA_D_N128
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "n"(kTransB));
  }
}

#undef LATHE_WGMMA_N64_SS
#undef LATHE_WGMMA_N64_RS
#undef LATHE_WGMMA_N128_RS
#undef LATHE_WGMMA_REGS_N64
#undef LATHE_WGMMA_REGS_N128
#undef LATHE_WGMMA_D_N64
#undef LATHE_WGMMA_D_N128

}  // namespace lathe::cuda

#endif
