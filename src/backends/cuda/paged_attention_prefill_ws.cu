// Paged prefill attention at head dim 128 on sm_90a warpgroup MMAs, warp-specialised: every row
// gets the bytes of the mma.sync kernel (paged_attention_prefill.cu; the arithmetic and its
// invariances: paged_attention_prefill_common.cuh).
//
// One CTA per (128-query tile, q head, sequence), three warpgroups:
//   - a producer fills a ring of kStages (K, V) tile slots (64 positions each, 16-bit, 128-byte
//     swizzled: wgmma.cuh) from the paged pool and announces each on the slot's `full` barrier;
//     it refills a slot once both consumers have released it on its `empty` barrier. BF16 KV: one
//     warp (block ids staged in its lanes, lane 0 issuing) requests tensor copies (TMA): where the
//     block size is a multiple of 64, one copy of the whole tile each for K and V; else boxes of 16
//     positions and one 128-byte piece of the rows, 16 copies a tile. (The copies' count, not their
//     bytes, bounded the 16-position form: session 36 measured 1.1-1.4x the speed with whole
//     tiles.) A tile that runs past the context (the last, if the length is not a multiple of 64) is
//     copied by cp.async instead, zero-filling the positions past the end (the copy engine would
//     bring whatever the pool holds there, and a stale NaN times P = 0 is NaN). FP8 KV: the codes
//     arrive by tensor copies in a second ring, up to kStages tiles ahead, and the producer's
//     threads widen them into f16 slots (exact; FP8 KV multiplies in f16:
//     paged_attention_prefill_common.cuh), writing zeros for the positions past the context.
//   - two consumers of 64 query rows each (warp w of a consumer holds rows 16w .. 16w + 15 of the
//     consumer's 64 in the mma.sync accumulator layout). Per KV tile t:
//       S(t + 1) = Q . K(t + 1)^T   8 wgmma m64n64k16, A (Q) from registers, B from shared memory;
//       O += P(t) . V(t)            4 wgmma m64n128k16, P from registers, V MN-major;
//       the softmax scores of S(t + 1) while P(t) . V(t) runs; then O *= alpha(t + 1).
//     The sequence of operations on each row is the mma.sync kernel's (o scaled by alpha, then
//     P . V added). A consumer stops at the last tile that reaches one of its rows (later tiles would
//     leave its rows bit-unchanged) and releases the remaining slots as they fill, so that the
//     producer never waits on it.
// Session 35 measured the kernel without its producer (consumers reading a stale ring) at ~650
// TFLOP/s at 1 x 16384: what feeds the consumers decided the speed; session 36's whole-tile copies
// and Q in registers (fewer shared-memory reads) took it from 428 to 622 at 64-token blocks.
#include <cuda.h>
#include <cuda_bf16.h>

#include "backends/cuda/bulk_copy.cuh"
#include "backends/cuda/paged_attention_prefill_common.cuh"
#include "backends/cuda/paged_kv_map.h"
#include "backends/cuda/wgmma.cuh"

namespace lathe::cuda::prefill {
namespace {

using namespace attn;

constexpr int kHd = 128;
constexpr int kConsumers = kTileQ / 64;           // consumer warpgroups, 64 query rows each
constexpr int kThreads = (1 + kConsumers) * 128;  // the producer is warpgroup 0
constexpr int kStages = 4;                        // (K, V) tile slots in the ring
constexpr int kConsumerWarps = kConsumers * 4;    // arrivals that release a slot
// Registers a thread after the start (setmaxnreg; the launch gives every thread 168): the consumers
// take only what the producer gave back to the CTA's pool, 128 x (168 - 64) >= 256 x (216 - 168)
// (a claim the pool cannot meet waits forever: session 36's first try, 224, hung); they keep Q's A
// fragments in registers.
constexpr int kLaunchRegs = 168;
constexpr int kProducerRegs = 64;
constexpr int kConsumerRegs = 216;
static_assert(128 * (kLaunchRegs - kProducerRegs) >= 128 * kConsumers * (kConsumerRegs - kLaunchRegs),
              "the consumers' registers must come from the producer's");
constexpr int kSmallBoxRows = 16;  // positions per tensor copy, where not kTileKv

// Positions per tensor copy (a box never spans two blocks): the whole tile where the block size
// allows, else kSmallBoxRows.
constexpr int box_rows_for(int block_size) {
  return block_size % kTileKv == 0 ? kTileKv : kSmallBoxRows;
}

// 128-byte pieces of a row per tensor copy: all of them (2 for BF16 slots, 1 for FP8 codes) in a
// whole-tile box, which lands as the slot's [piece][64 rows][128 bytes]; one in a small box.
template <int kBoxRows>
constexpr int box_pieces(int row_pieces) {
  return kBoxRows == kTileKv ? row_pieces : 1;
}

struct WsParams {
  Params base;
  CUtensorMap k_map, v_map;  // paged_kv_map.h: boxes of box_rows_for(block_size) rows
};

// Shared memory: Q (kTileQ rows as staged on the way to registers), then (1024-byte aligned, for
// the swizzle) the ring of kStages x (K, V), then the barriers. Q: the 16 bytes of row r, dims
// 8u .. 8u + 7 at q_offset(r, u) (8 x 16-byte matrices, as ldmatrix reads them). K and V tiles: two
// pieces of 64 rows x 128 bytes (dims 0-63, 64-127), 128-byte swizzled: kv_offset_sw(r, u).
constexpr uint32_t kPieceBytes = kTileKv * 128;      // one 128-byte piece of a K or V tile
constexpr uint32_t kKvTileBytes = 2 * kPieceBytes;   // one of K or V
constexpr size_t kQBytes = size_t{kTileQ} * kHd * 2;
constexpr size_t kRingBytes = size_t{kStages} * 2 * kKvTileBytes;
constexpr uint32_t kRawTileBytes = kTileKv * kHd;  // FP8: one of K or V as copied (64 rows x 128 codes)
constexpr size_t kRawRingBytes = size_t{kStages} * 2 * kRawTileBytes;
// FP8 KV adds the raw ring and its barriers: 225 KB in all, under the 227 KB an sm_90 CTA may have.
template <typename Kv>
constexpr size_t smem_bytes() {
  constexpr bool kFp8 = Kv::kDType == KvDType::kFP8E4M3;
  return kQBytes + 1024 + kRingBytes + (kFp8 ? kRawRingBytes : 0) +
         (kFp8 ? 3 : 2) * kStages * sizeof(uint64_t);
}

__device__ __forceinline__ int q_offset(int r, int u) {
  return ((r / 8) * (kHd / 8) + u) * 128 + (r % 8) * 16;
}

__device__ __forceinline__ int kv_offset_sw(int r, int u) {
  return (u / 8) * static_cast<int>(kPieceBytes) + r * 128 + (((u % 8) ^ (r % 8)) << 4);
}

// Synchronises the 128 threads of one warpgroup on hardware barrier `id` (1, 2, 3; 0 is
// __syncthreads').
__device__ __forceinline__ void warpgroup_sync(int id) {
  asm volatile("bar.sync %0, 128;" ::"r"(id) : "memory");
}

template <typename Kv>
constexpr uint32_t full_arrivals() {
  return Kv::kDType == KvDType::kBF16 ? 1 : 128;  // the thread that announces the copies / every thread
}

#if defined(LATHE_WGMMA_COMPILED)  // the sm_90a device pass and the host pass (wgmma.cuh)

// ---- producer ---------------------------------------------------------------------------------

// BF16, every producer thread: cp.async copies of a tile that runs past ctx, positions at or past
// ctx zero-filled. Thread i copies 16-byte units (i + 128 j) % 16 of rows (i + 128 j) / 16: a warp
// reads two whole rows and writes whole 128-byte lines.
__device__ __forceinline__ void copy_bf16_tile_async(const Params& p, const CtaTile& c, int tile, int ptid,
                                                     unsigned char* dk, unsigned char* dv) {
  constexpr int kCopies = kTileKv * kHd / 8 / 128;  // per thread, per K or V
  int64_t src[kCopies];
  int dst[kCopies];
  bool valid[kCopies];
#pragma unroll
  for (int i = 0; i < kCopies; ++i) {  // every table load before the first copy (an asm statement)
    const int index = ptid + i * 128, r = index / 16, u = index % 16;
    const int pos = tile * kTileKv + r;
    valid[i] = pos < c.ctx;
    src[i] = valid[i] ? c.kv_byte_offset<Bf16Kv, kHd>(p, pos, u * 8) : 0;
    dst[i] = kv_offset_sw(r, u);
  }
#pragma unroll
  for (int i = 0; i < kCopies; ++i) {
    cp_async16(dk + dst[i], static_cast<const unsigned char*>(p.k) + src[i], valid[i]);
    cp_async16(dv + dst[i], static_cast<const unsigned char*>(p.v) + src[i], valid[i]);
  }
}

// Warp-wide window on the block ids of the tile boxes (kBoxRows positions each): lane l holds the
// id of box 32 w + l of the current batch w and, loaded one batch ahead, of the next, so issuing a copy
// never waits for a block-table load (the producer's issue loop is serial: a table load a tile,
// at L2 latency, would bound it). Positions past the context get -1 (a box outside the map: zeros).
template <int kBoxRows>
class BoxIds {
 public:
  __device__ BoxIds(const Params& p, const CtaTile& c, int lane) : p_(p), c_(c), lane_(lane) {
    cur_ = load(0);
    next_ = load(1);
  }
  // The id of box `box`; every lane of the warp calls, with boxes in non-decreasing order.
  __device__ int get(int box) {
    while (box / 32 > batch_) {
      ++batch_;
      cur_ = next_;
      next_ = load(batch_ + 1);
    }
    return __shfl_sync(0xffffffffu, cur_, box % 32);
  }

 private:
  __device__ int load(int batch) const {
    const int pos = (batch * 32 + lane_) * kBoxRows;
    return pos < c_.ctx ? __ldg(c_.table + pos / p_.block_size) : -1;
  }
  const Params& p_;
  const CtaTile& c_;
  int lane_, batch_ = 0, cur_, next_;
};

// One warp: the tensor copies of tile `tile` (kBoxRows positions of one block a box, kPieces
// 128-byte pieces a row) into (dk, dv), issued by lane 0, completing on `bar`, which lane 0 arms
// with the tile's bytes. piece_bytes: between the pieces of a row in the slot. Positions past the
// context within a box arrive as whatever the pool holds: the caller must not let them into an MMA
// unmasked.
template <int kBoxRows, int kPieces>
__device__ __forceinline__ void copy_tile_tma(const WsParams& wp, const CtaTile& c, BoxIds<kBoxRows>& ids,
                                              int lane, int tile, uint32_t piece_bytes, unsigned char* dk,
                                              unsigned char* dv, uint64_t* bar, uint64_t policy) {
  constexpr int kBoxes = kTileKv / kBoxRows;
  constexpr int kCopiesPerBox = kPieces / box_pieces<kBoxRows>(kPieces);  // 1 in a whole-tile box
  const Params& p = wp.base;
  int32_t blocks[kBoxes];
#pragma unroll
  for (int box = 0; box < kBoxes; ++box) blocks[box] = ids.get(tile * kBoxes + box);
  if (lane != 0) return;
  bulk::mbar_expect_tx(bar, 2 * kPieces * kTileKv * 128);
#pragma unroll
  for (int box = 0; box < kBoxes; ++box) {
    const int pos = tile * kTileKv + box * kBoxRows;
    const int32_t block = blocks[box];
    const int slot = pos % p.block_size;
#pragma unroll
    for (int piece = 0; piece < kCopiesPerBox; ++piece) {
      const uint32_t dst = piece * piece_bytes + box * kBoxRows * 128;
      bulk::tensor_copy_5d(dk + dst, &wp.k_map, 0, slot, piece, c.kv_head, block, bar, policy);
      bulk::tensor_copy_5d(dv + dst, &wp.v_map, 0, slot, piece, c.kv_head, block, bar, policy);
    }
  }
}

// FP8: widens a copied tile (64 rows of 128 codes, 128-byte swizzled) into an f16 slot, zeros for
// positions at or past ctx. Thread ptid takes the 16-code chunk (ptid / 8) % 8 of rows (ptid % 8) +
// 8 (ptid / 64 + 2 i): eight neighbouring rows per 8 lanes, so with the swizzle every read and
// write of a warp hits distinct banks.
__device__ __forceinline__ void widen_fp8_tile(const unsigned char* raw, unsigned char* dst, int valid_rows,
                                               int ptid) {
#pragma unroll
  for (int i = 0; i < kTileKv * kHd / 16 / 128; ++i) {
    const int index = ptid + i * 128;
    const int r = (index & 7) + 8 * (index >> 6), chunk = (index >> 3) & 7;
    uint4 codes = *reinterpret_cast<const uint4*>(raw + r * 128 + ((chunk ^ (r % 8)) << 4));
    if (r >= valid_rows) codes = make_uint4(0, 0, 0, 0);
    *reinterpret_cast<uint4*>(dst + kv_offset_sw(r, 2 * chunk)) = widen_codes_f16(codes.x, codes.y);
    *reinterpret_cast<uint4*>(dst + kv_offset_sw(r, 2 * chunk + 1)) = widen_codes_f16(codes.z, codes.w);
  }
}

template <typename Kv, int kBoxRows>
__device__ __forceinline__ void produce(const WsParams& wp, const CtaTile& c, int ptid, unsigned char* ring,
                                        uint64_t* full, uint64_t* empty, unsigned char* raw_ring,
                                        uint64_t* raw_full) {
  const Params& p = wp.base;
  const auto slot_k = [&](int tile) { return ring + (2 * (tile % kStages)) * kKvTileBytes; };
  const auto slot_v = [&](int tile) { return ring + (2 * (tile % kStages) + 1) * kKvTileBytes; };
  // Before refilling a slot: both consumers have released its previous tile.
  const auto wait_empty = [&](int tile) {
    if (tile >= kStages) bulk::mbar_wait(&empty[tile % kStages], ((tile / kStages) - 1) & 1);
  };
  const int n = c.num_kv_tiles;
  const int pwarp = ptid / 32, lane = ptid % 32;
  const uint64_t policy = bulk::l2_evict_normal_policy();  // the other q heads' CTAs read the tiles too
  if constexpr (Kv::kDType == KvDType::kBF16) {
    // Warp 0 copies the whole tiles; a last tile that runs past the context takes all four warps,
    // released by warp 0 once its slot is free. (Only warp 0 waits on the slots, in tile order: a
    // parity wait tells a phase from the one two later by nothing, so a waiter must never run more
    // than a phase ahead.)
    const bool partial = n * kTileKv > c.ctx;
    if (pwarp == 0) {
      BoxIds<kBoxRows> ids(p, c, lane);
      for (int tile = 0; tile < n - (partial ? 1 : 0); ++tile) {
        wait_empty(tile);
        copy_tile_tma<kBoxRows, 2>(wp, c, ids, lane, tile, kPieceBytes, slot_k(tile), slot_v(tile),
                                   &full[tile % kStages], policy);
      }
      if (partial) wait_empty(n - 1);
    }
    if (partial) {
      warpgroup_sync(3);  // the slot is free
      copy_bf16_tile_async(p, c, n - 1, ptid, slot_k(n - 1), slot_v(n - 1));
      cp_async_commit();
      cp_async_wait<0>();
      fence_shared_for_wgmma();  // this thread's copies, before the consumers' wgmma reads
      warpgroup_sync(3);
      if (ptid == 0) bulk::mbar_arrive(&full[(n - 1) % kStages]);
    }
  } else {
    // The copies run up to kStages tiles ahead in the raw ring; a raw slot is refilled once every
    // producer thread has widened the tile it held.
    const auto raw_k = [&](int tile) { return raw_ring + (2 * (tile % kStages)) * kRawTileBytes; };
    const auto raw_v = [&](int tile) { return raw_ring + (2 * (tile % kStages) + 1) * kRawTileBytes; };
    BoxIds<kBoxRows> ids(p, c, lane);  // used by warp 0 only
    const auto fetch = [&](int tile) {
      if (pwarp == 0 && tile < n) {
        copy_tile_tma<kBoxRows, 1>(wp, c, ids, lane, tile, 0, raw_k(tile), raw_v(tile),
                                   &raw_full[tile % kStages], policy);
      }
    };
    for (int tile = 0; tile < kStages; ++tile) fetch(tile);
    for (int tile = 0; tile < n; ++tile) {
      bulk::mbar_wait(&raw_full[tile % kStages], (tile / kStages) & 1);
      wait_empty(tile);
      const int valid_rows = c.ctx - tile * kTileKv;
      widen_fp8_tile(raw_k(tile), slot_k(tile), valid_rows, ptid);
      widen_fp8_tile(raw_v(tile), slot_v(tile), valid_rows, ptid);
      fence_shared_for_wgmma();  // this thread's writes to the slot, before the consumers' wgmma reads
      bulk::mbar_arrive(&full[tile % kStages]);
      warpgroup_sync(3);  // every thread is done with the raw slot
      fetch(tile + kStages);
    }
  }
}

// ---- consumers --------------------------------------------------------------------------------

// Stages this consumer's 64 rows of Q as the operand type (rows past the chunk are zero and never
// stored): 8 neighbouring rows per 8 lanes, so each warp's stores fill whole core matrices.
template <typename Kv>
__device__ __forceinline__ void stage_q(const Params& p, const CtaTile& c, int row0, int ctid,
                                        unsigned char* sq) {
  constexpr int kUnits = 64 * kHd / 8;
#pragma unroll
  for (int i = 0; i < kUnits / 128; ++i) {
    const int index = ctid + i * 128;
    const int r = (index & 7) + 8 * (index >> 7), u = (index >> 3) & 15;
    const int row = c.tile_row0 + row0 + r;
    uint4 value = make_uint4(0, 0, 0, 0);
    if (row < c.qlen) {
      value = __ldg(reinterpret_cast<const uint4*>(p.q + static_cast<int64_t>(c.q_begin + row) * p.q_stride +
                                                   static_cast<int64_t>(c.head) * kHd + u * 8));
    }
    *reinterpret_cast<uint4*>(sq + q_offset(r, u)) = query_operands<Kv>(value);
  }
}

__device__ __forceinline__ void zero_scores(float (&s)[kScoreCols][4]) {
#pragma unroll
  for (int j = 0; j < kScoreCols; ++j) s[j][0] = s[j][1] = s[j][2] = s[j][3] = 0.0f;
}

template <typename Kv>
__device__ __forceinline__ void consume(const Params& p, const CtaTile& c, int consumer, int ctid,
                                        unsigned char* sq, const unsigned char* ring, uint64_t* full,
                                        uint64_t* empty) {
  const int warp = ctid / 32, lane = ctid % 32, g = lane / 4, t = lane % 4;
  const int row0 = consumer * 64;  // first of the consumer's rows in the CTA's tile
  stage_q<Kv>(p, c, row0, ctid, sq);
  warpgroup_sync(1 + consumer);  // every warp reads rows other warps staged

  const auto slot_k = [&](int tile) { return ring + (2 * (tile % kStages)) * kKvTileBytes; };
  const auto slot_v = [&](int tile) { return ring + (2 * (tile % kStages) + 1) * kKvTileBytes; };
  const auto wait_full = [&](int tile) { bulk::mbar_wait(&full[tile % kStages], (tile / kStages) & 1); };
  const auto release = [&](int tile) {
    __syncwarp();
    if (lane == 0) bulk::mbar_arrive(&empty[tile % kStages]);
  };
  // Q stays in registers as the A fragments of the score products (this warp's 16 rows, head
  // dims 16kk .. 16kk + 15 in qa[kk]): shared memory then serves only K and V, whose bandwidth
  // bounds the loop (session 36: Q read from shared memory per tile was a quarter of its traffic).
  uint32_t qa[kHd / 16][4];
#pragma unroll
  for (int kk = 0; kk < kHd / 16; ++kk) {
    ldmatrix_x4(qa[kk], sq + q_offset(16 * warp + lane % 8 + 8 * ((lane / 8) % 2), 2 * kk + lane / 16));
  }
  // S = Q . K^T: 8 k16 steps along the head dim, four per 128-byte piece of K (32 bytes apart).
  const auto issue_scores = [&](float(&s)[kScoreCols][4], uint64_t k_desc) {
#pragma unroll
    for (int kk = 0; kk < kHd / 16; ++kk) {
      wgmma_m64n64k16_rs<kF16Operands<Kv>>(s, qa[kk],
                                           k_desc + (((kk / 4) * kPieceBytes + (kk % 4) * 32) >> 4));
    }
    wgmma_commit();
  };

  const int warp_first_pos = c.first_pos + c.tile_row0 + row0 + warp * 16;
  const int pos_a = warp_first_pos + g, pos_b = pos_a + 8;
  const int my_tiles = min(c.num_kv_tiles, (c.first_pos + c.tile_row0 + row0 + 63) / kTileKv + 1);
  const float s_mul = p.scale * kLog2e * (Kv::kDType == KvDType::kFP8E4M3 ? p.k_scale : 1.0f);
  // The scores' half of a softmax step on tile `tile`'s S (masked where the tile crosses one of
  // the warp's rows), leaving P in s.
  const auto scores = [&](float(&s)[kScoreCols][4], int tile, RowState& st, float& alpha_a, float& alpha_b) {
    const int kv0 = tile * kTileKv;
    if (kv0 + kTileKv - 1 > warp_first_pos) mask_tile(s, kv0, t, pos_a, pos_b);
    softmax_scores(s, s_mul, st, alpha_a, alpha_b);
  };

  float o[kHd / 8][4];
#pragma unroll
  for (int j = 0; j < kHd / 8; ++j) o[j][0] = o[j][1] = o[j][2] = o[j][3] = 0.0f;
  RowState st;
  float s[kScoreCols][4];
  uint32_t pa[kTileKv / 16][4];
  float alpha_a, alpha_b;

  // K-major swizzled (the leading offset unused), and V MN-major swizzled: its two 64-dim pieces
  // are the atoms along n, each k16 step 16 rows (2048 bytes) further.
  const auto k_desc = [&](int tile) { return wgmma_desc_sw128(slot_k(tile), 16, 1024); };
  const auto v_desc = [&](int tile) { return wgmma_desc_sw128(slot_v(tile), kPieceBytes, 1024); };
  wait_full(0);
  zero_scores(s);
  const uint64_t k0 = k_desc(0);
  wgmma_fence();
  issue_scores(s, k0);
  wgmma_wait<0>();
  scores(s, 0, st, alpha_a, alpha_b);
  pack_p<Kv>(s, pa);
  rescale(o, alpha_a, alpha_b);

  // P(tile) . V(tile) into o; the caller commits.
  const auto issue_pv = [&](uint64_t v) {
#pragma unroll
    for (int kk = 0; kk < kTileKv / 16; ++kk)
      wgmma_m64n128k16_rs<1, kF16Operands<Kv>>(o, pa[kk], v + ((kk * 16 * 128) >> 4));
  };
  // Every tile but the last: S(tile + 1) is issued before P(tile) . V(tile), and its softmax scores
  // are computed while the product runs. (No wgmma sits in a branch: ptxas would serialise them.)
  for (int tile = 0; tile + 1 < my_tiles; ++tile) {
    wait_full(tile + 1);
    zero_scores(s);
    const uint64_t kd = k_desc(tile + 1), vd = v_desc(tile);
    wgmma_fence();  // o (rescaled) and s (zeroed) were written by this thread
    issue_scores(s, kd);
    issue_pv(vd);
    wgmma_commit();
    wgmma_wait<1>();  // S(tile + 1) is done; P(tile) . V(tile) may still run
    scores(s, tile + 1, st, alpha_a, alpha_b);
    wgmma_wait<0>();
    release(tile);
    // P(tile + 1) replaces P(tile) only now: writing the A operand of a running wgmma (or registers
    // ptxas may share with it) would make ptxas serialise the MMAs.
    pack_p<Kv>(s, pa);
    rescale(o, alpha_a, alpha_b);
  }
  const uint64_t v_last = v_desc(my_tiles - 1);
  wgmma_fence();
  issue_pv(v_last);
  wgmma_commit();
  wgmma_wait<0>();
  release(my_tiles - 1);
  // Tiles past every row of this consumer: released as they fill (the other consumer needs them).
  for (int tile = my_tiles; tile < c.num_kv_tiles; ++tile) {
    wait_full(tile);
    release(tile);
  }
  store_rows<kHd>(p, c, o, st, Kv::kDType == KvDType::kFP8E4M3 ? p.v_scale : 1.0f,
                  c.tile_row0 + row0 + warp * 16 + g, t);
}

#endif  // LATHE_WGMMA_COMPILED

template <typename Kv, int kBoxRows>
__global__ void __launch_bounds__(kThreads, 1) paged_prefill_ws_kernel(const __grid_constant__ WsParams wp) {
#if defined(__CUDA_ARCH__) && !defined(LATHE_WGMMA_COMPILED)
  __trap();  // unreachable: launch_paged_prefill runs this kernel only where device_has_wgmma()
#else
  extern __shared__ __align__(128) unsigned char smem_raw[];
  unsigned char* sq = smem_raw;
  // The swizzle pattern repeats every 1024 bytes from a 1024-byte aligned address.
  const uint32_t ring_addr = (bulk::smem_u32(smem_raw + kQBytes) + 1023) & ~1023u;
  unsigned char* ring = smem_raw + kQBytes + (ring_addr - bulk::smem_u32(smem_raw + kQBytes));
  constexpr bool kFp8 = Kv::kDType == KvDType::kFP8E4M3;
  unsigned char* raw_ring = ring + kRingBytes;  // FP8 only
  uint64_t* full = reinterpret_cast<uint64_t*>(raw_ring + (kFp8 ? kRawRingBytes : 0));
  uint64_t* empty = full + kStages;
  uint64_t* raw_full = empty + kStages;  // FP8 only

  const CtaTile c(wp.base);
  if (c.empty) return;
  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      bulk::mbar_init(&full[s], full_arrivals<Kv>());
      bulk::mbar_init(&empty[s], kConsumerWarps);
      if (kFp8) bulk::mbar_init(&raw_full[s], 1);
    }
    bulk::mbar_init_fence();
  }
  __syncthreads();
  const int wg = threadIdx.x / 128;
  if (wg == 0) {
    warpgroup_release_registers<kProducerRegs>();
    produce<Kv, kBoxRows>(wp, c, threadIdx.x, ring, full, empty, raw_ring, raw_full);
  } else {
    warpgroup_claim_registers<kConsumerRegs>();
    consume<Kv>(wp.base, c, wg - 1, threadIdx.x % 128, sq + (wg - 1) * (kQBytes / kConsumers), ring, full,
                empty);
  }
#endif
}

template <typename Kv, int kBoxRows>
cudaError_t launch(const WsParams& wp, int32_t num_seqs, int32_t max_query_len, cudaStream_t stream) {
  // The shared-memory opt-in is a per-function attribute: set once per process (single device),
  // on the first launch, which callers make outside graph capture.
  constexpr size_t smem = smem_bytes<Kv>();
  static const cudaError_t opt_in =
      cudaFuncSetAttribute(paged_prefill_ws_kernel<Kv, kBoxRows>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                           static_cast<int>(smem));
  if (opt_in != cudaSuccess) return opt_in;
  const int32_t q_tiles = (max_query_len + kTileQ - 1) / kTileQ;
  if (q_tiles > 65535) return cudaErrorInvalidValue;  // grid.y limit: 8.4M rows in one chunk
  const dim3 grid(wp.base.num_heads, q_tiles, num_seqs);
  paged_prefill_ws_kernel<Kv, kBoxRows><<<grid, kThreads, smem, stream>>>(wp);
  return cudaGetLastError();
}

// Whether the launch gives kernel's threads kLaunchRegs registers, as the setmaxnreg arithmetic
// assumes (ptxas allocates the launch bound to a kernel that reallocates, in steps of 8; with fewer,
// the consumers' claim would wait forever).
template <typename Kv, int kBoxRows>
bool launch_registers_as_assumed() {
  cudaFuncAttributes attributes{};
  return cudaFuncGetAttributes(&attributes, paged_prefill_ws_kernel<Kv, kBoxRows>) == cudaSuccess &&
         (attributes.numRegs + 7) / 8 * 8 == kLaunchRegs;
}

}  // namespace

bool ws_kernels_usable() {
  static const bool usable = launch_registers_as_assumed<Bf16Kv, kTileKv>() &&
                             launch_registers_as_assumed<Bf16Kv, kSmallBoxRows>() &&
                             launch_registers_as_assumed<Fp8Kv, kTileKv>() &&
                             launch_registers_as_assumed<Fp8Kv, kSmallBoxRows>();
  return usable;
}

bool ws_supports(const PagedKv& kv) {
  // KV is copied in boxes of 16 positions or more within a block, through maps that need the
  // pool's size.
  return kv.head_dim == kHd && kv.block_size % kSmallBoxRows == 0 && kv.num_blocks > 0;
}

cudaError_t launch_ws(const Params& p, const PagedKv& kv, int32_t num_seqs, int32_t max_query_len,
                      cudaStream_t stream) {
  WsParams wp{};
  wp.base = p;
  const bool bf16 = kv.dtype == KvDType::kBF16;
  const int rows = box_rows_for(kv.block_size);
  const int pieces = rows == kTileKv ? box_pieces<kTileKv>(bf16 ? 2 : 1) : box_pieces<kSmallBoxRows>(1);
  const int promotion = prefill_kv_l2_promotion();  // 256 bytes unless a benchmark sets another
  if (!encode_paged_kv_map(kv.k, kv, rows, pieces, wp.k_map, promotion) ||
      !encode_paged_kv_map(kv.v, kv, rows, pieces, wp.v_map, promotion)) {
    return cudaErrorNotSupported;
  }
  if (rows == kTileKv) {
    return bf16 ? launch<Bf16Kv, kTileKv>(wp, num_seqs, max_query_len, stream)
                : launch<Fp8Kv, kTileKv>(wp, num_seqs, max_query_len, stream);
  }
  return bf16 ? launch<Bf16Kv, kSmallBoxRows>(wp, num_seqs, max_query_len, stream)
              : launch<Fp8Kv, kSmallBoxRows>(wp, num_seqs, max_query_len, stream);
}

}  // namespace lathe::cuda::prefill
