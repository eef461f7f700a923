#pragma once
// The GEMV's warpgroup MMA (gemv.cu): per 16-k chunk ONE wgmma per warpgroup, the weights as the A
// operand from registers (each warp's m16n8k16 fragment of its 16 rows, weight_fragment) and the
// activation columns as B from shared memory, instead of each warp's mma.sync m16n8k16 per column
// group fed by activation loads from shared memory. The 32-row tier (":wg") takes wgmma n32, the
// 16-row tier (":wg") n16, tiers 1 and 4 (":wgn") n8. Same products in the same chain: on the H200
// the fp32 sums are bit-identical to mma.sync's, n8 and n16 alike (bench/kernels/bf16_wgmma_probe.cu,
// 1.3 M sums over four value ranges, session 23), so rows stay byte-equal to the m = 1 tier's
// mma.sync kernel. n32 (session 40) is held to the same by gpu_cuda_gemv_test's 32-row cases.
//
// The B operand's layout in shared memory: gemv_wgmma_layout.h.
#include <cuda_bf16.h>

#include <cstdint>

#include "backends/cuda/gemv_common.cuh"
#include "backends/cuda/gemv_policy.h"
#include "backends/cuda/gemv_wgmma_layout.h"
#include "backends/cuda/wgmma.cuh"

namespace lathe::cuda::gemv_detail {

__device__ __forceinline__ void cp_async16(void* smem, const void* gmem) {
  const unsigned addr = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(addr), "l"(gmem));
}

__device__ __forceinline__ void cp_async4(void* smem, const void* gmem) {
  const unsigned addr = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" ::"r"(addr), "l"(gmem));
}

// Calls put(dst, col, u) for unit u of each column col < min(m, kRows) of `count` (<= kGroupSteps)
// steps, dst being where that unit goes in a buffer of kCols columns (gemv_wgmma_layout.h). Units
// are kUnitBytes long from the group's first k: 4 (word u: physical k 2u, 2u + 1, bf16 weights'
// permuted layout, wg_x_offset) or 16 (natural k 8u .. 8u + 7, fp8 weights, wg_x_unit_offset).
// With at least as many units a column as threads, thread `tid` of kThreads takes units tid,
// tid + kThreads, ... and every column of them; with fewer, kSlices threads share a unit, thread
// tid taking unit tid % kUnitThreads and the contiguous columns s * kRows / kSlices + j of its
// slice s = tid / kUnitThreads (one runtime base, compile-time offsets: fewer registers than
// interleaved columns, e.g. 56 -> 32 spilled bytes at three CTAs per SM); with fewer columns than
// that (the 1-row tier's 16-byte units), threads past the units idle. Columns m..kCols-1 are left
// as they are (zeroed once per launch).
template <int kCols, int kRows, int kGroupSteps, int kThreads, int kUnitBytes, typename PutUnit>
__device__ __forceinline__ void wg_for_each_unit(uint8_t* buf, int m, int count, int tid, PutUnit put) {
  static_assert(kUnitBytes == 4 || kUnitBytes == 16, "words or 16-byte units");
  constexpr int kStepUnits = kStepK * 2 / kUnitBytes;
  constexpr int kUnits = kGroupSteps * kStepUnits;  // units of a column in one group
  constexpr int kWantSlices = kUnits >= kThreads ? 1 : kThreads / kUnits;
  constexpr int kSlices = kWantSlices < kRows ? kWantSlices : kRows;
  constexpr int kUnitThreads = kThreads / kSlices;
  static_assert(kUnits % kUnitThreads == 0 || kUnitThreads > kUnits, "whole units of each column per thread");
  static_assert(kRows % kSlices == 0, "whole columns per slice");
  // With one slice, slice and unit are compile-time 0 and tid: the division would make every
  // column index a runtime value (the 16-row kernel then spilled 84 B at three CTAs per SM).
  const int slice = kSlices == 1 ? 0 : tid / kUnitThreads;
  const int unit = kSlices == 1 ? tid : tid % kUnitThreads;
#pragma unroll
  for (int i = 0; i < (kUnits + kUnitThreads - 1) / kUnitThreads; ++i) {
    const int u = unit + i * kUnitThreads;
    if (u >= kUnits || u / kStepUnits >= count) return;
#pragma unroll
    for (int j = 0; j < kRows / kSlices; ++j) {
      const int col = slice * (kRows / kSlices) + j;
      if (col < m) {
        const int offset = kUnitBytes == 4 ? wg_x_offset<kCols>(u, col) : wg_x_unit_offset<kCols>(u, col);
        put(buf + offset, col, u);
      }
    }
  }
}

// Stages x (x_group: the group's first k of row 0): fp8 weights by 16-byte copies of natural x,
// bf16 weights by 4-byte copies into their permuted places.
template <int kCols, int kRows, int kGroupSteps, int kThreads, bool kFp8>
__device__ __forceinline__ void wg_stage_x(uint8_t* buf, const __nv_bfloat16* x_group, int64_t x_stride,
                                           int m, int count, int tid) {
  if constexpr (kFp8) {
    wg_for_each_unit<kCols, kRows, kGroupSteps, kThreads, 16>(
        buf, m, count, tid,
        [&](uint8_t* dst, int col, int u) { cp_async16(dst, x_group + 8 * u + col * x_stride); });
  } else {
    wg_for_each_unit<kCols, kRows, kGroupSteps, kThreads, 4>(
        buf, m, count, tid,
        [&](uint8_t* dst, int col, int u) { cp_async4(dst, x_group + 2 * u + col * x_stride); });
  }
}

// Declared for the host pass and the sm_90a device pass (kernels guard their calls the same way).
#if !defined(__CUDA_ARCH__) || defined(__CUDA_ARCH_FEAT_SM90_ALL)
// No-swizzle descriptor of one chunk of core matrices: leading byte offset 128 (between the two
// logical k halves), stride byte offset 256 (between the two column groups of n16). The GEMV's x
// buffers take wg_swizzled_desc; bench/kernels/bf16_wgmma_probe.cu lays its operands out this way.
__device__ __forceinline__ uint64_t wg_chunk_desc(const uint8_t* chunk) {
  const uint32_t addr = static_cast<uint32_t>(__cvta_generic_to_shared(chunk));
  return static_cast<uint64_t>((addr & 0x3ffff) >> 4) | (static_cast<uint64_t>(128 >> 4) << 16) |
         (static_cast<uint64_t>(256 >> 4) << 32);
}

// 128-byte-swizzle, K-major descriptor of the x buffer layout (gemv_wgmma_layout.h) starting at
// `start` (a chunk: wg_chunk_offset from a 1024-byte aligned step): stride byte offset 1024
// (between column groups), leading byte offset unused by K-major swizzled layouts (set to 1),
// layout type 1 (128-byte swizzle) in bits 62-63.
__device__ __forceinline__ uint64_t wg_swizzled_desc(const uint8_t* start) {
  const uint32_t addr = static_cast<uint32_t>(__cvta_generic_to_shared(start));
  return static_cast<uint64_t>((addr & 0x3ffff) >> 4) | (uint64_t{1} << 16) |
         (static_cast<uint64_t>(kWgAtomBytes >> 4) << 32) | (uint64_t{1} << 62);
}

// d += A (this warp's 16 rows of the warpgroup's 64, registers) * B (16 k x 16 columns).
// d[4j + i]: row g (+8 for i >= 2) of the warp's rows, column 8j + 2c + (i & 1): the mma.sync
// accumulators part[j][i] of gemv_half.
__device__ __forceinline__ void wgmma_m64n16k16(float (&d)[8], const uint32_t (&a)[4], uint64_t b) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n16k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7}, "
      "{%8, %9, %10, %11}, %12, p, 1, 1, 0;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b));
}

// The n32 form (d[4j + i] as in the n16 form, j = 0..3): the 32-row tier (":wg").
__device__ __forceinline__ void wgmma_m64n32k16(float (&d)[16], const uint32_t (&a)[4], uint64_t b) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, "
      "%11, %12, %13, %14, %15}, {%16, %17, %18, %19}, %20, p, 1, 1, 0;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b));
}

// The n8 form (columns 0-7 only; d[i] as d[i] of the n16 form): tiers 1 and 4 (":wgn").
__device__ __forceinline__ void wgmma_m64n8k16(float (&d)[4], const uint32_t (&a)[4], uint64_t b) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%0, %1, %2, %3}, {%4, %5, %6, %7}, %8, p, 1, 1, "
      "0;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b));
}

// One 128-k step of kCols columns: part (gemv_half's accumulator layout for kCols / 8 column
// groups, zero on entry) gets the step's sums, from this thread's weight vectors of the two 64-k
// halves (w_half[h], load order as for weight_fragment) and the step's x at x_step. Two chunks per
// wgmma group, one group in flight while the next one's weights convert: a wgmma's register
// operands stay live until it completes, and more fragments than that spill at three CTAs per SM
// (80 registers).
template <int kCols, bool kFp8, bool kBitTrick>
__device__ __forceinline__ void wg_step(float (&part)[kCols / 8][4], const uint4* const (&w_half)[2],
                                        const uint8_t* x_step) {
  float d[kCols / 2] = {};
  const uint64_t step_desc = wg_swizzled_desc(x_step);
#pragma unroll
  for (int h = 0; h < 2; ++h) {
#pragma unroll
    for (int q0 = 0; q0 < 4; q0 += 2) {
      uint32_t a[2][4];
      weight_fragment<kFp8, kBitTrick>(w_half[h], q0, a[0]);
      weight_fragment<kFp8, kBitTrick>(w_half[h], q0 + 1, a[1]);
      wgmma_fence();
#pragma unroll
      for (int j = 0; j < 2; ++j) {  // the descriptor's address field counts 16-byte units
        const uint64_t desc = step_desc + (wg_chunk_offset<kCols>(h, q0 + j) >> 4);
        if constexpr (kCols == 32) {
          wgmma_m64n32k16(d, a[j], desc);
        } else if constexpr (kCols == 16) {
          wgmma_m64n16k16(d, a[j], desc);
        } else {
          wgmma_m64n8k16(d, a[j], desc);
        }
      }
      wgmma_commit();
      wgmma_wait<1>();
    }
  }
  wgmma_wait<0>();
#pragma unroll
  for (int i = 0; i < kCols / 2; ++i) part[i >> 2][i & 3] = d[i];
}
#endif  // other architectures build the :wg instantiations without it; gemv_launch never runs them
        // there (device_has_wgmma in gemv.cu)

}  // namespace lathe::cuda::gemv_detail
