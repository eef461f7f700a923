#pragma once
// Split-K paged decode on a persistent grid (variant 22): the wide tensor-copy geometry (14) with
// its CTAs sharing out the launch's units instead of one CTA per unit.
//
// A unit is one (query rows of one KV head, split, sequence): what one CTA of the per-split kernel
// (paged_attention_splitk.cuh) computes. Units are numbered ((seq * splits) + split) * pairs +
// pair (pairs = KV heads x parts; the per-split kernel's grid order, so CTAs that run at the same
// time read the same blocks' rows of neighbouring heads, which lie together in the cache) and CTA
// c of a grid of G runs units c, c + G, c + 2G, ... in turn. The grid is as wide as the geometry's
// CTAs per SM fill the device (fewer when there are fewer units), so at batch >= 16 every CTA runs
// several units and the launch has neither a partly filled last wave nor a CTA start-up per unit.
//
// Each warp's K/V tiles form ONE stream across its CTA's units: the tile after a unit's last is
// the next unit's first (for this warp), copied while the last is computed, so the copy engine
// does not drain at a unit's end. Within a unit the warps take the tiles, keep their online
// softmax state and merge it in warp order exactly as the per-split kernel does (same warps W,
// tile T, tile-to-warp rotation, merge; paged_attention_splitk_state.cuh), so every unit's record
// has variant 14's bytes, whatever the grid width and whichever CTA runs it (tested).
//
// At a unit's end each warp parks its state in its free stage (the one its next copy will fill;
// o needs rows x HD x 4 bytes, a BF16 stage holds 2 x T x HD x 2: enough for the 16 rows of an
// m16 tile; an FP8 stage holds half that, so with FP8 KV each warp parks in an area of its own),
// its max and sum in a small array, then the CTA merges the parked states into the unit's record
// while the next unit's query rows arrive.
//
// Registers decide its speed: the per-split kernel's tile loop already holds nearly all that three
// CTAs per SM allow, so the state that walks the units lives in a shared-memory table (with it in
// registers ptxas recomputed the fragment addresses in every tile, and one-unit-per-CTA launches
// ran up to 14% slower than 14's). It is built for head dim 128 only (at 256 it gained nothing).
// 22 runs 14's geometry here with BF16 KV only: with FP8 KV ptxas copied the query fragments
// around the tile's MMAs (~20% more instructions a tile) and it measured up to 40% slower; the
// launcher (paged_attention_splitk_variants.cuh) launches 14 for those, and for sliced launches
// (docs/PERFORMANCE.md, "Session 20"). Variant 25 runs 24's geometry here (14's with positions as
// the MMA rows; its bytes), launching 24 itself where 22 launches 14; variant 28 runs 24's
// geometry here with FP8 KV too (144 registers, no spills; opt-in, level with 24 on the mean in
// session 58's H100 measurement), with the per-split kernel's FP8 steps: f16 queries, k_scale in
// the score multiplier, v_scale on the record. (Session 38 built 25 for 24's head dim 256 too,
// against the 1.8 waves of 24's per-split grid at batch 16: 1-13% slower than 24 at batches 4-64,
// not kept.)
#include "backends/cuda/paged_attention_splitk.cuh"
#include "backends/cuda/wave_fill.h"

namespace lathe::cuda::attn::splitk {

// Units one CTA may run (their descriptors are staged in shared memory); the launcher widens the
// grid past one wave rather than exceed it.
inline constexpr int kMaxUnitsPerCta = 32;

template <typename Kv, int HD, typename Cfg>
struct PersistentLayout {
  using L = SplitLayout<Kv, HD, Cfg>;
  static_assert(L::kSwizzled && !Cfg::kAlignedTiles && Cfg::kCluster == 1 && !Cfg::kSliceLoop,
                "the persistent kernel streams 16-position tensor-copy tiles");
  static_assert(HD == 128 && (!L::kFp8 || Cfg::kPosRows), "built for head dim 128 (FP8: positions as rows)");
  // After SplitLayout's bytes: the units' descriptors (two int4 each: the split's positions, and
  // whose rows), each warp's parked max and sum per row, the stage each warp parked its o in, and
  // (where a stage cannot hold it: FP8) each warp's own park area [16][HD + 2] floats.
  static constexpr bool kOwnPark = L::kStage < kMaxRows * HD * 4;
  static constexpr int kSpanAt = L::kBytes;
  static constexpr int kWhoAt = kSpanAt + kMaxUnitsPerCta * 16;
  static constexpr int kMlAt = kWhoAt + kMaxUnitsPerCta * 16;
  static constexpr int kFreeAt = kMlAt + Cfg::kWarps * kMaxRows * 2 * 4;
  static constexpr int kParkAt = kFreeAt + Cfg::kWarps * 4;
  static constexpr int kParkFloats = kMaxRows * (HD + 2);  // one warp's
  static constexpr int kBytes = kParkAt + (kOwnPark ? Cfg::kWarps * kParkFloats * 4 : 0);
  static_assert(kParkAt % 16 == 0, "park area alignment");
  static_assert(Cfg::kCtasPerSm * (kBytes + 1024) <= 228 * 1024,
                "shared memory of the CTAs one SM should hold");
};

template <typename Kv, int HD, typename Cfg>
__global__ void __launch_bounds__(Cfg::kThreads, Cfg::kCtasPerSm)
    paged_decode_splitk_persistent(const __grid_constant__ SplitParams sp) {
  using L = SplitLayout<Kv, HD, Cfg>;
  using PL = PersistentLayout<Kv, HD, Cfg>;
  constexpr int kTile = L::kTile, kRow = L::kRow, kWarps = Cfg::kWarps, kStages = Cfg::kStages;
  constexpr int kThreads = Cfg::kThreads, kBoxes = kTile / 16;
  const DecodeParams& p = sp.base;
  extern __shared__ __align__(16) unsigned char smem[];
  __nv_bfloat16* sq = reinterpret_cast<__nv_bfloat16*>(smem);
  const uint32_t smem_base = bulk::smem_u32(smem);
  unsigned char* work = smem + (((smem_base + L::kQ + 1023u) & ~1023u) - smem_base);
  // Unit k of this CTA: span[k] = {start, end, len, anchor} (its split's positions, the sequence's
  // length, the split's first 16-position boundary), who[k] = {seq, kv_head, head0, rows | split << 16}.
  int4* span = reinterpret_cast<int4*>(smem + PL::kSpanAt);
  int4* who = reinterpret_cast<int4*>(smem + PL::kWhoAt);
  float* ml = reinterpret_cast<float*>(smem + PL::kMlAt);  // [warp][row][2]: max, sum
  int32_t* parked = reinterpret_cast<int32_t*>(smem + PL::kFreeAt);

  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int pairs = p.num_kv_heads * sp.parts;
  const int64_t total = static_cast<int64_t>(pairs) * p.num_splits * sp.num_seqs;
  const int64_t grid = gridDim.x;
  const int units = total > blockIdx.x ? static_cast<int>((total - blockIdx.x + grid - 1) / grid) : 0;
  const int bs = p.block_size, shift = sp.block_shift;
  unsigned char* mine = work + warp * L::kPerWarp;
  uint64_t* bars = reinterpret_cast<uint64_t*>(work + L::kWork) + warp * kStages;

  // The unit table. Lengths may be read before the chained-launch wait (uploaded before the step's
  // first kernel).
  for (int k = tid; k < units; k += kThreads) {
    const int64_t id = blockIdx.x + k * grid;
    const int pair = static_cast<int>(id % pairs), part = pair % sp.parts;
    const int64_t split_of_seq = id / pairs;
    const int split = static_cast<int>(split_of_seq % p.num_splits),
              seq = static_cast<int>(split_of_seq / p.num_splits);
    const int kv_head = pair / sp.parts;
    const int len = p.context_lens[seq];
    const int per = split_length(len, p.num_splits, p.min_kv_per_split, p.split_rule, kWarps * kTile);
    const int64_t first = static_cast<int64_t>(split) * per;
    const int start = static_cast<int>(min(first, static_cast<int64_t>(len)));
    const int end = static_cast<int>(min(first + per, static_cast<int64_t>(len)));
    span[k] = make_int4(start, end, len, start & ~(kTile - 1));
    who[k] = make_int4(seq, kv_head, kv_head * sp.group + part * sp.rows_per_cta,
                       min(sp.rows_per_cta, sp.group - part * sp.rows_per_cta) | (split << 16));
  }
  if (lane == 0) {
    for (int st = 0; st < kStages; ++st) bulk::mbar_init(bars + st, 1);
    bulk::mbar_init_fence();
  }
  __syncthreads();

  // This warp's tiles of unit k: tile j of the unit goes to warp j % W, as in the per-split kernel.
  auto my_tiles = [&](const int4& sp_k) {
    const int num_tiles = sp_k.x < sp_k.y ? (sp_k.y - sp_k.w + kTile - 1) / kTile : 0;
    return num_tiles > warp ? (num_tiles - warp + kWarps - 1) / kWarps : 0;
  };
  auto tile_first = [&](const int4& sp_k, int i) {
    return max(sp_k.x, sp_k.w + (warp + i * kWarps) * kTile);
  };
  auto record = [&](const int4& who_k, int row) {
    const int64_t slot =
        (static_cast<int64_t>(who_k.x) * p.num_heads + who_k.z + row) * p.num_splits + (who_k.w >> 16);
    return p.workspace + slot * (HD + 2);
  };

  // The copy stream: the next tile to copy is tile ii of this warp in unit ik (ik == units: none
  // left); lane b holds the block id of its box b. Item n of the stream lives in stage n % S.
  int ik = 0, ii = 0, issued = 0;
  int32_t staged_ids = 0;
  auto seek = [&] {  // from (ik, ii) to the first tile this warp has at or after it
    while (ik < units && ii >= my_tiles(span[ik])) {
      ii = 0;
      ++ik;
    }
    staged_ids = 0;
    if (ik < units) {
      const int4 sp_k = span[ik];
      const int pos = tile_first(sp_k, ii) + 16 * lane;
      if (lane < kBoxes && pos < sp_k.z)
        staged_ids =
            __ldg(p.block_tables + static_cast<int64_t>(who[ik].x) * p.max_blocks_per_seq + (pos >> shift));
    }
  };
  auto issue_next = [&] {
    if (ik >= units) return;
    int32_t ids[kBoxes];
#pragma unroll
    for (int b = 0; b < kBoxes; ++b) ids[b] = __shfl_sync(0xffffffffu, staged_ids, b);
    if (lane == 0) {
      const int4 sp_k = span[ik];
      copy_tensor_tile<L>(mine + (issued % kStages) * L::kStage, sp, tile_first(sp_k, ii), sp_k.y, sp_k.z, bs,
                          who[ik].y, ids, bars + issued % kStages);
    }
    ++issued;
    ++ii;
    seek();
  };
  seek();
  // As in the per-split kernel, tiles wholly before position len - 1 may be copied before the
  // wait (no kernel of the step writes them), the rest after it.
  while (sp.early_kv && issued < kStages - 1 && ik < units &&
         tile_first(span[ik], ii) + kTile <= span[ik].z - 1) {
    issue_next();
  }
  // The wait without the release, as in 14 (paged_attention_splitk.cuh): the dependent launches
  // start as the CTAs exit. Released at every CTA's start they launched while the whole persistent
  // grid was still running, and the chained Qwen3-32B-FP8 step at batch 16 took 19% longer than
  // under 14 (docs/PERFORMANCE.md, "Session 21" and "Session 22").
  chained_kernel_wait();
  while (issued < kStages - 1 && ik < units) issue_next();

  auto load_q = [&](uint32_t(&a)[4], int kk) { load_query_fragment<L, HD>(a, sq, kk, lane); };
  const float s_mul = p.scale * kLog2e * (L::kFp8 ? p.k_scale : 1.0f);  // as the per-split kernel's
  const float v_mul = L::kFp8 ? p.v_scale : 1.0f;
  // Floats between parked rows: HD + 2 (the per-split kernel's pitch: rows g and g + 8 of a store
  // fall in different banks) where the park area holds that, else HD. Warp w parks at
  // park_at(w, its free stage).
  auto park_pitch = [](int rows) {
    return PL::kOwnPark || rows * (HD + 2) * 4 <= L::kStage ? HD + 2 : HD;
  };
  auto park_at = [&](int w, int stage) {
    return PL::kOwnPark ? reinterpret_cast<float*>(smem + PL::kParkAt) + w * PL::kParkFloats
                        : reinterpret_cast<float*>(work + w * L::kPerWarp + stage * L::kStage);
  };
  int done = 0;          // tiles this warp has computed (stream items)
  int parked_unit = -1;  // the unit whose warp states are parked, waiting for the merge
  for (int k = 0; k <= units; ++k) {
    // Every warp has passed the barrier after its last read of the query rows and of its stages.
    const bool work_unit = k < units && span[k].x < span[k].y;
    // 1. This unit's query rows (zero beyond its rows) start arriving.
    if (work_unit) {
      const int4 who_k = who[k];
      const int rows = who_k.w & 0xffff;
      for (int c = tid; c < kMaxRows * (HD / 8); c += kThreads) {
        const int r = c / (HD / 8), col = (c % (HD / 8)) * 8;
        const __nv_bfloat16* src = p.q + static_cast<int64_t>(who_k.x) * p.q_stride +
                                   static_cast<int64_t>(who_k.z + min(r, rows - 1)) * HD + col;
        cp_async16(sq + r * kRow + col, src, r < rows);
      }
      cp_async_commit();
    }
    // 2. The parked unit's record.
    if (parked_unit >= 0) {
      const int4 who_p = who[parked_unit];
      const int rows = who_p.w & 0xffff, pitch = park_pitch(rows);
      auto park = [&](int w, int row) {
        return static_cast<const float*>(park_at(w, parked[w])) + row * pitch;
      };
      merge_warp_states<HD, kWarps>(
          rows, tid, kThreads, park, [&](int w, int row) { return ml[(w * kMaxRows + row) * 2]; },
          [&](int w, int row) { return ml[(w * kMaxRows + row) * 2 + 1]; },
          [&](int row, int d, float out, float max_all, float sum) {
            float* rec = record(who_p, row);
            // The per-split kernel's out x v_mul (1 with BF16 KV, kept as a multiply so that NaNs
            // come out canonical as there).
            rec[d] = __fmul_rn(out, v_mul);
            if (d == 0) {
              rec[HD] = max_all;
              rec[HD + 1] = sum;
            }
          });
      parked_unit = -1;
    }
    if (!work_unit) {
      if (k < units) {  // an empty split: the neutral record
        const int4 who_k = who[k];
        for (int i = tid; i < (who_k.w & 0xffff) * (HD + 2); i += kThreads) {
          const int row = i / (HD + 2), d = i % (HD + 2);
          record(who_k, row)[d] = d == HD ? -INFINITY : 0.0f;
        }
      }
      continue;  // nothing was parked, so no stage is reused before the next barrier
    }
    cp_async_wait<0>();
    // The parked stages were written and read through the generic proxy; the copy engine refills
    // them next.
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    __syncthreads();
    // The FP8 arm's f16 MMAs take the query rows in f16, as the per-split kernel converts them on load.
    if constexpr (L::kFp8) {
      for (int c = tid; c < kMaxRows * (HD / 8); c += kThreads) {
        uint4* at = reinterpret_cast<uint4*>(sq + (c / (HD / 8)) * kRow + (c % (HD / 8)) * 8);
        uint4 value = *at;
        query_words_to_f16(value);  // the zero-filled rows past `rows` stay zero
        *at = value;
      }
      __syncthreads();
    }

    // This unit's tiles of this warp, each computed as it arrives; then the warp parks its state
    // in the stage its next copy will fill (item done + S - 1: not issued yet, and its stage's
    // last tile is computed). The loop is written out once per MMA layout, the form measured; a
    // unit's row count is read only after it (live across the loop, it made ptxas spill 22's
    // registers: 36 bytes against 4).
    float m_a = -INFINITY, m_b = -INFINITY, l_a = 0.0f, l_b = 0.0f;
    const int tiles = my_tiles(span[k]);
    int free_stage;
    if constexpr (Cfg::kPosRows) {
      uint32_t qb[HD / 16][2];
      load_query_columns<L, HD>(qb, sq, lane);
      float o[HD / 16][4];
#pragma unroll
      for (int j = 0; j < HD / 16; ++j) o[j][0] = o[j][1] = o[j][2] = o[j][3] = 0.0f;
      for (int i = 0; i < tiles; ++i, ++done) {
        if (issued < done + kStages) issue_next();
        const int4 sp_k = span[k];
        const int tile_start = tile_first(sp_k, i);
        const int tile_end = min(sp_k.w + (warp + i * kWarps + 1) * kTile, sp_k.y);
        unsigned char* stage = mine + (done % kStages) * L::kStage;
        bulk::mbar_wait(bars + done % kStages, (done / kStages) & 1);
        zero_v_rows_past_len<L>(stage, tile_start, sp_k.z, lane);
        __syncwarp();
        splitk_tile_pos_rows<Kv, HD, Cfg>(stage, tile_start, max(sp_k.x, tile_start), tile_end, s_mul, qb, o,
                                          m_a, m_b, l_a, l_b, lane);
        if (tile_start + kTile > sp_k.z) asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
        __syncwarp();
      }
      free_stage = (done + kStages - 1) % kStages;
      const int rows = who[k].w & 0xffff;
      store_warp_state_pos_rows<HD, L::kFp8>(o, m_a, m_b, l_a, l_b, lane, rows, park_at(warp, free_stage),
                                             park_pitch(rows), ml + warp * kMaxRows * 2, 2);
    } else {
      uint32_t qa[HD / 16][4];
#pragma unroll
      for (int kk = 0; kk < HD / 16; ++kk) load_q(qa[kk], kk);
      float o[HD / 8][4];
#pragma unroll
      for (int j = 0; j < HD / 8; ++j) o[j][0] = o[j][1] = o[j][2] = o[j][3] = 0.0f;
      for (int i = 0; i < tiles; ++i, ++done) {
        if (issued < done + kStages) issue_next();  // stream item done + S - 1, maybe of a later unit
        const int4 sp_k = span[k];
        const int tile_start = tile_first(sp_k, i);
        const int tile_end = min(sp_k.w + (warp + i * kWarps + 1) * kTile, sp_k.y);
        unsigned char* stage = mine + (done % kStages) * L::kStage;
        bulk::mbar_wait(bars + done % kStages, (done / kStages) & 1);
        zero_v_rows_past_len<L>(stage, tile_start, sp_k.z, lane);
        __syncwarp();
        splitk_tile<Kv, HD, Cfg>(stage, tile_start, max(sp_k.x, tile_start), tile_end, s_mul, qa, load_q, o,
                                 m_a, m_b, l_a, l_b, lane);
        // The copy engine refills this stage with a later tile (unlike the per-split kernel, whose
        // last tile's stage is never refilled): order the zeroed rows' generic writes before it.
        if (tile_start + kTile > sp_k.z) asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
        __syncwarp();  // this stage is refilled by a later issue
      }
      free_stage = (done + kStages - 1) % kStages;
      const int rows = who[k].w & 0xffff;
      store_warp_state<HD, false>(o, m_a, m_b, l_a, l_b, lane, rows, park_at(warp, free_stage),
                                  park_pitch(rows), ml + warp * kMaxRows * 2, 2);
    }
    if (lane == 0) parked[warp] = free_stage;
    __syncthreads();
    parked_unit = k;
  }
}

// Launches variant 22 (the caller checks the shape: tensor copies served, sp.slices == 1) as
// persistent_grid_ctas (wave_fill.h) sizes it at the CTAs per SM splitk_ctas_per_sm() allows
// `units` taken as CTAs: under `auto` ceil(units / SMs) where one wave holds them (one unit a
// CTA, spread: the block scheduler would otherwise pack them onto a few SMs), else the count whose
// rounds of units fill best (BF16's rule: the fewer on a tie); a pinned cap makes the grid that
// many CTAs per SM. A grid of one unit a CTA, one whose last round would run on fewer than half
// the SMs, or one of more than kPersistentGridMaxSplits splits a sequence, is launched per split
// instead (launch_main, Cfg's own kernel; persistent_grid_pays). A unit's bytes do not depend on
// which CTA, or which of the two kernels, runs it.
template <typename Kv, int HD, typename Cfg>
cudaError_t launch_persistent(SplitParams sp, int32_t num_seqs, int sm_count, cudaStream_t stream) {
  using PL = PersistentLayout<Kv, HD, Cfg>;
  auto* kernel = paged_decode_splitk_persistent<Kv, HD, Cfg>;
  // Up to the opt-in limit, so that a launch may pad its request (launch_main sets it the same way).
  static const cudaError_t opt_in = cudaFuncSetAttribute(
      kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
      std::max(PL::kBytes, device_shared_memory_limits().max_per_cta));
  if (opt_in != cudaSuccess) return opt_in;
  static const int resident = resident_ctas_per_sm(kernel, Cfg::kThreads, PL::kBytes, Cfg::kCtasPerSm);
  const int64_t units = static_cast<int64_t>(sp.base.num_kv_heads) * sp.parts * sp.base.num_splits * num_seqs;
  const int cap = splitk_ctas_per_sm_cap(resident, units, !PL::L::kFp8);
  const int64_t ctas = persistent_grid_ctas(units, sm_count, cap, kMaxUnitsPerCta);
  if (!persistent_grid_pays(units, ctas, sm_count, sp.base.num_splits)) {
    return launch_main<Kv, HD, Cfg>(sp, num_seqs, stream);
  }
  sp.num_seqs = num_seqs;
  return launch_chained_status(kernel, dim3(static_cast<unsigned>(ctas)), dim3(Cfg::kThreads),
                               splitk_smem_for_cap(PL::kBytes, resident, cap), stream, sp);
}

}  // namespace lathe::cuda::attn::splitk
