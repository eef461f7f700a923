#pragma once
// The split-K decode kernel's compile-time geometry (SplitCfg: warps, stages, tile, CTAs per SM,
// address generation, clusters, slice loops, how tiles arrive), the layout of its staged K/V
// tiles in shared memory (SplitLayout) and one warp tile's arithmetic (splitk_tile: QK, online
// softmax, PV). The kernel that streams the tiles is paged_attention_splitk.cuh.
#include <cuda_bf16.h>

#include "backends/cuda/paged_attention.h"
#include "backends/cuda/paged_attention_common.cuh"
#include "backends/cuda/paged_attention_fp8_frag.cuh"
#include "backends/cuda/paged_attention_mma.cuh"

namespace lathe::cuda::attn::splitk {

inline constexpr int kMaxRows = 16;
// Query heads one CTA carries where positions are the MMA rows (one n8 column tile).
inline constexpr int kMaxPosRowHeads = 8;

// W warps per CTA, S pipeline stages per warp, T positions per warp tile, CTAs per SM the
// layout is sized for (the __launch_bounds__ minimum), the address-generation mode, the
// cluster size, slice loops, how tiles arrive (kTensorCopies: tensor copies, below) and which
// operand the positions are (kPositionRows: the MMA rows, splitk_tile_pos_rows; else its columns,
// splitk_tile).
template <int W, int S, int T, int kMinCtas, bool kPrefetchIds, int C = 1, bool kLoopSlices = false,
          bool kTensorCopies = false, bool kPositionRows = false>
struct SplitCfg {
  static constexpr bool kTensor = kTensorCopies;
  static constexpr bool kPosRows = kPositionRows;
  static_assert(!kTensorCopies || ((T == 16 || T == 32) && C == 1 && !kLoopSlices),
                "tensor copies: tiles of one or two 16-row boxes, no clusters");
  // Tensor copies with 32-position tiles: tiles are aligned to 32 positions, the first one masked
  // below the split's start (16-position tiles start the first box at the split's start instead).
  static constexpr bool kAlignedTiles = kTensorCopies && T > 16;
  static constexpr bool kSliceLoop = kLoopSlices;  // a CTA may run several slices in turn
  static constexpr int kWarps = W;
  static constexpr int kStages = S;
  static constexpr int kTile = T;
  static constexpr int kCtasPerSm = kMinCtas;
  static constexpr bool kPrefetch = kPrefetchIds;
  static constexpr int kThreads = 32 * W;
  static constexpr int kCluster = C;
  static_assert(C == 1 || C == 2 || C == 4 || C == 8, "cluster size");
};

// The fewest positions a cluster rank is given (a shorter split uses fewer ranks).
inline constexpr int kMinPerRank = 512;

// 128-byte pieces of a K/V row that one tensor copy brings (the box's piece extent; the launcher
// encodes the maps with it, paged_attention_splitk.cu): the whole row. On the H200 (same output
// bytes), whole rows were 0-6% faster than one piece per copy at head dim 256 (session 14); at
// head dim 128 (BF16: two pieces) they were 1-2% slower under 256-byte L2 promotion (session 14)
// and, without promotion, 1% faster over the serve cells, up to 6% at batch 1 (session 39).
constexpr int tensor_box_pieces(int head_dim, int kv_bytes) {
  return head_dim * kv_bytes / 128;
}

// Staged K/V rows. cp.async geometries: row r at r * kRawRow (its bytes plus a 16-byte pad, so
// the fragment loads of 8 rows hit distinct banks). Tensor-copy geometries (kSwizzled): a tile of
// T rows of kPieces 128-byte pieces is staged as kPieces / P groups of P pieces (P =
// tensor_box_pieces), each group T / 16 boxes of [P pieces][16 rows][128 bytes] (one tensor copy
// each, the order of the box's dimensions in the map), row r of a box at 128 (r % 16) within its
// piece, its 16-byte unit u stored at unit u ^ (r % 8) (the copy engine's 128-byte swizzle: every
// piece starts on a 1024-byte boundary, so a line's index modulo 8 is r % 8; the same bank
// spread as the pad, without it).
template <typename Kv, int HD, typename Cfg>
struct SplitLayout {
  static constexpr int kTile = Cfg::kTile;
  static constexpr bool kSwizzled = Cfg::kTensor;
  static constexpr int kRow = HD + 8;                   // BF16 elements per shared query row (16-byte pad)
  static constexpr int kRowBytes = HD * Kv::kBytes;     // bytes of one K or V row
  static constexpr int kRawRow = kRowBytes + 16;        // cp.async: bytes per staged row
  static constexpr int kPieces = kRowBytes / 128;       // 128-byte pieces of a K or V row
  static constexpr int kBoxPieces = tensor_box_pieces(HD, Kv::kBytes);  // pieces per tensor copy
  static constexpr int kBoxBytes = kBoxPieces * 16 * 128;               // one box: 16 rows x P pieces
  static constexpr int kGroupBytes = kTile / 16 * kBoxBytes;            // a group: P pieces of T rows
  static constexpr int kRawTile = kSwizzled ? kTile * kRowBytes : kTile * kRawRow;  // K or V of one stage
  static constexpr int kStage = 2 * kRawTile;
  static_assert(!kSwizzled || kRowBytes % 128 == 0, "tensor copies: whole 128-byte pieces per row");
  static constexpr bool kFp8 = Kv::kDType == KvDType::kFP8E4M3;  // f16 MMAs on raw rows (see header)
  static constexpr int kPerWarp = Cfg::kStages * kStage;
  static constexpr int kQ = kMaxRows * kRow * 2;
  // Warp states [W][16][HD + 2], then (clusters) the rank state [16][HD + 2].
  static constexpr int kMerge = (Cfg::kWarps + (Cfg::kCluster > 1 ? 1 : 0)) * kMaxRows * (HD + 2) * 4;
  static constexpr int kWork = Cfg::kWarps * kPerWarp > kMerge ? Cfg::kWarps * kPerWarp : kMerge;
  // Tensor copies: the stages start on a 1024-byte boundary (the swizzle's period; the kernel
  // aligns at run time, hence the slack) and each warp has one barrier per stage after them.
  static constexpr int kAlignSlack = kSwizzled ? 1024 : 0;
  static constexpr int kBarriers = kSwizzled ? Cfg::kWarps * Cfg::kStages * 8 : 0;
  static constexpr int kBytes = kQ + kAlignSlack + kWork + kBarriers;
  static constexpr int kChunksPerRow = HD * Kv::kBytes / 16;  // 16-byte copies per K or V row
  static constexpr int kIssueIters = kTile * kChunksPerRow / 32;
  static_assert(kTile % 16 == 0 && HD % 16 == 0, "tile shape");
  static_assert(kTile * kChunksPerRow % 32 == 0 && 32 % kChunksPerRow == 0, "whole warp-wide copies per tile");
  static_assert(kBytes <= 227 * 1024, "shared memory of one CTA");
  static_assert(!kSwizzled || kRawTile % 1024 == 0, "tensor-copy tiles keep the swizzle's 1024-byte period");

  static_assert(kBoxPieces == 1 || kBoxPieces == kPieces, "a box holds one piece or the whole row");

  // Byte offset of 16-byte unit u (piece u / 8) of staged row r within a K or V tile. (The two
  // box widths are written out apart: a unit's piece is not known at compile time everywhere, and
  // a generic group / piece split of it costs address arithmetic in the fragment loads.)
  __device__ __forceinline__ static int at(int r, int u) {
    if constexpr (kSwizzled) {
      const int unit = ((u & 7) ^ (r & 7)) << 4;
      if constexpr (kBoxPieces == 1) return (u >> 3) * kGroupBytes + r * 128 + unit;  // boxes of a piece abut
      return (r >> 4) * kBoxBytes + (u >> 3) * (16 * 128) + (r & 15) * 128 + unit;
    }
    return r * kRawRow + u * 16;
  }
  static_assert(Cfg::kCtasPerSm * (kBytes + 1024) <= 228 * 1024, "shared memory of the CTAs one SM should hold");
};

// The A fragment of Q for head-dimension chunk kk from the staged query rows sq (16 rows of
// L::kRow elements): ldmatrix of the BF16 rows, or (FP8 arm) the two 8-byte pieces at the chunk's
// dims (fp8frag::q_dim) of rows g and g + 8, already f16 (query_words_to_f16).
template <typename L, int HD>
__device__ __forceinline__ void load_query_fragment(uint32_t (&a)[4], const __nv_bfloat16* sq, int kk,
                                                    int lane) {
  if constexpr (L::kFp8) {
    const int g = lane / 4, t = lane % 4;
    const int d = fp8frag::q_dim<HD>(kk, t);
    const uint2 top = *reinterpret_cast<const uint2*>(sq + g * L::kRow + d);
    const uint2 bottom = *reinterpret_cast<const uint2*>(sq + (g + 8) * L::kRow + d);
    a[0] = top.x;
    a[1] = bottom.x;
    a[2] = top.y;
    a[3] = bottom.y;
  } else {
    ldmatrix_x4(a, sq + ((lane % 8) + 8 * ((lane / 8) % 2)) * L::kRow + kk * 16 + 8 * (lane / 16));
  }
}

// Eight BF16 query elements as the FP8 arm's f16 MMA operand (saturated to f16's range).
__device__ __forceinline__ void query_words_to_f16(uint4& value) {
  uint32_t* w = &value.x;
#pragma unroll
  for (int e = 0; e < 4; ++e) {
    w[e] = fp8frag::pack_f16x2(fp8frag::saturate_f16_range(bf16_lo(w[e])),
                               fp8frag::saturate_f16_range(bf16_hi(w[e])));
  }
}

// One tile of one warp, staged at `stage`: S = Q K^T over positions [tile_start, tile_start + T)
// (those at or past `end`, and for kAlignedTiles those before `lo`, masked to -inf), the
// online-softmax update of the running maxima m_a, m_b and sums l_a, l_b (rows g and g + 8 of the
// m16 tile) with the rescale of o, then o += P V. qa holds Q's A fragments (HD <= 128), or is
// scratch that load_q(qa[0], kk) refills per head-dim chunk.
template <typename Kv, int HD, typename Cfg, typename LoadQ>
__device__ __forceinline__ void splitk_tile(const unsigned char* stage, int tile_start, int lo, int end, float s_mul,
                                            uint32_t (&qa)[HD <= 128 ? HD / 16 : 1][4], const LoadQ& load_q,
                                            float (&o)[HD / 8][4], float& m_a, float& m_b, float& l_a, float& l_b,
                                            int lane) {
  using L = SplitLayout<Kv, HD, Cfg>;
  constexpr int kTile = L::kTile;
  constexpr bool kQInRegs = HD <= 128;
  const int g = lane / 4, t = lane % 4;
  // S = Q K^T over the tile.
  float s[kTile / 8][4];
#pragma unroll
  for (int j = 0; j < kTile / 8; ++j) s[j][0] = s[j][1] = s[j][2] = s[j][3] = 0.0f;
  if constexpr (L::kFp8) {
    // One 16-byte load per K row (position 8j + g) and unit feeds four chunks.
#pragma unroll
    for (int m = 0; m < HD / 64; ++m) {
      uint4 kw[kTile / 8];
#pragma unroll
      for (int j = 0; j < kTile / 8; ++j) {
        kw[j] = *reinterpret_cast<const uint4*>(stage + L::at(j * 8 + g, fp8frag::k_unit<HD>(m, t)));
      }
#pragma unroll
      for (int c = 0; c < 4; ++c) {
        const int kk = 4 * m + c;
        if constexpr (!kQInRegs) load_q(qa[0], kk);
        const uint32_t(&a)[4] = qa[kQInRegs ? kk : 0];
#pragma unroll
        for (int j = 0; j < kTile / 8; ++j) {
          uint32_t b0, b1;
          fp8frag::e4m3x4_to_f16x4((&kw[j].x)[c], b0, b1);
          mma_f16(s[j], a, b0, b1);
        }
      }
    }
  } else {
#pragma unroll
    for (int kk = 0; kk < HD / 16; ++kk) {
      // With Q in registers qa[kk] holds its fragment; else qa[0] is reloaded per kk.
      if constexpr (!kQInRegs) load_q(qa[0], kk);
      mma_qk_chunk_at(s, qa[kQInRegs ? kk : 0], stage, L::at, kk, lane);
    }
  }

  // Positions before lo (aligned tiles) or at / past end are masked in both rows.
  const auto valid = [&](int pos, bool& a, bool& b) {
    a = b = (!Cfg::kAlignedTiles || pos >= lo) && pos < end;
  };
  float max_a, max_b;
  scale_mask_tile(s, tile_start, t, s_mul, valid, max_a, max_b);
  float alpha_a, alpha_b;
  online_softmax_max(max_a, max_b, m_a, m_b, alpha_a, alpha_b);
  // BF16 KV: P = hi + lo, both BF16 (hi = round(p), lo = round(p - hi)): the two products below
  // carry p to ~16 significant bits, so the split arm adds no rounding of the weights that the
  // CUDA-core non-split arm (f32 weights) does not have. FP8 KV: P is one f16 (11 significant
  // bits, a relative error <= 2^-12), because there V itself carries only 4 (E4M3): a second,
  // low product would refine the weights of values 2^8 times coarser than the weights' own error,
  // and it costs a third of the tile's MMAs and the packing of the low halves.
  constexpr bool kLowPart = !L::kFp8;
  auto pack = [](float x, float y) { return L::kFp8 ? fp8frag::pack_f16x2(x, y) : pack_bf16x2(x, y); };
  float sum_a = 0.0f, sum_b = 0.0f;
  uint32_t pa_hi[kTile / 16][4], pa_lo[kTile / 16][4];
#pragma unroll
  for (int j = 0; j < kTile / 8; ++j) {
    const float p0 = exp2f(s[j][0] - m_a), p1 = exp2f(s[j][1] - m_a);
    const float p2 = exp2f(s[j][2] - m_b), p3 = exp2f(s[j][3] - m_b);
    sum_a = __fadd_rn(sum_a, __fadd_rn(p0, p1));
    sum_b = __fadd_rn(sum_b, __fadd_rn(p2, p3));
    const uint32_t hi_a = pack(p0, p1), hi_b = pack(p2, p3);
    pa_hi[j / 2][(j % 2) * 2 + 0] = hi_a;
    pa_hi[j / 2][(j % 2) * 2 + 1] = hi_b;
    if constexpr (kLowPart) {
      pa_lo[j / 2][(j % 2) * 2 + 0] = pack(__fsub_rn(p0, bf16_lo(hi_a)), __fsub_rn(p1, bf16_hi(hi_a)));
      pa_lo[j / 2][(j % 2) * 2 + 1] = pack(__fsub_rn(p2, bf16_lo(hi_b)), __fsub_rn(p3, bf16_hi(hi_b)));
    }
  }
  online_softmax_rescale(sum_a, sum_b, alpha_a, alpha_b, l_a, l_b, o);
  if constexpr (L::kFp8) {
    // Rows 2t, 2t+1, 2t+8, 2t+9 of chunk kk, this thread's units of dims (fp8frag::out_dim).
    constexpr int kUnitBytes = HD == 64 ? 8 : 16;  // dims per thread per unit
    constexpr int kUnits = HD == 256 ? 2 : 1;
    const unsigned char* vt = stage + L::kRawTile;
#pragma unroll
    for (int kk = 0; kk < kTile / 16; ++kk) {
#pragma unroll
      for (int u = 0; u < kUnits; ++u) {
        uint32_t w[4][kUnitBytes / 4];  // [row][word]
#pragma unroll
        for (int r = 0; r < 4; ++r) {
          const int tile_row = kk * 16 + 2 * t + (r & 1) + 8 * (r >> 1);
          const unsigned char* row = vt + (kUnitBytes == 16 ? L::at(tile_row, g + 8 * u)
                                                            : tile_row * L::kRawRow + kUnitBytes * (g + 8 * u));
          if constexpr (kUnitBytes == 16) {
            const uint4 x = *reinterpret_cast<const uint4*>(row);
            w[r][0] = x.x, w[r][1] = x.y, w[r][2] = x.z, w[r][3] = x.w;
          } else {
            const uint2 x = *reinterpret_cast<const uint2*>(row);
            w[r][0] = x.x, w[r][1] = x.y;
          }
        }
#pragma unroll
        for (int q = 0; q < kUnitBytes / 4; ++q) {
          uint32_t dims[4];
          fp8frag::transpose4x4({w[0][q], w[1][q], w[2][q], w[3][q]}, dims);
#pragma unroll
          for (int d = 0; d < 4; ++d) {
            const int j = 16 * u + 4 * q + d;
            uint32_t b0, b1;
            fp8frag::e4m3x4_to_f16x4(dims[d], b0, b1);
            mma_f16(o[j], pa_hi[kk], b0, b1);
          }
        }
      }
    }
  } else {
#pragma unroll
    for (int kk = 0; kk < kTile / 16; ++kk) mma_pv_chunk_at(o, stage + L::kRawTile, L::at, kk, lane, pa_hi[kk], pa_lo[kk]);
  }
}

// ---- Positions as the MMA rows (Cfg::kPosRows) -----------------------------------------------
// The same tile with the product transposed: S^T = K Q^T and O^T += V^T P^T. A tile's positions
// fill the m16 rows of the MMAs and the query heads (at most 8: one n8 column tile) its columns,
// so a head group of 4-8 uses half to all of each MMA instead of a quarter to half of an m16 tile
// of heads, and a tile of T positions costs T / 16 x HD / 16 MMAs for QK and twice that (hi and
// lo weights) for PV: half of splitk_tile's. With g = lane / 4 and t = lane % 4 a lane holds:
//   Q as B fragments   qb[kk] = (dims 16kk + 2t.., head g), (dims 16kk + 8 + 2t.., head g)
//   scores             s[mt] = (positions 16mt + g, 16mt + g + 8) x (heads 2t, 2t + 1)
//   output             o[i] = (dims 16i + g, 16i + g + 8) x (heads 2t, 2t + 1)
// and the running max and sum of heads 2t (m_a, l_a) and 2t + 1 (m_b, l_b), kept equal across the
// 8 lanes that share t. A query's bytes depend on W, T and this layout (its own geometry), never
// on its column: MMA columns are as independent as rows.

// Q's B fragments for every head-dim chunk from the staged query rows sq (rows 0-7 used): BF16
// by ldmatrix, or (FP8 arm, f16 rows) the chunk's dims in fp8frag's order, one 8-byte load.
template <typename L, int HD>
__device__ __forceinline__ void load_query_columns(uint32_t (&qb)[HD / 16][2], const __nv_bfloat16* sq,
                                                   int lane) {
  if constexpr (L::kFp8) {
    const int g = lane / 4, t = lane % 4;
#pragma unroll
    for (int kk = 0; kk < HD / 16; ++kk) {
      const uint2 pair = *reinterpret_cast<const uint2*>(sq + g * L::kRow + fp8frag::q_dim<HD>(kk, t));
      qb[kk][0] = pair.x;
      qb[kk][1] = pair.y;
    }
  } else {
#pragma unroll
    for (int kk = 0; kk < HD / 16; kk += 2) {
      uint32_t r[4];
      ldmatrix_x4(r, sq + (lane % 8) * L::kRow + (2 * kk + lane / 8) * 8);
      qb[kk][0] = r[0];
      qb[kk][1] = r[1];
      qb[kk + 1][0] = r[2];
      qb[kk + 1][1] = r[3];
    }
  }
}

// One tile of one warp with positions as the MMA rows: masking, online softmax (the max and sum
// of a head reduced over the 8 lanes that hold its positions, in a fixed order) and PV as in
// splitk_tile, the weights entering the PV MMAs as B fragments (the C layout's halves transposed
// by movmatrix): BF16 hi + lo, or with FP8 KV one f16 (splitk_tile says why). FP8 K and V rows
// become f16 A fragments in registers with fp8frag's orders: K's rows g and g + 8 of a position
// tile are splitk_tile's B fragments of column tiles 2mt and 2mt + 1; V^T's rows g and g + 8 of
// dim tile i are head dims out_dim(2i, g) and out_dim(2i + 1, g).
template <typename Kv, int HD, typename Cfg>
__device__ __forceinline__ void splitk_tile_pos_rows(const unsigned char* stage, int tile_start, int lo,
                                                     int end, float s_mul, const uint32_t (&qb)[HD / 16][2],
                                                     float (&o)[HD / 16][4], float& m_a, float& m_b,
                                                     float& l_a, float& l_b, int lane) {
  using L = SplitLayout<Kv, HD, Cfg>;
  static_assert(HD % 32 == 0 && (!L::kFp8 || HD >= 128), "position rows: head dims of whole fragment pairs");
  constexpr int kM = L::kTile / 16;  // m16 tiles of positions
  const int g = lane / 4, t = lane % 4;
  float s[kM][4];
#pragma unroll
  for (int mt = 0; mt < kM; ++mt) s[mt][0] = s[mt][1] = s[mt][2] = s[mt][3] = 0.0f;
  if constexpr (L::kFp8) {
    // One 16-byte load per K row (position 8j + g) and unit feeds four chunks.
#pragma unroll
    for (int m = 0; m < HD / 64; ++m) {
      uint4 kw[L::kTile / 8];
#pragma unroll
      for (int j = 0; j < L::kTile / 8; ++j) {
        kw[j] = *reinterpret_cast<const uint4*>(stage + L::at(j * 8 + g, fp8frag::k_unit<HD>(m, t)));
      }
#pragma unroll
      for (int c = 0; c < 4; ++c) {
#pragma unroll
        for (int mt = 0; mt < kM; ++mt) {
          uint32_t a[4];
          fp8frag::e4m3x4_to_f16x4((&kw[2 * mt].x)[c], a[0], a[2]);
          fp8frag::e4m3x4_to_f16x4((&kw[2 * mt + 1].x)[c], a[1], a[3]);
          mma_f16(s[mt], a, qb[4 * m + c][0], qb[4 * m + c][1]);
        }
      }
    }
  } else {
#pragma unroll
    for (int kk = 0; kk < HD / 16; ++kk) {
#pragma unroll
      for (int mt = 0; mt < kM; ++mt) {
        uint32_t a[4];
        ldmatrix_x4(a, stage + L::at(mt * 16 + (lane % 8) + 8 * ((lane / 8) % 2), 2 * kk + lane / 16));
        mma_bf16(s[mt], a, qb[kk][0], qb[kk][1]);
      }
    }
  }

  float max_a = -INFINITY, max_b = -INFINITY;
#pragma unroll
  for (int mt = 0; mt < kM; ++mt) {
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int pos = tile_start + mt * 16 + g + 8 * half;
      const bool keep = (!Cfg::kAlignedTiles || pos >= lo) && pos < end;
      s[mt][2 * half] = keep ? __fmul_rn(s[mt][2 * half], s_mul) : -INFINITY;
      s[mt][2 * half + 1] = keep ? __fmul_rn(s[mt][2 * half + 1], s_mul) : -INFINITY;
      max_a = fmaxf(max_a, s[mt][2 * half]);
      max_b = fmaxf(max_b, s[mt][2 * half + 1]);
    }
  }
#pragma unroll
  for (int offset = 4; offset < 32; offset *= 2) {
    max_a = fmaxf(max_a, __shfl_xor_sync(0xffffffffu, max_a, offset));
    max_b = fmaxf(max_b, __shfl_xor_sync(0xffffffffu, max_b, offset));
  }
  const float new_a = fmaxf(m_a, max_a), new_b = fmaxf(m_b, max_b);
  const float alpha_a = exp2f(m_a - new_a), alpha_b = exp2f(m_b - new_b);
  m_a = new_a;
  m_b = new_b;

  // Weights as B fragments of the PV product: BF16 hi = round(p) and lo = round(p - hi), or one f16.
  float sum_a = 0.0f, sum_b = 0.0f;
  uint32_t p_hi[kM][2], p_lo[kM][2];
#pragma unroll
  for (int mt = 0; mt < kM; ++mt) {
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const float pa = exp2f(s[mt][2 * half] - m_a), pb = exp2f(s[mt][2 * half + 1] - m_b);
      sum_a = __fadd_rn(sum_a, pa);
      sum_b = __fadd_rn(sum_b, pb);
      if constexpr (L::kFp8) {
        p_hi[mt][half] = movmatrix_trans(fp8frag::pack_f16x2(pa, pb));
      } else {
        const uint32_t hi = pack_bf16x2(pa, pb);
        p_hi[mt][half] = movmatrix_trans(hi);
        p_lo[mt][half] = movmatrix_trans(pack_bf16x2(__fsub_rn(pa, bf16_lo(hi)), __fsub_rn(pb, bf16_hi(hi))));
      }
    }
  }
#pragma unroll
  for (int offset = 4; offset < 32; offset *= 2) {
    sum_a = __fadd_rn(sum_a, __shfl_xor_sync(0xffffffffu, sum_a, offset));
    sum_b = __fadd_rn(sum_b, __shfl_xor_sync(0xffffffffu, sum_b, offset));
  }
  l_a = __fmaf_rn(l_a, alpha_a, sum_a);
  l_b = __fmaf_rn(l_b, alpha_b, sum_b);
#pragma unroll
  for (int i = 0; i < HD / 16; ++i) {
    o[i][0] = __fmul_rn(o[i][0], alpha_a);
    o[i][1] = __fmul_rn(o[i][1], alpha_b);
    o[i][2] = __fmul_rn(o[i][2], alpha_a);
    o[i][3] = __fmul_rn(o[i][3], alpha_b);
  }

  // O^T += V^T P^T: V^T's A fragments are V's rows read transposed.
  const unsigned char* vt = stage + L::kRawTile;
  if constexpr (L::kFp8) {
    // Rows 2t, 2t+1, 2t+8, 2t+9 of position chunk kk, this thread's 16-byte unit(s) g (+ 8) of them.
    constexpr int kUnits = HD / 128;
#pragma unroll
    for (int kk = 0; kk < kM; ++kk) {
#pragma unroll
      for (int u = 0; u < kUnits; ++u) {
        uint4 w[4];
#pragma unroll
        for (int r = 0; r < 4; ++r) {
          w[r] = *reinterpret_cast<const uint4*>(vt +
                                                 L::at(kk * 16 + 2 * t + (r & 1) + 8 * (r >> 1), g + 8 * u));
        }
#pragma unroll
        for (int q = 0; q < 4; ++q) {
          uint32_t dims[4];
          fp8frag::transpose4x4({(&w[0].x)[q], (&w[1].x)[q], (&w[2].x)[q], (&w[3].x)[q]}, dims);
#pragma unroll
          for (int half = 0; half < 2; ++half) {
            uint32_t a[4];
            fp8frag::e4m3x4_to_f16x4(dims[2 * half], a[0], a[2]);
            fp8frag::e4m3x4_to_f16x4(dims[2 * half + 1], a[1], a[3]);
            mma_f16(o[8 * u + 2 * q + half], a, p_hi[kk][0], p_hi[kk][1]);
          }
        }
      }
    }
  } else {
#pragma unroll
    for (int i = 0; i < HD / 16; ++i) {
#pragma unroll
      for (int mt = 0; mt < kM; ++mt) {
        uint32_t a[4];
        ldmatrix_x4_trans(a, vt + L::at(mt * 16 + (lane % 8) + 8 * (lane / 16), 2 * i + (lane / 8) % 2));
        mma_bf16(o[i], a, p_hi[mt][0], p_hi[mt][1]);
        mma_bf16(o[i], a, p_lo[mt][0], p_lo[mt][1]);
      }
    }
  }
}

}  // namespace lathe::cuda::attn::splitk
