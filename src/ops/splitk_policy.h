#pragma once
// The paged-decode split-K policy: how many KV splits a decode launch uses, and the GQA-pack
// gate. Pure functions of configuration; the CUDA dispatch and the workspace sizing both call
// decode_num_splits, so a launch can never address more slots than were allocated.
//
// Why the split count must not follow the live batch: merging online-softmax partials is not
// associative. A sequence whose KV is cut into a different number of pieces when it shares a
// step with other sequences takes a different rounding path and can flip a temperature-0 argmax.
// So the `auto` and pinned policies read (sm_count, num_q_heads) and nothing else; the split
// count is fixed for the life of a serve. `legacy` keeps the older rule that reads the reference
// batch max(num_seqs, max_decode_seqs); it exists to be measured against and as the known-bad
// control of the determinism tests, and no target declares it.
//
// What the old rule got wrong on big parts: with num_q_heads * ref_seqs at or above the SM count
// it picks ONE split even at batch 1 (24 q heads x 16 reference sequences >= 132 SMs on an H100),
// so a single-sequence step launched 24 CTAs on 132 SMs and read its KV at ~1% of HBM bandwidth.
// `auto` sizes for the single-sequence shape instead, which is the one that starves.
//
// Short contexts are the kernel's business: each sequence's split length is
// max(ceil(len / splits), kMinKvPerSplit), computed on the device from its own length, so the
// host never reads device-side lengths (CUDA graphs) and short sequences leave trailing splits
// empty instead of cutting their KV into slivers.
#include <cstddef>
#include <cstdint>

#include "target/levers.h"

namespace lathe::ops {

using target::kMaxDecodeSplits;
using target::kMaxSplitSlices;
using target::SplitkPolicy;

// CTA waves `auto` aims for at batch 1. Two rather than one: a decode CTA waits on a paged gather
// most of the time, and a second resident CTA per SM covers the first one's misses; beyond that,
// every extra split only adds partials for the reduce to merge and repeats the Q load.
inline constexpr uint32_t kSplitkTargetWaves = 2;

// The fewest KV positions one split covers (the kernel's floor on the split length). Measured on
// the H200 (2026-11-30, decode step at 1k context, bench/results/attn_min_split_2026-11-30.txt):
// 256 helps Qwen3-8B (9 splits; batch 4/16/64 -3.5/-3.6/-8.1%) but hurts Qwen3-32B (5 splits;
// batch 16 +4% FP8, +11% BF16), because a floor above ceil(len / splits) leaves a ragged last
// split; 512 helps both at batch >= 16 and costs 8B batch 1 3.6%. No constant wins everywhere, so
// 128 stays. Re-measured under the wide geometry (variant 6, below; session 8): 256 / 512 still
// help batch 64 (-5 / -6% on 8B) but now cost batch 4 (+4 to +5%) and batch 1. LATHE_ATTN_MIN_KV_PER_SPLIT overrides it for measurement (ops/cuda/attention_dispatch.cpp).
inline constexpr int32_t kMinKvPerSplit = 128;

// clamp(ceil(kSplitkTargetWaves * sm_count / num_q_heads), 1, kMaxDecodeSplits). Zero arguments
// are treated as 1.
uint32_t auto_splits(uint32_t sm_count, uint32_t num_q_heads);

// The older batch-dependent rule: 1 when num_q_heads * ref_seqs already covers the SMs, else
// sm_count / (num_q_heads * ref_seqs) (floor). Zero arguments are treated as 1.
uint32_t legacy_splits(uint32_t sm_count, uint32_t num_q_heads, uint32_t ref_seqs);

// The reference batch the legacy rule reads: max(num_seqs, max_decode_seqs, 1).
uint32_t legacy_reference_seqs(uint32_t num_seqs, uint32_t max_decode_seqs);

// THE split count of a decode launch. `legacy_ref_seqs` is read by the legacy policy only; auto
// and pinned are functions of (sm_count, num_q_heads) alone. The result is in 1..kMaxDecodeSplits
// for every input except a legacy count on a part with more than 16x the heads' SMs (legacy is
// not clamped: it is preserved as it was).
uint32_t decode_num_splits(const SplitkPolicy& policy, uint32_t sm_count, uint32_t num_q_heads,
                           uint32_t legacy_ref_seqs);

// Workspace records ([head_dim] partial output + running max + running sum, f32) the split-K arm
// must have room for. The split kernel writes record ((seq * num_q_heads) + head) * splits + split,
// so auto/pinned need max_rows * num_q_heads * splits, with max_rows the widest decode batch the
// serve accepts (not a typical one: a short allocation is a silent out-of-bounds device write).
// Legacy needs sm_count: its rule keeps num_seqs * num_q_heads * splits <= sm_count for every
// batch whose reference covers it.
uint64_t workspace_slots(const SplitkPolicy& policy, uint32_t sm_count, uint32_t num_q_heads,
                         uint32_t max_rows, uint32_t legacy_ref_seqs);
// With slices (decode_split_slices), every split owns `slices` records: the slots above times slices.

// Bytes of one workspace record for a head_dim (head_dim + 2 floats).
size_t workspace_record_bytes(int32_t head_dim);

// ---- Split slices ----------------------------------------------------------------------------
// At batch 1 a split-K launch has num_kv_heads x splits CTAs once the query group is packed (40-72
// for the Qwen3 shapes on 132 SMs): most SMs idle while each CTA streams its long split. Slicing
// cuts each split into up to `slices` pieces with their own records (the kernel derives the pieces
// from the sequence's own length: backends/cuda/split_length.h, split_slices_used) that separate
// CTAs can take. The cap is, like the split count, a function of configuration only: with
// pairs = num_kv_heads * splits * max_decode_seqs (the widest grid the serve can launch unsliced),
//   auto: pairs <= sm_count / 2 ? clamp(floor(waves * sm_count / pairs), 1, kMaxSplitSlices) : 1
// with waves = the CTAs per SM of the serve's geometry (split_slice_waves: 1 for the
// single-sequence geometry, else 2), i.e. slices only where even the widest decode batch the
// serve admits (--max-num-seqs) leaves more than half the SMs without a CTA, and as many as fill
// the geometry's CTA slots once. Measured on the H200
// (docs/PERFORMANCE.md, "Split slices"): slices pay at batch 1 and long contexts where a
// sequence's grid is that small (40 and 44 pairs: 1.6-2.3x at 16k-64k; Qwen3-32B decode step at
// 16k -6.3%) but cost wider batches (CTAs for the slices short sequences leave unused, or a CTA
// running a split's slices in turn: up to +35% at batch 64, 1k context), and for 72 pairs
// (Qwen3-8B) the batch-1 step gained nothing (+0.3% at 16k, -0.6% at 32k, +1.7% at 1k). It counts
// KV heads whether or not packing is armed, so both arms keep the same bytes.
// The fewest positions a slice covers (the kernel's floor on a slice's length).
inline constexpr int32_t kMinKvPerSlice = 256;

// Slices per split: 0 = auto (above), -N = auto but at most N (target::auto_slices_at_most),
// N >= 1 = at most N (clamped to kMaxSplitSlices; 1 = off) whatever the batch. The legacy policy
// never slices (it is kept as it was), nor does a launch without splits.
uint32_t decode_split_slices(int32_t slices_lever, const SplitkPolicy& policy, uint32_t sm_count,
                             uint32_t num_kv_heads, uint32_t splits, uint32_t max_decode_seqs);

// ---- Split-K kernel geometry ---------------------------------------------------------------
// The split-K kernel is compiled in several geometries (backends/cuda/paged_attention_splitk_
// variants.cuh); a query's bytes depend on the geometry's warps per CTA, so a serve picks ONE,
// from configuration only, and keeps it. Three are used, all with tensor copies (one lane per warp
// requests a tile's K and V rows as 128-byte-swizzled boxes; the cp.async geometries 5, 6 and 4
// serve shapes the copies do not):
//   narrow (variant 16): 6 warps per CTA, two CTAs per SM (13), or four stages at one CTA per SM
//     where the grid has at most one CTA per SM (15; the same bytes): more warps and more bytes in
//     flight on each split, which is what a batch-1 step (num_kv_heads x splits CTAs, 40-72 here,
//     fewer than the SMs) needs;
//   wide (variant 14): 4 warps per CTA, three CTAs per SM: a wide grid of short-lived CTAs overlaps
//     one CTA's start-up, first-tile wait and merge with the others' streaming.
// Measured on the H200 (docs/PERFORMANCE.md, "Session 8"): the wide geometry took the Qwen3-8B-FP8
// decode step at 1k context from 4.187 / 5.976 / 10.313 ms to 4.006 / 5.604 / 9.183 ms at batch
// 4 / 16 / 64 (batch 1 3.592 -> 3.573), but cost batch 1 at 16k 2% (4.380 -> 4.469 ms) and the
// batch-1 kernel up to 21% at 64k (24/4/256). So a serve whose widest decode batch is at most
// kSplitkNarrowMaxSeqs sequences (a latency serve, where the slices above also arm) keeps the
// narrow geometry, and every other serve takes the wide one (at batch 2 the narrow one is faster
// on the 24/4/256 and 64/8/128 shapes at L >= 4k, up to 1.24x, and 1.05-1.07x slower on
// 32/8/128). Session 11 (2026-12-01, "Session 11" there) measured the tensor-copy twins in the same
// process: 16 against 5 at batch 1, 14 against 6 at batch >= 4, mostly +1 to +3 points of the read
// ceiling, up to +11 (batch 4 at 64k) and +10 (32/8/128 batch 1 at 64k, the four stages).
// LATHE_ATTN_SPLITK_KERNEL overrides the choice.
// Session 12 (2026-12-01, "Session 12" there): a single-sequence serve (--max-num-seqs 1) takes
// a third geometry, variant 21 (6 warps of 32-position tiles at HD 128; at HD 256 variant 20's 6
// warps of 16), one CTA per SM: at batch 1 every warp is bound by its own instruction latency
// (Nsight Compute: 1.5 warps per scheduler, 0.33 eligible), so more warp-tiles per split stream
// faster, and its grid (with the one-wave slices above) never needs a second CTA slot. Batch-1
// kernel +0.3 to +6.4 points at 16k-64k (BF16), decode step at 16k -2.3% (Qwen3-8B-FP8) and -2.1%
// (Qwen3-32B-FP8), +0.5% at 1k. At batch 2 it would need two waves on 32/8/128 (5-35% slower than
// 16), so a 2-sequence serve keeps the narrow geometry.
// Session 20 (2026-12-01, "Session 20" there): the wide serves take variant 22, the wide geometry
// 14 on a persistent grid (its CTAs run the launch's units in turn; 14's bytes), which it launches
// for BF16 KV at head dim 128 and gives 14 itself elsewhere. Kernel at batch 16: +4 to +9% at 1k-4k
// (32/8/128), +3 to +11% at every context (64/8/128, whose 640 units fill 1.6 waves of 14's grid);
// batch 4 within 2% either way; the Qwen3-8B-FP8 decode step 1.9-2.5% shorter at batch 16 and 64.
// It stayed opt-in there because it took the chained Qwen3-32B-FP8 step at batch 16 19% up; session
// 21 traced that to its CTAs releasing the dependent launches at their start. With only one-unit
// CTAs releasing, its steps against 14's at batch 16: Qwen3-8B-FP8 -2.6%, Qwen3-32B-FP8 -3.3%,
// Qwen3-8B BF16 -3.5%, Qwen3-32B BF16 -23% (one round); batch 4 within 1%. It is the wide default
// from session 21. Since session 22 no split-K CTA releases early (paged_attention_splitk.cuh), so
// the one-unit rule those figures were taken under is gone; its A/B is in "Session 22" there.
// Session 37 (2026-12-04, "Session 37" there): the single and wide serves take geometries with
// positions as the MMA rows (half the MMAs a tile): 26 (variant 20's twelve warps of 16-position
// tiles) and 25 (22's persistent grid). Batch-1 kernel (BF16 KV) 2-30% faster than 21, with FP8 KV
// up to 1.5x; batches 4-64 up to 1.24x faster than 22 with BF16 KV (FP8 KV 0.69-1.10x of 22's
// time: slower on 64/8/128 at batch 16 from 4k); the Qwen3-8B-FP8 decode step 1.0-1.6% shorter at
// batches 1, 16 and 64. 23 (21's six warps of 32) measured level with 26 on BF16 and up to 22%
// slower on FP8. The narrow serves keep 16 (no position-row form of it).
// Session 54 (2026-12-06, H100, "Session 54" there): the opt-in 27 is 25 except with FP8 KV at
// head dim 128 and 8 query heads a CTA (64/8/128, Qwen3-32B), where it runs the head-row 14. That
// trades short contexts for long ones: on 64/8/128 FP8 14 is 3 / 7.7 / 7.6 points faster at batch
// 16 and 4k / 16k / 64k but 10.7 slower at batch 64 and 1k (2-2.4 slower at 4k-16k), and the
// Qwen3-32B-FP8 step with an FP8 cache is 5.1% shorter at batch 16, 16k and 0.8% longer at batch
// 64, 4k. No single geometry serves both, so the wide serves keep 25; a serve of long contexts
// with an FP8 cache can set LATHE_ATTN_SPLITK_KERNEL=27.
// Session 55 (H100): what 24 (25's launch with FP8 KV) lost there was occupancy, not geometry: its
// 105 registers fit 4 CTAs per SM against 14's 3, so 640 CTAs at batch 16 ran 528 and then 112
// alone. Under the CTAs-per-SM cap (backends/cuda/wave_fill.h, default auto) 24 is ahead of 14 on
// 64/8/128 FP8 at batch 16 (76.7 / 90.3 / 95.0% against 72.5 / 88.8 / 94.0 at 4k / 16k / 64k) and
// the Qwen3-32B-FP8 step at batch 16, 16k is 5.5% shorter on 25 itself: the kernel tables leave 27
// no case (its step under the cap was not measured).
// Session 62 (H100): 25 launches its units on the persistent grid only past one wave; a launch
// whose units fit one wave (one unit a CTA either way) runs 24 per split, faster in 28 of 30 such
// cells (by up to 5%; 0.3% slower in the other two). Past one wave 24 per split was faster in 34
// of 42 cells of 32/8/128 (up to 9%, most at 1k-4k) but slower in 24 of 36 of 64/8/128 (up to 6%,
// batch 12-32), so 25 keeps the persistent grid there ("Session 62" under "Paged decode attention").
// Session 63 (H100): past one wave too, where the persistent grid's last round of units would run
// on fewer than half the SMs (32/8/128 batch 8: 48 CTAs; 40/8/128 batch 10 / 24: 32 / 24), 25
// launches per split: 24 was faster in all 25 such cells of four runs, by 0.9-9.7%
// (backends/cuda/wave_fill.h, persistent_grid_pays; "Session 63" there).
// Session 64 (H100): and where a sequence has more than 8 splits (32/8/128's 9, 16/8/128's 16):
// per split was faster in 75 of 76 cells of 9 splits at 1k-4k (up to 8.2%), level from 16k, and
// the Qwen3-8B-FP8 step with a BF16 cache 0.3-1.3% shorter at batch 16-64 (14 of 14 pairs). With 5
// splits (64/8/128) the persistent grid stays, faster at 1k ("Session 64" there).
inline constexpr int32_t kSplitkKernelSingle = 26;
inline constexpr int32_t kSplitkKernelNarrow = 16;
inline constexpr int32_t kSplitkKernelWide = 25;
inline constexpr uint32_t kSplitkNarrowMaxSeqs = 2;

// CTAs per SM the auto slice rule fills for a serve of max_decode_seqs sequences: 1 for the
// single-sequence geometry (one CTA per SM), else 2.
uint32_t split_slice_waves(uint32_t max_decode_seqs);

// The split-K kernel variant of a serve whose decode steps carry at most max_decode_seqs
// sequences (0 is treated as 1).
int32_t decode_splitk_kernel(uint32_t max_decode_seqs);

// ---- GQA-packed decode ---------------------------------------------------------------------
// The packed kernel puts a whole query group (the heads sharing one KV head) into one CTA, keeps
// their queries in registers and reads each K/V row once: grid (num_kv_heads, sequences) instead
// of (num_q_heads, sequences). Group width and head dim are compile-time in the kernel (register
// arrays are sized by them), so only the instantiated shapes are admitted. It is used in the
// non-split arm only: there it does the same arithmetic per query as the unpacked kernel and is
// bit-identical to it. (The seed's rule against packing under split-K was that packing there would
// re-derive the split count from num_kv_heads, changing the merge tree. Here the split count stays
// the policy's; the split-K kernel is a tensor-core kernel whose rows are independent, so it packs
// with identical bytes: see splitk_rows_per_cta.)

// Compiled group widths (num_q_heads / num_kv_heads) and head dims of the packed kernel.
inline constexpr int32_t kGqaPackGroups[] = {2, 4, 6, 8};
inline constexpr int32_t kGqaPackHeadDims[] = {128, 256};

// True exactly for a compiled (group, head_dim) with num_q_heads == num_kv_heads * group: the
// ratio is tested by multiplication, so 25 q heads over 4 kv heads (which truncating division
// would call 6) is refused.
bool gqa_pack_shape_ok(int32_t num_q_heads, int32_t num_kv_heads, int32_t head_dim);

// Query heads one split-K CTA carries when packing is armed. The split-K kernel runs on tensor
// cores, where a query's bytes do not depend on which tile row or CTA carries it, so this is a
// pure occupancy choice. It is the whole group, split evenly into m16 tiles when wider than 16:
//   rows = ceil(group / ceil(group / 16))
// so each K/V row is read ceil(group / 16) times. (Until 2026-11-30 the rule cut the group into
// more parts at small batches to fill one wave of CTAs; measured on the H200 with the
// staged-block-id kernel, re-reading K/V for the extra parts cost more than the CTAs gained at
// every batch-1 shape, e.g. 32/8/128 at 64k context: 31% against 61% of the read ceiling,
// bench/attention/results/attention_bench_kernels_2026-11-30a.csv, auto+pack vs auto+full.)
int32_t splitk_rows_per_cta(int32_t group);

// CTAs a packed launch puts on the device (num_kv_heads * num_seqs), against
// num_q_heads * num_seqs unpacked: the whole trade of the packed arm in one number.
uint64_t gqa_pack_ctas(int32_t num_kv_heads, int32_t num_seqs);

}  // namespace lathe::ops
