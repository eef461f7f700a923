#pragma once
// How many CTAs of a launch an SM may hold: the split-K decode kernel's occupancy cap (pure
// functions, tested on the host in tests/unit/cuda_host/wave_fill_test.cpp; applied by
// paged_attention_splitk.cuh launch_main).
//
// A grid of C equal CTAs on S SMs holding k each runs in ceil(C / (k S)) waves; when the last wave
// is only partly filled its few CTAs run alone, each with only its own copies in flight, and the
// launch takes a whole wave's time for a fraction of the bytes. E.g. 640 CTAs (64/8/128, batch 16,
// 5 splits) of a kernel whose registers allow 4 CTAs per SM: 528 run, then 112 alone; at 3 per SM
// 396 then 244. Capping k trades warps per SM for a fuller last wave. Which SM runs a CTA, and with
// how many others, changes when its bytes arrive, never its bytes, so the cap may follow the live
// batch (the grid) without touching the determinism invariant.
//
// A grid that fits one wave has the opposite problem: the block scheduler packs CTAs onto SMs up to
// their residency rather than spreading them, so 176 CTAs of a kernel that fits 5 per SM may run on
// ~36 SMs and leave the rest idle (measured: 24/4/256 with an FP8 cache at batch 4, 57% of the read
// ceiling at 16k as it is, 81% with at most 2 per SM). There the cap is the fewest CTAs per SM that
// still hold the grid in one wave, ceil(C / S), which spreads it over every SM.
#include <algorithm>
#include <cstdint>

namespace lathe::cuda {

// The fraction of the wave slots a grid of `ctas` fills at `per_sm` CTAs per SM on `sm_count`
// SMs: ctas / (waves x per_sm x sm_count), waves = ceil(ctas / (per_sm x sm_count)).
inline double wave_fill(int64_t ctas, int sm_count, int per_sm) {
  const int64_t slots = static_cast<int64_t>(per_sm) * sm_count;
  if (ctas <= 0 || slots <= 0) return 0.0;
  const int64_t waves = (ctas + slots - 1) / slots;
  return static_cast<double>(ctas) / static_cast<double>(waves * slots);
}

// The CTAs per SM to allow a grid of `ctas` whose kernel fits `resident` per SM: when one wave at
// `resident` holds the grid, ceil(ctas / sm_count) (at least 1), so that it spreads over the SMs;
// else the count in [ceil(resident / 2), resident] whose waves the grid fills best, unless it fills
// less than `min_gain` more of its slots than `resident` does. On a tie the larger count, or the
// smaller with `fewer_on_tie`. Half the resident CTAs is the floor there: fewer warps per SM keep
// too few copies in flight to read at full speed.
inline int wave_fill_ctas_per_sm(int64_t ctas, int sm_count, int resident, double min_gain,
                                 bool fewer_on_tie = false) {
  if (resident <= 1 || sm_count <= 0) return resident;
  if (ctas <= static_cast<int64_t>(resident) * sm_count) {
    return ctas <= sm_count ? 1 : static_cast<int>((ctas + sm_count - 1) / sm_count);
  }
  const double at_resident = wave_fill(ctas, sm_count, resident);
  int best = resident;
  double best_fill = at_resident;
  for (int k = resident - 1; k >= (resident + 1) / 2; --k) {
    const double fill = wave_fill(ctas, sm_count, k);
    const bool better = fill > best_fill || (fewer_on_tie && fill == best_fill);
    if (better && fill >= at_resident + min_gain) {
      best = k;
      best_fill = fill;
    }
  }
  return best;
}

// A persistent grid (CTAs that share out a launch's `units`, each running at most
// `max_units_per_cta`) held at `per_sm` CTAs per SM: min(units, per_sm x sm_count) CTAs, more
// when that would give a CTA more than `max_units_per_cta` units. Its `per_sm` is the wave-fill
// choice for `units` as if each were a CTA: a CTA of G = per_sm x sm_count runs units c, c + G, ...,
// so the units run in ceil(units / G) rounds, filled as a grid of `units` CTAs fills its waves;
// fewer units than one wave holds spread one a CTA.
inline int64_t persistent_grid_ctas(int64_t units, int sm_count, int per_sm, int max_units_per_cta) {
  if (units <= 0) return 0;
  int64_t ctas = units;
  if (per_sm > 0 && sm_count > 0) ctas = std::min<int64_t>(units, static_cast<int64_t>(per_sm) * sm_count);
  if (max_units_per_cta > 0)
    ctas = std::max<int64_t>(ctas, (units + max_units_per_cta - 1) / max_units_per_cta);
  return ctas;
}

// The CTAs that run a unit in the last round of a persistent grid of `ctas` CTAs dealing out `units`
// (CTA c runs units c, c + ctas, ...): units - (rounds - 1) x ctas, rounds = ceil(units / ctas).
inline int64_t persistent_grid_last_round(int64_t units, int64_t ctas) {
  if (units <= 0 || ctas <= 0) return 0;
  const int64_t rounds = (units + ctas - 1) / ctas;
  return units - (rounds - 1) * ctas;
}

// Splits of a sequence past which the persistent grid does not pay (persistent_grid_pays).
inline constexpr int kPersistentGridMaxSplits = 8;

// Whether the persistent grid is worth launching for `units` of `num_splits` splits a sequence on
// `ctas` CTAs, rather than the per-split launch of the same geometry (the same units and bytes, one
// a CTA; the launcher is paged_attention_splitk_persistent.cuh, launch_persistent). Only where some
// CTA runs more than one unit, the last round still has a CTA on at least half of the `sm_count`
// SMs, and a sequence is cut into at most kPersistentGridMaxSplits splits:
// - one unit a CTA (the units fit one wave) is the per-split grid with the persistent kernel's unit
//   bookkeeping added: per split was faster in 28 of 30 such cells on an H100, by up to 5%
//   (session 62, docs/PERFORMANCE.md);
// - the rounds are fixed, so a last round of few units runs them alone for a whole unit's time
//   while most SMs idle; a per-split launch's block scheduler starts its last CTAs as slots free
//   up. E.g. 576 units (32/8/128, batch 8) at 2 CTAs per SM: 264 CTAs, 48 in the third round. In
//   every one of 25 cells over four H100 runs whose last round ran on fewer than half the SMs (48,
//   32 and 24 CTAs) per split was faster, by 0.9-9.7% (sessions 62-63);
// - a persistent CTA runs its units' ends in turn (query rows in, warp states parked and merged, the
//   record out) while a per-split launch overlaps one CTA's end with its neighbours' copies, and
//   the more splits, the shorter each unit (len / splits positions, at least the split floor).
//   Over seven H100 runs (sessions 62-64, BF16) at 1k-4k per split was faster in 75 of 76 cells of
//   9 splits (32/8/128; the other level), by up to 8.2%, and in all 8 of 16 splits (16/8/128), by
//   0.9-19.5%; from 16k the two are level on the mean. With 5 splits (64/8/128) the persistent grid
//   was faster at 1k in 22 of 27 cells, with 7 (40/8/128) the two are level on the mean: those keep
//   it. The Qwen3-8B-FP8 decode step (9 splits, BF16 cache) was 0.3-1.3% shorter per split at batch
//   16-64 and 1k-16k, in 14 of 14 pairs.
inline bool persistent_grid_pays(int64_t units, int64_t ctas, int sm_count, int num_splits) {
  return num_splits <= kPersistentGridMaxSplits && ctas < units &&
         2 * persistent_grid_last_round(units, ctas) >= sm_count;
}

// Shared memory limits of the device (cudaDevAttr*: per SM, reserved by the system per CTA, and
// the most one CTA may opt into).
struct SharedMemoryLimits {
  int per_sm = 0;
  int reserved_per_cta = 0;
  int max_per_cta = 0;
};

// The dynamic shared memory a launch asks for so that at most `cap` of its CTAs fit one SM: the
// kernel's own `kernel_bytes` when those already keep it at `cap` or fewer, else the least size,
// in 128-byte units, at which cap + 1 CTAs no longer fit while cap still do. Returns kernel_bytes
// when no size in the opt-in limit does that (the cap cannot be applied through shared memory).
inline int shared_memory_for_cap(int kernel_bytes, int cap, const SharedMemoryLimits& limits) {
  if (cap < 1 || limits.per_sm <= 0) return kernel_bytes;
  const int per_cta = limits.reserved_per_cta;
  if (static_cast<int64_t>(cap + 1) * (kernel_bytes + per_cta) > limits.per_sm) return kernel_bytes;
  // Smallest s with (cap + 1) (s + reserved) > per_sm, rounded up to the allocation unit.
  int bytes = limits.per_sm / (cap + 1) - per_cta + 1;
  bytes = (bytes + 127) / 128 * 128;
  if (bytes < kernel_bytes) bytes = kernel_bytes;
  if (bytes > limits.max_per_cta || static_cast<int64_t>(cap) * (bytes + per_cta) > limits.per_sm) {
    return kernel_bytes;
  }
  return bytes;
}

}  // namespace lathe::cuda
