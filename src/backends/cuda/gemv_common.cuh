#pragma once
// Device pieces shared by the two decode GEMV kernels (gemv.cu: the register-ring kernel kept as
// a benchmark variant; gemv_stream.cu: the default bulk-copy stream kernel). Both compute one
// 128-k step of 16 weight rows x up to 16 token columns with the SAME instruction sequence
// (gemv_step below), which is what keeps every row's fp32 sum identical across tiers.
//
// Per 128-k step a thread (g = lane / 4, c = lane % 4) holds, for each 64-k half h, 16 k of
// weight row g and of row g + 8 starting at k = h * 64 + c * 16 (fp8: one 16-byte vector per
// row and half; bf16: two). They feed four m16n8k16 MMAs under a K permutation (MMA q takes
// physical k = c*16 + 4q .. 4q+3 as logical {2c, 2c+1, 2c+8, 2c+9}); the activations are read
// with the same permutation, so each MMA sums the right pairs.
#include <cuda_bf16.h>

#include <cstdint>

#include "backends/cuda/fp8_convert.cuh"
#include "backends/cuda/gemv.h"

namespace lathe::cuda::gemv_detail {

struct Params {
  const uint8_t* w;
  const float* scale;
  const float* bias;
  const __nv_bfloat16* x;
  void* y;
  float* partials;
  int* counters;
  int64_t x_stride;
  int64_t y_stride;
  int n;
  int k;
  int m;
  int ksplit;        // register-ring kernel: K splits (gridDim.y)
  int chunk_steps;   // register-ring kernel: steps per split
  int scale_kind;    // GemvScale
  int y_f32;
  int64_t ksteps;        // stream kernel: k / 128
  int64_t total_units;   // stream kernel: 128-row blocks x ksteps
  int64_t cta_units;     // stream kernel: units per CTA (the last CTA may get fewer)
};

__device__ __forceinline__ void mma_bf16(float (&d)[4], uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3, uint32_t b0,
                                         uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

__device__ __forceinline__ uint32_t word(const uint4& v, int i) {
  return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w;
}

// Final value of (row, col) from its fp32 sum; explicit _rn intrinsics so no instantiation
// contracts differently.
__device__ __forceinline__ void store_output(const Params& p, int row, int col, float sum) {
  float v = sum;
  if (p.scale_kind == static_cast<int>(GemvScale::kPerTensor)) v = __fmul_rn(v, __ldg(p.scale));
  if (p.scale_kind == static_cast<int>(GemvScale::kPerChannel)) v = __fmul_rn(v, __ldg(p.scale + row));
  if (p.bias != nullptr) v = __fadd_rn(v, __ldg(p.bias + row));
  const int64_t offset = static_cast<int64_t>(col) * p.y_stride + row;
  if (p.y_f32) {
    static_cast<float*>(p.y)[offset] = v;
  } else {
    static_cast<__nv_bfloat16*>(p.y)[offset] = __float2bfloat16_rn(v);
  }
}

// One 64-k half of a step: w holds this thread's weight vectors of half h in load order
// (fp8: {row g, row g+8}; bf16: {row g lo, row g hi, row g+8 lo, row g+8 hi}); xv[cg] the 16
// activations of column cg*8+g at the same k (zero for absent columns). Adds into part.
template <int kColGroups, bool kFp8, bool kBitTrick>
__device__ __forceinline__ void gemv_half(float (&part)[kColGroups][4], const uint4* w, const uint4 (&xv)[kColGroups][2]) {
#pragma unroll
  for (int q = 0; q < 4; ++q) {
    uint32_t a0, a1, a2, a3;
    if constexpr (kFp8) {
      const uint32_t r0 = word(w[0], q);
      const uint32_t r1 = word(w[1], q);
      if constexpr (kBitTrick) {
        fp8x4_to_bf16x4_bits(r0, a0, a2);
        fp8x4_to_bf16x4_bits(r1, a1, a3);
      } else {
        fp8x4_to_bf16x4(r0, a0, a2);
        fp8x4_to_bf16x4(r1, a1, a3);
      }
    } else {
      a0 = word(w[0 + (q >> 1)], (q & 1) * 2);
      a2 = word(w[0 + (q >> 1)], (q & 1) * 2 + 1);
      a1 = word(w[2 + (q >> 1)], (q & 1) * 2);
      a3 = word(w[2 + (q >> 1)], (q & 1) * 2 + 1);
    }
#pragma unroll
    for (int cg = 0; cg < kColGroups; ++cg) {
      const uint32_t b0 = word(xv[cg][q >> 1], (q & 1) * 2);
      const uint32_t b1 = word(xv[cg][q >> 1], (q & 1) * 2 + 1);
      mma_bf16(part[cg], a0, a1, a2, a3, b0, b1);
    }
  }
}

// Each step's partial joins the running sum with one fma: times its 128x128 block scale, or
// times 1 (an exact add) for the other kinds, whose scale applies at the end.
template <int kColGroups>
__device__ __forceinline__ void accumulate_step(float (&acc)[kColGroups][4], const float (&part)[kColGroups][4], float sc) {
#pragma unroll
  for (int cg = 0; cg < kColGroups; ++cg) {
#pragma unroll
    for (int i = 0; i < 4; ++i) acc[cg][i] = __fmaf_rn(part[cg][i], sc, acc[cg][i]);
  }
}

}  // namespace lathe::cuda::gemv_detail
