// Paged prefill attention: flash-attention-2 style on BF16 tensor cores (mma.sync m16n8k16).
//
// One CTA per (64-query tile, q head, sequence), 4 warps of 16 query rows each. KV is walked in
// 64-position tiles anchored at position 0 (tile t = positions 64t .. 64t+63) up to the tile's
// last visible position. Per tile and row, in f32 (log2 domain):
//   s   = (q . k) * scale * log2(e) [* k_scale],  masked to -inf past the row's position
//   m'  = max(m, max s);  a = 2^(m - m');  p = 2^(s - m')
//   l'  = l * a + sum p;  o' = o * a + bf16(p) . v
// out = o / l [* v_scale]. A row's arithmetic never involves another row (tensor-core rows are
// independent), and the tiles past a row's own position are fully masked, which leaves m, l and
// o bit-unchanged (a = 1, p = 0); so a row's bytes are the same however its prompt was chunked.
// FP8 KV is widened to BF16 in shared memory (exact: every E4M3 value is a BF16 value) and the
// scales are applied to s and to the output.
#include <cuda_bf16.h>

#include "backends/cuda/paged_attention.h"
#include "backends/cuda/paged_attention_common.cuh"
#include "backends/cuda/paged_attention_mma.cuh"

namespace lathe::cuda {
namespace {

using namespace attn;

constexpr int kPrefillWarps = 4;
constexpr int kPrefillThreads = kPrefillWarps * 32;
constexpr int kTileQ = 16 * kPrefillWarps;  // query rows per CTA
constexpr int kTileKv = 64;                 // KV positions per tile

struct PrefillParams {
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

// Shared-memory row stride in BF16 elements: 16 bytes of padding so that the 8 rows one
// ldmatrix phase reads fall in different banks.
template <int HD>
constexpr int kStride = HD + 8;

template <int HD>
constexpr size_t prefill_smem_bytes() {
  return static_cast<size_t>(kTileQ + 2 * kTileKv) * kStride<HD> * sizeof(__nv_bfloat16);
}

// 8 KV elements at `offset` -> 8 BF16 in shared memory (FP8 codes widened exactly).
template <typename Kv>
__device__ __forceinline__ void stage_frag(const void* base, int64_t offset, __nv_bfloat16* dst) {
  if constexpr (Kv::kDType == KvDType::kBF16) {
    *reinterpret_cast<uint4*>(dst) = load_frag<uint4>(base, offset, 2);
  } else {
    float f[kFragElems];
    widen(load_frag<uint2>(base, offset, 1), f);
    uint4 packed;
    packed.x = pack_bf16x2(f[0], f[1]);
    packed.y = pack_bf16x2(f[2], f[3]);
    packed.z = pack_bf16x2(f[4], f[5]);
    packed.w = pack_bf16x2(f[6], f[7]);
    *reinterpret_cast<uint4*>(dst) = packed;
  }
}

template <typename Kv, int HD>
__global__ void __launch_bounds__(kPrefillThreads) paged_prefill_kernel(const PrefillParams p) {
  constexpr int kS = kStride<HD>;
  constexpr int kFragsPerRow = HD / kFragElems;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  __nv_bfloat16* sq = reinterpret_cast<__nv_bfloat16*>(smem_raw);
  __nv_bfloat16* sk = sq + kTileQ * kS;
  __nv_bfloat16* sv = sk + kTileKv * kS;

  const int seq = blockIdx.z;
  const int head = blockIdx.y;
  const int q_begin = p.query_start[seq];
  const int qlen = p.query_start[seq + 1] - q_begin;
  const int tile_row0 = blockIdx.x * kTileQ;
  if (tile_row0 >= qlen) return;
  const int ctx = p.context_lens[seq];
  const int first_pos = ctx - qlen;  // position of the chunk's row 0
  const int kv_head = head / (p.num_heads / p.num_kv_heads);
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int32_t* table = p.block_tables + static_cast<int64_t>(seq) * p.max_blocks_per_seq;

  // Q tile (rows past the chunk are zero and never stored).
  for (int c = tid; c < kTileQ * kFragsPerRow; c += kPrefillThreads) {
    const int r = c / kFragsPerRow, col = (c % kFragsPerRow) * kFragElems;
    uint4 value = make_uint4(0, 0, 0, 0);
    if (tile_row0 + r < qlen) {
      value = __ldg(reinterpret_cast<const uint4*>(p.q + static_cast<int64_t>(q_begin + tile_row0 + r) * p.q_stride +
                                                   static_cast<int64_t>(head) * HD + col));
    }
    *reinterpret_cast<uint4*>(sq + r * kS + col) = value;
  }

  // This thread's two rows (g and g + 8 of its warp's 16) and their positions.
  const int g = lane / 4, t = lane % 4;
  const int row_a = tile_row0 + warp * 16 + g;
  const int pos_a = first_pos + row_a;
  const int pos_b = pos_a + 8;
  const int last_row = min(tile_row0 + kTileQ, qlen) - 1;
  const int num_tiles = (first_pos + last_row) / kTileKv + 1;
  const float s_mul = p.scale * kLog2e * (Kv::kDType == KvDType::kFP8E4M3 ? p.k_scale : 1.0f);

  float o[HD / 8][4];
#pragma unroll
  for (int j = 0; j < HD / 8; ++j) o[j][0] = o[j][1] = o[j][2] = o[j][3] = 0.0f;
  float m_a = -INFINITY, m_b = -INFINITY, l_a = 0.0f, l_b = 0.0f;

  for (int tile = 0; tile < num_tiles; ++tile) {
    const int kv0 = tile * kTileKv;
    __syncthreads();  // the previous tile's K/V are no longer read
    for (int c = tid; c < kTileKv * kFragsPerRow; c += kPrefillThreads) {
      const int r = c / kFragsPerRow, col = (c % kFragsPerRow) * kFragElems;
      const int pos = kv0 + r;
      if (pos < ctx) {
        const int32_t block = __ldg(table + pos / p.block_size);
        const int64_t off = kv_offset(block, kv_head, pos % p.block_size, p.num_kv_heads, p.block_size, HD) + col;
        stage_frag<Kv>(p.k, off, sk + r * kS + col);
        stage_frag<Kv>(p.v, off, sv + r * kS + col);
      } else {
        *reinterpret_cast<uint4*>(sk + r * kS + col) = make_uint4(0, 0, 0, 0);
        *reinterpret_cast<uint4*>(sv + r * kS + col) = make_uint4(0, 0, 0, 0);
      }
    }
    __syncthreads();

    // S = Q K^T for this warp's 16 rows x 64 positions.
    float s[kTileKv / 8][4];
#pragma unroll
    for (int j = 0; j < kTileKv / 8; ++j) s[j][0] = s[j][1] = s[j][2] = s[j][3] = 0.0f;
#pragma unroll
    for (int kk = 0; kk < HD / 16; ++kk) {
      uint32_t a[4];
      ldmatrix_x4(a, sq + (warp * 16 + (lane % 8) + 8 * ((lane / 8) % 2)) * kS + kk * 16 + 8 * (lane / 16));
      mma_qk_chunk(s, a, sk, kS, kk, lane);
    }

    // Scale, mask, row max over the tile (the 4 threads of a quad share a row).
    float tile_max_a, tile_max_b;
    const auto causal = [&](int pos, bool& a, bool& b) {
      a = pos <= pos_a;
      b = pos <= pos_b;
    };
    scale_mask_tile(s, kv0, t, s_mul, causal, tile_max_a, tile_max_b);
    float alpha_a, alpha_b;
    online_softmax_max(tile_max_a, tile_max_b, m_a, m_b, alpha_a, alpha_b);

    // P = 2^(s - m), row sums, and P as BF16 A fragments (two 8-wide S tiles per k16 step).
    float sum_a = 0.0f, sum_b = 0.0f;
    uint32_t pa[kTileKv / 16][4];
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

    // O += P V.
#pragma unroll
    for (int kk = 0; kk < kTileKv / 16; ++kk) mma_pv_chunk(o, sv, kS, kk, lane, pa[kk]);
  }

  const float v_mul = Kv::kDType == KvDType::kFP8E4M3 ? p.v_scale : 1.0f;
  const float inv_a = l_a > 0.0f ? __fdiv_rn(v_mul, l_a) : 0.0f;
  const float inv_b = l_b > 0.0f ? __fdiv_rn(v_mul, l_b) : 0.0f;
  const int row_b = row_a + 8;
#pragma unroll
  for (int j = 0; j < HD / 8; ++j) {
    const int col = head * HD + j * 8 + 2 * t;
    if (row_a < qlen) {
      *reinterpret_cast<__nv_bfloat162*>(p.out + static_cast<int64_t>(q_begin + row_a) * p.out_stride + col) =
          __floats2bfloat162_rn(__fmul_rn(o[j][0], inv_a), __fmul_rn(o[j][1], inv_a));
    }
    if (row_b < qlen) {
      *reinterpret_cast<__nv_bfloat162*>(p.out + static_cast<int64_t>(q_begin + row_b) * p.out_stride + col) =
          __floats2bfloat162_rn(__fmul_rn(o[j][2], inv_b), __fmul_rn(o[j][3], inv_b));
    }
  }
}

template <typename Kv, int HD>
cudaError_t launch_prefill(const PrefillParams& p, int32_t num_seqs, int32_t max_query_len, cudaStream_t stream) {
  constexpr size_t smem = prefill_smem_bytes<HD>();
  // The shared-memory opt-in is a per-function attribute: set once per process (single device),
  // on the first launch, which callers make outside graph capture.
  static const cudaError_t opt_in = cudaFuncSetAttribute(paged_prefill_kernel<Kv, HD>,
                                                         cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem));
  if (opt_in != cudaSuccess) return opt_in;
  const dim3 grid((max_query_len + kTileQ - 1) / kTileQ, p.num_heads, num_seqs);
  paged_prefill_kernel<Kv, HD><<<grid, kPrefillThreads, smem, stream>>>(p);
  return cudaGetLastError();
}

}  // namespace

cudaError_t launch_paged_prefill(const AttentionRows& rows, const PagedKv& kv, const int32_t* query_start,
                                 int32_t max_query_len, cudaStream_t stream) {
  if (rows.num_seqs <= 0 || max_query_len <= 0) return cudaSuccess;
  if (kv.num_kv_heads <= 0 || rows.num_heads % kv.num_kv_heads != 0 || query_start == nullptr) {
    return cudaErrorInvalidValue;
  }
  PrefillParams p{};
  p.q = static_cast<const __nv_bfloat16*>(rows.q);
  p.q_stride = rows.q_stride;
  p.out = static_cast<__nv_bfloat16*>(rows.out);
  p.out_stride = rows.out_stride;
  p.k = kv.k;
  p.v = kv.v;
  p.k_scale = kv.k_scale;
  p.v_scale = kv.v_scale;
  p.scale = rows.scale;
  p.num_heads = rows.num_heads;
  p.num_kv_heads = kv.num_kv_heads;
  p.block_size = kv.block_size;
  p.block_tables = kv.block_tables;
  p.max_blocks_per_seq = kv.max_blocks_per_seq;
  p.context_lens = kv.context_lens;
  p.query_start = query_start;
  const bool bf16 = kv.dtype == KvDType::kBF16;
  switch (kv.head_dim) {
    case 64:
      return bf16 ? launch_prefill<Bf16Kv, 64>(p, rows.num_seqs, max_query_len, stream)
                  : launch_prefill<Fp8Kv, 64>(p, rows.num_seqs, max_query_len, stream);
    case 128:
      return bf16 ? launch_prefill<Bf16Kv, 128>(p, rows.num_seqs, max_query_len, stream)
                  : launch_prefill<Fp8Kv, 128>(p, rows.num_seqs, max_query_len, stream);
    case 256:
      return bf16 ? launch_prefill<Bf16Kv, 256>(p, rows.num_seqs, max_query_len, stream)
                  : launch_prefill<Fp8Kv, 256>(p, rows.num_seqs, max_query_len, stream);
    default:
      return cudaErrorInvalidValue;
  }
}

}  // namespace lathe::cuda
