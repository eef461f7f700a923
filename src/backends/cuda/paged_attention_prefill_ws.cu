// Paged prefill attention at head dim 128 on sm_90a warpgroup MMAs, warp-specialised: every row
// gets the bytes of the mma.sync kernel (paged_attention_prefill.cu; the arithmetic and its
// invariances: paged_attention_prefill_common.cuh).
//
// One CTA per (128-query tile, q head, sequence), three warpgroups:
//   - a producer: fills a ring of kStages (K, V) tile slots (64 positions each, BF16, the
//     no-swizzle core-matrix layout of wgmma.cuh) from the paged pool: BF16 by cp.async, FP8 codes
//     loaded into registers and widened on the way (exact). It announces a filled slot on the slot's
//     `full` barrier and refills it once both consumers have released it on its `empty` barrier.
//   - two consumers of 64 query rows each (warp w of a consumer holds rows 16w .. 16w + 15 of the
//     consumer's 64 in the mma.sync accumulator layout). Per KV tile t:
//       S(t + 1) = Q . K(t + 1)^T   8 wgmma m64n64k16, A and B from shared memory, issued first;
//       O += P(t) . V(t)            4 wgmma m64n128k16, P from registers, V MN-major;
//       softmax scores of S(t + 1) while the P . V products run; then O *= alpha(t + 1).
//     So the tensor cores work on one tile while the special-function and FP32 units work on the
//     next, within a warpgroup; the two consumers and the producer overlap the rest. The sequence
//     of operations on each row is the mma.sync kernel's (o scaled by alpha, then P . V added).
// A consumer stops at the last tile that reaches one of its rows (later tiles would leave its rows
// bit-unchanged), releasing the remaining slots as they fill so that the producer never waits on it.
#include <cuda_bf16.h>

#include "backends/cuda/bulk_copy.cuh"
#include "backends/cuda/paged_attention_prefill_common.cuh"
#include "backends/cuda/wgmma.cuh"

#ifndef LATHE_WS_DIAG
#define LATHE_WS_DIAG 0
#endif

namespace lathe::cuda::prefill {
namespace {

using namespace attn;

constexpr int kHd = 128;
constexpr int kConsumers = kTileQ / 64;          // consumer warpgroups, 64 query rows each
constexpr int kThreads = (1 + kConsumers) * 128;  // the producer is warpgroup 0
constexpr int kStages = 4;                        // (K, V) tile slots in the ring
constexpr int kConsumerWarps = kConsumers * 4;    // arrivals that release a slot

// Shared memory: Q (kTileQ rows), the ring (kStages x (K, V)), then the barriers. Every tile is in
// the core-matrix layout: the 16 bytes of row r, dims 8u .. 8u + 7 at blocked_offset(r, u), which
// is K-major for Q (A) and K (B) and MN-major for V (B, transposed).
constexpr uint32_t kDimGroupBytes = 128;                     // between core matrices along the dims
constexpr uint32_t kRowGroupBytes = kHd / 8 * 128;           // between 8-row groups
constexpr size_t kKvTileBytes = size_t{kTileKv} * kHd * 2;   // one of K or V
constexpr size_t kQBytes = size_t{kTileQ} * kHd * 2;
constexpr size_t kRingBytes = kStages * 2 * kKvTileBytes;
constexpr size_t kSmemBytes = kQBytes + kRingBytes + 2 * kStages * sizeof(uint64_t);

__device__ __forceinline__ int blocked_offset(int r, int u) {
  return ((r / 8) * (kHd / 8) + u) * 128 + (r % 8) * 16;
}

// Synchronises the 128 threads of one warpgroup on hardware barrier `id` (1, 2, ...; 0 is
// __syncthreads').
__device__ __forceinline__ void warpgroup_sync(int id) {
  asm volatile("bar.sync %0, 128;" ::"r"(id) : "memory");
}

#if defined(LATHE_WGMMA_COMPILED)  // the sm_90a device pass and the host pass (wgmma.cuh)

// ---- producer ---------------------------------------------------------------------------------

// BF16: the i-th of this thread's 16-byte copies of a K (or V) tile as (position, unit): 16 threads
// cover two neighbouring units of 8 positions, so a warp writes 512 contiguous bytes of the layout
// and reads whole 32-byte sectors of each position's row.
__device__ __forceinline__ void bf16_unit(int index, int& r, int& u) {
  const int rest = index >> 4;
  r = (rest / (kHd / 16)) * 8 + ((index >> 1) & 7);
  u = (rest % (kHd / 16)) * 2 + (index & 1);
}

// Issues the copies of tile `tile` into slot (dk, dv); positions at or past ctx are zero-filled
// (so that P = 0 meets V = 0, never stale bytes). The source offsets (a block-table load each) are
// all computed before the first copy: a copy is an asm statement the compiler cannot move loads
// across, so interleaved, every copy would wait for its own table load. The caller commits the
// group.
__device__ __forceinline__ void copy_bf16_tile(const Params& p, const CtaTile& c, int tile, int ptid,
                                               unsigned char* dk, unsigned char* dv) {
  constexpr int kCopies = kTileKv * kHd / 8 / 128;  // per thread, per K or V
  int64_t src[kCopies];
  int dst[kCopies];
  bool valid[kCopies];
#pragma unroll
  for (int i = 0; i < kCopies; ++i) {
    int r, u;
    bf16_unit(ptid + i * 128, r, u);
    const int pos = tile * kTileKv + r;
    valid[i] = pos < c.ctx;
    src[i] = valid[i] ? c.kv_byte_offset<Bf16Kv, kHd>(p, pos, u * 8) : 0;
    dst[i] = blocked_offset(r, u);
  }
#pragma unroll
  for (int i = 0; i < kCopies; ++i) {
    cp_async16(dk + dst[i], static_cast<const unsigned char*>(p.k) + src[i], valid[i]);
    cp_async16(dv + dst[i], static_cast<const unsigned char*>(p.v) + src[i], valid[i]);
  }
}

// FP8: this thread's loads of a tile, 16 codes each (K in raw[0 .. 3], V in raw[4 .. 7]). Load i
// covers position (ptid % 8) + 8 (i-th group of 64 threads' block) and codes 16 ((ptid / 8) % 8) ..:
// eight neighbouring positions per 8 lanes, so the widened stores of a warp fill whole 128-byte
// core matrices (no bank conflicts).
constexpr int kFp8Loads = kTileKv * kHd / 16 / 128;  // per thread, per K or V
__device__ __forceinline__ void fp8_unit(int index, int& r, int& chunk) {
  r = (index & 7) + 8 * (index >> 6);
  chunk = (index >> 3) & 7;
}

__device__ __forceinline__ void load_fp8_tile(const Params& p, const CtaTile& c, int tile, int ptid,
                                              uint4 (&raw)[2 * kFp8Loads]) {
#pragma unroll
  for (int i = 0; i < kFp8Loads; ++i) {
    int r, chunk;
    fp8_unit(ptid + i * 128, r, chunk);
    const int pos = tile * kTileKv + r;
    raw[i] = raw[kFp8Loads + i] = make_uint4(0, 0, 0, 0);
    if (pos < c.ctx) {
      const int64_t src = c.kv_byte_offset<Fp8Kv, kHd>(p, pos, chunk * 16);
      raw[i] = __ldg(reinterpret_cast<const uint4*>(static_cast<const unsigned char*>(p.k) + src));
      raw[kFp8Loads + i] = __ldg(reinterpret_cast<const uint4*>(static_cast<const unsigned char*>(p.v) + src));
    }
  }
}

__device__ __forceinline__ uint4 widen_half(uint32_t lo, uint32_t hi) {
  float f[kFragElems];
  widen(make_uint2(lo, hi), f);
  return make_uint4(pack_bf16x2(f[0], f[1]), pack_bf16x2(f[2], f[3]), pack_bf16x2(f[4], f[5]),
                    pack_bf16x2(f[6], f[7]));
}

__device__ __forceinline__ void store_fp8_tile(const uint4 (&raw)[2 * kFp8Loads], int ptid, unsigned char* dk,
                                               unsigned char* dv) {
#pragma unroll
  for (int i = 0; i < 2 * kFp8Loads; ++i) {
    int r, chunk;
    fp8_unit(ptid + (i % kFp8Loads) * 128, r, chunk);
    unsigned char* dst = i < kFp8Loads ? dk : dv;
    *reinterpret_cast<uint4*>(dst + blocked_offset(r, 2 * chunk)) = widen_half(raw[i].x, raw[i].y);
    *reinterpret_cast<uint4*>(dst + blocked_offset(r, 2 * chunk + 1)) = widen_half(raw[i].z, raw[i].w);
  }
}

template <typename Kv>
__device__ __forceinline__ void produce(const Params& p, const CtaTile& c, int ptid, unsigned char* ring,
                                        uint64_t* full, uint64_t* empty) {
  const auto slot_k = [&](int tile) { return ring + (2 * (tile % kStages)) * kKvTileBytes; };
  const auto slot_v = [&](int tile) { return ring + (2 * (tile % kStages) + 1) * kKvTileBytes; };
  // Before refilling a slot: both consumers have released its previous tile.
  const auto wait_empty = [&](int tile) {
    if (tile >= kStages) bulk::mbar_wait(&empty[tile % kStages], ((tile / kStages) - 1) & 1);
  };
  const auto announce = [&](int tile) {
    fence_shared_for_wgmma();  // this thread's writes to the slot, before the consumers' wgmma reads
    bulk::mbar_arrive(&full[tile % kStages]);
  };
  const int n = c.num_kv_tiles;
  if constexpr (Kv::kDType == KvDType::kBF16) {
    // Two tiles in flight: tile t's copies are issued before tile t - 1 is announced.
    for (int tile = 0; tile < n; ++tile) {
      wait_empty(tile);
      copy_bf16_tile(p, c, tile, ptid, slot_k(tile), slot_v(tile));
      cp_async_commit();
      if (tile > 0) {
        cp_async_wait<1>();
        announce(tile - 1);
      }
    }
    cp_async_wait<0>();
    announce(n - 1);
  } else {
    // Tile t + 1's loads are in flight while tile t is widened and stored (two register sets,
    // alternating, so no copy between them waits on a load).
    uint4 a[2 * kFp8Loads], b[2 * kFp8Loads];
    const auto step = [&](int tile, uint4(&cur)[2 * kFp8Loads], uint4(&next)[2 * kFp8Loads]) {
      if (tile + 1 < n) load_fp8_tile(p, c, tile + 1, ptid, next);
      wait_empty(tile);
      store_fp8_tile(cur, ptid, slot_k(tile), slot_v(tile));
      announce(tile);
    };
    load_fp8_tile(p, c, 0, ptid, a);
    for (int tile = 0; tile < n; tile += 2) {
      step(tile, a, b);
      if (tile + 1 < n) step(tile + 1, b, a);
    }
  }
}

// ---- consumers --------------------------------------------------------------------------------

// Stages this consumer's 64 rows of Q (rows past the chunk are zero and never stored) in the
// core-matrix layout: 8 neighbouring rows per 8 lanes, so each warp's stores fill whole core
// matrices.
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
    *reinterpret_cast<uint4*>(sq + blocked_offset(r, u)) = value;
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
  stage_q(p, c, row0, ctid, sq);
  fence_shared_for_wgmma();
  warpgroup_sync(1 + consumer);

  const auto slot_k = [&](int tile) { return ring + (2 * (tile % kStages)) * kKvTileBytes; };
  const auto slot_v = [&](int tile) { return ring + (2 * (tile % kStages) + 1) * kKvTileBytes; };
#if LATHE_WS_DIAG & 2
  const auto wait_full = [&](int) {};
  const auto release = [&](int) {};
#else
  const auto wait_full = [&](int tile) { bulk::mbar_wait(&full[tile % kStages], (tile / kStages) & 1); };
  const auto release = [&](int tile) {
    __syncwarp();
    if (lane == 0) bulk::mbar_arrive(&empty[tile % kStages]);
  };
#endif
  const uint64_t q_desc = wgmma_desc(sq, kDimGroupBytes, kRowGroupBytes);
  // S = Q . K(tile)^T: 8 k16 steps along the head dim (two core matrices each).
  const auto issue_scores = [&](float(&s)[kScoreCols][4], uint64_t k_desc) {
#pragma unroll
    for (int kk = 0; kk < kHd / 16; ++kk) {
      wgmma_m64n64k16_ss(s, q_desc + kk * (2 * kDimGroupBytes >> 4), k_desc + kk * (2 * kDimGroupBytes >> 4));
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
#if LATHE_WS_DIAG & 1
    alpha_a = alpha_b = 1.0f; (void)kv0; (void)st;
    return;
#endif
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

  const auto k_desc = [&](int tile) { return wgmma_desc(slot_k(tile), kDimGroupBytes, kRowGroupBytes); };
  const auto v_desc = [&](int tile) { return wgmma_desc(slot_v(tile), kRowGroupBytes, kDimGroupBytes); };
  wait_full(0);
  zero_scores(s);
  const uint64_t k0 = k_desc(0);
  wgmma_fence();
  issue_scores(s, k0);
  wgmma_wait<0>();
  scores(s, 0, st, alpha_a, alpha_b);
  pack_p(s, pa);
  rescale(o, alpha_a, alpha_b);

  // P(tile) . V(tile) into o; the caller commits.
  const auto issue_pv = [&](uint64_t v_desc) {
#pragma unroll
    for (int kk = 0; kk < kTileKv / 16; ++kk) {
      wgmma_m64n128k16_rs<1>(o, pa[kk], v_desc + kk * (2 * kRowGroupBytes >> 4));
    }
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
    pack_p(s, pa);
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
  store_rows<kHd>(p, c, o, st, Kv::kDType == KvDType::kFP8E4M3 ? p.v_scale : 1.0f, c.tile_row0 + row0 + warp * 16 + g,
                  t);
}

#endif  // LATHE_WGMMA_COMPILED

template <typename Kv>
__global__ void __launch_bounds__(kThreads, 1) paged_prefill_ws_kernel(const Params p) {
#if defined(__CUDA_ARCH__) && !defined(LATHE_WGMMA_COMPILED)
  __trap();  // unreachable: launch_paged_prefill runs this kernel only where device_has_wgmma()
#else
  extern __shared__ __align__(128) unsigned char smem_raw[];
  unsigned char* sq = smem_raw;
  unsigned char* ring = smem_raw + kQBytes;
  uint64_t* full = reinterpret_cast<uint64_t*>(ring + kRingBytes);
  uint64_t* empty = full + kStages;

  const CtaTile c(p);
  if (c.empty) return;
  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      bulk::mbar_init(&full[s], 128);  // every producer thread announces its own writes
      bulk::mbar_init(&empty[s], kConsumerWarps);
    }
    bulk::mbar_init_fence();
  }
  __syncthreads();
  const int wg = threadIdx.x / 128;
  if (wg == 0) {
#if !(LATHE_WS_DIAG & 2)
    produce<Kv>(p, c, threadIdx.x, ring, full, empty);
#endif
  } else {
    consume<Kv>(p, c, wg - 1, threadIdx.x % 128, sq + (wg - 1) * (kQBytes / kConsumers), ring, full, empty);
  }
#endif
}

template <typename Kv>
cudaError_t launch(const Params& p, int32_t num_seqs, int32_t max_query_len, cudaStream_t stream) {
  // The shared-memory opt-in is a per-function attribute: set once per process (single device),
  // on the first launch, which callers make outside graph capture.
  static const cudaError_t opt_in = cudaFuncSetAttribute(
      paged_prefill_ws_kernel<Kv>, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(kSmemBytes));
  if (opt_in != cudaSuccess) return opt_in;
  const int32_t q_tiles = (max_query_len + kTileQ - 1) / kTileQ;
  if (q_tiles > 65535) return cudaErrorInvalidValue;  // grid.y limit: 8.4M rows in one chunk
  const dim3 grid(p.num_heads, q_tiles, num_seqs);
  paged_prefill_ws_kernel<Kv><<<grid, kThreads, kSmemBytes, stream>>>(p);
  return cudaGetLastError();
}

}  // namespace

cudaError_t launch_ws(const Params& p, KvDType dtype, int32_t num_seqs, int32_t max_query_len,
                      cudaStream_t stream) {
  return dtype == KvDType::kBF16 ? launch<Bf16Kv>(p, num_seqs, max_query_len, stream)
                                 : launch<Fp8Kv>(p, num_seqs, max_query_len, stream);
}

}  // namespace lathe::cuda::prefill
