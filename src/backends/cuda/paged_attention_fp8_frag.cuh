#pragma once
// FP8 E4M3 KV tiles straight into f16 tensor-core fragments (split-K decode, FP8 KV cache).
//
// Every E4M3 value is exact in f16, and sm_89+ converts a pair of codes with one packed cvt, so
// the FP8 arm multiplies in f16 (m16n8k16, f32 accumulate) with K and V taken from the raw staged
// rows in registers: no widened shared-memory copy. The dot products are sums, so the order of
// the reduced index inside a 16-wide MMA chunk is ours to choose as long as both operands agree;
// the layouts below choose it so that every thread reads whole 16-byte pieces of a row, without
// shared-memory bank conflicts on the padded rows (HD + 16 bytes, i.e. 1 mod 8 sixteen-byte
// units at HD 128 and 256).
//
// S = Q K^T, chunk kk of the head dimension (16 dims): thread (g, t) supplies the B fragment of
// position g of an 8-position column tile. Its four dims of chunk kk (MMA k = 2t, 2t+1, 2t+8,
// 2t+9) are four consecutive bytes of the K row, at
//     q_dim(kk, t) = 16 * k_unit(kk / 4, t) + 4 * (kk % 4)
// so one 16-byte load of a K row feeds four chunks. The Q A fragments read the same dims (Q is
// staged as f16 in natural order; a0|a2 of a row are one 8-byte load).
//
// O = P V, chunk kk of the tile (16 positions, MMA k = 2t, 2t+1, 2t+8, 2t+9 are tile rows 2t,
// 2t+1, 2t+8, 2t+9, the natural order the P fragments already have): thread (g, t) supplies the B
// fragment of output column g of every column tile. Its columns are the 16 consecutive dims of
// the 16-byte unit g of the V rows (units g and g + 8 at HD 256; 8 dims at HD 64): four row
// loads, a 4 x 4 byte transpose per word, then a packed cvt per half word. Column n of output
// tile j is therefore head dim out_dim(j, n), which the epilogue uses when it stores O.
#include <cuda_fp16.h>

#include <cstdint>

#include "backends/cuda/fp8_convert.cuh"
#include "backends/cuda/paged_attention_mma.cuh"

namespace lathe::cuda::attn::fp8frag {

// Four E4M3 codes (bytes 0..3) -> f16x2 {byte 0, byte 1} in `lo` and {byte 2, byte 3} in `hi`,
// exactly (sm_89+ packed cvt; older parts fp8_convert.cuh's field arithmetic; NaN codes stay NaN).
__device__ __forceinline__ void e4m3x4_to_f16x4(uint32_t codes, uint32_t& lo, uint32_t& hi) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 890
  lo = e4m3x2_to_f16x2(codes);
  hi = e4m3x2_to_f16x2(codes >> 16);
#else
  asm("{\n\t.reg .b16 l, h;\n\t"
      "mov.b32 {l, h}, %2;\n\t"
      "cvt.rn.f16x2.e4m3x2 %0, l;\n\t"
      "cvt.rn.f16x2.e4m3x2 %1, h;\n\t}"
      : "=r"(lo), "=r"(hi)
      : "r"(codes));
#endif
}

__device__ __forceinline__ uint32_t pack_f16x2(float lo, float hi) {
  const __half2 pair = __floats2half2_rn(lo, hi);
  return *reinterpret_cast<const uint32_t*>(&pair);
}

// A BF16 query value for the f16 MMA: a finite value saturated to the f16 range (exact for |q| in
// [2^-14, 65504]; below 2^-14 the f16 subnormal step, 2^-24, bounds the error; QK-normed queries
// lie far inside); NaN and infinities pass through as they do in the BF16 arm, instead of turning
// into plausible finite queries.
__device__ __forceinline__ float saturate_f16_range(float x) {
  return isfinite(x) ? fminf(fmaxf(x, -65504.0f), 65504.0f) : x;
}

// The 16-byte unit (of HD / 16 per FP8 K row) holding thread t's dims of chunks 4m .. 4m + 3.
template <int HD>
__device__ __forceinline__ int k_unit(int m, int t) {
  static_assert(HD == 64 || HD == 128 || HD == 256, "head dim");
  if constexpr (HD == 64) return t;  // 4 units, one per t
  return 2 * t + (m & 1) + 8 * (m >> 1);
}

// First of thread t's four consecutive dims of head-dimension chunk kk (see the header).
template <int HD>
__device__ __forceinline__ int q_dim(int kk, int t) {
  return 16 * k_unit<HD>(kk / 4, t) + 4 * (kk % 4);
}

// Head dim of column n of output column tile j.
template <int HD>
__device__ __forceinline__ int out_dim(int j, int n) {
  if constexpr (HD == 64) return 8 * n + j;
  return 16 * (n + 8 * (j / 16)) + j % 16;
}

// 4 x 4 byte transpose: word r of `rows` holds 4 dims of tile row r (rows 2t, 2t+1, 2t+8, 2t+9);
// word d of the result holds dim d of those 4 rows, i.e. the codes of one B fragment pair.
__device__ __forceinline__ void transpose4x4(const uint32_t (&rows)[4], uint32_t (&dims)[4]) {
  const uint32_t a01 = __byte_perm(rows[0], rows[1], 0x5140), a23 = __byte_perm(rows[2], rows[3], 0x5140);
  const uint32_t b01 = __byte_perm(rows[0], rows[1], 0x7362), b23 = __byte_perm(rows[2], rows[3], 0x7362);
  dims[0] = __byte_perm(a01, a23, 0x5410);
  dims[1] = __byte_perm(a01, a23, 0x7632);
  dims[2] = __byte_perm(b01, b23, 0x5410);
  dims[3] = __byte_perm(b01, b23, 0x7632);
}

}  // namespace lathe::cuda::attn::fp8frag
