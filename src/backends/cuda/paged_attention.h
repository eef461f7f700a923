#pragma once
// Launchers of the paged attention kernels. Raw pointers, sizes and a stream only (ARCHITECTURE
// rule 3); the arm is chosen by ops/cuda/attention_dispatch. Every launcher is asynchronous,
// allocates nothing, reads no device memory on the host (graph-capturable), and returns the
// launch status (cudaGetLastError) for the caller to check.
//
// KV layout (ops/kv_cache.h): K and V are each [num_blocks, num_kv_heads, block_size, head_dim]
// in BF16 or FP8 E4M3 (value = code * scale, per tensor). Position p of sequence s lives in block
// block_tables[s * max_blocks_per_seq + p / block_size], slot p % block_size. Query head h reads
// KV head h / (num_heads / num_kv_heads).
#include <cuda_runtime_api.h>

#include <cstdint>

#include "backends/cuda/split_length.h"
#include "backends/cuda/split_reduce.h"

namespace lathe::cuda {

enum class KvDType { kBF16, kFP8E4M3 };

struct PagedKv {
  const void* k = nullptr;
  const void* v = nullptr;
  KvDType dtype = KvDType::kBF16;
  float k_scale = 1.0f;  // FP8 only
  float v_scale = 1.0f;  // FP8 only
  int32_t num_kv_heads = 0;
  int32_t block_size = 16;
  int32_t head_dim = 0;
  const int32_t* block_tables = nullptr;  // [num_seqs, max_blocks_per_seq]
  int32_t max_blocks_per_seq = 0;
  const int32_t* context_lens = nullptr;  // [num_seqs]: cached tokens INCLUDING this step's rows
  int32_t num_blocks = 0;                 // blocks in K (and V); 0 = unknown (the split-K tensor-copy
                                          // variants then take their cp.async twins)
};

// Query rows in, output rows out: q and out are BF16 [rows, num_heads * head_dim] with row strides
// in elements. softmax(scale * q.k) over the visible positions.
struct AttentionRows {
  const void* q = nullptr;
  int64_t q_stride = 0;
  void* out = nullptr;
  int64_t out_stride = 0;
  int32_t num_heads = 0;
  int32_t num_seqs = 0;
  float scale = 1.0f;
};

// Head dims the decode and prefill kernels are compiled for (64, 128, 256).
bool attention_head_dim_compiled(int32_t head_dim);
// (group, head_dim) pairs the GQA-packed decode kernel is compiled for, for either KV dtype.
bool gqa_packed_compiled(int32_t group, int32_t head_dim);

// ---- decode: every sequence has exactly one query row, row s (a pure decode step) ----------
// Non-split: one CTA per (q head, sequence) over the whole context.
cudaError_t launch_paged_decode(const AttentionRows& rows, const PagedKv& kv, cudaStream_t stream);

// GQA-packed non-split: one CTA per (kv head, sequence) carrying the num_heads / num_kv_heads
// query heads of the group; bit-identical output to launch_paged_decode. Returns
// cudaErrorInvalidValue for a shape gqa_packed_compiled refuses.
cudaError_t launch_paged_decode_gqa_packed(const AttentionRows& rows, const PagedKv& kv, cudaStream_t stream);

// Split-K (tensor cores): grid (num_kv_heads * ceil(group / rows_per_cta) [* cluster size for
// the cluster variants], num_splits, sequences); each CTA (cluster) carries rows_per_cta (<= 16) query heads of one KV head, reading each K/V
// row once for all of them, and writes one record per (sequence, head, split) into `workspace`
// (f32 [num_seqs * num_heads * num_splits * slices, head_dim + 2]: partial output scaled by the split's own
// running max, then that max (log2 domain) and the running sum). A sequence of length L uses
// split length max(ceil(L / num_splits), min_kv_per_split) (or splitk_split_rule()'s), computed on the device; its empty
// splits write a neutral record (output 0, max -inf, sum 0). Then the reduce merges the records of
// each (sequence, head) in split order 0..num_splits-1 into BF16 `out`. The output bytes do not
// depend on rows_per_cta (tensor-core rows are independent), only on num_splits, the sequence's
// own length and the kernel variant (below).
// Splits may be cut further into slices (split_length.h, split_slices_used), one record each
// (and one CTA each, except under variant 12, whose CTAs may run several in turn): the workspace
// holds num_splits * slices records per (sequence, head), slot split * slices + slice, and the
// reduce merges the used ones in slot order. A slice's bytes depend on `slices`,
// `min_kv_per_slice` and the sequence's own length only.
inline constexpr int32_t kMaxSplitSlices = 8;
struct SplitGeometry {
  int32_t num_splits = 1;
  int32_t min_kv_per_split = 128;
  int32_t slices = 1;             // 1..kMaxSplitSlices; 1 = splits are not sliced
  int32_t min_kv_per_slice = 256;
};
cudaError_t launch_paged_decode_splitk(const AttentionRows& rows, const PagedKv& kv, const SplitGeometry& geometry,
                                       int32_t rows_per_cta, float* workspace, cudaStream_t stream);

// The split-K kernel has several compiled geometries (warps per CTA, tile, stages, CTAs per SM,
// which operand the positions are; paged_attention_splitk_variants.cuh lists them). Each is
// deterministic on its own; a query's bytes differ between variants except where the list there
// says otherwise (10, 11 and 12 give 5's bytes; 15 and 16 give 13's; 17 and 22 give 14's (22
// launches 14 itself with FP8 KV, at HD 256 and for sliced launches); 25 and 28 (25 with FP8 KV on
// the persistent grid too) give 24's; 27 gives 14's with FP8 KV at HD 128 and 8 query heads a
// CTA, else 25's; 29 and 30 give 26's except with FP8 KV at HD 128; the tensor-copy variants
// 13, 14, 18, 19, 24 and 25 fall back to their cp.async twins, and so to 5's or 6's bytes, on
// shapes they do not serve, 20, 21, 23, 26, 29 and 30 to 4), so a serve keeps one for its whole
// life: the one its configuration picks (ops/splitk_policy.h: decode_splitk_kernel, 26, 16
// or 25), or LATHE_ATTN_SPLITK_KERNEL (0..30), applied by ops/cuda (chained_launch_lever.cpp)
// through set_splitk_kernel_variant, which benchmarks and tests also call (false for a variant
// that does not exist); 16 until then. A captured graph keeps the variant its launches were
// captured with.
inline constexpr int kSplitkKernelVariants = 31;

// Whether the split-K kernel copies its first K/V tiles before its chained-launch wait (the rows
// before len - 1, which no kernel of the step writes; paged_attention_splitk.cuh, prologue).
// Process-wide, set once at backend start (LATHE_ATTN_EARLY_KV, ops/cuda/chained_launch_lever.cpp);
// changes when bytes arrive, never which bytes (tested byte-equal).
void set_splitk_early_kv(bool enabled);
bool splitk_early_kv();
// The L2 promotion of the tensor-copy split-K geometries' K/V requests: 0 (none, the default),
// 64, 128 or 256 bytes. A measurement lever (lathe_bench_attention --kv-l2-promotion,
// LATHE_ATTN_KV_L2_PROMOTION); false for a size it does not know. Changes no byte.
bool set_splitk_kv_l2_promotion(int promotion_bytes);
int splitk_kv_l2_promotion();
int splitk_kernel_variant();
bool set_splitk_kernel_variant(int variant);

// How many CTAs of a split-K launch one SM may hold (backends/cuda/wave_fill.h): as many as the
// kernel's registers and shared memory allow (kSplitkCtasPerSmOff), the wave-fill choice for the
// launch's grid (kSplitkCtasPerSmAuto, the default: a grid one wave holds spread over the SMs,
// a longer one in the fullest waves, weighed per KV dtype), or at most a pinned
// 1..kSplitkMaxCtasPerSm, enforced by the
// dynamic shared memory the launch asks for. Process-wide, set at backend start
// (LATHE_ATTN_CTAS_PER_SM, ops/cuda/chained_launch_lever.cpp); false for a value outside those. It
// changes where and with whom a CTA runs, never its bytes (tested). The persistent grid (22, 25)
// takes the same cap, its units weighed as CTAs (its CTA count follows it); the cluster variants
// keep their own occupancy.
inline constexpr int kSplitkCtasPerSmAuto = -1;
inline constexpr int kSplitkCtasPerSmOff = 0;
inline constexpr int kSplitkMaxCtasPerSm = 8;
bool set_splitk_ctas_per_sm(int setting);
int splitk_ctas_per_sm();

// How a sequence's length is cut into splits (split_length.h): the seed's rule unless set at
// backend start (LATHE_ATTN_SPLIT_RULE=even, opt-in for measurement; ops/cuda/
// chained_launch_lever.cpp). Like the variant, a serve keeps one rule for its whole life: set it
// before the first launch.
void set_splitk_split_rule(SplitRule rule);
SplitRule splitk_split_rule();

// How the split-K records are merged into the BF16 output (SplitReduce: auto, the default, heads or
// warps; split_reduce.h). Process-wide, set at backend start (LATHE_ATTN_SPLIT_REDUCE,
// ops/cuda/chained_launch_lever.cpp).
void set_splitk_reduce_mode(SplitReduce reduce);
SplitReduce splitk_reduce_mode();

// ---- prefill: any mix of query lengths ------------------------------------------------------
// Sequence s has rows query_start[s] .. query_start[s + 1] - 1, the last of them at position
// context_lens[s] - 1; row i of the chunk sees positions 0 .. context_lens[s] - qlen + i. KV tiles
// are anchored at position 0, so a row's bytes do not depend on how its prompt was chunked.
// max_query_len bounds the grid (rows beyond a sequence's own length exit).
// Head dim 128 runs a warpgroup-MMA kernel with a producer warpgroup on sm_90a
// (prefill_uses_wgmma; it also needs block_size a multiple of 16 and num_blocks set, as every
// cache lathe builds by default has), every other case an mma.sync kernel; a row's bytes are the
// same under either (tested).
cudaError_t launch_paged_prefill(const AttentionRows& rows, const PagedKv& kv, const int32_t* query_start,
                                 int32_t max_query_len, cudaStream_t stream);
// Whether launch_paged_prefill takes the warpgroup-MMA kernel for this head dim here (a build with
// sm_90a code on an sm_90 device whose kernels launch with the registers they assume, and not
// turned off). set_prefill_wgmma(false) turns it off
// process-wide: for tests and benchmarks that compare the two kernels; a serve never calls it.
bool prefill_uses_wgmma(int32_t head_dim);
void set_prefill_wgmma(bool allowed);
// The L2 promotion of the warpgroup-MMA prefill kernel's K/V tensor copies: 0 (none), 64, 128 or
// 256 bytes (the default, what it was measured with). A benchmark lever (lathe_bench_prefill
// --kv-l2-promotion; the split-K decode's copies measured faster without promotion, session 38);
// false for a size it does not know. Changes no byte.
bool set_prefill_kv_l2_promotion(int promotion_bytes);
int prefill_kv_l2_promotion();

}  // namespace lathe::cuda
