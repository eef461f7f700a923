// Paged prefill attention on mma.sync m16n8k16 (BF16 in, f32 accumulate), flash-attention-2
// style, for every compiled head dim and architecture; on sm_90a head dims 64 and 128 take the
// warpgroup-MMA kernel instead (paged_attention_prefill_wgmma.cu), with the same bytes. The
// arithmetic and its invariances: paged_attention_prefill_common.cuh.
//
// One CTA per (128-query tile, q head, sequence). Head dims 64 and 128 run 4 warps of 32 query rows
// (two m16 row tiles, rows 16w .. 16w + 15 and 64 + 16w .. 64 + 16w + 15 of the CTA's tile, so the
// causal diagonal weighs on every warp alike); head dim 256, whose output accumulators would not fit
// twice in registers, runs 8 warps of one m16 tile. A K or V fragment loaded from shared memory
// feeds every row tile of its warp: two row tiles halve the shared-memory reads per MMA, which are
// what bounds this loop (one 512-byte ldmatrix per two MMAs is 2 clocks of shared-memory bandwidth
// per MMA on sm_90). KV tile t + 1's copies (cp.async) are issued before tile t is computed. FP8 KV
// is copied raw and widened to BF16 in shared memory (exact: every E4M3 value is a BF16 value).
#include <cuda_bf16.h>

#include <atomic>

#include "backends/cuda/device.h"
#include "backends/cuda/paged_attention.h"
#include "backends/cuda/paged_attention_prefill_common.cuh"

namespace lathe::cuda {
namespace {

using namespace attn;
using prefill::CtaTile;
using prefill::kTileKv;
using prefill::kTileQ;
using prefill::Params;

constexpr int kStages = 2;  // KV tiles in shared memory (the one computed, the one arriving)

// Geometry per head dim: warps per CTA and m16 row tiles per warp (kWarps * kRowTiles * 16 rows).
template <int HD>
struct Shape {
  static constexpr int kRowTiles = HD <= 128 ? 2 : 1;
  static constexpr int kWarps = kTileQ / (16 * kRowTiles);
  static constexpr int kThreads = kWarps * 32;
  // CTAs per SM the launch bounds ask for: two for HD <= 128 (104 KB of shared memory a CTA at
  // HD 128), one at HD 256 (203 KB).
  static constexpr int kMinBlocks = HD <= 128 ? 2 : 1;
  // Shared-memory row stride of a BF16 tile in elements: 16 bytes of padding so that the 8 rows one
  // ldmatrix phase reads fall in different banks.
  static constexpr int kStride = HD + 8;
};

// Shared memory, in this order: the Q tile (BF16, padded rows); kStages (K, V) tiles as copied
// (BF16 padded rows, or FP8 codes unpadded); for FP8 one more (K, V) pair widened to BF16.
template <typename Kv, int HD>
struct Smem {
  static constexpr int kS = Shape<HD>::kStride;
  static constexpr size_t kQBytes = static_cast<size_t>(kTileQ) * kS * 2;
  static constexpr size_t kCopyRowBytes = Kv::kDType == KvDType::kBF16 ? kS * 2 : HD;
  static constexpr size_t kCopyTileBytes = kTileKv * kCopyRowBytes;  // one of K or V
  static constexpr size_t kWideTileBytes =
      Kv::kDType == KvDType::kBF16 ? 0 : static_cast<size_t>(kTileKv) * kS * 2;
  static constexpr size_t kBytes = kQBytes + kStages * 2 * kCopyTileBytes + 2 * kWideTileBytes;
};

// Issues the copies of KV tile `tile` into stage buffers dk / dv (rows of Smem::kCopyRowBytes).
// Positions at or past ctx are zero-filled (read nothing). Every thread of the CTA takes part; the
// caller commits the group.
template <typename Kv, int HD, int kThreads>
__device__ __forceinline__ void copy_kv_tile(const Params& p, const CtaTile& c, int tile, unsigned char* dk,
                                             unsigned char* dv) {
  constexpr int kElemsPerCopy = 16 / Kv::kBytes;  // 16-byte copies
  constexpr int kCopiesPerRow = HD / kElemsPerCopy;
  constexpr int kCopies = kTileKv * kCopiesPerRow;
  static_assert(kCopies % kThreads == 0, "every thread issues the same number of copies");
#pragma unroll
  for (int i = 0; i < kCopies / kThreads; ++i) {
    const int u = static_cast<int>(threadIdx.x) + i * kThreads;
    const int r = u / kCopiesPerRow, col = (u % kCopiesPerRow) * kElemsPerCopy;
    const int pos = tile * kTileKv + r;
    const bool valid = pos < c.ctx;
    const int64_t src = valid ? c.kv_byte_offset<Kv, HD>(p, pos, col) : 0;
    const size_t dst = r * Smem<Kv, HD>::kCopyRowBytes + col * Kv::kBytes;
    cp_async16(dk + dst, static_cast<const unsigned char*>(p.k) + src, valid);
    cp_async16(dv + dst, static_cast<const unsigned char*>(p.v) + src, valid);
  }
}

// FP8 only: widens one copied (K or V) tile of E4M3 codes to BF16 padded rows.
template <int HD, int kThreads>
__device__ __forceinline__ void widen_fp8_tile(const unsigned char* src, __nv_bfloat16* dst) {
  constexpr int kUnits = kTileKv * HD / kFragElems;  // 8 codes each
  static_assert(kUnits % kThreads == 0, "every thread widens the same number of units");
#pragma unroll
  for (int i = 0; i < kUnits / kThreads; ++i) {
    const int u = static_cast<int>(threadIdx.x) + i * kThreads;
    const int r = u / (HD / kFragElems), col = (u % (HD / kFragElems)) * kFragElems;
    *reinterpret_cast<uint4*>(dst + r * Shape<HD>::kStride + col) =
        prefill::widen_fp8_unit(*reinterpret_cast<const uint2*>(src + r * HD + col));
  }
}

template <typename Kv, int HD>
__global__ void __launch_bounds__(Shape<HD>::kThreads, Shape<HD>::kMinBlocks)
    paged_prefill_kernel(const Params p) {
  using S = Smem<Kv, HD>;
  constexpr int kS = Shape<HD>::kStride;
  constexpr int kM = Shape<HD>::kRowTiles;
  constexpr int kWarps = Shape<HD>::kWarps;
  constexpr int kThreads = Shape<HD>::kThreads;
  constexpr int kCols = kTileKv / 8;  // n8 score tiles per row tile
  constexpr bool kFp8 = Kv::kDType == KvDType::kFP8E4M3;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  __nv_bfloat16* sq = reinterpret_cast<__nv_bfloat16*>(smem_raw);
  unsigned char* copies = smem_raw + S::kQBytes;
  const auto copy_k = [&](int stage) { return copies + (2 * stage) * S::kCopyTileBytes; };
  const auto copy_v = [&](int stage) { return copies + (2 * stage + 1) * S::kCopyTileBytes; };
  __nv_bfloat16* wide_k = reinterpret_cast<__nv_bfloat16*>(copies + kStages * 2 * S::kCopyTileBytes);
  __nv_bfloat16* wide_v = wide_k + kTileKv * kS;

  const CtaTile c(p);
  if (c.empty) return;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;

  copy_kv_tile<Kv, HD, kThreads>(p, c, 0, copy_k(0), copy_v(0));
  cp_async_commit();
  prefill::stage_q<HD, kThreads>(p, c, sq, kS);

  // This thread's rows: in row tile i, g and g + 8 of the tile's 16 (tile rows 16 (i kWarps + warp)).
  const int g = lane / 4, t = lane % 4;
  int pos_a[kM];
#pragma unroll
  for (int i = 0; i < kM; ++i) pos_a[i] = c.first_pos + c.tile_row0 + (i * kWarps + warp) * 16 + g;
  // The warp's lowest row position: tiles ending at or before it need no mask for any of its rows.
  const int warp_first_pos = c.first_pos + c.tile_row0 + warp * 16;
  const float s_mul = p.scale * kLog2e * (kFp8 ? p.k_scale : 1.0f);

  float o[kM][HD / 8][4];
  float m_a[kM], m_b[kM], l_a[kM], l_b[kM];
#pragma unroll
  for (int i = 0; i < kM; ++i) {
#pragma unroll
    for (int j = 0; j < HD / 8; ++j) o[i][j][0] = o[i][j][1] = o[i][j][2] = o[i][j][3] = 0.0f;
    m_a[i] = m_b[i] = -INFINITY;
    l_a[i] = l_b[i] = 0.0f;
  }

  for (int tile = 0; tile < c.num_kv_tiles; ++tile) {
    const int stage = tile % kStages;
    const int kv0 = tile * kTileKv;
    cp_async_wait<0>();  // this tile's copies (the only group in flight) have landed
    __syncthreads();     // ... for every thread; and no warp still reads the stage refilled next
    if (tile + 1 < c.num_kv_tiles) {
      copy_kv_tile<Kv, HD, kThreads>(p, c, tile + 1, copy_k((tile + 1) % kStages),
                                     copy_v((tile + 1) % kStages));
    }
    cp_async_commit();
    const __nv_bfloat16* sk;
    const __nv_bfloat16* sv;
    if constexpr (kFp8) {
      widen_fp8_tile<HD, kThreads>(copy_k(stage), wide_k);
      widen_fp8_tile<HD, kThreads>(copy_v(stage), wide_v);
      __syncthreads();
      sk = wide_k;
      sv = wide_v;
    } else {
      sk = reinterpret_cast<const __nv_bfloat16*>(copy_k(stage));
      sv = reinterpret_cast<const __nv_bfloat16*>(copy_v(stage));
    }

    // S = Q K^T for this warp's row tiles x 64 positions; each K fragment feeds every row tile.
    float s[kM][kCols][4];
#pragma unroll
    for (int i = 0; i < kM; ++i) {
#pragma unroll
      for (int j = 0; j < kCols; ++j) s[i][j][0] = s[i][j][1] = s[i][j][2] = s[i][j][3] = 0.0f;
    }
#pragma unroll
    for (int kk = 0; kk < HD / 16; ++kk) {
      uint32_t a[kM][4];
#pragma unroll
      for (int i = 0; i < kM; ++i) {
        ldmatrix_x4(a[i], sq + ((i * kWarps + warp) * 16 + (lane % 8) + 8 * ((lane / 8) % 2)) * kS + kk * 16 +
                              8 * (lane / 16));
      }
#pragma unroll
      for (int j = 0; j < kCols; j += 2) {
        uint32_t b[4];
        ldmatrix_x4(b, sk + (j * 8 + (lane % 8) + 8 * (lane / 16)) * kS + kk * 16 + 8 * ((lane / 8) % 2));
#pragma unroll
        for (int i = 0; i < kM; ++i) {
          mma_bf16(s[i][j], a[i], b[0], b[1]);
          mma_bf16(s[i][j + 1], a[i], b[2], b[3]);
        }
      }
    }

    const bool masked = kv0 + kTileKv - 1 > warp_first_pos;
    uint32_t pa[kM][kTileKv / 16][4];
#pragma unroll
    for (int i = 0; i < kM; ++i) {
      prefill::softmax_step(s[i], masked, kv0, t, s_mul, pos_a[i], pos_a[i] + 8, m_a[i], m_b[i], l_a[i],
                            l_b[i], o[i], pa[i]);
    }

    // O += P V; each V fragment feeds every row tile.
#pragma unroll
    for (int kk = 0; kk < kTileKv / 16; ++kk) {
#pragma unroll
      for (int j = 0; j < HD / 8; j += 2) {
        uint32_t b[4];
        ldmatrix_x4_trans(b, sv + (kk * 16 + (lane % 8) + 8 * ((lane / 8) % 2)) * kS + (j + lane / 16) * 8);
#pragma unroll
        for (int i = 0; i < kM; ++i) {
          mma_bf16(o[i][j], pa[i][kk], b[0], b[1]);
          mma_bf16(o[i][j + 1], pa[i][kk], b[2], b[3]);
        }
      }
    }
  }

  const float v_mul = kFp8 ? p.v_scale : 1.0f;
#pragma unroll
  for (int i = 0; i < kM; ++i) {
    prefill::store_rows<HD>(p, c, o[i], l_a[i], l_b[i], v_mul, c.tile_row0 + (i * kWarps + warp) * 16 + g, t);
  }
}

template <typename Kv, int HD>
cudaError_t launch_mma_sync(const Params& p, int32_t num_seqs, int32_t max_query_len, cudaStream_t stream) {
  constexpr size_t smem = Smem<Kv, HD>::kBytes;
  // The shared-memory opt-in is a per-function attribute: set once per process (single device),
  // on the first launch, which callers make outside graph capture.
  static const cudaError_t opt_in = cudaFuncSetAttribute(
      paged_prefill_kernel<Kv, HD>, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem));
  if (opt_in != cudaSuccess) return opt_in;
  const int32_t q_tiles = (max_query_len + kTileQ - 1) / kTileQ;
  if (q_tiles > 65535) return cudaErrorInvalidValue;  // grid.y limit: 8.4M rows in one chunk
  const dim3 grid(p.num_heads, q_tiles, num_seqs);
  paged_prefill_kernel<Kv, HD><<<grid, Shape<HD>::kThreads, smem, stream>>>(p);
  return cudaGetLastError();
}

std::atomic<bool> g_wgmma_allowed{true};

}  // namespace

void set_prefill_wgmma(bool allowed) {
  g_wgmma_allowed.store(allowed, std::memory_order_relaxed);
}

bool prefill_uses_wgmma(int32_t head_dim) {
  return g_wgmma_allowed.load(std::memory_order_relaxed) && (head_dim == 64 || head_dim == 128) &&
         device_has_wgmma();
}

cudaError_t launch_paged_prefill(const AttentionRows& rows, const PagedKv& kv, const int32_t* query_start,
                                 int32_t max_query_len, cudaStream_t stream) {
  if (rows.num_seqs <= 0 || max_query_len <= 0) return cudaSuccess;
  if (kv.num_kv_heads <= 0 || rows.num_heads % kv.num_kv_heads != 0 || query_start == nullptr) {
    return cudaErrorInvalidValue;
  }
  Params p{};
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
  if (prefill_uses_wgmma(kv.head_dim)) {
    return prefill::launch_wgmma(p, kv.dtype, kv.head_dim, rows.num_seqs, max_query_len, stream);
  }
  const bool bf16 = kv.dtype == KvDType::kBF16;
  switch (kv.head_dim) {
    case 64:
      return bf16 ? launch_mma_sync<Bf16Kv, 64>(p, rows.num_seqs, max_query_len, stream)
                  : launch_mma_sync<Fp8Kv, 64>(p, rows.num_seqs, max_query_len, stream);
    case 128:
      return bf16 ? launch_mma_sync<Bf16Kv, 128>(p, rows.num_seqs, max_query_len, stream)
                  : launch_mma_sync<Fp8Kv, 128>(p, rows.num_seqs, max_query_len, stream);
    case 256:
      return bf16 ? launch_mma_sync<Bf16Kv, 256>(p, rows.num_seqs, max_query_len, stream)
                  : launch_mma_sync<Fp8Kv, 256>(p, rows.num_seqs, max_query_len, stream);
    default:
      return cudaErrorInvalidValue;
  }
}

}  // namespace lathe::cuda
