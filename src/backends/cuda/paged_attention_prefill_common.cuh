#pragma once
// What the two paged prefill kernels share, so that a row gets the same bytes from either: the
// tile geometry, the parameters, the causal mask, the online-softmax step and the output store.
// paged_attention_prefill.cu (mma.sync, every head dim) and paged_attention_prefill_ws.cu
// (warpgroup MMAs with a producer warpgroup, head dim 128 on sm_90a) both hold a row's scores and
// output in the mma.sync m16n8 accumulator layout (this lane: rows g = lane / 4 and g + 8 of a
// 16-row tile, columns 2t, 2t + 1 of every n8 tile, t = lane % 4).
//
// Per 64-position KV tile (anchored at position 0) and row, in f32, with c = scale * log2(e)
// [* k_scale]:
//   s   = q . k,  masked to -inf past the row's position
//   m'  = max(m, max s);  a = 2^((m - m') c);  p = 2^(s c - m' c)   (p: one fused multiply-add)
//   l'  = l * a + sum p;  o' = o * a + bf16(p) . v
// out = o / l [* v_scale]. The products multiply BF16 operands for BF16 KV, f16 ones for FP8 KV
// (kF16Operands below). A row's arithmetic never involves another row, and the tiles past a
// row's own position are fully masked, which leaves m, l and o bit-unchanged (a = 1, p = 0); so a
// row's bytes are the same however its prompt was chunked, whichever row tile or CTA it lands in,
// and whatever else the step holds.
#include <cuda_bf16.h>

#include <cstdint>

#include "backends/cuda/paged_attention_common.cuh"
#include "backends/cuda/paged_attention_decode.cuh"
#include "backends/cuda/paged_attention_fp8_frag.cuh"
#include "backends/cuda/paged_attention_mma.cuh"

namespace lathe::cuda::prefill {

inline constexpr int kTileQ = 128;              // query rows per CTA
inline constexpr int kTileKv = 64;              // KV positions per tile
inline constexpr int kScoreCols = kTileKv / 8;  // n8 score tiles per 16-row tile

// The tensor cores' operand type per KV dtype: BF16 for BF16 KV; f16 for FP8 KV. Every E4M3 code
// is exact in f16 and one packed cvt widens two (BF16 takes four conversions per two codes, which
// bounded the FP8 kernels); a BF16 query is exact in f16 within its range (saturated as the
// split-K decode's FP8 arm does; QK-normed queries lie far inside), and P keeps 11 bits instead of 8.
template <typename Kv>
inline constexpr bool kF16Operands = Kv::kDType == KvDType::kFP8E4M3;

// 8 query values (BF16, 16 bytes) as the products' A operand type.
template <typename Kv>
__device__ __forceinline__ uint4 query_operands(const uint4& raw) {
  if constexpr (!kF16Operands<Kv>) {
    return raw;
  } else {
    float f[attn::kFragElems];
    attn::widen(raw, f);
    using attn::fp8frag::pack_f16x2;
    using attn::fp8frag::saturate_f16_range;
    return make_uint4(pack_f16x2(saturate_f16_range(f[0]), saturate_f16_range(f[1])),
                      pack_f16x2(saturate_f16_range(f[2]), saturate_f16_range(f[3])),
                      pack_f16x2(saturate_f16_range(f[4]), saturate_f16_range(f[5])),
                      pack_f16x2(saturate_f16_range(f[6]), saturate_f16_range(f[7])));
  }
}

// 8 E4M3 codes (8 bytes) -> 8 f16 (16 bytes), exactly.
__device__ __forceinline__ uint4 widen_codes_f16(uint32_t lo, uint32_t hi) {
  uint4 out;
  attn::fp8frag::e4m3x4_to_f16x4(lo, out.x, out.y);
  attn::fp8frag::e4m3x4_to_f16x4(hi, out.z, out.w);
  return out;
}

// The decode kernels' parameters (the split-K fields unused) and each sequence's first query row
// in the step (query_start[s] .. query_start[s + 1] - 1 are sequence s's rows).
struct Params : attn::DecodeParams {
  const int32_t* query_start;
};

// A CTA's share of the grid (q head fastest in x; query tiles in y, last-first so that the longest
// CTAs start first; sequences in z) and what follows from it.
struct CtaTile {
  int head, seq, q_begin, qlen, tile_row0, ctx, first_pos, kv_head, num_kv_tiles;
  const int32_t* table;
  bool empty;  // the tile starts past the sequence's chunk: nothing to do

  __device__ __forceinline__ explicit CtaTile(const Params& p) {
    head = blockIdx.x;
    seq = blockIdx.z;
    q_begin = p.query_start[seq];
    qlen = p.query_start[seq + 1] - q_begin;
    tile_row0 = (gridDim.y - 1 - blockIdx.y) * kTileQ;
    empty = tile_row0 >= qlen;
    ctx = p.context_lens[seq];
    first_pos = ctx - qlen;  // position of the chunk's row 0
    kv_head = head / (p.num_heads / p.num_kv_heads);
    table = p.block_tables + static_cast<int64_t>(seq) * p.max_blocks_per_seq;
    const int last_row = min(tile_row0 + kTileQ, qlen) - 1;
    num_kv_tiles = (first_pos + last_row) / kTileKv + 1;
  }

  // Byte offset in the K (or V) pool of element `col` of position `pos` (< ctx) of this kv head.
  template <typename Kv, int HD>
  __device__ __forceinline__ int64_t kv_byte_offset(const Params& p, int pos, int col) const {
    const int32_t block = __ldg(table + pos / p.block_size);
    return (attn::kv_offset(block, kv_head, pos % p.block_size, p.num_kv_heads, p.block_size, HD) + col) *
           Kv::kBytes;
  }
};

// 2^x on the special-function unit, flushing denormal results to zero (2^-inf = 0).
__device__ __forceinline__ float fast_exp2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

// Sum over the 4 lanes of a quad (the lanes that share an MMA row), in a fixed order.
__device__ __forceinline__ float quad_sum(float v) {
  v = __fadd_rn(v, __shfl_xor_sync(0xffffffffu, v, 1));
  return __fadd_rn(v, __shfl_xor_sync(0xffffffffu, v, 2));
}

// Raw scores of a 16-row tile (this lane's rows at positions pos_a, pos_b; column 2t + e of n8 tile
// j is position kv0 + 8j + 2t + e) -> -inf past the row's position.
__device__ __forceinline__ void mask_tile(float (&s)[kScoreCols][4], int kv0, int t, int pos_a, int pos_b) {
#pragma unroll
  for (int j = 0; j < kScoreCols; ++j) {
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      const int pos = kv0 + j * 8 + 2 * t + e;
      if (pos > pos_a) s[j][e] = -INFINITY;
      if (pos > pos_b) s[j][2 + e] = -INFINITY;
    }
  }
}

// The online-softmax state of this lane's two rows: running maxima in raw score units, and this
// lane's own partial denominators (its two columns of every n8 tile), summed over the quad once at
// the end.
struct RowState {
  float m_a = -INFINITY, m_b = -INFINITY, l_a = 0.0f, l_b = 0.0f;
};

// The scores' half of a softmax step (flash-attention-2 style): new maxima, the factors alpha the
// output must be multiplied by before this tile's P . V is added, and P in place of the scores (in
// f32; pack_p makes the MMA operand of it). s_mul > 0 is applied inside the exponent,
// p = 2^(s * s_mul - m * s_mul) (one fused multiply-add). Every step is a fixed sequence of per-row
// operations.
__device__ __forceinline__ void softmax_scores(float (&s)[kScoreCols][4], float s_mul, RowState& st,
                                               float& alpha_a, float& alpha_b) {
  float max_a = st.m_a, max_b = st.m_b;
#pragma unroll
  for (int j = 0; j < kScoreCols; ++j) {
    max_a = fmaxf(max_a, fmaxf(s[j][0], s[j][1]));
    max_b = fmaxf(max_b, fmaxf(s[j][2], s[j][3]));
  }
#pragma unroll
  for (int offset = 1; offset < 4; offset *= 2) {
    max_a = fmaxf(max_a, __shfl_xor_sync(0xffffffffu, max_a, offset));
    max_b = fmaxf(max_b, __shfl_xor_sync(0xffffffffu, max_b, offset));
  }
  // Every row sees position 0 in its first tile, so the maxima are finite from then on. An unchanged
  // maximum gives a = 2^0 = 1 exactly, so a tile wholly past the row (p = 0) leaves its state as it was.
  const float scaled_a = __fmul_rn(max_a, s_mul), scaled_b = __fmul_rn(max_b, s_mul);
  alpha_a = fast_exp2(__fmul_rn(__fsub_rn(st.m_a, max_a), s_mul));
  alpha_b = fast_exp2(__fmul_rn(__fsub_rn(st.m_b, max_b), s_mul));
  st.m_a = max_a;
  st.m_b = max_b;
  float sum_a = 0.0f, sum_b = 0.0f;
#pragma unroll
  for (int j = 0; j < kScoreCols; ++j) {
    s[j][0] = fast_exp2(__fmaf_rn(s[j][0], s_mul, -scaled_a));
    s[j][1] = fast_exp2(__fmaf_rn(s[j][1], s_mul, -scaled_a));
    s[j][2] = fast_exp2(__fmaf_rn(s[j][2], s_mul, -scaled_b));
    s[j][3] = fast_exp2(__fmaf_rn(s[j][3], s_mul, -scaled_b));
    sum_a = __fadd_rn(sum_a, __fadd_rn(s[j][0], s[j][1]));
    sum_b = __fadd_rn(sum_b, __fadd_rn(s[j][2], s[j][3]));
  }
  st.l_a = __fmaf_rn(st.l_a, alpha_a, sum_a);
  st.l_b = __fmaf_rn(st.l_b, alpha_b, sum_b);
}

// P (f32, the score layout) as A fragments of the operand type: pa[kk] covers positions 16kk ..
// 16kk + 15.
template <typename Kv>
__device__ __forceinline__ void pack_p(const float (&p)[kScoreCols][4], uint32_t (&pa)[kTileKv / 16][4]) {
  const auto pack = [](float lo, float hi) {
    return kF16Operands<Kv> ? attn::fp8frag::pack_f16x2(lo, hi) : attn::pack_bf16x2(lo, hi);
  };
#pragma unroll
  for (int j = 0; j < kScoreCols; ++j) {
    pa[j / 2][(j % 2) * 2 + 0] = pack(p[j][0], p[j][1]);
    pa[j / 2][(j % 2) * 2 + 1] = pack(p[j][2], p[j][3]);
  }
}

// The output's half: o *= alpha per row.
template <int kOCols>
__device__ __forceinline__ void rescale(float (&o)[kOCols][4], float alpha_a, float alpha_b) {
#pragma unroll
  for (int j = 0; j < kOCols; ++j) {
    o[j][0] = __fmul_rn(o[j][0], alpha_a);
    o[j][1] = __fmul_rn(o[j][1], alpha_a);
    o[j][2] = __fmul_rn(o[j][2], alpha_b);
    o[j][3] = __fmul_rn(o[j][3], alpha_b);
  }
}

// Writes this lane's part of a 16-row output tile (rows row_a and row_a + 8 of the chunk; rows at
// or past qlen are not stored): o / l * v_mul, as BF16.
template <int HD>
__device__ __forceinline__ void store_rows(const Params& p, const CtaTile& c, const float (&o)[HD / 8][4],
                                           const RowState& st, float v_mul, int row_a, int t) {
  const int row_b = row_a + 8;
  const float sum_a = quad_sum(st.l_a), sum_b = quad_sum(st.l_b);
  const float inv_a = sum_a > 0.0f ? __fdiv_rn(v_mul, sum_a) : 0.0f;
  const float inv_b = sum_b > 0.0f ? __fdiv_rn(v_mul, sum_b) : 0.0f;
#pragma unroll
  for (int j = 0; j < HD / 8; ++j) {
    const int col = c.head * HD + j * 8 + 2 * t;
    if (row_a < c.qlen) {
      *reinterpret_cast<__nv_bfloat162*>(p.out + static_cast<int64_t>(c.q_begin + row_a) * p.out_stride +
                                         col) =
          __floats2bfloat162_rn(__fmul_rn(o[j][0], inv_a), __fmul_rn(o[j][1], inv_a));
    }
    if (row_b < c.qlen) {
      *reinterpret_cast<__nv_bfloat162*>(p.out + static_cast<int64_t>(c.q_begin + row_b) * p.out_stride +
                                         col) =
          __floats2bfloat162_rn(__fmul_rn(o[j][2], inv_b), __fmul_rn(o[j][3], inv_b));
    }
  }
}

// The warp-specialised warpgroup-MMA kernel (paged_attention_prefill_ws.cu): whether it serves
// this cache (head dim 128, block_size a multiple of 16 and num_blocks known, for its tensor
// copies), and its launcher (cudaErrorNotSupported, nothing launched, when the driver refuses its
// tensor maps: run the mma.sync kernel). ws_kernels_usable: whether this build's kernels launch
// with the registers their setmaxnreg split assumes (read once; call on a device with wgmma).
bool ws_kernels_usable();
bool ws_supports(const PagedKv& kv);
cudaError_t launch_ws(const Params& p, const PagedKv& kv, int32_t num_seqs, int32_t max_query_len,
                      cudaStream_t stream);

}  // namespace lathe::cuda::prefill
