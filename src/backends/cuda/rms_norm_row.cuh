#pragma once
// The residual add + RMS norm of one bf16 row, as device pieces shared by the norm kernels
// (elementwise.cu), the GEMV that normalises its own input (gemv_fused_norm.cuh) and the GEMV that
// adds into the residual (GemvProblem::y_add_block_ss), so all give the same bits:
// h = round_bf16(residual + delta); ss = the sum of h^2 in a fixed order: each 128-element block
// of the row (16 vectors of 8) as the squares of each vector in element order (fused multiply-
// adds from 0), then the 16 vector sums by an xor butterfly (offsets 8, 4, 2, 1), then the block
// sums by row_sum_of_blocks' tree; inv = 1 / sqrt(ss / cols + eps); out = round_bf16((h * inv) *
// weight).
// A block's sum needs only that block's 128 values, so a kernel that produces them can hand the
// block sums on (row_sum_of_blocks finishes the row).
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

inline constexpr int kBlockElems = 128;                                      // elements per block sum
inline constexpr int kBlockVecs = kBlockElems / kVecElems;                   // 16
inline constexpr int kMaxBlocks = kNormThreads * kMaxVecs / kBlockVecs;      // cols <= 8192: 64 blocks

// The sum of one block's 16 vector sums, held by 16 consecutive lanes (lanes 0-15 or 16-31 of a
// warp; every lane of the warp takes part); every lane of the 16 gets the block's sum.
__device__ __forceinline__ float block_sum_of_vectors(float vec_ss) {
#pragma unroll
  for (int off = kBlockVecs / 2; off > 0; off >>= 1) vec_ss += __shfl_xor_sync(0xffffffffu, vec_ss, off);
  return vec_ss;
}

// The row's sum of squares from its blocks' sums (at most kMaxBlocks), by a fixed tree: lane l
// adds blocks l and l + 32 (lo, hi: 0 past the row's blocks), then an xor butterfly over the warp
// (offsets 16, 8, 4, 2, 1). Called by a whole warp; every lane gets the total.
__device__ __forceinline__ float row_sum_of_blocks(float lo, float hi) {
  static_assert(kMaxBlocks == 64, "two blocks a lane");
  float t = __fadd_rn(lo, hi);
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) t = __fadd_rn(t, __shfl_xor_sync(0xffffffffu, t, off));
  return t;
}

// The same from block sums in shared memory.
__device__ __forceinline__ float row_sum_of_blocks(const float* block_ss, int blocks) {
  const int lane = threadIdx.x & 31;
  return row_sum_of_blocks(lane < blocks ? block_ss[lane] : 0.0f, lane + 32 < blocks ? block_ss[lane + 32] : 0.0f);
}

// The sums of squares of kRows rows held by a kNormThreads block as vectors (vector
// threadIdx.x + j * kNormThreads of each row; vec_ss[r][j] its sum of squares, 0 past `vecs`), in
// the order above. `block_ss` is shared scratch; the call synchronises the block on entry (earlier
// readers are done) and before the totals are read. Every thread gets every row's total.
template <int kRows>
__device__ __forceinline__ void row_sums(const float (&vec_ss)[kRows][kMaxVecs], int vecs,
                                         float (*block_ss)[kMaxBlocks], float (&total)[kRows]) {
  static_assert(kNormThreads % kBlockVecs == 0, "a block's vectors are 16 consecutive threads");
  __syncthreads();
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
#pragma unroll
    for (int j = 0; j < kMaxVecs; ++j) {
      if (j * kNormThreads >= vecs) break;  // uniform: every lane joins each butterfly it takes
      const float b = block_sum_of_vectors(vec_ss[r][j]);
      const int vi = threadIdx.x + j * kNormThreads;
      if (threadIdx.x % kBlockVecs == 0 && vi < vecs) block_ss[r][vi / kBlockVecs] = b;
    }
  }
  __syncthreads();
  const int blocks = (vecs + kBlockVecs - 1) / kBlockVecs;
#pragma unroll
  for (int r = 0; r < kRows; ++r) total[r] = row_sum_of_blocks(block_ss[r], blocks);
}

}  // namespace lathe::cuda::norm_row
