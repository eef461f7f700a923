#pragma once
// Decode-width linear layers: y[m, n] = sum_k x[m, k] * W[n, k] (* scale) (+ bias[n]) for
// m <= 32 rows per launch, with W read ONCE per launch for all rows.
//
// Tiers (ONE kernel template, instantiated with kMaxM = 1, 4, 16, 32):
//   gemv (m = 1), gemv_batch4 (m <= 4), gemv_batch16 (m <= 16); 17..32 rows are two batch16
//   launches on contiguous row halves (linear_dispatch decides, the caller launches), or, by
//   default (LATHE_FFN_BATCH32), one gemv_batch32 launch (built for every kernel `auto` picks, at
//   its own ring depth: gemv_unsupported_reason says when not).
//
// Bit identity. Every output row is produced by the same sequence of operations whatever the
// tier and whatever the other rows hold: a warp owns 16 weight rows and feeds them to
// mma.sync.m16n8k16 (bf16 in, fp32 accumulate) as the A operand, with up to 8 (or 16) token rows
// as the B columns. Each B column has its own fp32 accumulators; the K order (128-wide steps, two
// 64-wide halves, four MMAs each), the K segments across CTAs (a function of (n, k) only:
// gemv_ring_ksplit for the register ring, gemv_stream_cta_steps-style ranges for the balanced
// variants) and the fixed-order segment reduction do not depend on m or on the tier. So each row
// of any tier is byte-equal to the m = 1 launch (tests/gpu/cuda/gemv_test.cpp). The 16-row tier's
// warpgroup-MMA form (GemvVariant::wgmma) feeds the same fragments to wgmma, whose fp32 sums are
// bit-identical to mma.sync's (gemv_wgmma.cuh).
//
// Kernels (GemvKernel). The default for both dtypes is "auto" (gemv_auto_variant): per shape,
// ringbal (the register ring on a byte-balanced persistent grid of 264 CTAs; 396, three per SM,
// for fp8 weights) when the weight has more than 264 row blocks, else the register ring with a K
// split that fills one wave of 264 CTAs (two per SM), or of 396 (three per SM) where that wave is
// much better filled. Same shape => same kernel and grid at every m, which the bit identity
// needs. Measured on the H200 (2026-11-30): bench/results/gemv_sweep_2026-11-30.txt (K splits,
// stages, ringbal) and gemv_sweep2_2026-11-30.txt (auto vs the former default ring). bf16
// weights of vocabulary width (lm_head) take stream:tma:b2 (bulk tensor copies, gemv_stream.cu;
// gemv_auto_variant); elsewhere the stream kernel stays opt-in.
//
// Requirements (gemv_unsupported_reason says which one fails): k % 128 == 0, W and x 16-byte
// aligned, x row stride a multiple of 8 elements, m in [1, tier]. FP8 W in the stored order of
// fp8_weight_layout.h (K reordered inside 64-k blocks; Backend::upload_linear_weight); bf16 W and x
// in natural order.
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "backends/cuda/rope_kv.h"

namespace lathe::cuda {

enum class GemvWeight { kFp8E4M3, kBf16 };
// W[n, k] = code * s with s = scale[0] (kPerTensor), scale[n] (kPerChannel) or
// scale[(n / 128) * (k / 128) + k / 128] (kBlock128). kNone for BF16 weights.
enum class GemvScale { kNone, kPerTensor, kPerChannel, kBlock128 };

// GemvProblem / GemvVariant early_weights: take the process-wide gemv_early_weights().
inline constexpr int kGemvEarlyInherit = -2;

// Tiers 1 and 4 normalise their own input (one norm launch fewer): with weight set, the rows the
// GEMV multiplies are round_bf16(rms_norm(x[r]) * weight), bit for bit what launch_rms_norm
// stores as its out (and so, for x the residual stream after a y_add GEMV, what
// launch_add_rms_norm stores). weight f32 [k], 16-byte aligned; k <= 8192; the register-ring
// kernels without the bit trick (gemv_unsupported_reason / gemv_variant_unsupported_reason say
// when not).
struct GemvNormInput {
  const float* weight = nullptr;  // null: x as given
  float eps = 0.0f;
};

struct GemvProblem {
  const void* w = nullptr;  // [n, k] row-major (fp8 codes or bf16)
  GemvWeight weight = GemvWeight::kFp8E4M3;
  int64_t n = 0;
  int64_t k = 0;
  GemvScale scale_kind = GemvScale::kNone;
  const float* scale = nullptr;
  const float* bias = nullptr;  // f32 [n] or null
  const void* x = nullptr;      // bf16 [m, k], row stride x_stride elements
  int64_t x_stride = 0;
  void* y = nullptr;  // bf16 or f32 [m, n], row stride y_stride elements
  int64_t y_stride = 0;
  bool y_f32 = false;
  int m = 0;
  // Weight steps this launch reads before the chained-launch wait (gemv_early_weights' values);
  // kGemvEarlyInherit: the process-wide value. A variant's own early_weights (a per-shape override)
  // takes precedence over both.
  int early_weights = kGemvEarlyInherit;
  GemvNormInput norm;  // tiers 1 and 4: x normalised in the kernel
  // bf16 y is the residual stream: y = round_bf16(y + round_bf16(result)), the residual update of
  // launch_add_rms_norm bit for bit (residual += the GEMV's bf16 output).
  bool y_add = false;
  // > 0: the SwiGLU epilogue. W is gate|up ([gate; up], silu_inter rows each, n = 2 * silu_inter,
  // silu_inter % 64 == 0) and y is bf16 [m, silu_inter] with y[r, i] = silu(g) * u for g, u the
  // gate|up output's bf16 values at columns i and silu_inter + i: bit for bit what this GEMV
  // followed by launch_silu_mul stores, with no gate|up output written. Each 128-row block of the
  // register ring then holds 64 gate rows and the same 64 up rows, so the K split, and with it
  // every sum, is the plain GEMV's. Built for the register ring with one CTA per row block in the
  // configurations `auto` takes (fp8 s2, bf16 s1; ':g16' or ':wgn' in tiers 1 and 4), not for
  // ringbal (its K segments depend on the block's place in the grid, so the remapped blocks would
  // sum rows in another order), the stream kernel, ':bits' or deeper rings:
  // gemv_unsupported_reason says when not.
  int64_t silu_inter = 0;
  // Not null: the QK-norm + RoPE + paged KV write epilogue of a q | k | v projection (W is
  // [q heads; k heads; v heads] of head_dim 128 rows each, y bf16 [m, (num_heads + 2 num_kv_heads)
  // * 128]). The caller fills everything but tokens, q, k, v and their strides (this launch's m
  // and output rows), with positions and slot_mapping at this launch's first row. A 128-row block is
  // one head; the CTA that sums it keeps the block's bf16-rounded values in shared memory and runs
  // launch_qk_norm_rope_kv_write's per-head step (rope_kv.cuh) on them, storing q and k normalised
  // and rotated, v as computed, and k and v into the cache: bit for bit what this GEMV followed by
  // launch_qk_norm_rope_kv_write stores. Built only for the configurations `auto` takes on every
  // Qwen3 q|k|v shape (the two-CTA register ring, fp8 s2 / bf16 s1, ':g16' or ':wgn' in tiers 1
  // and 4, mma.sync in the 16-row tier); gemv_unsupported_reason says when not.
  const QkNormRopeArgs* rope = nullptr;
};

// Split-K scratch. The balanced and stream kernels and the register ring's 16- and 32-row tiers: partial
// sums and one arrival counter per CTA or row block (the last CTA of a block resets its counter,
// so replays need no memset). The register ring's tiers 1 and 4: split slots, one 64-bit word per
// (split, row block, token row, weight row) holding a partial's fp32 bits and a full flag
// (gemv_common.cuh, put_slot / sum_split_slots); the CTA that sums a block empties the slots it
// read, so every slot is empty between launches. Counters and slots start at zero
// (gemv_workspace_in).
struct GemvWorkspace {
  float* partials = nullptr;
  size_t partial_floats = 0;
  int* counters = nullptr;
  int counter_count = 0;
  uint64_t* split_slots = nullptr;
  size_t split_slot_count = 0;
};

// Workspace that covers every (n, k): the balanced kernels need 2 * 128 * 16 floats (32 columns
// in the 32-row tier) and one counter per CTA (132 to 396 CTAs); the register-ring variant's gemv_ksplit
// keeps ksplit * 16 * n under kGemvWorkspaceFloats (8 MB: raised from 4 MB for the 264-CTA grid), and its
// slots, ksplit * 16 * n rounded up to whole 128-row blocks, under twice that (32 MB) for n >= 128.
// The partials hold twice kGemvWorkspaceFloats (kGemvPartialFloats), so the 32-row tier's
// ksplit * 32 * n fits under the SAME K split (a shape's split never depends on the tier).
inline constexpr size_t kGemvWorkspaceFloats = size_t{1} << 21;
inline constexpr size_t kGemvPartialFloats = 2 * kGemvWorkspaceFloats;
inline constexpr int kGemvCounterCount = 1024;
inline constexpr size_t kGemvSplitSlots = 2 * kGemvWorkspaceFloats;

// Bytes of device memory gemv_workspace_in needs (every part 256-byte aligned).
size_t gemv_workspace_bytes();
// A full-size GemvWorkspace carved out of `base` (gemv_workspace_bytes() bytes, 256-byte
// aligned), its counters and split slots zeroed on `stream`.
GemvWorkspace gemv_workspace_in(void* base, cudaStream_t stream);

// The K split of a (n, k) weight: 1 when there are enough 128-row blocks to fill the device,
// otherwise enough splits for ~132 CTAs with at least 4 steps (512 k) each. A pure function of
// the shape (never of m or the device), which is what keeps rows bit-identical across tiers.
int gemv_ksplit(int64_t n, int64_t k);
// Steps of 128 k per split.
int gemv_chunk_steps(int64_t n, int64_t k);

// Default kernel: 128-k steps x 128-row blocks of weight per CTA (ceil of total / 132); a pure
// function of the shape. A 128-row block whose units straddle CTA ranges is summed in segments.
int64_t gemv_stream_cta_steps(int64_t n, int64_t k);

// Weights read before a chained kernel's wait (chained_launch.cuh). The weights never change
// after load, so the register ring may start streaming its first steps while the previous kernel
// of the stream (a norm, SwiGLU, the attention reduce) is still running; x is read only after the
// wait. steps < 0: nothing before the wait; 0: the ring's first steps (the loads it makes anyway);
// N > 0: also N more steps of each CTA's rows prefetched into L2. Applies to every tier (the
// 16-row tier since session 17; it had measured slower before its split-K sum was batched), unless
// a launch (GemvProblem::early_weights: the backend's 4-row tier right after attention) or a
// per-shape variant (GemvVariant::early_weights) sets its own value.
// Changes no arithmetic (the same bytes reach the same instructions). Process-wide, set once at
// backend start (LATHE_GEMV_EARLY_WEIGHTS, ops/cuda/chained_launch_lever.cpp); kernel benchmarks
// launch unchained, where it has nothing to overlap.
void set_gemv_early_weights(int steps);
int gemv_early_weights();
// Whether variants with ":sa" (GemvVariant::split_sum_all, `auto` on the two-CTA register ring) share
// the split-K sum (default on). Its splits wait for each other, which is fast only where every CTA
// of the grid is resident at once: gemv_launch checks the grid against two CTAs per SM of the
// device, but an MPS client limited to part of the SMs may have fewer than the device reports; the
// waits are bounded (gemv_split_sum_wait_ns), so there they cost time, and this switch (off: the last
// split sums alone, the same bytes) avoids it. Process-wide, set once at backend start
// (LATHE_GEMV_SPLIT_SUM, ops/cuda/chained_launch_lever.cpp).
void set_gemv_split_sum(bool on);
bool gemv_split_sum();
// The shared split-K sum's wait (":sa", GemvVariant::split_sum_all), in ns: how long a split waits
// for the block's other splits to arrive before leaving its share to the last one (default 20 us).
// Either way gives the same bytes; a run-out wait only costs time (it happens where a block's CTAs
// are not all resident at once, which gemv_launch avoids where it can tell). Process-wide; tests set
// 0, so a split that finds the others not yet arrived leaves its share at once.
inline constexpr uint32_t kGemvSplitSumWaitNs = 20000;
void set_gemv_split_sum_wait_ns(uint32_t ns);
uint32_t gemv_split_sum_wait_ns();
// The widths (decode rows) up to which ':sa' launches do not wait at all (default 8): a split that
// finds the block's other splits not all arrived leaves its share to the last to arrive, which
// sums those with its own in one pass, about what the last split summing alone costs; the splits
// arriving after every other still sum their own. Wider launches wait up to
// gemv_split_sum_wait_ns. Process-wide, set once at backend start
// (LATHE_GEMV_SPLIT_SUM_NOWAIT_ROWS, 0..32; ops/cuda/chained_launch_lever.cpp).
inline constexpr int kGemvSplitSumNoWaitRows = 8;
void set_gemv_split_sum_nowait_rows(int rows);
int gemv_split_sum_nowait_rows();
// The L2 promotion of the stream kernel's weight tensor copies (the `:tma` variants): 0 (none, the
// default since session 39), 64, 128 or 256 bytes (what sessions 9-38 ran). A benchmark lever
// (lathe_bench_kernels --tma-l2-promotion); false for a size it does not know. Changes no
// arithmetic.
bool set_gemv_tma_l2_promotion(int promotion_bytes);
int gemv_tma_l2_promotion();
inline constexpr int kGemvEarlyWeightsMax = 64;

// Empty when the problem can run on `tier` (1, 4, 16 or 32) with this workspace (and, for 32, on
// the shape's default kernel: the stream kernel, or the register ring on either grid at fp8 s2 or
// bf16 s1 without ':bits'; the SwiGLU epilogue is built on its one-CTA-per-block ring, the
// QK-norm/RoPE one nowhere).
std::string gemv_unsupported_reason(int tier, const GemvProblem& problem, const GemvWorkspace& workspace);

// Kernel variants the benchmark compares; production uses the default.
// kDefault: the kernel measured best for the weight dtype (gemv_policy.cpp, gemv_default_variant).
// kStream: bulk-copy smem ring, persistent byte-balanced grid (132 CTAs; sm_90+).
// kRegisterRing: register ring, one CTA per (128-row block, K split) (the pre-sm_90 path).
// kRingBalanced: the register ring on a persistent byte-balanced grid (264 CTAs).
// kAuto: gemv_auto_variant's per-shape choice (the register-ring kernels; the stream for bf16 lm_heads).
enum class GemvKernel { kDefault, kStream, kRegisterRing, kRingBalanced, kAuto };
struct GemvVariant {
  // Register ring: 128-k steps of W in flight per thread; 0 = default (fp8 2, bf16 1); built:
  // fp8 2 or 4, bf16 1 or 2 (gemv_launch refuses others).
  // Stream: shared-memory ring stages (256 bytes of each of 128 rows); 0 = the deepest that fits.
  int stages = 0;
  bool bit_trick =
      false;  // register ring, fp8 only: integer decode instead of the packed cvt (not NaN-exact)
  GemvKernel kernel = GemvKernel::kDefault;
  // Balanced kernels: grid size (changes the K segments, so rows match other `ctas` only
  // closely); 0 = 132 (stream) or 264 (ringbal). Register ring: K split = max(1, ctas / row
  // blocks) (the grid fits `ctas` CTAs) unless ksplit is set; 0 = gemv_ksplit's rule.
  int ctas = 0;
  int row_bytes = 0;  // stream: bytes of each weight row per stage, 256 (0) or 512 (two stages)
  bool tma =
      false;  // stream: weights by 2-D tensor copies (one per warp and stage) instead of one copy per row
  // Register ring (non-balanced): K split forced to this many CTAs per 128-row block (clamped by
  // gemv_ring_ksplit); 0 = gemv_ksplit's rule. A function of the variant only, so per shape the
  // split is still the same at every m.
  int ksplit = 0;
  // Register ring (non-balanced), tiers 1 and 4: steps of x staged per shared-memory buffer,
  // 4 (0) or 16 (a quarter of the CTA barriers; what "auto" picks). Changes no row's arithmetic.
  int group_steps = 0;
  // Stream with tensor copies ("stream:tma:b2", ":b3"): 2 or 3 CTAs per SM (rings sized for it,
  // 264 or 396 CTAs unless ctas is set; 16 or 24 compute warps per SM instead of 8); else one.
  // Register ring: CTAs per SM the registers of every tier are budgeted for, 2 (0) or 3 ("b3":
  // fp8 s2 and bf16 s1 only; 80 registers, 24 warps per SM). Ringbal then takes 396 CTAs and
  // "auto:b3" fills a wave of 396 with its K splits. Since session 15 (the refill-after ring: no
  // spills, except 40 bytes in bf16 s1 on the balanced grid) `auto` takes it where it fills its
  // wave much better than two CTAs per SM do, and since session 16 for fp8 weights on the
  // balanced grid (gemv_auto_variant); elsewhere it is slower (docs/PERFORMANCE.md).
  int ctas_per_sm = 0;
  // Weight steps read before the chained-launch wait for this variant ("e<N>", "eoff"); the
  // default kGemvEarlyInherit takes the process-wide gemv_early_weights(). Lets
  // LATHE_GEMV_SHAPE_VARIANTS time early reads shape by shape inside the real step. Changes no
  // arithmetic.
  int early_weights = kGemvEarlyInherit;
  // Register ring, 16- and 32-row tiers (":wg"): each 16-k chunk as one warpgroup MMA (wgmma
  // m64n16k16 / m64n32k16, weights from registers, x from shared memory) instead of two (four)
  // mma.sync per warp and their x loads. Bit-identical sums (gemv_wgmma.cuh), so rows keep the
  // m = 1 bytes; devices without wgmma (not sm_90, or a binary without sm_90a code) run the
  // mma.sync form. Tiers 1 and 4 ignore it.
  bool wgmma = false;
  // Register ring, tiers 1 and 4 (":wgn"): the same as n8 warpgroup MMAs (wgmma m64n8k16), x staged
  // 8 steps per buffer (whatever group_steps says). Bit-identical sums, as ":wg".
  bool wgmma_narrow = false;
  // With wgmma_narrow (":wgnu" instead of ":wgn"): the n8 warpgroup MMA only in launches that copy
  // x; a launch that normalises x itself (GemvNormInput) keeps mma.sync. The same sums either way.
  // Session 61 (H100, Qwen3-32B gate|up on the balanced grid): ":wgn" took 3.5-3.8 us off the
  // kernel after a separate norm at 1 and 4 rows, but its fused-norm form lengthened the batch-1
  // step by 0.3% (docs/PERFORMANCE.md, "Session 61").
  bool wgmma_narrow_copied_x_only = false;
  // Register ring, 16-row tier under ":wg", fp8 weights (":xt"): each group of x staged by the copy
  // engine (one thread issues a 2-D tensor copy per 64-k half into the 128-byte-swizzled B layout,
  // completing on an mbarrier; rows past m arrive as zeros) instead of every thread's 16-byte
  // cp.async. The same x bytes in the same places, so the same sums; other tiers ignore it, and a
  // launch whose tensor map the driver refuses stages x the ordinary way.
  bool x_tensor = false;
  // Register ring (one CTA per row block and K split), 16- and 32-row tiers (":sa"): every K split
  // of a row block sums its own share of the block's rows once all of the block's splits have
  // written their partials, instead of the last to arrive summing every row. The same adds in the
  // same order, so the same bytes. Applied only at two CTAs per SM where the launch's whole grid is
  // resident at once (the splits wait for each other), without an epilogue, and for n % 4 == 0;
  // ignored elsewhere.
  bool split_sum_all = false;
};

// The per-shape choice ("auto"), a pure function of (dtype, n, k):
//   bf16 weights of at least kStreamTmaMinBlocks row blocks (vocabulary projections): the stream
//   kernel with tensor copies at two CTAs per SM ("stream:b2:tma"; session 39: Qwen3-8B/32B
//   lm_head 5-6% faster at m = 1, 7-8% at m = 16 than ringbal);
//   more 128-row blocks than 264 (two CTAs per SM of the H100/H200): ringbal (byte-balanced
//   persistent grid; the row blocks alone would leave a partial second wave), for fp8 weights with
//   the warpgroup MMA in the 16- and 32-row tiers and the 16-row tier's x by tensor copies
//   ("ringbal:wg:xt"; ":wg" since session 48, ":xt" since session 49), and in tiers 1 and 4 the n8
//   warpgroup MMA where x is copied ("ringbal:wg:wgnu:xt", session 61), at three CTAs per SM (396,
//   without ":wgnu") for vocabulary projections (kStreamTmaMinBlocks row blocks and more,
//   "ringbal:b3:wg:xt");
//   otherwise the register ring with K split max(gemv_ksplit, min(264 / blocks, bytes / 96 KB)):
//   as many splits as fill one wave of 264 CTAs while every split keeps >= 96 KB of its row
//   block's weights (6 steps of fp8, 3 of bf16; session 31), never fewer than the old rule;
//   fp8 with chunks of >= 32 steps keeps 4 steps in flight (s4);
//   the register ring stages 16 steps of x per shared-memory buffer in tiers 1 and 4 (g16);
//   unless the same rule for a wave of 396 CTAs (three per SM, "b3", ring depth fp8 2 / bf16 1)
//   fills its wave by >= kThreeCtaFillGain more (gemv_policy.h): then that (Qwen3-8B gate|up,
//   Qwen3.5-27B gated q); fp8 weights on the register ring, at two or three CTAs per SM, take the
//   warpgroup MMA in every tier (":wg:wgn"; sessions 23-24, 45 and 48); the two-CTA ring's K
//   splits each sum a share of their block's rows in the 16- and 32-row tiers (":sa", session 50).
GemvVariant gemv_auto_variant(bool fp8, int64_t n, int64_t k);

// K split of the register ring for a requested split `want` (0 = gemv_ksplit's rule): clamped
// to [1, k / 256] (chunks of at least 2 steps) and to what kGemvWorkspaceFloats holds
// (split * 16 * n floats); every split is non-empty; 1 for an odd n (gemv_ksplit too).
int gemv_ring_ksplit(int64_t n, int64_t k, int want);
// Steps of 128 k per split for gemv_ring_ksplit(n, k, want).
int gemv_ring_chunk_steps(int64_t n, int64_t k, int want);

// The kernel a (weight dtype, n, k) takes by default: ONE pure function of the shape (never of m
// or the tier, which the bit identity across tiers needs), unless set_gemv_shape_variants
// overrides that shape. See gemv_policy.cpp for the measured table.
GemvVariant gemv_default_variant(bool fp8, int64_t n, int64_t k);

// The concrete kernel a request runs: kDefault becomes gemv_default_variant (the shape's override
// or the dtype's default), then "auto" becomes gemv_auto_variant qualified by the request's own
// fields (g, b3, s, e). Pure (gemv_launch also swaps the bulk-copy stream for the register ring on a
// device without bulk copies).
GemvVariant gemv_resolve_variant(const GemvVariant& variant, bool fp8, int64_t n, int64_t k);

// Per-shape overrides of the default kernel: a measurement lever (LATHE_GEMV_SHAPE_VARIANTS, read
// once at backend start, ops/cuda/chained_launch_lever.cpp) for timing another grid or ring of one
// weight shape inside the real decode step. An override is a variant like any other: the same at
// every m and tier, so rows stay byte-equal across tiers; its bytes may differ from the default's
// (another K split sums in another order).
struct GemvShapeVariant {
  bool fp8 = true;
  int64_t n = 0;
  int64_t k = 0;
  GemvVariant variant;
};
// "fp8/4096x4096=ring:k8:s4:g16,bf16/6144x4096=auto:s2" (entries separated by commas, spaces
// ignored; dtype fp8 or bf16; an empty or blank text is no override). nullopt when any entry is
// malformed, repeats a (dtype, n, k), or names a variant that is not built for its dtype
// (gemv_variant_unsupported_reason); `error` then says which.
std::optional<std::vector<GemvShapeVariant>> parse_gemv_shape_variants(const std::string& text,
                                                                       std::string* error = nullptr);
// Process-wide; set before the first launch (graphs keep what they captured).
void set_gemv_shape_variants(std::vector<GemvShapeVariant> overrides);
std::vector<GemvShapeVariant> gemv_shape_variants();

// Empty when `variant` (after resolving kDefault/kAuto for the shape) is a built configuration
// for the weight dtype; otherwise why not. gemv_launch refuses what this refuses.
std::string gemv_variant_unsupported_reason(bool fp8, int64_t n, int64_t k, const GemvVariant& variant);

// Why `tier` cannot run the SwiGLU (rope false) or QK-norm/RoPE (rope true) epilogue after the
// resolved variant `resolved` (gemv_resolve_variant's result) on a device with or without
// warpgroup MMAs, in a launch that normalises x itself (fused_norm) or copies it; empty when it
// can. Pure: gemv_launch asks it with this device's answer, and the
// host test asks it for `auto` on every Qwen3 shape both ways (session 45's `auto` lost the
// QK-norm/RoPE epilogue of tiers 1 and 4 on Hopper only, which only a GPU run showed).
std::string gemv_epilogue_unbuilt_reason(int tier, bool fp8, const GemvVariant& resolved, bool rope,
                                         bool has_wgmma, bool fused_norm = false);

// gemv_unsupported_reason for a launch of `variant` (gemv_launch refuses what this refuses).
std::string gemv_unsupported_reason(int tier, const GemvProblem& problem, const GemvWorkspace& workspace,
                                    const GemvVariant& variant);

// Launches one tier on `stream`. Throws lathe::Error when gemv_unsupported_reason is non-empty.
void gemv_launch(int tier, const GemvProblem& problem, const GemvWorkspace& workspace, cudaStream_t stream,
                 const GemvVariant& variant = {});

// "kernel[:sN][:cN][:rN][:kN][:gN][:bN][:bits][:tma][:wg][:wgn][:xt][:sa][:eN|:eoff]" (kernel:
// default|stream|ring|ringbal|auto), for benchmark and test
// overrides; the parser throws lathe::Error on a malformed name.
std::string gemv_variant_name(const GemvVariant& variant);
GemvVariant gemv_variant_from_name(const std::string& name);

// Test support: decodes all 256 E4M3 codes on the device with the production conversion
// (out_cvt) and the bit-trick variant (out_bits), as bf16 bits. Device pointers, 256 each.
void fp8_decode_all_codes(uint16_t* out_cvt, uint16_t* out_bits, cudaStream_t stream);

}  // namespace lathe::cuda
