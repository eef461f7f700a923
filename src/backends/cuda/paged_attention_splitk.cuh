#pragma once
// Split-K paged decode on tensor cores, one CTA per (query rows of one KV head, split, sequence):
// the kernel template and its launcher for one geometry. paged_attention_splitk_variants.cuh lists
// the compiled geometries (variants); paged_attention_splitk_bf16.cu and _fp8.cu instantiate them
// (two files so the two KV dtypes compile in parallel); paged_attention_splitk.cu holds the reduce
// and the public launcher.
//
// The CTA carries up to 16 query heads of one KV head as the 16 rows of an m16n8k16 tile (a
// "GQA-packed" CTA: each K/V row is read once for all of them); unused rows are zero and never
// stored. Its W warps each stream their own KV tiles of T positions (tile j of the split goes to
// warp j % W) through an S-stage pipeline in shared memory (cp.async, or tensor copies: below),
// keep their own online
// softmax state in f32 (log2 domain, as in the prefill kernel), and the W states are merged in
// warp order 0..W-1 at the end into the split's record. The softmax weights enter the P.V product
// as a BF16 hi + lo pair (BF16 KV), so the arm matches the f32-weight non-split arm to f32
// rounding; with FP8 KV as one f16 (paged_attention_splitk_tile.cuh says why).
//
// Determinism: a query's bytes depend on its split boundaries, T and W (the warp rotation; not
// S, the pipeline depth, nor the CTAs per SM, which only change when bytes arrive), all
// compile-time per (variant, KV dtype, head dim) or computed from the sequence's own length:
// never on which row of the tile (or which CTA) it occupies, since tensor-core rows are
// independent; so rows_per_cta is free to follow the launch's occupancy. Different variants give
// different (equally valid) bytes; a serve uses one variant for its whole life.
//
// Split s of a sequence of length L covers [s * n, min((s + 1) * n, L)), n = split_length(L, S,
// min_kv_per_split, rule) (split_length.h; by default max(ceil(L / S), min_kv_per_split)), computed
// here from the sequence's own length; an empty split writes the
// neutral record (output 0, max -inf, sum 0). FP8 tiles are staged raw and converted in registers
// straight into f16 MMA fragments (exact; paged_attention_fp8_frag.cuh, which also fixes the order
// of the head dims inside an MMA chunk and of the output columns); the query enters those MMAs as
// f16 and the softmax weights as one f16 each. k_scale folds into the score scale, v_scale into
// the output.
//
// Slices (sp.slices > 1): a split of n positions is cut further into split_slices_used(n, slices,
// min_per_slice) slices (split_length.h), each computed exactly as a whole split would be (tiles
// from its first position, warp rotation, warp merge) into its own record, slot split * slices +
// slice. Grid y = split * slice_ctas + c: normally slice_ctas = slices, one CTA per slice, and CTAs
// of slices a split does not use exit at once, writing nothing (the reduce never reads those
// slots); kSliceLoop geometries (variant 12) may take fewer CTAs, CTA c running slices c,
// c + slice_ctas, ... in turn. An empty split's slice 0 writes the neutral record. Batch 1 uses
// this to put several CTAs on each split.
//
// Clusters (kCluster = C > 1, sm_90 thread-block clusters): C CTAs share one (query rows, split,
// sequence). A split of n positions uses R = the largest power of two <= C with n >= R *
// kMinPerRank ranks (R from the sequence's own length, so the same for every batch); the split's
// tiles are dealt to the R * W warps of ranks 0..R-1 (tile j -> warp j % (R * W)), each rank merges
// its W warp states in warp order, and rank 0 merges the R rank states in rank order through
// distributed shared memory into the record. Ranks >= R take no tiles. This lets one split fill
// several SMs when a launch has few (kv head, split) pairs (batch 1).
//
// Address generation (kPrefetch): the block ids a tile spans (at most T / block_size + 1 of them)
// are loaded one tile ahead, one per lane, into a register; each 16-byte copy then takes its block
// id from that register by a warp shuffle, so no copy waits on a dependent global load of the
// block table. (Without kPrefetch, or when a tile spans more than 32 blocks, every copy loads its
// block id from the table just before it is issued: the pre-2026-11-30 issue loop.)
//
// Tensor copies (Cfg::kTensor, variants 13-21): lane 0 of each warp requests a tile's K and V rows
// from the copy engine as boxes of 16 rows x P 128-byte pieces of the 5-D tensor maps in
// SplitParams (P = tensor_box_pieces: the whole row), into the
// swizzled layout of SplitLayout, announcing the bytes on the stage's mbarrier; every lane waits
// on the stage's phase. Tiles are cut at multiples of T positions
// (paged_attention_splitk_tile.cuh: kAlignedTiles), so a box never crosses a block. Rows past
// the sequence's end are read (they are in its last block) and their V rows zeroed after the
// wait, so stale values there cannot turn a zero weight into NaN.
#include <algorithm>
#include <cooperative_groups.h>
#include <cuda.h>
#include <cuda_bf16.h>

#include "backends/cuda/bulk_copy.cuh"
#include "backends/cuda/chained_launch.cuh"
#include "backends/cuda/device.h"
#include "backends/cuda/paged_attention.h"
#include "backends/cuda/paged_attention_common.cuh"
#include "backends/cuda/paged_attention_decode.cuh"
#include "backends/cuda/paged_attention_fp8_frag.cuh"
#include "backends/cuda/paged_attention_mma.cuh"
#include "backends/cuda/paged_attention_splitk_state.cuh"
#include "backends/cuda/paged_attention_splitk_tile.cuh"
#include "backends/cuda/split_length.h"

namespace lathe::cuda::attn::splitk {

struct SplitParams {
  DecodeParams base;
  int32_t group;          // num_heads / num_kv_heads
  int32_t rows_per_cta;   // query heads one CTA carries (<= 16)
  int32_t parts;          // CTAs per KV head: ceil(group / rows_per_cta)
  int32_t block_shift;    // log2(block_size) when it is a power of two, else -1
  int32_t early_kv;       // 1: copy the first K/V tiles before the chained-launch wait (prologue)
  int32_t slices;         // record slots per split: split_slices_used's cap; 1 = not sliced
  int32_t min_per_slice;  // split_slices_used's floor on a slice's length
  int32_t slice_ctas;     // CTAs per split (grid y = split * slice_ctas + c): `slices`, one CTA per
                          // slice; fewer only for kSliceLoop geometries, CTA c running slices c,
                          // c + slice_ctas, ... in turn (the same bytes either way)
  int32_t num_seqs;       // persistent geometry only (paged_attention_splitk_persistent.cuh): the
                          // launch's sequences, whose units its CTAs share out
  // Tensor-copy geometries only (kTensor): K and V as 5-D tensors [num_blocks, kv heads, piece,
  // block_size, 128 bytes] (a row's 128-byte pieces as a dimension of their own) with boxes of
  // 16 rows x tensor_box_pieces pieces, 128-byte swizzle (encoded by the launcher,
  // paged_attention_splitk.cu; passed as a __grid_constant__ parameter).
  CUtensorMap k_map, v_map;
};

// Lane 0's tensor copies of one warp tile starting at position ts < end (tensor-copy geometries):
// its K and V rows as L::kPieces / P boxes each per 16 positions (box b of group q: 16 rows from
// row (ts + 16b) % bs of block ids[b], pieces qP .. qP + P - 1; rows past the block read as
// zeros), for the boxes that start before len (the rest are rows the wait zeroes), announced on
// `bar`. A tile that starts at or past `end` copies nothing and completes its phase at once.
template <typename L>
__device__ __forceinline__ void copy_tensor_tile(unsigned char* k_dst, const SplitParams& sp, int ts, int end,
                                                 int len, int bs, int kv_head,
                                                 const int32_t (&ids)[L::kTile / 16], uint64_t* bar) {
  constexpr int kBoxes = L::kTile / 16;
  unsigned char* v_dst = k_dst + L::kRawTile;
  int boxes = 0;
  if (ts < end) {
    while (boxes < kBoxes && ts + 16 * boxes < len) ++boxes;
  }
  bulk::mbar_expect_tx(bar, boxes * 2 * L::kPieces * 16 * 128);
  // K/V rows are read once per step: first out of L2 (1-4% faster at batch 1 and 16 on the
  // H200, session 13; the bytes are the same).
  const uint64_t policy = bulk::l2_evict_first_policy();
#pragma unroll
  for (int b = 0; b < kBoxes; ++b) {
    if (b >= boxes) break;
    const int row = (ts + 16 * b) & (bs - 1);
#pragma unroll
    for (int q = 0; q < L::kPieces / L::kBoxPieces; ++q) {
      const int at = q * L::kGroupBytes + b * L::kBoxBytes, piece = q * L::kBoxPieces;
      bulk::tensor_copy_5d(k_dst + at, &sp.k_map, 0, row, piece, kv_head, ids[b], bar, policy);
      bulk::tensor_copy_5d(v_dst + at, &sp.v_map, 0, row, piece, kv_head, ids[b], bar, policy);
    }
  }
}

// After a tensor-copy tile's wait: rows at or past len hold whatever the block held before (never
// written for this sequence). Their weights are 0, but 0 x NaN is NaN, so their V rows become
// zeros (the warp's lanes together).
template <typename L>
__device__ __forceinline__ void zero_v_rows_past_len(unsigned char* stage, int tile_start, int len,
                                                     int lane) {
  if (tile_start + L::kTile <= len) return;
  const int first = max(len - tile_start, 0);
  for (int c = first * 8 * L::kPieces + lane; c < L::kTile * 8 * L::kPieces; c += 32) {
    const int r = c / (8 * L::kPieces), u = c % (8 * L::kPieces);
    *reinterpret_cast<uint4*>(stage + L::kRawTile + L::at(r, u)) = make_uint4(0, 0, 0, 0);
  }
}

template <typename Kv, int HD, typename Cfg>
__global__ void __launch_bounds__(Cfg::kThreads, Cfg::kCtasPerSm) paged_decode_splitk_mma(const __grid_constant__ SplitParams sp) {
  // chained_kernel_wait() (a no-op unless launched chained; the non-cluster variants are) comes
  // after the first tiles' copies when sp.early_kv: see the prologue below.
  using L = SplitLayout<Kv, HD, Cfg>;
  constexpr int kTile = L::kTile, kRow = L::kRow, kWarps = Cfg::kWarps, kStages = Cfg::kStages;
  constexpr int kThreads = Cfg::kThreads;
  constexpr bool kQInRegs = HD <= 128;  // A fragments of Q kept in registers (HD/4 of them)
  const DecodeParams& p = sp.base;
  extern __shared__ __align__(16) unsigned char smem[];
  __nv_bfloat16* sq = reinterpret_cast<__nv_bfloat16*>(smem);
  unsigned char* work = smem + L::kQ;
  if constexpr (L::kSwizzled) {  // the swizzle's 1024-byte period (the layout keeps the slack)
    const uint32_t base = bulk::smem_u32(smem);
    work = smem + (((base + L::kQ + 1023u) & ~1023u) - base);
  }

  constexpr int kCluster = Cfg::kCluster;
  const int rank = kCluster > 1 ? static_cast<int>(blockIdx.x % kCluster) : 0;  // clusters tile x
  const int unit = blockIdx.x / kCluster;
  const int kv_head = unit / sp.parts;
  const int part = unit % sp.parts;
  const int head0 = kv_head * sp.group + part * sp.rows_per_cta;
  const int rows = min(sp.rows_per_cta, sp.group - part * sp.rows_per_cta);
  const int split = blockIdx.y / sp.slice_ctas, first_slice = blockIdx.y % sp.slice_ctas, seq = blockIdx.z;
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;

  // Without kSliceLoop the loop body runs once (one CTA per slice). With it, the slice's range is
  // derived afresh from a volatile load of the length on every pass, so none of it stays live in
  // registers across a slice's main loop.
  for (int slice = first_slice;; slice += sp.slice_ctas) {
    const int len =
        Cfg::kSliceLoop ? *reinterpret_cast<const volatile int32_t*>(p.context_lens + seq) : p.context_lens[seq];
    int start, end;
    {
      const int per = split_length(len, p.num_splits, p.min_kv_per_split, p.split_rule, kWarps * kTile);
      const int64_t first = static_cast<int64_t>(split) * per;
      const int split_start = static_cast<int>(first < len ? first : static_cast<int64_t>(len));
      const int split_end = static_cast<int>(first + per < len ? first + per : static_cast<int64_t>(len));
      const int used = split_slices_used(split_end - split_start, sp.slices, sp.min_per_slice);  // 0: empty split
      if (slice >= (used > 0 ? used : 1)) return;  // a slot this split does not use
      const int slice_len = used > 0 ? (split_end - split_start + used - 1) / used : 0;
      start = split_start + slice * slice_len;
      end = min(start + slice_len, split_end);
    }
    auto record = [&](int row) {
      const int64_t slot =
          ((static_cast<int64_t>(seq) * p.num_heads + head0 + row) * p.num_splits + split) * sp.slices + slice;
      return p.workspace + slot * (HD + 2);
    };
    if (start >= end) {  // the same for every rank of a cluster
      if (rank != 0) return;
      chained_kernel_wait();  // the workspace is written only after the wait (no early release: below)
      for (int i = tid; i < rows * (HD + 2); i += kThreads) {
        const int row = i / (HD + 2), d = i % (HD + 2);
        record(row)[d] = d == HD ? -INFINITY : 0.0f;
      }
      return;
    }

    const int32_t* table = p.block_tables + static_cast<int64_t>(seq) * p.max_blocks_per_seq;
    const int bs = p.block_size;
    [[maybe_unused]] const int shift = sp.block_shift;
    unsigned char* mine = work + warp * L::kPerWarp;
    // Tiles: cp.async geometries cut [start, end) into tiles of kTile positions from `start`;
    // tensor-copy geometries cut it at multiples of kTile (so no 16-row box crosses a block of
    // >= 16 positions), the first tile starting at `start` (16 positions: its rows past the
    // boundary masked) or at the boundary below it (32: its rows before `start` masked). A tile's
    // row r is position tile_first + r in every case.
    const int anchor = L::kSwizzled ? (start & ~(kTile - 1)) : start;
    const int num_tiles = (end - anchor + kTile - 1) / kTile;
    int ranks = 1;  // R: cluster ranks this split uses (a function of its length alone)
    if constexpr (kCluster > 1) {
      while (ranks < kCluster && end - start >= 2 * ranks * kMinPerRank) ranks *= 2;
      if (ranks == 1 && rank != 0) return;  // no cluster barrier is used by this split
    }
    const bool idle = rank >= ranks;  // a rank past R: no tiles, only the barriers
    const int workers = ranks * kWarps, worker = rank * kWarps + warp;
    // Tiles of this warp: worker, worker + R * W, ...; the i-th of them is staged in stage i % S.
    const int my_tiles = !idle && num_tiles > worker ? (num_tiles - worker + workers - 1) / workers : 0;
    auto tile_first = [&](int i) {
      const int aligned = anchor + (worker + i * workers) * kTile;
      return idle ? end : (Cfg::kAlignedTiles ? aligned : max(start, aligned));
    };
    // The end of the positions tile i may use (masking): the split's end, or the tile's boundary.
    auto tile_end = [&](int i) { return L::kSwizzled ? min(anchor + (worker + i * workers + 1) * kTile, end) : end; };

    // Byte offsets of (block, kv head, slot, chunk) in K or V: one 64-bit multiply-add per copy.
    const int64_t block_bytes = static_cast<int64_t>(p.num_kv_heads) * bs * HD * Kv::kBytes;
    const int64_t head_bytes = static_cast<int64_t>(kv_head) * bs * HD * Kv::kBytes;
    const unsigned char* kbase = static_cast<const unsigned char*>(p.k) + head_bytes;
    const unsigned char* vbase = static_cast<const unsigned char*>(p.v) + head_bytes;
    [[maybe_unused]] int32_t staged_ids = 0;  // kPrefetch: the block ids of the next tile to issue, one per lane
    // Tensor copies: one barrier per stage of this warp; lane 0 issues a tile's copies and arrives
    // (with the bytes to expect), every lane waits on the stage's phase before reading it.
    [[maybe_unused]] uint64_t* bars = reinterpret_cast<uint64_t*>(work + L::kWork) + warp * kStages;
    if constexpr (L::kSwizzled) {
      if (lane == 0) {
        for (int st = 0; st < kStages; ++st) bulk::mbar_init(bars + st, 1);
        bulk::mbar_init_fence();
      }
      __syncwarp();
    }

    // The i-th tile of this warp for i >= my_tiles starts at or past `end`: its copies are all
    // invalid (zero-fill, nothing read), so the issue code needs no branch on i.
    auto issue = [&](int i) {
      const int ts = tile_first(i);
      unsigned char* k_dst = mine + (i % kStages) * L::kStage;
      unsigned char* v_dst = k_dst + L::kRawTile;
      if constexpr (L::kSwizzled) {
        // Lane 0 copies the tile (copy_tensor_tile); lane b holds box b's block id, loaded one
        // tile ahead.
        constexpr int kBoxes = kTile / 16;
        int32_t ids[kBoxes];
#pragma unroll
        for (int b = 0; b < kBoxes; ++b) ids[b] = __shfl_sync(0xffffffffu, staged_ids, b);
        if (lane == 0) copy_tensor_tile<L>(k_dst, sp, ts, end, len, bs, kv_head, ids, bars + i % kStages);
        const int next = tile_first(i + 1) + 16 * lane;
        staged_ids = lane < kBoxes && tile_first(i + 1) < end && next < len ? __ldg(table + (next >> shift)) : 0;
        return;
      }
      constexpr int kRowsPerIter = 32 / L::kChunksPerRow;
      const int r0 = lane / L::kChunksPerRow, cc = lane % L::kChunksPerRow;
      if constexpr (Cfg::kPrefetch) {
        // Staged ids: lane l holds the id of block (first block of the tile + l); launched only
        // with a power-of-two block size of at least T / 31 (launch_variant checks).
        const int32_t ids = staged_ids;
        const int next_ts = tile_first(i + 1);
        const int nb0 = next_ts >> shift, nb1 = (min(next_ts + kTile, end) - 1) >> shift;
        staged_ids = nb0 + lane <= nb1 ? __ldg(table + nb0 + lane) : 0;  // used by the next issue
        const int b0 = ts >> shift;
#pragma unroll
        for (int it = 0; it < L::kIssueIters; ++it) {
          const int r = r0 + it * kRowsPerIter;
          const int pos = ts + r;
          const bool valid = pos < end;
          const int32_t block = __shfl_sync(0xffffffffu, ids, ((pos >> shift) - b0) & 31);
          const int64_t off = block * block_bytes + ((pos & (bs - 1)) * HD * Kv::kBytes + cc * 16);
          cp_async16(k_dst + r * L::kRawRow + cc * 16, kbase + (valid ? off : 0), valid);
          cp_async16(v_dst + r * L::kRawRow + cc * 16, vbase + (valid ? off : 0), valid);
        }
      } else {
#pragma unroll
        for (int it = 0; it < L::kIssueIters; ++it) {
          const int r = r0 + it * kRowsPerIter;
          const int pos = ts + r;
          const bool valid = pos < end;
          int64_t off = 0;
          if (valid) {
            const int32_t block = __ldg(table + pos / bs);
            off = block * block_bytes + ((pos % bs) * HD * Kv::kBytes + cc * 16);
          }
          cp_async16(k_dst + r * L::kRawRow + cc * 16, kbase + off, valid);
          cp_async16(v_dst + r * L::kRawRow + cc * 16, vbase + off, valid);
        }
      }
      cp_async_commit();  // one group per tile, empty or not: the wait counts stay uniform
    };
    if constexpr (L::kSwizzled) {
      const int ts = tile_first(0), first = ts + 16 * lane;
      if (lane < kTile / 16 && ts < end && first < len) staged_ids = __ldg(table + (first >> shift));
    } else if constexpr (Cfg::kPrefetch) {
      const int ts = tile_first(0);
      const int nb0 = ts >> shift, nb1 = (min(ts + kTile, end) - 1) >> shift;
      staged_ids = nb0 + lane <= nb1 ? __ldg(table + nb0 + lane) : 0;
    }

    // Start the first tiles' copies before the query is staged: their latency covers it. With
    // sp.early_kv the tiles that lie wholly before position len - 1 are issued even before the wait
    // for the previous kernel: that kernel (QK-norm/RoPE/KV write) writes this step's query and the
    // K/V row at len - 1 only; every earlier row was written by an earlier step, and the lengths and
    // block tables were uploaded before the step's first kernel (which every kernel before this one
    // waited for). A warp's tiles ascend, so the early ones are a prefix of its prologue; the copy
    // groups are committed in the same order either way.
    int prologue = 0;
    if (sp.early_kv) {
      while (prologue < kStages - 1 && tile_first(prologue) + kTile <= len - 1) issue(prologue++);
    }
    // The wait without the release: the dependent launches (the reduce, then what follows it) start
    // as this grid's CTAs exit. Released here, after each CTA's wait, the chained Qwen3-32B-FP8 step
    // at batch 4 took 3-5% longer and the Qwen3-32B BF16 batch-16 step under 14 about 30% longer
    // (docs/PERFORMANCE.md, "Session 22").
    chained_kernel_wait();
    for (int i = prologue; i < kStages - 1; ++i) issue(i);

    // Query rows (zero beyond `rows`): BF16 as given, or f16 for the FP8 arm's f16 MMAs.
    for (int c = tid; c < kMaxRows * (HD / 8); c += kThreads) {
      const int r = c / (HD / 8), col = (c % (HD / 8)) * 8;
      uint4 value = make_uint4(0, 0, 0, 0);
      if (r < rows) {
        value = __ldg(reinterpret_cast<const uint4*>(p.q + static_cast<int64_t>(seq) * p.q_stride +
                                                     static_cast<int64_t>(head0 + r) * HD + col));
        if constexpr (L::kFp8) query_words_to_f16(value);
      }
      *reinterpret_cast<uint4*>(sq + r * kRow + col) = value;
    }
    __syncthreads();

    const float s_mul = p.scale * kLog2e * (L::kFp8 ? p.k_scale : 1.0f);
    // This warp's tiles in turn: compute(stage, tile_start, i) once each has arrived.
    auto stream_tiles = [&](auto&& compute) {
      for (int i = 0; i < my_tiles; ++i) {
        issue(i + kStages - 1);
        const int tile_start = tile_first(i);
        unsigned char* stage = mine + (i % kStages) * L::kStage;
        if constexpr (L::kSwizzled) {
          bulk::mbar_wait(bars + i % kStages, (i / kStages) & 1);
          zero_v_rows_past_len<L>(stage, tile_start, len, lane);
        } else {
          cp_async_wait<kStages - 1>();
        }
        __syncwarp();
        compute(stage, tile_start, i);
        __syncwarp();  // this stage is refilled by the next iteration's issue
      }
      if constexpr (!L::kSwizzled) cp_async_wait<0>();
      __syncthreads();  // every warp is done with its stages: the merge area reuses them
    };
    // Then its state goes to [warp][row][HD + 2] (o..., m, l) for the merge in warp order: into the
    // split's record, or (R > 1) into this rank's state, which rank 0 then merges with the others'
    // in rank order.
    float* merge = reinterpret_cast<float*>(work);
    float* mw = merge + warp * kMaxRows * (HD + 2);
    float m_a = -INFINITY, m_b = -INFINITY, l_a = 0.0f, l_b = 0.0f;
    if constexpr (Cfg::kPosRows) {
      uint32_t qb[HD / 16][2];
      load_query_columns<L, HD>(qb, sq, lane);
      float o[HD / 16][4];
#pragma unroll
      for (int j = 0; j < HD / 16; ++j) o[j][0] = o[j][1] = o[j][2] = o[j][3] = 0.0f;
      stream_tiles([&](const unsigned char* stage, int tile_start, int i) {
        splitk_tile_pos_rows<Kv, HD, Cfg>(stage, tile_start, max(start, tile_start), tile_end(i), s_mul, qb,
                                          o, m_a, m_b, l_a, l_b, lane);
      });
      store_warp_state_pos_rows<HD, L::kFp8>(o, m_a, m_b, l_a, l_b, lane, rows, mw, HD + 2, mw + HD, HD + 2);
    } else {
      auto load_q = [&](uint32_t(&a)[4], int kk) { load_query_fragment<L, HD>(a, sq, kk, lane); };
      uint32_t qa[kQInRegs ? HD / 16 : 1][4];
      if constexpr (kQInRegs) {
#pragma unroll
        for (int kk = 0; kk < HD / 16; ++kk) load_q(qa[kk], kk);
      }
      float o[HD / 8][4];
#pragma unroll
      for (int j = 0; j < HD / 8; ++j) o[j][0] = o[j][1] = o[j][2] = o[j][3] = 0.0f;
      stream_tiles([&](const unsigned char* stage, int tile_start, int i) {
        splitk_tile<Kv, HD, Cfg>(stage, tile_start, max(start, tile_start), tile_end(i), s_mul, qa, load_q, o,
                                 m_a, m_b, l_a, l_b, lane);
      });
      store_warp_state<HD, L::kFp8>(o, m_a, m_b, l_a, l_b, lane, kMaxRows, mw, HD + 2, mw + HD, HD + 2);
    }
    __syncthreads();
    const float v_mul = L::kFp8 ? p.v_scale : 1.0f;
    float* rank_state = merge + kWarps * kMaxRows * (HD + 2);  // [row][HD + 2] (clusters only)
    const bool clustered = kCluster > 1 && ranks > 1;
    {
      auto state = [&](int w, int row) { return merge + (w * kMaxRows + row) * (HD + 2); };
      merge_warp_states<HD, kWarps>(
          rows, tid, kThreads, state, [&](int w, int row) { return state(w, row)[HD]; },
          [&](int w, int row) { return state(w, row)[HD + 1]; },
          [&](int row, int d, float out, float max_all, float sum) {
            float* rec = clustered ? rank_state + row * (HD + 2) : record(row);
            rec[d] = clustered ? out : __fmul_rn(out, v_mul);
            if (d == 0) {
              rec[HD] = max_all;
              rec[HD + 1] = sum;
            }
          });
    }
    if constexpr (kCluster > 1) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
      __trap();  // thread-block clusters need sm_90; the launcher never picks these variants below it
#else
      if (!clustered) return;
      namespace cg = cooperative_groups;
      cg::cluster_group cluster = cg::this_cluster();
      cluster.sync();  // every rank's state is written (release / acquire across the cluster)
      if (rank == 0) {
        for (int i = tid; i < rows * HD; i += kThreads) {
          const int row = i / HD, d = i % HD;
          float max_all = -INFINITY;
          for (int r = 0; r < ranks; ++r) {
            max_all = fmaxf(max_all, cluster.map_shared_rank(rank_state, r)[row * (HD + 2) + HD]);
          }
          float sum = 0.0f, out = 0.0f;
          for (int r = 0; r < ranks; ++r) {
            const float* state = cluster.map_shared_rank(rank_state, r) + row * (HD + 2);
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
      cluster.sync();  // the other ranks' shared memory stays alive until rank 0 has read it
#endif
    }
    if constexpr (!Cfg::kSliceLoop) return;
    __syncthreads();  // the slice's merge area becomes stages again
  }
}

// The CTAs per SM that splitk_ctas_per_sm() (paged_attention.h) allows a launch of `ctas` CTAs of
// a kernel that fits `resident` per SM (at most `resident`), reading a BF16 or an FP8 cache
// (under `auto` they weigh the wave fill differently; paged_attention_splitk.cu).
int splitk_ctas_per_sm_cap(int resident, int64_t ctas, bool bf16_kv);
// The dynamic shared memory that holds a kernel asking for `kernel_bytes` at `cap` of its
// `resident` CTAs per SM: `kernel_bytes` when cap >= resident, else a padded request.
int splitk_smem_for_cap(int kernel_bytes, int resident, int cap);
// Both for a per-split launch of `ctas` CTAs: what it asks for.
int splitk_launch_smem(int kernel_bytes, int resident, int64_t ctas, bool bf16_kv);

// The CTAs per SM the device fits of `kernel` at `threads` threads and `smem` bytes of dynamic
// shared memory, or `fallback` where the occupancy calculator fails.
template <typename Kernel>
int resident_ctas_per_sm(Kernel* kernel, int threads, int smem, int fallback) {
  int n = 0;
  return cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, kernel, threads, smem) == cudaSuccess && n > 0 ? n
                                                                                                       : fallback;
}

template <typename Kv, int HD, typename Cfg>
cudaError_t launch_main(const SplitParams& sp, int32_t num_seqs, cudaStream_t stream) {
  using L = SplitLayout<Kv, HD, Cfg>;
  auto* kernel = paged_decode_splitk_mma<Kv, HD, Cfg>;
  // The shared-memory opt-in is a per-function attribute: set once per process (single device),
  // on the first launch, which callers make outside graph capture. It allows up to the device's
  // opt-in limit, so that a launch may pad its request to cap the CTAs per SM; then the CTAs per
  // SM the kernel's own request allows.
  static const cudaError_t opt_in = cudaFuncSetAttribute(
      kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
      std::max(L::kBytes, device_shared_memory_limits().max_per_cta));
  if (opt_in != cudaSuccess) return opt_in;
  static const int resident = resident_ctas_per_sm(kernel, Cfg::kThreads, L::kBytes, Cfg::kCtasPerSm);
  const dim3 grid(sp.base.num_kv_heads * sp.parts * Cfg::kCluster, sp.base.num_splits * sp.slice_ctas, num_seqs);
  if constexpr (Cfg::kCluster == 1) {
    const int64_t ctas = static_cast<int64_t>(grid.x) * grid.y * grid.z;
    const int smem = splitk_launch_smem(L::kBytes, resident, ctas, !L::kFp8);
    return launch_chained_status(kernel, grid, dim3(Cfg::kThreads), smem, stream, sp);
  } else {
    cudaLaunchConfig_t config{};
    config.gridDim = grid;
    config.blockDim = dim3(Cfg::kThreads);
    config.dynamicSmemBytes = L::kBytes;
    config.stream = stream;
    cudaLaunchAttribute cluster[1];
    cluster[0].id = cudaLaunchAttributeClusterDimension;
    cluster[0].val.clusterDim.x = Cfg::kCluster;
    cluster[0].val.clusterDim.y = 1;
    cluster[0].val.clusterDim.z = 1;
    config.attrs = cluster;
    config.numAttrs = 1;
    return cudaLaunchKernelEx(&config, paged_decode_splitk_mma<Kv, HD, Cfg>, sp);
  }
}

// Defined in paged_attention_splitk_bf16.cu / _fp8.cu.
cudaError_t launch_bf16(int variant, int32_t head_dim, const SplitParams& sp, int32_t num_seqs, cudaStream_t stream);
cudaError_t launch_fp8(int variant, int32_t head_dim, const SplitParams& sp, int32_t num_seqs, cudaStream_t stream);

}  // namespace lathe::cuda::attn::splitk
