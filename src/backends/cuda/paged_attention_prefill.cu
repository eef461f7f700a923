// Paged prefill attention: flash-attention-2 style on tensor cores (mma.sync m16n8k16; BF16
// operands for BF16 KV, f16 for FP8 KV).
//
// One CTA per (128-query tile, q head, sequence). Head dims 64 and 128 run 4 warps of 32 query rows
// (two m16 row tiles, rows 16w .. 16w + 15 and 64 + 16w .. 64 + 16w + 15 of the CTA's tile, so the
// causal diagonal weighs on every warp alike); head dim 256, whose output accumulators would not fit
// twice in registers, runs 8 warps of one m16 tile. A K or V fragment loaded from shared memory
// feeds every row tile of its warp: two row tiles halve the shared-memory reads per MMA, which are
// what bounds this loop (one 512-byte ldmatrix per two MMAs is 2 clocks of shared-memory bandwidth
// per MMA on sm_90).
//
// KV is walked in 64-position tiles anchored at position 0 up to the CTA's last visible position,
// two tiles in flight: tile t + 1's copies (cp.async) are issued before tile t is computed. The
// arithmetic and its invariances: paged_attention_prefill_common.cuh. FP8 KV is copied raw and
// widened to f16 in shared memory (exact: every E4M3 value is an f16 value), the query staged as
// f16; its scales are applied to s and to the output. On sm_90a, head dim 128 runs the warpgroup-MMA kernel
// instead (paged_attention_prefill_ws.cu), with the same bytes.
#include <cuda_bf16.h>

#include <atomic>

#include "backends/cuda/device.h"
#include "backends/cuda/paged_attention.h"
#include "backends/cuda/paged_attention_prefill_common.cuh"
#include "backends/cuda/paged_kv_map.h"

namespace lathe::cuda {
namespace {

using namespace attn;
using prefill::CtaTile;
using prefill::kTileKv;
using prefill::kTileQ;
using PrefillParams = prefill::Params;

constexpr int kStages = 2;   // KV tiles in shared memory (the one computed, the one arriving)

// Geometry per head dim: warps per CTA and m16 row tiles per warp (kWarps * kRowTiles * 16 rows).
template <int HD>
struct PrefillShape {
  static constexpr int kRowTiles = HD <= 128 ? 2 : 1;
  static constexpr int kWarps = kTileQ / (16 * kRowTiles);
  static constexpr int kThreads = kWarps * 32;
  // CTAs per SM the launch bounds ask for: two for HD <= 128 (~210 registers a thread at HD 128,
  // 104 KB of shared memory a CTA), one at HD 256 (203 KB).
  static constexpr int kMinBlocks = HD <= 128 ? 2 : 1;
  // Shared-memory row stride of a BF16 tile in elements: 16 bytes of padding so that the 8 rows one
  // ldmatrix phase reads fall in different banks.
  static constexpr int kStride = HD + 8;
};

// Shared memory, in this order: the Q tile (operand type, padded rows); kStages (K, V) tiles as
// copied (BF16 padded rows, or FP8 codes unpadded); for FP8 one more (K, V) pair widened to f16.
template <typename Kv, int HD>
struct PrefillSmem {
  static constexpr int kS = PrefillShape<HD>::kStride;
  static constexpr size_t kQBytes = static_cast<size_t>(kTileQ) * kS * 2;
  static constexpr size_t kCopyRowBytes = Kv::kDType == KvDType::kBF16 ? kS * 2 : HD;
  static constexpr size_t kCopyTileBytes = kTileKv * kCopyRowBytes;  // one of K or V
  static constexpr size_t kWideTileBytes =
      Kv::kDType == KvDType::kBF16 ? 0 : static_cast<size_t>(kTileKv) * kS * 2;
  static constexpr size_t kBytes = kQBytes + kStages * 2 * kCopyTileBytes + 2 * kWideTileBytes;
};

// Issues the copies of KV tile `tile` (positions 64 tile ..) of this CTA's kv head into stage
// buffers dk / dv. Positions at or past ctx are zero-filled (read nothing). Every thread of the CTA
// takes part; the caller commits the group.
template <typename Kv, int HD, int kThreads>
__device__ __forceinline__ void copy_kv_tile(const PrefillParams& p, const CtaTile& cta, int tile,
                                             unsigned char* dk, unsigned char* dv) {
  using Smem = PrefillSmem<Kv, HD>;
  constexpr int kElemsPerCopy = 16 / Kv::kBytes;  // 16-byte copies
  constexpr int kCopiesPerRow = HD / kElemsPerCopy;
  constexpr int kCopies = kTileKv * kCopiesPerRow;
  static_assert(kCopies % kThreads == 0, "every thread issues the same number of copies");
  const int kv0 = tile * kTileKv;
#pragma unroll
  for (int i = 0; i < kCopies / kThreads; ++i) {
    const int c = static_cast<int>(threadIdx.x) + i * kThreads;
    const int r = c / kCopiesPerRow, col = (c % kCopiesPerRow) * kElemsPerCopy;
    const int pos = kv0 + r;
    const bool valid = pos < cta.ctx;
    const int64_t byte_off = valid ? cta.kv_byte_offset<Kv, HD>(p, pos, col) : 0;
    const size_t dst = r * Smem::kCopyRowBytes + col * Kv::kBytes;
    cp_async16(dk + dst, static_cast<const unsigned char*>(p.k) + byte_off, valid);
    cp_async16(dv + dst, static_cast<const unsigned char*>(p.v) + byte_off, valid);
  }
}

// FP8 only: widens one copied (K or V) tile of E4M3 codes to f16 padded rows (exact).
template <int HD, int kThreads>
__device__ __forceinline__ void widen_fp8_tile(const unsigned char* src, __nv_bfloat16* dst) {
  constexpr int kS = PrefillShape<HD>::kStride;
  constexpr int kUnits = kTileKv * HD / kFragElems;  // 8 codes each
  static_assert(kUnits % kThreads == 0, "every thread widens the same number of units");
#pragma unroll
  for (int i = 0; i < kUnits / kThreads; ++i) {
    const int u = static_cast<int>(threadIdx.x) + i * kThreads;
    const int r = u / (HD / kFragElems), col = (u % (HD / kFragElems)) * kFragElems;
    const uint2 codes = *reinterpret_cast<const uint2*>(src + r * HD + col);
    *reinterpret_cast<uint4*>(dst + r * kS + col) = prefill::widen_codes_f16(codes.x, codes.y);
  }
}

template <typename Kv, int HD>
__global__ void __launch_bounds__(PrefillShape<HD>::kThreads, PrefillShape<HD>::kMinBlocks)
    paged_prefill_kernel(const PrefillParams p) {
  using Shape = PrefillShape<HD>;
  using Smem = PrefillSmem<Kv, HD>;
  constexpr int kS = Shape::kStride;
  constexpr int kM = Shape::kRowTiles;
  constexpr int kThreads = Shape::kThreads;
  constexpr int kCols = kTileKv / 8;  // n8 score tiles per row tile
  constexpr bool kFp8 = Kv::kDType == KvDType::kFP8E4M3;
  // The products' operand type (the tiles below are 16-bit values of it, typed as BF16 storage).
  const auto mma = [](float(&d)[4], const uint32_t(&a)[4], uint32_t b0, uint32_t b1) {
    if constexpr (prefill::kF16Operands<Kv>) {
      mma_f16(d, a, b0, b1);
    } else {
      mma_bf16(d, a, b0, b1);
    }
  };
  extern __shared__ __align__(16) unsigned char smem_raw[];
  __nv_bfloat16* sq = reinterpret_cast<__nv_bfloat16*>(smem_raw);
  unsigned char* copies = smem_raw + Smem::kQBytes;
  const auto copy_k = [&](int stage) { return copies + (2 * stage) * Smem::kCopyTileBytes; };
  const auto copy_v = [&](int stage) { return copies + (2 * stage + 1) * Smem::kCopyTileBytes; };
  __nv_bfloat16* wide_k = reinterpret_cast<__nv_bfloat16*>(copies + kStages * 2 * Smem::kCopyTileBytes);
  __nv_bfloat16* wide_v = wide_k + kTileKv * kS;

  // Heads vary fastest, so the q heads of one kv head run side by side and share its tiles in L2.
  const CtaTile cta(p);
  if (cta.empty) return;
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int tile_row0 = cta.tile_row0, qlen = cta.qlen, first_pos = cta.first_pos;
  const int num_tiles = cta.num_kv_tiles;

  copy_kv_tile<Kv, HD, kThreads>(p, cta, 0, copy_k(0), copy_v(0));
  cp_async_commit();

  // Q tile (rows past the chunk are zero and never stored).
  constexpr int kQUnits = kTileQ * HD / kFragElems;
  for (int c = tid; c < kQUnits; c += kThreads) {
    const int r = c / (HD / kFragElems), col = (c % (HD / kFragElems)) * kFragElems;
    uint4 value = make_uint4(0, 0, 0, 0);
    if (tile_row0 + r < qlen) {
      value = __ldg(reinterpret_cast<const uint4*>(
          p.q + static_cast<int64_t>(cta.q_begin + tile_row0 + r) * p.q_stride +
          static_cast<int64_t>(cta.head) * HD + col));
    }
    *reinterpret_cast<uint4*>(sq + r * kS + col) = prefill::query_operands<Kv>(value);
  }

  // This thread's rows: in row tile i, g and g + 8 of the tile's 16 (tile rows 16 (i kWarps + warp)).
  const int g = lane / 4, t = lane % 4;
  int pos_a[kM], pos_b[kM];
#pragma unroll
  for (int i = 0; i < kM; ++i) {
    pos_a[i] = first_pos + tile_row0 + (i * Shape::kWarps + warp) * 16 + g;
    pos_b[i] = pos_a[i] + 8;
  }
  // The warp's lowest row position: tiles ending at or before it need no mask for any of its rows.
  const int warp_first_pos = first_pos + tile_row0 + warp * 16;
  const float s_mul = p.scale * kLog2e * (kFp8 ? p.k_scale : 1.0f);

  float o[kM][HD / 8][4];
  prefill::RowState state[kM];
#pragma unroll
  for (int i = 0; i < kM; ++i) {
#pragma unroll
    for (int j = 0; j < HD / 8; ++j) o[i][j][0] = o[i][j][1] = o[i][j][2] = o[i][j][3] = 0.0f;
  }

  for (int tile = 0; tile < num_tiles; ++tile) {
    const int stage = tile % kStages;
    const int kv0 = tile * kTileKv;
    cp_async_wait<0>();  // this tile's copies (the only group in flight) have landed
    __syncthreads();     // ... for every thread; and no warp still reads the stage refilled next
    if (tile + 1 < num_tiles) {
      copy_kv_tile<Kv, HD, kThreads>(p, cta, tile + 1, copy_k((tile + 1) % kStages),
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
        ldmatrix_x4(a[i], sq + ((i * Shape::kWarps + warp) * 16 + (lane % 8) + 8 * ((lane / 8) % 2)) * kS +
                              kk * 16 + 8 * (lane / 16));
      }
#pragma unroll
      for (int j = 0; j < kCols; j += 2) {
        uint32_t b[4];
        ldmatrix_x4(b, sk + (j * 8 + (lane % 8) + 8 * (lane / 16)) * kS + kk * 16 + 8 * ((lane / 8) % 2));
#pragma unroll
        for (int i = 0; i < kM; ++i) {
          mma(s[i][j], a[i], b[0], b[1]);
          mma(s[i][j + 1], a[i], b[2], b[3]);
        }
      }
    }

    // Mask (only where the tile crosses one of the warp's rows), softmax step, P as A fragments.
    const bool masked = kv0 + kTileKv - 1 > warp_first_pos;
    uint32_t pa[kM][kTileKv / 16][4];
#pragma unroll
    for (int i = 0; i < kM; ++i) {
      if (masked) prefill::mask_tile(s[i], kv0, t, pos_a[i], pos_b[i]);
      float alpha_a, alpha_b;
      prefill::softmax_scores(s[i], s_mul, state[i], alpha_a, alpha_b);
      prefill::pack_p<Kv>(s[i], pa[i]);
      prefill::rescale(o[i], alpha_a, alpha_b);
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
          mma(o[i][j], pa[i][kk], b[0], b[1]);
          mma(o[i][j + 1], pa[i][kk], b[2], b[3]);
        }
      }
    }
  }

  const float v_mul = kFp8 ? p.v_scale : 1.0f;
#pragma unroll
  for (int i = 0; i < kM; ++i) {
    prefill::store_rows<HD>(p, cta, o[i], state[i], v_mul, tile_row0 + (i * Shape::kWarps + warp) * 16 + g,
                            t);
  }
}

template <typename Kv, int HD>
cudaError_t launch_prefill(const PrefillParams& p, int32_t num_seqs, int32_t max_query_len,
                           cudaStream_t stream) {
  constexpr size_t smem = PrefillSmem<Kv, HD>::kBytes;
  // The shared-memory opt-in is a per-function attribute: set once per process (single device),
  // on the first launch, which callers make outside graph capture.
  static const cudaError_t opt_in = cudaFuncSetAttribute(
      paged_prefill_kernel<Kv, HD>, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem));
  if (opt_in != cudaSuccess) return opt_in;
  const int32_t q_tiles = (max_query_len + kTileQ - 1) / kTileQ;
  if (q_tiles > 65535) return cudaErrorInvalidValue;  // grid.y limit: 8.4M rows in one chunk
  const dim3 grid(p.num_heads, q_tiles, num_seqs);
  paged_prefill_kernel<Kv, HD><<<grid, PrefillShape<HD>::kThreads, smem, stream>>>(p);
  return cudaGetLastError();
}

std::atomic<bool> g_wgmma_allowed{true};
L2PromotionSetting g_prefill_kv_l2_promotion{256};

}  // namespace

void set_prefill_wgmma(bool allowed) {
  g_wgmma_allowed.store(allowed, std::memory_order_relaxed);
}

bool set_prefill_kv_l2_promotion(int promotion_bytes) {
  return g_prefill_kv_l2_promotion.set(promotion_bytes);
}
int prefill_kv_l2_promotion() {
  return g_prefill_kv_l2_promotion.get();
}

bool prefill_uses_wgmma(int32_t head_dim) {
  return g_wgmma_allowed.load(std::memory_order_relaxed) && head_dim == 128 && device_has_wgmma() &&
         prefill::ws_kernels_usable();
}

cudaError_t launch_paged_prefill(const AttentionRows& rows, const PagedKv& kv, const int32_t* query_start,
                                 int32_t max_query_len, cudaStream_t stream) {
  if (rows.num_seqs <= 0 || max_query_len <= 0) return cudaSuccess;
  if (kv.num_kv_heads <= 0 || rows.num_heads % kv.num_kv_heads != 0 || query_start == nullptr) {
    return cudaErrorInvalidValue;
  }
  PrefillParams p{};
  static_cast<attn::DecodeParams&>(p) = attn::make_decode_params(rows, kv);
  p.query_start = query_start;
  if (prefill_uses_wgmma(kv.head_dim) && prefill::ws_supports(kv)) {
    const cudaError_t ws = prefill::launch_ws(p, kv, rows.num_seqs, max_query_len, stream);
    if (ws != cudaErrorNotSupported) return ws;  // else the same bytes from the mma.sync kernel
  }
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
