#pragma once
// What the two paged prefill kernels share (paged_attention_prefill.cu: mma.sync, any head dim;
// paged_attention_prefill_wgmma.cu: warpgroup MMA, head dims 64 and 128 on sm_90a): the launch
// parameters, the KV tiling, one online-softmax step of an m16 row tile and the output store.
//
// Both kernels give a query row the same bytes: the same 64-position KV tiles anchored at
// position 0, the same MMA chains (wgmma's f32 sums equal mma.sync's: gemv_wgmma.cuh), and the
// softmax below. Per tile and row, in f32 (log2 domain):
//   s   = (q . k) * scale * log2(e) [* k_scale],  masked to -inf past the row's position
//   m'  = max(m, max s);  a = 2^(m - m');  p = 2^(s - m')
//   l'  = l * a + sum p;  o' = o * a + bf16(p) . v
// out = o / l [* v_scale]. A row's arithmetic never involves another row (tensor-core rows are
// independent), and the tiles past a row's own position are fully masked, which leaves m, l and
// o bit-unchanged (a = 1, p = 0), so a kernel may compute or skip them: a row's bytes are the
// same however its prompt was chunked, whichever row tile or CTA it lands in, and whatever else
// the step holds.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "backends/cuda/paged_attention.h"
#include "backends/cuda/paged_attention_common.cuh"
#include "backends/cuda/paged_attention_mma.cuh"

namespace lathe::cuda::prefill {

using namespace attn;  // the paged attention kernels' fragment and softmax helpers

inline constexpr int kTileQ = 128;  // query rows per CTA
inline constexpr int kTileKv = 64;  // KV positions per tile

struct Params {
  const __nv_bfloat16* q;
  int64_t q_stride;
  __nv_bfloat16* out;
  int64_t out_stride;
  const void* k;
  const void* v;
  float k_scale;
  float v_scale;
  float scale;
  int32_t num_heads;
  int32_t num_kv_heads;
  int32_t block_size;
  const int32_t* block_tables;
  int32_t max_blocks_per_seq;
  const int32_t* context_lens;
  const int32_t* query_start;
};

// The CTA's part of the grid (heads, query tiles, sequences): heads vary fastest, so the q heads
// of one kv head run side by side and share its tiles in L2; query tiles run last-first, so the
// longest (most KV tiles) start first.
struct CtaTile {
  int head, seq, q_begin, qlen, tile_row0, ctx, first_pos, kv_head, num_kv_tiles;
  const int32_t* table;
  bool empty;  // the tile starts past the sequence's rows: nothing to do

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

  // Byte offset in K (or V) of row fragment `col` (an element index) of position pos < ctx.
  template <typename Kv, int HD>
  __device__ __forceinline__ int64_t kv_byte_offset(const Params& p, int pos, int col) const {
    const int32_t block = __ldg(table + pos / p.block_size);
    return (kv_offset(block, kv_head, pos % p.block_size, p.num_kv_heads, p.block_size, HD) + col) *
           Kv::kBytes;
  }
};

// The Q tile's rows as BF16 in shared memory, `stride` elements a row; rows past the chunk are
// zero (and never stored).
template <int HD, int kThreads>
__device__ __forceinline__ void stage_q(const Params& p, const CtaTile& c, __nv_bfloat16* sq, int stride) {
  constexpr int kUnits = kTileQ * HD / kFragElems;
  for (int u = static_cast<int>(threadIdx.x); u < kUnits; u += kThreads) {
    const int r = u / (HD / kFragElems), col = (u % (HD / kFragElems)) * kFragElems;
    uint4 value = make_uint4(0, 0, 0, 0);
    if (c.tile_row0 + r < c.qlen) {
      value = __ldg(reinterpret_cast<const uint4*>(
          p.q + static_cast<int64_t>(c.q_begin + c.tile_row0 + r) * p.q_stride +
          static_cast<int64_t>(c.head) * HD + col));
    }
    *reinterpret_cast<uint4*>(sq + r * stride + col) = value;
  }
}

// One online-softmax step of an m16 row tile (this lane's rows a = g and b = g + 8, at positions
// pos_a and pos_b) over KV tile kv0: scales and masks the scores s (mask only where `masked`: the
// tile crosses one of the warp's rows), folds the tile into m, l and o, and returns P as BF16 A
// fragments (two n8 score tiles per k16 step).
template <int kOCols>
__device__ __forceinline__ void softmax_step(float (&s)[kTileKv / 8][4], bool masked, int kv0, int t,
                                             float s_mul, int pos_a, int pos_b, float& m_a, float& m_b,
                                             float& l_a, float& l_b, float (&o)[kOCols][4],
                                             uint32_t (&pa)[kTileKv / 16][4]) {
  float tile_max_a, tile_max_b;
  if (masked) {
    const auto causal = [&](int pos, bool& keep_a, bool& keep_b) {
      keep_a = pos <= pos_a;
      keep_b = pos <= pos_b;
    };
    scale_mask_tile(s, kv0, t, s_mul, causal, tile_max_a, tile_max_b);
  } else {
    const auto all = [](int, bool& keep_a, bool& keep_b) { keep_a = keep_b = true; };
    scale_mask_tile(s, kv0, t, s_mul, all, tile_max_a, tile_max_b);
  }
  float alpha_a, alpha_b;
  online_softmax_max(tile_max_a, tile_max_b, m_a, m_b, alpha_a, alpha_b);
  float sum_a = 0.0f, sum_b = 0.0f;
#pragma unroll
  for (int j = 0; j < kTileKv / 8; ++j) {
    const float p0 = exp2f(s[j][0] - m_a), p1 = exp2f(s[j][1] - m_a);
    const float p2 = exp2f(s[j][2] - m_b), p3 = exp2f(s[j][3] - m_b);
    sum_a = __fadd_rn(sum_a, __fadd_rn(p0, p1));
    sum_b = __fadd_rn(sum_b, __fadd_rn(p2, p3));
    pa[j / 2][(j % 2) * 2 + 0] = pack_bf16x2(p0, p1);
    pa[j / 2][(j % 2) * 2 + 1] = pack_bf16x2(p2, p3);
  }
  online_softmax_rescale(sum_a, sum_b, alpha_a, alpha_b, l_a, l_b, o);
}

// out = o / l [* v_mul] for this lane's rows a = row_a and b = row_a + 8 (chunk rows) of one m16
// row tile, rows at or past qlen skipped.
template <int HD>
__device__ __forceinline__ void store_rows(const Params& p, const CtaTile& c, const float (&o)[HD / 8][4],
                                           float l_a, float l_b, float v_mul, int row_a, int t) {
  const int row_b = row_a + 8;
  const float inv_a = l_a > 0.0f ? __fdiv_rn(v_mul, l_a) : 0.0f;
  const float inv_b = l_b > 0.0f ? __fdiv_rn(v_mul, l_b) : 0.0f;
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

// 8 E4M3 codes -> 8 BF16 (exact), as one 16-byte unit.
__device__ __forceinline__ uint4 widen_fp8_unit(uint2 codes) {
  float f[kFragElems];
  widen(codes, f);
  uint4 packed;
  packed.x = pack_bf16x2(f[0], f[1]);
  packed.y = pack_bf16x2(f[2], f[3]);
  packed.z = pack_bf16x2(f[4], f[5]);
  packed.w = pack_bf16x2(f[6], f[7]);
  return packed;
}

// The warpgroup-MMA kernel's launcher (paged_attention_prefill_wgmma.cu): head dims 64 and 128,
// run only where device_has_wgmma().
cudaError_t launch_wgmma(const Params& p, KvDType dtype, int32_t head_dim, int32_t num_seqs,
                         int32_t max_query_len, cudaStream_t stream);

}  // namespace lathe::cuda::prefill
