// Split-K paged decode on tensor cores, one CTA per (query rows of one KV head, split, sequence).
//
// The CTA carries up to 16 query heads of one KV head as the 16 rows of an m16n8k16 tile (a
// "GQA-packed" CTA: each K/V row is read once for all of them); unused rows are zero and never
// stored. Its 4 warps each stream their own KV tiles of kTile positions (tile j of the split goes
// to warp j % 4) through a 3-stage cp.async pipeline in shared memory, keep their own online
// softmax state in f32 (log2 domain, as in the prefill kernel), and the 4 states are merged in
// warp order 0..3 at the end into the split's record. The softmax weights enter the P.V product as
// a BF16 hi + lo pair, so the arm matches the f32-weight non-split arm to f32 rounding. A query's bytes depend on its split
// boundaries, kTile and the warp rotation: never on which row of the tile (or which CTA) it
// occupies, since tensor-core rows are independent; so rows_per_cta is free to follow the
// launch's occupancy.
//
// Split s of a sequence of length L covers [s * n, min((s + 1) * n, L)), n = max(ceil(L / S),
// min_kv_per_split), computed here from the sequence's own length; an empty split writes the
// neutral record (output 0, max -inf, sum 0). FP8 tiles are staged raw and widened to BF16 in
// shared memory (exact); k_scale folds into the score scale, v_scale into the output.
#include <cuda_bf16.h>

#include <algorithm>

#include "backends/cuda/paged_attention.h"
#include "backends/cuda/paged_attention_common.cuh"
#include "backends/cuda/paged_attention_decode.cuh"
#include "backends/cuda/paged_attention_mma.cuh"

namespace lathe::cuda {
namespace attn {
namespace {

constexpr int kSplitWarps = 4;
constexpr int kSplitThreads = 32 * kSplitWarps;
constexpr int kSplitStages = 3;
constexpr int kMaxRows = 16;

template <typename Kv, int HD>
struct SplitLayout {
  static constexpr int kTile = 32 * 128 / HD;  // positions per warp tile: 64, 32, 16
  static constexpr int kRow = HD + 8;          // BF16 elements per shared row (16-byte pad)
  static constexpr int kRawRow = HD * Kv::kBytes + 16;  // bytes per staged row
  static constexpr int kRawTile = kTile * kRawRow;      // K or V of one stage
  static constexpr int kStage = 2 * kRawTile;
  static constexpr bool kWiden = Kv::kDType == KvDType::kFP8E4M3;
  static constexpr int kWideTile = kWiden ? kTile * kRow * 2 : 0;  // BF16 copy of K or V
  static constexpr int kPerWarp = kSplitStages * kStage + 2 * kWideTile;
  static constexpr int kQ = kMaxRows * kRow * 2;
  static constexpr int kMerge = kSplitWarps * kMaxRows * (HD + 2) * 4;
  static constexpr int kBytes = kQ + (kSplitWarps * kPerWarp > kMerge ? kSplitWarps * kPerWarp : kMerge);
  static_assert(kTile % 16 == 0 && HD % 16 == 0, "tile shape");
};

struct SplitParams {
  DecodeParams base;
  int32_t group;         // num_heads / num_kv_heads
  int32_t rows_per_cta;  // query heads one CTA carries (<= 16)
  int32_t parts;         // CTAs per KV head: ceil(group / rows_per_cta)
};

template <typename Kv, int HD>
__global__ void __launch_bounds__(kSplitThreads) paged_decode_splitk_mma(const SplitParams sp) {
  using L = SplitLayout<Kv, HD>;
  constexpr int kTile = L::kTile, kRow = L::kRow;
  const DecodeParams& p = sp.base;
  extern __shared__ __align__(16) unsigned char smem[];
  __nv_bfloat16* sq = reinterpret_cast<__nv_bfloat16*>(smem);
  unsigned char* work = smem + L::kQ;

  const int kv_head = blockIdx.x / sp.parts;
  const int part = blockIdx.x % sp.parts;
  const int head0 = kv_head * sp.group + part * sp.rows_per_cta;
  const int rows = min(sp.rows_per_cta, sp.group - part * sp.rows_per_cta);
  const int split = blockIdx.y, seq = blockIdx.z;
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int g = lane / 4, t = lane % 4;

  const int len = p.context_lens[seq];
  const int per = max((len + p.num_splits - 1) / p.num_splits, p.min_kv_per_split);
  const int64_t first = static_cast<int64_t>(split) * per;
  const int start = static_cast<int>(first < len ? first : static_cast<int64_t>(len));
  const int end = static_cast<int>(first + per < len ? first + per : static_cast<int64_t>(len));
  auto record = [&](int row) {
    return p.workspace + ((static_cast<int64_t>(seq) * p.num_heads + head0 + row) * p.num_splits + split) * (HD + 2);
  };
  if (start >= end) {
    for (int i = tid; i < rows * (HD + 2); i += kSplitThreads) {
      const int row = i / (HD + 2), d = i % (HD + 2);
      record(row)[d] = d == HD ? -INFINITY : 0.0f;
    }
    return;
  }

  // Query rows (zero beyond `rows`).
  for (int c = tid; c < kMaxRows * (HD / 8); c += kSplitThreads) {
    const int r = c / (HD / 8), col = (c % (HD / 8)) * 8;
    uint4 value = make_uint4(0, 0, 0, 0);
    if (r < rows) {
      value = __ldg(reinterpret_cast<const uint4*>(p.q + static_cast<int64_t>(seq) * p.q_stride +
                                                   static_cast<int64_t>(head0 + r) * HD + col));
    }
    *reinterpret_cast<uint4*>(sq + r * kRow + col) = value;
  }
  __syncthreads();

  const int32_t* table = p.block_tables + static_cast<int64_t>(seq) * p.max_blocks_per_seq;
  const int bs = p.block_size;
  unsigned char* mine = work + warp * L::kPerWarp;
  const int num_tiles = (end - start + kTile - 1) / kTile;
  // Tiles of this warp: warp, warp + 4, ...; the i-th of them is staged in stage i % kStages.
  const int my_tiles = num_tiles > warp ? (num_tiles - warp + kSplitWarps - 1) / kSplitWarps : 0;

  auto issue = [&](int i) {
    if (i < my_tiles) {
      const int tile_start = start + (warp + i * kSplitWarps) * kTile;
      unsigned char* k_dst = mine + (i % kSplitStages) * L::kStage;
      unsigned char* v_dst = k_dst + L::kRawTile;
      constexpr int kChunksPerRow = HD * Kv::kBytes / 16;
#pragma unroll
      for (int c = lane; c < kTile * kChunksPerRow; c += 32) {
        const int r = c / kChunksPerRow, cc = c % kChunksPerRow;
        const int pos = tile_start + r;
        const bool valid = pos < end;
        int64_t off = 0;
        if (valid) {
          const int32_t block = __ldg(table + pos / bs);
          off = kv_offset(block, kv_head, pos % bs, p.num_kv_heads, bs, HD) * Kv::kBytes + cc * 16;
        }
        cp_async16(k_dst + r * L::kRawRow + cc * 16, static_cast<const unsigned char*>(p.k) + off, valid);
        cp_async16(v_dst + r * L::kRawRow + cc * 16, static_cast<const unsigned char*>(p.v) + off, valid);
      }
    }
    cp_async_commit();  // an empty group keeps the wait counts uniform
  };

  const float s_mul = p.scale * kLog2e * (L::kWiden ? p.k_scale : 1.0f);
  float o[HD / 8][4];
#pragma unroll
  for (int j = 0; j < HD / 8; ++j) o[j][0] = o[j][1] = o[j][2] = o[j][3] = 0.0f;
  float m_a = -INFINITY, m_b = -INFINITY, l_a = 0.0f, l_b = 0.0f;

#pragma unroll
  for (int i = 0; i < kSplitStages - 1; ++i) issue(i);
  for (int i = 0; i < my_tiles; ++i) {
    issue(i + kSplitStages - 1);
    cp_async_wait<kSplitStages - 1>();
    __syncwarp();
    const int tile_start = start + (warp + i * kSplitWarps) * kTile;
    unsigned char* stage = mine + (i % kSplitStages) * L::kStage;
    const __nv_bfloat16* kt = reinterpret_cast<const __nv_bfloat16*>(stage);
    const __nv_bfloat16* vt = reinterpret_cast<const __nv_bfloat16*>(stage + L::kRawTile);
    if constexpr (L::kWiden) {
      __nv_bfloat16* wide_k = reinterpret_cast<__nv_bfloat16*>(mine + kSplitStages * L::kStage);
      __nv_bfloat16* wide_v = wide_k + kTile * kRow;
#pragma unroll
      for (int c = lane; c < kTile * (HD / 8); c += 32) {
        const int r = c / (HD / 8), col = (c % (HD / 8)) * 8;
#pragma unroll
        for (int which = 0; which < 2; ++which) {
          float f[kFragElems];
          widen(*reinterpret_cast<const uint2*>(stage + which * L::kRawTile + r * L::kRawRow + col), f);
          uint4 packed;
          packed.x = pack_bf16x2(f[0], f[1]);
          packed.y = pack_bf16x2(f[2], f[3]);
          packed.z = pack_bf16x2(f[4], f[5]);
          packed.w = pack_bf16x2(f[6], f[7]);
          *reinterpret_cast<uint4*>((which ? wide_v : wide_k) + r * kRow + col) = packed;
        }
      }
      __syncwarp();
      kt = wide_k;
      vt = wide_v;
    }

    // S = Q K^T over the tile.
    float s[kTile / 8][4];
#pragma unroll
    for (int j = 0; j < kTile / 8; ++j) s[j][0] = s[j][1] = s[j][2] = s[j][3] = 0.0f;
#pragma unroll
    for (int kk = 0; kk < HD / 16; ++kk) {
      uint32_t a[4];
      ldmatrix_x4(a, sq + ((lane % 8) + 8 * ((lane / 8) % 2)) * kRow + kk * 16 + 8 * (lane / 16));
#pragma unroll
      for (int j = 0; j < kTile / 8; j += 2) {
        uint32_t b[4];
        ldmatrix_x4(b, kt + (j * 8 + (lane % 8) + 8 * (lane / 16)) * kRow + kk * 16 + 8 * ((lane / 8) % 2));
        mma_bf16(s[j], a, b[0], b[1]);
        mma_bf16(s[j + 1], a, b[2], b[3]);
      }
    }

    float max_a = -INFINITY, max_b = -INFINITY;
#pragma unroll
    for (int j = 0; j < kTile / 8; ++j) {
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const bool valid = tile_start + j * 8 + 2 * t + e < end;
        s[j][e] = valid ? __fmul_rn(s[j][e], s_mul) : -INFINITY;
        s[j][2 + e] = valid ? __fmul_rn(s[j][2 + e], s_mul) : -INFINITY;
        max_a = fmaxf(max_a, s[j][e]);
        max_b = fmaxf(max_b, s[j][2 + e]);
      }
    }
#pragma unroll
    for (int offset = 1; offset < 4; offset *= 2) {
      max_a = fmaxf(max_a, __shfl_xor_sync(0xffffffffu, max_a, offset));
      max_b = fmaxf(max_b, __shfl_xor_sync(0xffffffffu, max_b, offset));
    }
    const float new_a = fmaxf(m_a, max_a), new_b = fmaxf(m_b, max_b);
    const float alpha_a = exp2f(m_a - new_a), alpha_b = exp2f(m_b - new_b);
    m_a = new_a;
    m_b = new_b;
    // P = hi + lo, both BF16 (hi = bf16(p), lo = bf16(p - hi)): the two products below carry p to
    // ~16 significant bits, so the split arm does not add a BF16 rounding of the weights that the
    // CUDA-core non-split arm (f32 weights) does not have.
    float sum_a = 0.0f, sum_b = 0.0f;
    uint32_t pa_hi[kTile / 16][4], pa_lo[kTile / 16][4];
#pragma unroll
    for (int j = 0; j < kTile / 8; ++j) {
      const float p0 = exp2f(s[j][0] - m_a), p1 = exp2f(s[j][1] - m_a);
      const float p2 = exp2f(s[j][2] - m_b), p3 = exp2f(s[j][3] - m_b);
      sum_a = __fadd_rn(sum_a, __fadd_rn(p0, p1));
      sum_b = __fadd_rn(sum_b, __fadd_rn(p2, p3));
      const uint32_t hi_a = pack_bf16x2(p0, p1), hi_b = pack_bf16x2(p2, p3);
      pa_hi[j / 2][(j % 2) * 2 + 0] = hi_a;
      pa_hi[j / 2][(j % 2) * 2 + 1] = hi_b;
      pa_lo[j / 2][(j % 2) * 2 + 0] = pack_bf16x2(__fsub_rn(p0, bf16_lo(hi_a)), __fsub_rn(p1, bf16_hi(hi_a)));
      pa_lo[j / 2][(j % 2) * 2 + 1] = pack_bf16x2(__fsub_rn(p2, bf16_lo(hi_b)), __fsub_rn(p3, bf16_hi(hi_b)));
    }
#pragma unroll
    for (int offset = 1; offset < 4; offset *= 2) {
      sum_a = __fadd_rn(sum_a, __shfl_xor_sync(0xffffffffu, sum_a, offset));
      sum_b = __fadd_rn(sum_b, __shfl_xor_sync(0xffffffffu, sum_b, offset));
    }
    l_a = __fmaf_rn(l_a, alpha_a, sum_a);
    l_b = __fmaf_rn(l_b, alpha_b, sum_b);
#pragma unroll
    for (int j = 0; j < HD / 8; ++j) {
      o[j][0] = __fmul_rn(o[j][0], alpha_a);
      o[j][1] = __fmul_rn(o[j][1], alpha_a);
      o[j][2] = __fmul_rn(o[j][2], alpha_b);
      o[j][3] = __fmul_rn(o[j][3], alpha_b);
    }
#pragma unroll
    for (int kk = 0; kk < kTile / 16; ++kk) {
#pragma unroll
      for (int j = 0; j < HD / 8; j += 2) {
        uint32_t b[4];
        ldmatrix_x4_trans(b, vt + (kk * 16 + (lane % 8) + 8 * ((lane / 8) % 2)) * kRow + j * 8 + 8 * (lane / 16));
        mma_bf16(o[j], pa_hi[kk], b[0], b[1]);
        mma_bf16(o[j + 1], pa_hi[kk], b[2], b[3]);
        mma_bf16(o[j], pa_lo[kk], b[0], b[1]);
        mma_bf16(o[j + 1], pa_lo[kk], b[2], b[3]);
      }
    }
    __syncwarp();  // this stage is refilled by the next iteration's issue
  }
  cp_async_wait<0>();
  __syncthreads();  // every warp is done with its stages: the merge area reuses them

  // Merge the warps' states in warp order into the split's record.
  float* merge = reinterpret_cast<float*>(work);  // [warp][row][HD + 2]: o..., m, l
  {
    float* mw = merge + warp * kMaxRows * (HD + 2);
#pragma unroll
    for (int j = 0; j < HD / 8; ++j) {
      mw[g * (HD + 2) + j * 8 + 2 * t] = o[j][0];
      mw[g * (HD + 2) + j * 8 + 2 * t + 1] = o[j][1];
      mw[(g + 8) * (HD + 2) + j * 8 + 2 * t] = o[j][2];
      mw[(g + 8) * (HD + 2) + j * 8 + 2 * t + 1] = o[j][3];
    }
    if (t == 0) {
      mw[g * (HD + 2) + HD] = m_a;
      mw[g * (HD + 2) + HD + 1] = l_a;
      mw[(g + 8) * (HD + 2) + HD] = m_b;
      mw[(g + 8) * (HD + 2) + HD + 1] = l_b;
    }
  }
  __syncthreads();
  const float v_mul = L::kWiden ? p.v_scale : 1.0f;
  for (int i = tid; i < rows * HD; i += kSplitThreads) {
    const int row = i / HD, d = i % HD;
    float max_all = -INFINITY;
#pragma unroll
    for (int w = 0; w < kSplitWarps; ++w) max_all = fmaxf(max_all, merge[(w * kMaxRows + row) * (HD + 2) + HD]);
    float sum = 0.0f, out = 0.0f;
#pragma unroll
    for (int w = 0; w < kSplitWarps; ++w) {
      const float* state = merge + (w * kMaxRows + row) * (HD + 2);
      const float f = exp2f(state[HD] - max_all);
      sum = __fmaf_rn(state[HD + 1], f, sum);
      out = __fmaf_rn(state[d], f, out);
    }
    float* rec = record(row);
    rec[d] = __fmul_rn(out, v_mul);
    if (d == 0) {
      rec[HD] = max_all;
      rec[HD + 1] = sum;
    }
  }
}

template <int HD>
__global__ void __launch_bounds__(HD) splitk_reduce(const float* workspace, __nv_bfloat16* out, int64_t out_stride,
                                                    int32_t num_heads, int32_t num_splits) {
  // Merges the records of one (sequence, head) in split order 0..num_splits-1:
  //   M = max_i m_i,  w_i = 2^(m_i - M),  out = (sum_i w_i o_i) / (sum_i w_i l_i)
  const int head = blockIdx.x, seq = blockIdx.y, d = threadIdx.x;
  const float* recs = workspace + (static_cast<int64_t>(seq) * num_heads + head) * num_splits * (HD + 2);
  float max_all = -INFINITY;
  for (int i = 0; i < num_splits; ++i) max_all = fmaxf(max_all, recs[i * (HD + 2) + HD]);
  float value = 0.0f;
  if (max_all != -INFINITY) {
    float sum = 0.0f, o = 0.0f;
    for (int i = 0; i < num_splits; ++i) {
      const float* rec = recs + i * (HD + 2);
      const float w = exp2f(rec[HD] - max_all);
      sum = __fmaf_rn(rec[HD + 1], w, sum);
      o = __fmaf_rn(rec[d], w, o);
    }
    value = __fdiv_rn(o, sum);
  }
  out[static_cast<int64_t>(seq) * out_stride + static_cast<int64_t>(head) * HD + d] = __float2bfloat16_rn(value);
}

template <typename Kv, int HD>
cudaError_t launch(const SplitParams& sp, int32_t num_seqs, cudaStream_t stream) {
  using L = SplitLayout<Kv, HD>;
  // The shared-memory opt-in is a per-function attribute: set once per process (single device),
  // on the first launch, which callers make outside graph capture.
  static const cudaError_t opt_in = cudaFuncSetAttribute(paged_decode_splitk_mma<Kv, HD>,
                                                         cudaFuncAttributeMaxDynamicSharedMemorySize, L::kBytes);
  if (opt_in != cudaSuccess) return opt_in;
  const dim3 grid(sp.base.num_kv_heads * sp.parts, sp.base.num_splits, num_seqs);
  paged_decode_splitk_mma<Kv, HD><<<grid, kSplitThreads, L::kBytes, stream>>>(sp);
  if (cudaError_t err = cudaGetLastError(); err != cudaSuccess) return err;
  splitk_reduce<HD><<<dim3(sp.base.num_heads, num_seqs), HD, 0, stream>>>(sp.base.workspace, sp.base.out,
                                                                          sp.base.out_stride, sp.base.num_heads,
                                                                          sp.base.num_splits);
  return cudaGetLastError();
}

}  // namespace
}  // namespace attn

cudaError_t launch_paged_decode_splitk(const AttentionRows& rows, const PagedKv& kv, int32_t num_splits,
                                       int32_t min_kv_per_split, int32_t rows_per_cta, float* workspace,
                                       cudaStream_t stream) {
  if (rows.num_seqs <= 0) return cudaSuccess;
  if (kv.num_kv_heads <= 0 || rows.num_heads % kv.num_kv_heads != 0 || num_splits < 1 || min_kv_per_split < 1 ||
      workspace == nullptr || rows_per_cta < 1) {
    return cudaErrorInvalidValue;
  }
  attn::SplitParams sp{};
  sp.base = attn::make_decode_params(rows, kv);
  sp.base.num_splits = num_splits;
  sp.base.min_kv_per_split = min_kv_per_split;
  sp.base.workspace = workspace;
  sp.group = rows.num_heads / kv.num_kv_heads;
  sp.rows_per_cta = std::min({rows_per_cta, sp.group, attn::kMaxRows});
  sp.parts = (sp.group + sp.rows_per_cta - 1) / sp.rows_per_cta;
  const bool bf16 = kv.dtype == KvDType::kBF16;
  switch (kv.head_dim) {
    case 64:
      return bf16 ? attn::launch<attn::Bf16Kv, 64>(sp, rows.num_seqs, stream)
                  : attn::launch<attn::Fp8Kv, 64>(sp, rows.num_seqs, stream);
    case 128:
      return bf16 ? attn::launch<attn::Bf16Kv, 128>(sp, rows.num_seqs, stream)
                  : attn::launch<attn::Fp8Kv, 128>(sp, rows.num_seqs, stream);
    case 256:
      return bf16 ? attn::launch<attn::Bf16Kv, 256>(sp, rows.num_seqs, stream)
                  : attn::launch<attn::Fp8Kv, 256>(sp, rows.num_seqs, stream);
    default:
      return cudaErrorInvalidValue;
  }
}

}  // namespace lathe::cuda
