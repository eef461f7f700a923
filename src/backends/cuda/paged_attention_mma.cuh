#pragma once
// Tensor-core helpers of the paged attention kernels (sm_80+ mma.sync m16n8k16, BF16 or f16 in,
// f32 accumulate) and the fragment conventions they rely on, with g = lane / 4, t = lane % 4:
//   A (16x16, row-major):  a0 = (g, 2t..2t+1)  a1 = (g+8, 2t..)  a2 = (g, 2t+8..)  a3 = (g+8, 2t+8..)
//   B (16x8, "col"):       b0 = (k 2t..2t+1, n g)   b1 = (k 2t+8.., n g)
//   C (16x8, f32):         c0,c1 = (g, 2t..2t+1)    c2,c3 = (g+8, 2t..2t+1)
// A row of the product depends only on that row of A: the kernels rely on this to give a query
// the same bytes whichever tile row (or CTA) it lands in.
#include <cuda_bf16.h>

#include <cstdint>

namespace lathe::cuda::attn {

__device__ __forceinline__ uint32_t smem_addr(const void* ptr) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(ptr));
}

__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], const void* ptr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr(ptr)));
}

__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t (&r)[4], const void* ptr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr(ptr)));
}

// The transpose of an 8x8 matrix of 16-bit values held as one register per lane in the C
// layout's halves (lane holds row g, columns 2t and 2t + 1): afterwards the lane holds row g of
// the transpose, i.e. (rows 2t and 2t + 1, column g) of the input, the B layout's b0 half.
__device__ __forceinline__ uint32_t movmatrix_trans(uint32_t x) {
  uint32_t y;
  asm volatile("movmatrix.sync.aligned.m8n8.trans.b16 %0, %1;" : "=r"(y) : "r"(x));
  return y;
}

// d += a . b for one m16n8k16 tile with f32 accumulators, inputs of type INPUT (a PTX type
// string literal: inline asm takes only literals, hence the macro).
#define LATHE_ATTN_MMA_M16N8K16(INPUT)                                                                   \
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32." INPUT "." INPUT                                 \
               ".f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"                   \
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])                                        \
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1))
__device__ __forceinline__ void mma_bf16(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  LATHE_ATTN_MMA_M16N8K16("bf16");
}
__device__ __forceinline__ void mma_f16(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  LATHE_ATTN_MMA_M16N8K16("f16");
}
#undef LATHE_ATTN_MMA_M16N8K16

// S += Q K^T for head-dim chunk kk (dims 16kk .. 16kk + 15): `a` holds the chunk's Q fragment, K is
// a BF16 tile in shared memory whose rows 8j .. 8j + 7 feed column tile s[j], j < kCols; at(row, u)
// is the byte offset of row `row`'s 16-byte unit u (dims 8u .. 8u + 7) from `k` (a row-major
// pitch, or a swizzled layout).
template <int kCols, typename At>
__device__ __forceinline__ void mma_qk_chunk_at(float (&s)[kCols][4], const uint32_t (&a)[4], const unsigned char* k,
                                                const At& at, int kk, int lane) {
#pragma unroll
  for (int j = 0; j < kCols; j += 2) {
    uint32_t b[4];
    ldmatrix_x4(b, k + at(j * 8 + (lane % 8) + 8 * (lane / 16), 2 * kk + (lane / 8) % 2));
    mma_bf16(s[j], a, b[0], b[1]);
    mma_bf16(s[j + 1], a, b[2], b[3]);
  }
}

// O += P V for position chunk kk (rows 16kk .. 16kk + 15 of a BF16 V tile in shared memory, laid
// out as for mma_qk_chunk_at), once per A fragment in `p...` (e.g. the hi and lo parts of P), in
// that order for each pair of column tiles of o (kCols of them).
template <int kCols, typename At, typename... Fragments>
__device__ __forceinline__ void mma_pv_chunk_at(float (&o)[kCols][4], const unsigned char* v, const At& at, int kk,
                                                int lane, const Fragments&... p) {
#pragma unroll
  for (int j = 0; j < kCols; j += 2) {
    uint32_t b[4];
    ldmatrix_x4_trans(b, v + at(kk * 16 + (lane % 8) + 8 * ((lane / 8) % 2), j + lane / 16));
    ((mma_bf16(o[j], p, b[0], b[1]), mma_bf16(o[j + 1], p, b[2], b[3])), ...);
  }
}

// The two above on a row-major tile of `stride` elements per row.
template <int kCols>
__device__ __forceinline__ void mma_qk_chunk(float (&s)[kCols][4], const uint32_t (&a)[4], const __nv_bfloat16* k,
                                             int stride, int kk, int lane) {
  const auto at = [stride](int row, int unit) { return (row * stride + unit * 8) * 2; };
  mma_qk_chunk_at(s, a, reinterpret_cast<const unsigned char*>(k), at, kk, lane);
}
template <int kCols, typename... Fragments>
__device__ __forceinline__ void mma_pv_chunk(float (&o)[kCols][4], const __nv_bfloat16* v, int stride, int kk, int lane,
                                             const Fragments&... p) {
  const auto at = [stride](int row, int unit) { return (row * stride + unit * 8) * 2; };
  mma_pv_chunk_at(o, reinterpret_cast<const unsigned char*>(v), at, kk, lane, p...);
}

__device__ __forceinline__ uint32_t pack_bf16x2(float lo, float hi) {
  const __nv_bfloat162 pair = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<const uint32_t*>(&pair);
}

// 16-byte asynchronous global -> shared copy; with `valid` false the destination is zero-filled
// and nothing is read.
__device__ __forceinline__ void cp_async16(void* smem_dst, const void* gmem_src, bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(smem_addr(smem_dst)), "l"(gmem_src),
               "r"(valid ? 16 : 0)
               : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
template <int kPending>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;" ::"n"(kPending) : "memory");
}

// Scale and mask of one tile of scores in m16 x n8 accumulator fragments (s[j] covers positions
// pos0 + 8j .. pos0 + 8j + 7; this lane holds columns 2t, 2t + 1 of rows a = lane/4 and
// b = lane/4 + 8): s = s * s_mul where keep(pos, keep_a, keep_b) admits the position for that
// row, else -inf. Returns this lane's maxima of rows a and b over the tile (online_softmax_max
// reduces them).
template <int kCols, typename Keep>
__device__ __forceinline__ void scale_mask_tile(float (&s)[kCols][4], int pos0, int t, float s_mul,
                                                const Keep& keep, float& max_a, float& max_b) {
  max_a = -INFINITY;
  max_b = -INFINITY;
#pragma unroll
  for (int j = 0; j < kCols; ++j) {
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      const int pos = pos0 + j * 8 + 2 * t + e;
      bool keep_a, keep_b;
      keep(pos, keep_a, keep_b);
      s[j][e] = keep_a ? __fmul_rn(s[j][e], s_mul) : -INFINITY;
      s[j][2 + e] = keep_b ? __fmul_rn(s[j][2 + e], s_mul) : -INFINITY;
      max_a = fmaxf(max_a, s[j][e]);
      max_b = fmaxf(max_b, s[j][2 + e]);
    }
  }
}

// The maximum step of online softmax for an m16 MMA row pair (rows a = lane/4 and b = lane/4 + 8):
// reduces this lane's tile maxima over the 4 lanes that share a row, folds them into the running
// maxima m and returns the factors alpha = 2^(m_old - m_new) that rescale the running state.
__device__ __forceinline__ void online_softmax_max(float tile_max_a, float tile_max_b, float& m_a, float& m_b,
                                                   float& alpha_a, float& alpha_b) {
#pragma unroll
  for (int offset = 1; offset < 4; offset *= 2) {
    tile_max_a = fmaxf(tile_max_a, __shfl_xor_sync(0xffffffffu, tile_max_a, offset));
    tile_max_b = fmaxf(tile_max_b, __shfl_xor_sync(0xffffffffu, tile_max_b, offset));
  }
  const float new_a = fmaxf(m_a, tile_max_a), new_b = fmaxf(m_b, tile_max_b);
  alpha_a = exp2f(m_a - new_a);
  alpha_b = exp2f(m_b - new_b);
  m_a = new_a;
  m_b = new_b;
}

// One online-softmax step of an m16 MMA row pair (rows a = lane/4 and b = lane/4 + 8): sums this
// tile's probabilities over the 4 lanes that share a row, folds them into the running
// denominators l (l = l * alpha + sum) and rescales the running output o by alpha. sum_a/sum_b
// hold this lane's partial sums on entry; the order of operations is fixed (bit-reproducible).
template <int kCols>
__device__ __forceinline__ void online_softmax_rescale(float sum_a, float sum_b, float alpha_a, float alpha_b,
                                                       float& l_a, float& l_b, float (&o)[kCols][4]) {
#pragma unroll
  for (int offset = 1; offset < 4; offset *= 2) {
    sum_a = __fadd_rn(sum_a, __shfl_xor_sync(0xffffffffu, sum_a, offset));
    sum_b = __fadd_rn(sum_b, __shfl_xor_sync(0xffffffffu, sum_b, offset));
  }
  l_a = __fmaf_rn(l_a, alpha_a, sum_a);
  l_b = __fmaf_rn(l_b, alpha_b, sum_b);
#pragma unroll
  for (int j = 0; j < kCols; ++j) {
    o[j][0] = __fmul_rn(o[j][0], alpha_a);
    o[j][1] = __fmul_rn(o[j][1], alpha_a);
    o[j][2] = __fmul_rn(o[j][2], alpha_b);
    o[j][3] = __fmul_rn(o[j][3], alpha_b);
  }
}

}  // namespace lathe::cuda::attn
