#pragma once
// Split-K paged decode on a persistent grid (variant 22): the wide tensor-copy geometry (14) with
// its CTAs sharing out the launch's units instead of one CTA per unit.
//
// A unit is one (query rows of one KV head, split, sequence): what one CTA of the per-split kernel
// (paged_attention_splitk.cuh) computes. Units are numbered ((seq * splits) + split) * pairs +
// pair (pairs = KV heads x parts; the per-split kernel's grid order, so CTAs that run at the same
// time read the same blocks' rows of neighbouring heads, which lie together in the cache). CTA c
// of a grid of G runs unit c, then takes units G, G + 1, ... from a counter of the launch, one at
// a time, three ahead of the one it computes: which CTA runs which unit follows where and when
// the CTAs run, the bytes do not. (Dealt out statically instead, c, c + G, ..., the Qwen3-32B-FP8
// step at batch 16 took 19% longer than with 14: a chained launch starts its CTAs wherever SMs
// free up, and SMs that got three two-unit CTAs set the pace.) The grid is as wide as the
// geometry's CTAs per SM fill the device (fewer when there are fewer units), so at batch >= 16
// every CTA runs several units and the launch has neither a partly filled last wave nor a CTA
// start-up per unit.
//
// Each warp's K/V tiles form ONE stream across its CTA's units: the tile after a unit's last is
// the next unit's first (for this warp), copied while the last is computed, so the copy engine
// does not drain at a unit's end. Within a unit the warps take the tiles, keep their online
// softmax state and merge it in warp order exactly as the per-split kernel does (same warps W,
// tile T, tile-to-warp rotation, merge; paged_attention_splitk_state.cuh), so every unit's record
// has variant 14's bytes, whatever the grid width and whichever CTA runs it (tested).
//
// At a unit's end each warp parks its state in its free stage (the one its next copy will fill;
// BF16 o needs rows x HD x 4 bytes, a stage holds 2 x T x HD x 2: enough for 16 rows, and for 8 with
// FP8 KV, whose stage is half as large), its max and sum in a small array, then the CTA merges
// the parked states into the unit's record while the next unit's query rows arrive.
//
// Registers decide its speed: the per-split kernel's tile loop already holds nearly all that three
// CTAs per SM allow, so the state that walks the units lives in a shared-memory table (with it in
// registers ptxas recomputed the fragment addresses in every tile, and one-unit-per-CTA launches
// ran up to 14% slower than 14's). With FP8 KV ptxas still copies the query fragments around the
// tile's MMAs (the tile takes ~20% more instructions than 14's) and the kernel measured up to 40%
// slower, so the launcher (paged_attention_splitk_variants.cuh) takes it for BF16 KV at head dim
// 128 only, without slices (docs/PERFORMANCE.md, "Session 20").
#include "backends/cuda/paged_attention_splitk.cuh"

namespace lathe::cuda::attn::splitk {

// Descriptors of a CTA's units in shared memory: a ring (unit k in slot k % kUnitSlots; a slot is
// rewritten long after its unit's record is out, the CTA describing at most three units ahead).
inline constexpr int kUnitSlots = 32;

// Unit counters of the persistent kernel, [slot][0]: units taken beyond each CTA's first, [1]: CTAs
// finished; the last CTA of a launch resets both, so every launch starts from zero (device globals
// start zeroed). A launch takes the slot its workspace address picks: launches in flight at the
// same time (other streams, other serves in the process) must have their own workspaces, which
// the backends' do, and a collision of two such slots is what the 64 of them make unlikely;
// launches on one stream are ordered (a launch takes units only after its chained-launch wait).
inline constexpr int kCounterSlots = 64;
namespace {
__device__ int g_unit_counters[kCounterSlots][2];
}  // namespace

template <typename Kv, int HD, typename Cfg>
struct PersistentLayout {
  using L = SplitLayout<Kv, HD, Cfg>;
  static_assert(L::kSwizzled && !Cfg::kAlignedTiles && Cfg::kCluster == 1 && !Cfg::kSliceLoop,
                "the persistent kernel streams 16-position tensor-copy tiles");
  // After SplitLayout's bytes: the units' descriptors (two int4 each: the split's positions, and
  // whose rows), each warp's parked max and sum per row, the stage each warp parked its o in, and
  // how many units the CTA has described and whether the launch has none left.
  static constexpr int kSpanAt = L::kBytes;
  static constexpr int kWhoAt = kSpanAt + kUnitSlots * 16;
  static constexpr int kMlAt = kWhoAt + kUnitSlots * 16;
  static constexpr int kFreeAt = kMlAt + Cfg::kWarps * kMaxRows * 2 * 4;
  static constexpr int kKnownAt = kFreeAt + Cfg::kWarps * 4;
  static constexpr int kBytes = kKnownAt + 8;
  // Query rows a parked o of one warp may hold: a stage's bytes / (HD floats).
  static constexpr int kParkRows = L::kStage / (HD * 4);
  static_assert(Cfg::kCtasPerSm * (kBytes + 1024) <= 228 * 1024, "shared memory of the CTAs one SM should hold");
};

template <typename Kv, int HD, typename Cfg>
__global__ void __launch_bounds__(Cfg::kThreads, Cfg::kCtasPerSm)
    paged_decode_splitk_persistent(const __grid_constant__ SplitParams sp) {
  using L = SplitLayout<Kv, HD, Cfg>;
  using PL = PersistentLayout<Kv, HD, Cfg>;
  constexpr int kTile = L::kTile, kRow = L::kRow, kWarps = Cfg::kWarps, kStages = Cfg::kStages;
  constexpr int kThreads = Cfg::kThreads, kBoxes = kTile / 16;
  constexpr bool kQInRegs = HD <= 128;
  const DecodeParams& p = sp.base;
  extern __shared__ __align__(16) unsigned char smem[];
  __nv_bfloat16* sq = reinterpret_cast<__nv_bfloat16*>(smem);
  const uint32_t smem_base = bulk::smem_u32(smem);
  unsigned char* work = smem + (((smem_base + L::kQ + 1023u) & ~1023u) - smem_base);
  // Unit k of this CTA, in slot k % kUnitSlots: span = {start, end, len, anchor} (its split's
  // positions, the sequence's length, the split's first 16-position boundary), who = {seq,
  // kv_head, head0, rows | split << 16}.
  int4* span = reinterpret_cast<int4*>(smem + PL::kSpanAt);
  int4* who = reinterpret_cast<int4*>(smem + PL::kWhoAt);
  float* ml = reinterpret_cast<float*>(smem + PL::kMlAt);  // [warp][row][2]: max, sum
  int32_t* parked = reinterpret_cast<int32_t*>(smem + PL::kFreeAt);
  volatile int& known = *reinterpret_cast<int*>(smem + PL::kKnownAt);  // units described so far
  volatile int& exhausted = *reinterpret_cast<int*>(smem + PL::kKnownAt + 4);  // no unit left to take

  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int pairs = p.num_kv_heads * sp.parts;
  const int64_t total = static_cast<int64_t>(pairs) * p.num_splits * sp.num_seqs;
  const int bs = p.block_size, shift = sp.block_shift;
  unsigned char* mine = work + warp * L::kPerWarp;
  uint64_t* bars = reinterpret_cast<uint64_t*>(work + L::kWork) + warp * kStages;
  int* counters = g_unit_counters[(reinterpret_cast<uintptr_t>(p.workspace) >> 8) % kCounterSlots];

  // Unit `id` as the CTA's unit k (thread 0). The length may be read before the chained-launch
  // wait (uploaded before the step's first kernel).
  auto describe = [&](int k, int64_t id) {
    const int pair = static_cast<int>(id % pairs), part = pair % sp.parts;
    const int64_t split_of_seq = id / pairs;
    const int split = static_cast<int>(split_of_seq % p.num_splits), seq = static_cast<int>(split_of_seq / p.num_splits);
    const int kv_head = pair / sp.parts;
    const int len = p.context_lens[seq];
    const int per = split_length(len, p.num_splits, p.min_kv_per_split, p.split_rule, kWarps * kTile);
    const int64_t first = static_cast<int64_t>(split) * per;
    const int start = static_cast<int>(min(first, static_cast<int64_t>(len)));
    const int end = static_cast<int>(min(first + per, static_cast<int64_t>(len)));
    span[k % kUnitSlots] = make_int4(start, end, len, start & ~(kTile - 1));
    who[k % kUnitSlots] = make_int4(seq, kv_head, kv_head * sp.group + part * sp.rows_per_cta,
                                    min(sp.rows_per_cta, sp.group - part * sp.rows_per_cta) | (split << 16));
    __threadfence_block();  // the descriptor before the count that publishes it
    known = k + 1;
  };
  // Thread 0, after the wait: takes units until `upto` are described or none is left. Each CTA's
  // first unit is its own index; the rest are taken in turn from the launch's counter, so a CTA
  // that streams faster (its SM less loaded: chained launches start CTAs wherever SMs free up)
  // takes more units, and the grid stays balanced whatever the placement.
  auto take_units = [&](int upto) {
    while (!exhausted && known < upto) {
      const int64_t id = gridDim.x + static_cast<int64_t>(atomicAdd(&counters[0], 1));
      if (id < total) {
        describe(known, id);
      } else {
        exhausted = 1;
      }
    }
  };
  if (tid == 0) {
    known = 0;
    exhausted = 0;
    describe(0, blockIdx.x);  // the launcher makes the grid at most the units
  }
  if (lane == 0) {
    for (int st = 0; st < kStages; ++st) bulk::mbar_init(bars + st, 1);
    bulk::mbar_init_fence();
  }
  __syncthreads();

  // This warp's tiles of a unit: tile j of the unit goes to warp j % W, as in the per-split kernel.
  auto my_tiles = [&](const int4& sp_k) {
    const int num_tiles = sp_k.x < sp_k.y ? (sp_k.y - sp_k.w + kTile - 1) / kTile : 0;
    return num_tiles > warp ? (num_tiles - warp + kWarps - 1) / kWarps : 0;
  };
  auto tile_first = [&](const int4& sp_k, int i) { return max(sp_k.x, sp_k.w + (warp + i * kWarps) * kTile); };
  auto record = [&](const int4& who_k, int row) {
    const int64_t slot = (static_cast<int64_t>(who_k.x) * p.num_heads + who_k.z + row) * p.num_splits + (who_k.w >> 16);
    return p.workspace + slot * (HD + 2);
  };

  // The copy stream: the next tile to copy is tile ii of this warp in unit ik; lane b holds the
  // block id of its box b. Item n of the stream lives in stage n % S. The stream may reach a unit
  // not described yet: it then waits there (ready false) and the tile loop retries later, copying
  // fewer tiles ahead meanwhile (never blocking: thread 0 describes units only between tiles).
  int ik = 0, ii = 0, issued = 0;
  bool ready = false;
  int32_t staged_ids = 0;
  auto seek = [&] {  // from (ik, ii) to the first tile this warp has at or after it, if described
    for (;;) {
      if (ik >= known) return false;
      __threadfence_block();  // the count before the descriptor it publishes
      const int4 sp_k = span[ik % kUnitSlots];
      if (ii < my_tiles(sp_k)) {
        const int pos = tile_first(sp_k, ii) + 16 * lane;
        staged_ids = lane < kBoxes && pos < sp_k.z
                         ? __ldg(p.block_tables + static_cast<int64_t>(who[ik % kUnitSlots].x) * p.max_blocks_per_seq +
                                 (pos >> shift))
                         : 0;
        return true;
      }
      ++ik;
      ii = 0;
    }
  };
  auto issue_next = [&] {  // copies the next tile if it is known; whether it did
    if (!ready && !(ready = seek())) return false;
    int32_t ids[kBoxes];
#pragma unroll
    for (int b = 0; b < kBoxes; ++b) ids[b] = __shfl_sync(0xffffffffu, staged_ids, b);
    if (lane == 0) {
      const int4 sp_k = span[ik % kUnitSlots];
      copy_tensor_tile<L>(mine + (issued % kStages) * L::kStage, sp, tile_first(sp_k, ii), sp_k.y, sp_k.z, bs,
                          who[ik % kUnitSlots].y, ids, bars + issued % kStages);
    }
    ++issued;
    ++ii;
    ready = seek();
    return true;
  };
  // As in the per-split kernel, tiles wholly before position len - 1 may be copied before the
  // wait (no kernel of the step writes them), the rest after it.
  ready = seek();
  while (sp.early_kv && issued < kStages - 1 && ready &&
         tile_first(span[ik % kUnitSlots], ii) + kTile <= span[ik % kUnitSlots].z - 1) {
    issue_next();
  }
  chained_kernel_begin();
  if (tid == 0) take_units(3);
  while (issued < kStages - 1 && issue_next()) {
  }

  auto load_q = [&](uint32_t(&a)[4], int kk) { load_query_fragment<L, HD>(a, sq, kk, lane); };
  const float s_mul = p.scale * kLog2e * (L::kFp8 ? p.k_scale : 1.0f);
  const float v_mul = L::kFp8 ? p.v_scale : 1.0f;
  // Floats between parked rows: HD + 2 (the per-split kernel's pitch: rows g and g + 8 of a store
  // fall in different banks) where a stage holds that, else HD.
  auto park_pitch = [](int rows) { return rows * (HD + 2) * 4 <= L::kStage ? HD + 2 : HD; };
  int done = 0;          // tiles this warp has computed (stream items)
  int parked_unit = -1;  // the unit whose warp states are parked, waiting for the merge
  for (int k = 0;; ++k) {
    // Every warp has passed the barrier after its last read of the query rows and of its stages.
    // Thread 0 describes up to three units ahead; every thread waits until unit k is described or
    // the launch has none left.
    if (tid == 0) take_units(k + 3);
    while (known <= k && !exhausted) {
    }
    __threadfence_block();
    const bool have = known > k;
    const int4 span_k = have ? span[k % kUnitSlots] : make_int4(0, 0, 0, 0);
    const bool work_unit = have && span_k.x < span_k.y;
    // 1. This unit's query rows (zero beyond its rows) start arriving.
    if (work_unit) {
      const int4 who_k = who[k % kUnitSlots];
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
      const int4 who_p = who[parked_unit % kUnitSlots];
      const int rows = who_p.w & 0xffff, pitch = park_pitch(rows);
      auto park = [&](int w, int row) {
        return reinterpret_cast<const float*>(work + w * L::kPerWarp + parked[w] * L::kStage) + row * pitch;
      };
      merge_warp_states<HD, kWarps>(
          rows, tid, kThreads, park, [&](int w, int row) { return ml[(w * kMaxRows + row) * 2]; },
          [&](int w, int row) { return ml[(w * kMaxRows + row) * 2 + 1]; },
          [&](int row, int d, float out, float max_all, float sum) {
            float* rec = record(who_p, row);
            rec[d] = __fmul_rn(out, v_mul);
            if (d == 0) {
              rec[HD] = max_all;
              rec[HD + 1] = sum;
            }
          });
      parked_unit = -1;
    }
    if (!work_unit) {
      if (!have) break;  // no unit left, and the last one's record is out
      {  // an empty split: the neutral record
        const int4 who_k = who[k % kUnitSlots];
        for (int i = tid; i < (who_k.w & 0xffff) * (HD + 2); i += kThreads) {
          const int row = i / (HD + 2), d = i % (HD + 2);
          record(who_k, row)[d] = d == HD ? -INFINITY : 0.0f;
        }
      }
      continue;  // nothing was parked, so no stage is reused before the next barrier
    }
    cp_async_wait<0>();
    if constexpr (L::kFp8) {  // this thread's own query chunks, as the f16 the FP8 arm multiplies
      for (int c = tid; c < (who[k % kUnitSlots].w & 0xffff) * (HD / 8); c += kThreads) {
        const int r = c / (HD / 8), col = (c % (HD / 8)) * 8;
        query_words_to_f16(*reinterpret_cast<uint4*>(sq + r * kRow + col));
      }
    }
    // The parked stages were written and read through the generic proxy; the copy engine refills
    // them next.
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    __syncthreads();

    uint32_t qa[kQInRegs ? HD / 16 : 1][4];
    if constexpr (kQInRegs) {
#pragma unroll
      for (int kk = 0; kk < HD / 16; ++kk) load_q(qa[kk], kk);
    }
    float o[HD / 8][4];
#pragma unroll
    for (int j = 0; j < HD / 8; ++j) o[j][0] = o[j][1] = o[j][2] = o[j][3] = 0.0f;
    float m_a = -INFINITY, m_b = -INFINITY, l_a = 0.0f, l_b = 0.0f;
    const int tiles = my_tiles(span_k);
    for (int i = 0; i < tiles; ++i, ++done) {
      while (issued < done + kStages && issue_next()) {  // up to item done + S - 1, maybe a later unit's
      }
      const int4 sp_k = span[k % kUnitSlots];
      const int tile_start = tile_first(sp_k, i);
      const int tile_end = min(sp_k.w + (warp + i * kWarps + 1) * kTile, sp_k.y);
      unsigned char* stage = mine + (done % kStages) * L::kStage;
      bulk::mbar_wait(bars + done % kStages, (done / kStages) & 1);
      zero_v_rows_past_len<L>(stage, tile_start, sp_k.z, lane);
      __syncwarp();
      splitk_tile<Kv, HD, Cfg>(stage, tile_start, max(sp_k.x, tile_start), tile_end, s_mul, qa, load_q, o, m_a, m_b,
                               l_a, l_b, lane);
      // The copy engine refills this stage with a later tile (unlike the per-split kernel, whose
      // last tile's stage is never refilled): order the zeroed rows' generic writes before it.
      if (tile_start + kTile > sp_k.z) asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
      __syncwarp();  // this stage is refilled by a later issue
    }
    // Park this warp's state in the stage its next copy will fill (item done + S - 1: not issued yet,
    // and its stage's last tile is computed).
    const int free_stage = (done + kStages - 1) % kStages;
    const int rows = who[k % kUnitSlots].w & 0xffff;
    store_warp_state<HD, L::kFp8>(o, m_a, m_b, l_a, l_b, lane, rows, reinterpret_cast<float*>(mine + free_stage * L::kStage),
                                  park_pitch(rows), ml + warp * kMaxRows * 2, 2);
    if (lane == 0) parked[warp] = free_stage;
    __syncthreads();
    parked_unit = k;
  }
  // The launch's last CTA to finish resets the counters for the next launch: every CTA's thread 0
  // has taken its last ticket (the one that found no unit left) before it counts itself finished.
  if (tid == 0) {
    __threadfence();
    if (atomicAdd(&counters[1], 1) == static_cast<int>(gridDim.x) - 1) {
      counters[0] = 0;
      counters[1] = 0;
    }
  }
}

// Launches variant 22 (the caller checks the shape: tensor copies served, sp.slices == 1, at most
// PersistentLayout::kParkRows query rows per CTA): min(units, CTAs per SM x SMs) CTAs.
template <typename Kv, int HD, typename Cfg>
cudaError_t launch_persistent(SplitParams sp, int32_t num_seqs, int sm_count, cudaStream_t stream) {
  using PL = PersistentLayout<Kv, HD, Cfg>;
  static const cudaError_t opt_in = cudaFuncSetAttribute(paged_decode_splitk_persistent<Kv, HD, Cfg>,
                                                         cudaFuncAttributeMaxDynamicSharedMemorySize, PL::kBytes);
  if (opt_in != cudaSuccess) return opt_in;
  const int64_t units = static_cast<int64_t>(sp.base.num_kv_heads) * sp.parts * sp.base.num_splits * num_seqs;
  int64_t ctas = std::min<int64_t>(units, static_cast<int64_t>(Cfg::kCtasPerSm) * sm_count);
  sp.num_seqs = num_seqs;
  return launch_chained_status(paged_decode_splitk_persistent<Kv, HD, Cfg>, dim3(static_cast<unsigned>(ctas)),
                               dim3(Cfg::kThreads), PL::kBytes, stream, sp);
}

}  // namespace lathe::cuda::attn::splitk
