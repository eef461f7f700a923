#pragma once
// The residual add + RMS norm of one bf16 row, as device pieces shared by the norm kernels
// (elementwise.cu) and the GEMV that normalises its own input (gemv_fused_norm.cuh), so both give
// the same bits: h = round_bf16(residual + delta); ss = the sum of h^2, per thread over its
// 8-element vectors (vector t + j * kNormThreads for thread t, elements in order, fused
// multiply-adds), then the fixed block tree of block_sums; inv = 1 / sqrt(ss / cols + eps);
// out = round_bf16((h * inv) * weight).
#include <cuda_bf16.h>

#include <cstdint>

namespace lathe::cuda::norm_row {

inline constexpr int kNormThreads = 256;  // threads of every CTA that normalises a row
inline constexpr int kVecElems = 8;
inline constexpr int kMaxVecs = 4;  // vectors per thread: cols <= 256 * 8 * 4 = 8192

struct Bf16x8 {
  __nv_bfloat162 h[4];
};

__device__ __forceinline__ Bf16x8 load_vec(const __nv_bfloat16* p) {
  const uint4 raw = *reinterpret_cast<const uint4*>(p);
  return *reinterpret_cast<const Bf16x8*>(&raw);
}

__device__ __forceinline__ void store_vec(__nv_bfloat16* p, const Bf16x8& v) {
  *reinterpret_cast<uint4*>(p) = *reinterpret_cast<const uint4*>(&v);
}

// round_bf16(a + d), elementwise.
__device__ __forceinline__ Bf16x8 add_rounded(const Bf16x8& a, const Bf16x8& d) {
  Bf16x8 sum;
#pragma unroll
  for (int i = 0; i < 4; ++i)
    sum.h[i] = __floats2bfloat162_rn(__low2float(a.h[i]) + __low2float(d.h[i]),
                                     __high2float(a.h[i]) + __high2float(d.h[i]));
  return sum;
}

__device__ __forceinline__ void to_floats(const Bf16x8& a, float (&v)[kVecElems]) {
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    v[2 * i] = __low2float(a.h[i]);
    v[2 * i + 1] = __high2float(a.h[i]);
  }
}

// ss += v[i]^2 in element order.
__device__ __forceinline__ float add_squares(const float (&v)[kVecElems], float ss) {
#pragma unroll
  for (int i = 0; i < kVecElems; ++i) ss = __fmaf_rn(v[i], v[i], ss);
  return ss;
}

__device__ __forceinline__ float inv_rms(float total, int cols, float eps) {
  return 1.0f / sqrtf(total / static_cast<float>(cols) + eps);
}

// round_bf16((a * inv) * wa), round_bf16((b * inv) * wb) as one pair.
__device__ __forceinline__ __nv_bfloat162 normed_pair(float a, float b, float inv, float wa, float wb) {
  return __floats2bfloat162_rn((a * inv) * wa, (b * inv) * wb);
}

// The 8 normalised elements at column col (weight f32, 16-byte aligned at col).
__device__ __forceinline__ Bf16x8 normed_vec(const float (&v)[kVecElems], float inv, const float* weight,
                                             int64_t col) {
  const float4 w0 = *reinterpret_cast<const float4*>(weight + col);
  const float4 w1 = *reinterpret_cast<const float4*>(weight + col + 4);
  const float w[kVecElems] = {w0.x, w0.y, w0.z, w0.w, w1.x, w1.y, w1.z, w1.w};
  Bf16x8 o;
#pragma unroll
  for (int i = 0; i < 4; ++i) o.h[i] = normed_pair(v[2 * i], v[2 * i + 1], inv, w[2 * i], w[2 * i + 1]);
  return o;
}

// Block sums of kCount values at once, each by the same fixed tree (a butterfly inside each warp,
// then the warps' totals in warp order), so a value's sum does not depend on kCount. Every thread
// of the kNormThreads gets the totals. `partial` is shared scratch; the call synchronises the block
// on entry (earlier readers of partial are done) and before the totals are read.
template <int kCount>
__device__ __forceinline__ void block_sums(float (&v)[kCount], float (*partial)[kNormThreads / 32]) {
#pragma unroll
  for (int i = 0; i < kCount; ++i) {
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) v[i] += __shfl_xor_sync(0xffffffffu, v[i], off);
  }
  __syncthreads();
  if ((threadIdx.x & 31) == 0) {
#pragma unroll
    for (int i = 0; i < kCount; ++i) partial[i][threadIdx.x >> 5] = v[i];
  }
  __syncthreads();
#pragma unroll
  for (int i = 0; i < kCount; ++i) {
    float total = 0.0f;
#pragma unroll
    for (int w = 0; w < kNormThreads / 32; ++w) total += partial[i][w];
    v[i] = total;
  }
}

}  // namespace lathe::cuda::norm_row
