// Split-K paged decode: the public launcher, the variant selection and the split reduce. The
// split kernel itself is paged_attention_splitk.cuh (instantiated per KV dtype in
// paged_attention_splitk_bf16.cu and paged_attention_splitk_fp8.cu).
#include <cuda_bf16.h>

#include <algorithm>
#include <atomic>

#include "backends/cuda/chained_launch.cuh"
#include "backends/cuda/paged_attention.h"
#include "backends/cuda/paged_attention_splitk.cuh"
#include "backends/cuda/paged_attention_splitk_variants.cuh"
#include "backends/cuda/paged_attention_splitk_warp_merge.cuh"
#include "backends/cuda/paged_kv_map.h"

namespace lathe::cuda {
namespace attn::splitk {

namespace {

struct ReduceParams {
  const float* workspace;
  __nv_bfloat16* out;
  int64_t out_stride;
  int32_t num_heads;
  int32_t num_splits;
  int32_t slices;  // record slots per split; > 1: only the slices a split used are read
  int32_t min_per_slice;
  int32_t min_kv_per_split;
  int32_t split_rule;
  const int32_t* context_lens;
};

// The records of one (sequence, head), in slot order (split-major): every split's record when
// splits are not sliced, else the slices each split used (split_length.h, from the sequence's own
// length, as the split kernel computed them; an empty split's neutral record at slice 0). Slots a
// split leaves unused are never written, so they are skipped; merging their neutral equivalent
// would change no bit (weight exp2(-inf) = 0 against accumulators that are never -0).
//
// The reduce is a chain of dependent L2 reads after the split kernel, so it is written for few
// round trips. Which slots a sequence used follows from its length alone, which the split kernel
// also reads before its wait (chained_launch.cuh), so the used slots are listed in shared memory
// (a thread per slot, at its position among the used slots: the used slots of the splits before
// it, then its slice index) before the wait for the split kernel, overlapping its tail. After the
// wait, one round trip brings every used record's max and sum into shared memory and this
// thread's outputs of the first kChunk records into registers; each next chunk is requested
// before the current one is summed. The arithmetic and its order are those of a plain loop over
// the used slots, so the bytes are those of any earlier form of this kernel. More slots than
// shared memory holds (the legacy rule's split counts, never sliced) read their max and sum in
// place.
inline constexpr int kMaxReduceSplits = 16;  // the policy's kMaxDecodeSplits (target/levers.h)
inline constexpr int kMaxReduceSlots = kMaxReduceSplits * kMaxSplitSlices;

__device__ __forceinline__ int slices_of_split(const ReduceParams& rp, int len, int per, int s) {
  const int64_t first = static_cast<int64_t>(s) * per;
  const int n = first >= len ? 0 : static_cast<int>(min(static_cast<int64_t>(per), len - first));
  return max(split_slices_used(n, rp.slices, rp.min_per_slice), 1);
}

template <int HD>
__global__ void __launch_bounds__(HD) splitk_reduce(const ReduceParams rp) {
  // Merges the used records of one (sequence, head) in slot order:
  //   M = max_i m_i,  w_i = 2^(m_i - M),  out = (sum_i w_i o_i) / (sum_i w_i l_i)
  // (sliced launches have at most kMaxReduceSplits splits: launch_paged_decode_splitk checks).
  __shared__ int32_t slot_of[kMaxReduceSlots];  // sliced: the used slots, in order
  __shared__ float max_of[kMaxReduceSlots], sum_of[kMaxReduceSlots];
  __shared__ int32_t slices_of[kMaxReduceSplits];  // used slots of each split
  const int head = blockIdx.x, seq = blockIdx.y, d = threadIdx.x;
  const bool sliced = rp.slices > 1;
  const int records = rp.num_splits * rp.slices;
  int count = rp.num_splits;  // used slots
  if (sliced) {               // before the wait: the slots follow from the length
    if (d < rp.num_splits) {
      const int len = rp.context_lens[seq];
      const int per = split_length(len, rp.num_splits, rp.min_kv_per_split, rp.split_rule);
      slices_of[d] = slices_of_split(rp, len, per, d);
    }
    __syncthreads();
    for (int i = d; i < records; i += HD) {
      const int s = i / rp.slices, k = i % rp.slices;
      if (k >= slices_of[s]) continue;
      int at = k;
      for (int t = 0; t < s; ++t) at += slices_of[t];
      slot_of[at] = i;
    }
    count = 0;
    for (int t = 0; t < rp.num_splits; ++t) count += slices_of[t];
    __syncthreads();  // slot_of
  }
  chained_kernel_begin();
  const float* recs = rp.workspace + (static_cast<int64_t>(seq) * rp.num_heads + head) * records * (HD + 2);
  const bool staged = records <= kMaxReduceSlots;  // always when sliced
  auto slot = [&](int i) { return sliced ? slot_of[i] : i; };
  // Read in place (no shared copy) only past kMaxReduceSlots: the legacy rule's split counts.
  auto max_at = [&](int i) { return staged ? max_of[i] : recs[i * (HD + 2) + HD]; };
  auto sum_at = [&](int i) { return staged ? sum_of[i] : recs[i * (HD + 2) + HD + 1]; };
  // Few registers on purpose: the reduce is launched chained, so its CTAs wait resident for the
  // split kernel, and one wave of them (heads x sequences CTAs) must fit at batch 16 and more.
  constexpr int kChunk = 16;
  float x_next[kChunk];  // this thread's outputs of the next chunk of records, in flight
  auto load_chunk = [&](int base) {
#pragma unroll
    for (int k = 0; k < kChunk; ++k)
      x_next[k] = base + k < count ? recs[slot(base + k) * (HD + 2) + d] : 0.0f;
  };
  load_chunk(0);
  if (staged) {
    for (int i = d; i < count; i += HD) {
      max_of[i] = recs[slot(i) * (HD + 2) + HD];
      sum_of[i] = recs[slot(i) * (HD + 2) + HD + 1];
    }
    __syncthreads();
  }
  float max_all = -INFINITY;
  for (int i = 0; i < count; ++i) max_all = fmaxf(max_all, max_at(i));
  float value = 0.0f;
  if (max_all != -INFINITY) {
    float sum = 0.0f, o = 0.0f;
    for (int base = 0; base < count; base += kChunk) {
      float x[kChunk];
#pragma unroll
      for (int k = 0; k < kChunk; ++k) x[k] = x_next[k];
      if (base + kChunk < count) load_chunk(base + kChunk);
#pragma unroll
      for (int k = 0; k < kChunk; ++k) {
        if (base + k >= count) break;
        const float w = exp2f(max_at(base + k) - max_all);
        sum = __fmaf_rn(sum_at(base + k), w, sum);
        o = __fmaf_rn(x[k], w, o);
      }
    }
    value = __fdiv_rn(o, sum);
  }
  rp.out[static_cast<int64_t>(seq) * rp.out_stride + static_cast<int64_t>(head) * HD + d] = __float2bfloat16_rn(value);
}

// The reduce of an unsliced launch of at most kMaxReduceSplits splits (every wide serve's) where
// reduce_by_warps says so (split_reduce.h: by default from two sequences a launch): a warp per (sequence,
// head), kReduceWarps heads of one sequence a CTA, each merged in registers by warp_merge_records
// (splitk_reduce's arithmetic in its order, so its bytes). Where splitk_reduce runs a CTA of HD threads per
// head (at batch 64 on 64 heads, 4096 CTAs in 3.45 waves on an H100; 8.5 us alone under Nsight Compute,
// session 65), this runs a quarter as many CTAs, with no shared memory.
inline constexpr int kReduceWarps = 4;

template <int HD>
__global__ void __launch_bounds__(kReduceWarps * 32) splitk_reduce_by_warps(const ReduceParams rp) {
  static_assert(kMaxReduceSplits <= kMaxWarpMergeSplits, "a lane per split");
  const int seq = blockIdx.y, warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int head = blockIdx.x * kReduceWarps + warp;
  chained_kernel_begin();
  if (head >= rp.num_heads) return;  // the last CTA's spare warps (no CTA-wide barrier follows)
  const float* recs =
      rp.workspace + (static_cast<int64_t>(seq) * rp.num_heads + head) * rp.num_splits * (HD + 2);
  warp_merge_records<HD>(
      recs, rp.num_splits, lane,
      rp.out + static_cast<int64_t>(seq) * rp.out_stride + static_cast<int64_t>(head) * HD);
}

template <int HD>
cudaError_t launch_reduce(const SplitParams& sp, int32_t num_seqs, cudaStream_t stream) {
  const ReduceParams rp{sp.base.workspace,  sp.base.out,         sp.base.out_stride, sp.base.num_heads,
                        sp.base.num_splits, sp.slices,           sp.min_per_slice,   sp.base.min_kv_per_split,
                        sp.base.split_rule, sp.base.context_lens};
  if (reduce_by_warps(splitk_reduce_mode(), num_seqs, sp.slices, sp.base.num_splits, kMaxReduceSplits)) {
    const dim3 grid((sp.base.num_heads + kReduceWarps - 1) / kReduceWarps, num_seqs);
    return launch_chained_status(splitk_reduce_by_warps<HD>, grid, dim3(kReduceWarps * 32), 0, stream, rp);
  }
  return launch_chained_status(splitk_reduce<HD>, dim3(sp.base.num_heads, num_seqs), dim3(HD), 0, stream, rp);
}

// The default variant until a serve sets its own (set_splitk_kernel_variant: the serve's geometry,
// ops/splitk_policy.h decode_splitk_kernel, or LATHE_ATTN_SPLITK_KERNEL, at backend start in
// ops/cuda/chained_launch_lever.cpp; the benchmark's --kernels): the narrow serve geometry, 16
// (tensor copies; variant 5's cp.async geometry, or 10's, on shapes they do not serve). The
// cluster variants (7-9) are up to 2x faster than 5 at batch 1 with long contexts but up to 1.8x
// slower from batch 4 up (a cluster's CTAs are scheduled together and wait for each other), so
// they stay opt-in for latency-bound single-sequence serving.
constexpr int kDefaultVariant = 16;

// Whether the device has thread-block clusters and the copy engine's tensor copies (sm_90+), read
// once. Below it the cluster variants (7-9) run as 5 and the tensor-copy variants as their cp.async
// twins (cp_async_geometry); no such device was measured here.
bool device_has_sm90() {
  static const bool has = [] {
    int device = 0, major = 0;
    return cudaGetDevice(&device) == cudaSuccess &&
           cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) == cudaSuccess && major >= 9;
  }();
  return has;
}

// The cp.async geometry a resolved variant falls back to where clusters or tensor copies are not
// available (a cluster variant: 5; a tensor-copy variant: its twin, which gives its bytes on
// shapes it does not serve).
int cp_async_geometry(int variant) {
  switch (variant) {
    case 7:
    case 8:
    case 13:
    case 18:
      return 5;
    case 14:
    case 17:
    case 19:
    case 22:
    case 24:
    case 25:
    case 28:
      return 6;
    case 15:
      return 10;
    case 20:
    case 21:
    case 23:
    case 26:
    case 29:
    case 30:
      return 4;
    default:
      return variant;
  }
}

// Variant 9: variant 5's geometry in clusters of C = the smallest of 1, 2, 4 with
// (kv heads x parts x splits) x C >= the SM count, i.e. clusters only where one sequence's
// (query rows, split) pairs cannot cover the SMs. A function of the shapes and the split count
// (never of the batch), so a sequence's bytes stay independent of its co-batch.
// Variant 11: variant 5's geometry, with the 4-stage pipeline (10) when the grid puts at most one
// CTA on each SM (then 5's second CTA slot would stay empty anyway). 5 and 10 give the same bytes,
// so choosing by the launch's width keeps every sequence's bytes independent of its co-batch.
// Variant 16: the same choice between the tensor-copy geometries 13 and 15 (equal bytes).
// Variant 27: 14 for FP8 KV at head dim 128 with 8 query heads a CTA (a packed group of 8, e.g.
// 64/8/128), else 25. A function of the KV dtype and the shapes alone, so a serve keeps one
// geometry, and one set of bytes, for every sequence of a model.
int resolve_variant(int variant, const SplitParams& sp, int32_t num_seqs, bool fp8_kv, int32_t head_dim) {
  if (variant == 27) return fp8_kv && head_dim == 128 && sp.rows_per_cta == 8 ? 14 : 25;
  if (variant == 11 || variant == 16) {
    const int64_t ctas =
        static_cast<int64_t>(sp.base.num_kv_heads) * sp.parts * sp.base.num_splits * sp.slices * num_seqs;
    if (variant == 16) return ctas <= device_sm_count() ? 15 : 13;
    return ctas <= device_sm_count() ? 10 : 5;
  }
  if (variant != 9) return variant;
  const int64_t units = static_cast<int64_t>(sp.base.num_kv_heads) * sp.parts * sp.base.num_splits;
  if (units >= device_sm_count()) return 5;
  return units * 2 >= device_sm_count() ? 7 : 8;
}

// CTAs per split (a divisor of sp.slices) for a geometry that may loop over slices (variant 12):
// the most whose grid still fits kSliceWaves CTAs per SM, so a narrow launch (batch 1) gives each
// slice its own CTA and a wide one runs a split's slices in one CTA, in turn, instead of
// launching CTAs for slices that short sequences leave unused (each costs ~1.4 us of an SM slot
// on the H200). Bytes do not depend on it (paged_attention_splitk.cuh).
constexpr int kSliceWaves = 2;  // variant 5 holds two CTAs per SM

int looped_slice_ctas(const SplitParams& sp, int32_t num_seqs) {
  const int64_t per_cta = static_cast<int64_t>(sp.base.num_kv_heads) * sp.parts * sp.base.num_splits * num_seqs;
  const int64_t budget = static_cast<int64_t>(kSliceWaves) * device_sm_count();
  for (int ctas = sp.slices; ctas > 1; --ctas) {
    if (sp.slices % ctas == 0 && per_cta * ctas <= budget) return ctas;
  }
  return 1;
}

// The least share of its wave slots a grid of FP8 KV must fill more at fewer CTAs per SM for the
// wave-fill choice to take them (wave_fill.h): below it the fuller last wave is not worth the warps.
// A BF16 grid takes any fuller count and, on a tie, the fewer CTAs per SM (likely reason, not
// measured: a BF16 CTA keeps twice an FP8 one's bytes in flight, so 2 per SM already read at speed).
// Session 57 (H100, the serve kernels with a BF16 cache at batch 12-64, two rounds, 2 per SM pinned
// against the FP8 rule): on the 12 (shape, batch) grids this rule moves to 2, from 4k 34 of 36
// cells as fast or faster (up to +3.7 points, mean +0.8; the other two 0.4 and 0.8 slower), at 1k
// 6 of 12 slower (down to -2.2 where the fill ties at batch 16); a Qwen3-32B-FP8 step at batch 16
// 0.5% / 1.3% shorter at 4k / 8k. The rule itself on another H100 (one round against pinned 3):
// from 4k +0.4 points on the mean, 13 of the 36 cells slower (9 by 0.4 or less; 24/4/256 at batch
// 32 and 4k by 1.4); that step 1.9% shorter at 8k, level at 1k; Qwen3-8B-FP8 steps at batch 16 /
// 32 and 4k level.
// FP8's ties went the other way (session 56: 64/8/128 at batch 16, 3-6 points slower at 2).
constexpr double kWaveFillMinGain = 0.1;

// Default auto. Session 55 (H100, call 1, the serve kernels at batch 4-64 under each pinned cap):
// with an FP8 cache at batch 16 the fuller waves took 64/8/128 from 70.6 / 81.7 / 87.4% of the read
// ceiling to 77.3 / 90.5 / 95.1 at 4k / 16k / 64k and 24/4/256 from 67.6 / 82.1 / 88.1 to 74.0 /
// 89.1 / 94.9 (1k, whose empty splits the grid counts, 3 points slower on two shapes); at batch 4
// at most 2 per SM took 24/4/256 and 64/8/128 at 16k from 57.0 / 61.9 to 80.6 / 80.5%; batch 64
// unchanged. docs/PERFORMANCE.md, "Session 55". Session 56 (H100): the persistent grid spread at
// batch 4 (64/8/128 BF16, 160 units) 69.5 / 81.8 -> 73.2 / 83.8% at 4k / 16k; the Qwen3-8B-FP8
// step with an FP8 cache at 8k and batch 8 6.0% faster than under off ("Session 56").
std::atomic<int> g_ctas_per_sm{kSplitkCtasPerSmAuto};

std::atomic<int>& variant_slot() {
  static std::atomic<int> slot{kDefaultVariant};
  return slot;
}

}  // namespace

int splitk_ctas_per_sm_cap(int resident, int64_t ctas, bool bf16_kv) {
  const int setting = g_ctas_per_sm.load(std::memory_order_relaxed);
  if (setting == kSplitkCtasPerSmAuto) {
    return bf16_kv ? wave_fill_ctas_per_sm(ctas, device_sm_count(), resident, 0.0, true)
                   : wave_fill_ctas_per_sm(ctas, device_sm_count(), resident, kWaveFillMinGain);
  }
  return setting > 0 ? std::min(setting, resident) : resident;
}

int splitk_smem_for_cap(int kernel_bytes, int resident, int cap) {
  return cap < resident ? shared_memory_for_cap(kernel_bytes, cap, device_shared_memory_limits()) : kernel_bytes;
}

int splitk_launch_smem(int kernel_bytes, int resident, int64_t ctas, bool bf16_kv) {
  return splitk_smem_for_cap(kernel_bytes, resident, splitk_ctas_per_sm_cap(resident, ctas, bf16_kv));
}

}  // namespace attn::splitk

bool set_splitk_ctas_per_sm(int setting) {
  if (setting < kSplitkCtasPerSmAuto || setting > kSplitkMaxCtasPerSm) return false;
  attn::splitk::g_ctas_per_sm.store(setting, std::memory_order_relaxed);
  return true;
}
int splitk_ctas_per_sm() { return attn::splitk::g_ctas_per_sm.load(std::memory_order_relaxed); }

int splitk_kernel_variant() { return attn::splitk::variant_slot().load(std::memory_order_relaxed); }

namespace {
std::atomic<int> g_split_rule{static_cast<int>(SplitRule::kSeed)};
}  // namespace

void set_splitk_split_rule(SplitRule rule) { g_split_rule.store(static_cast<int>(rule), std::memory_order_relaxed); }
SplitRule splitk_split_rule() { return static_cast<SplitRule>(g_split_rule.load(std::memory_order_relaxed)); }

namespace {
// Default on: on the H200 (bundle 5d1f669, two rounds, same call) it took the Qwen3-8B-FP8 decode
// step at 1k context from 3.605 / 3.598 to 3.581 / 3.566 ms at batch 1 and 4.240 / 4.223 to
// 4.175 / 4.147 ms at batch 4, at 16k from 4.355 / 4.353 to 4.321 / 4.316 ms at batch 1; batch 16
// moved +0.4% (5.897 / 5.878 -> 5.918 / 5.900 ms). docs/PERFORMANCE.md.
std::atomic<bool> g_early_kv{true};

// The per-head CTAs at batch 1, the warps from batch 2 (split_reduce.h).
std::atomic<SplitReduce> g_split_reduce{SplitReduce::kAuto};

// The tensor-copy geometries' K/V requests (set_splitk_kv_l2_promotion, paged_attention.h): no L2
// promotion. Measured on the H200 (session 38, call 3, same bytes): against 256-byte promotion
// (the default until then) the serve kernels took 4-9% less time at batch 16 (32/8/128 at 4k
// 73.4 -> 69.6 us, 24/4/256 at 16k 280.9 -> 256.3) and up to 5% at batch 1 (24/4/256 at 64k
// 74.5 -> 70.6); 64- and 128-byte promotion measured level with none or slightly slower (and
// evict_normal copies, an experiment not kept, 3-14% slower than evict_first at every
// promotion). docs/PERFORMANCE.md, "Session 38".
L2PromotionSetting g_kv_l2_promotion{0};
}  // namespace

bool set_splitk_kv_l2_promotion(int promotion_bytes) {
  return g_kv_l2_promotion.set(promotion_bytes);
}
int splitk_kv_l2_promotion() {
  return g_kv_l2_promotion.get();
}

void set_splitk_reduce_mode(SplitReduce reduce) {
  g_split_reduce.store(reduce, std::memory_order_relaxed);
}
SplitReduce splitk_reduce_mode() {
  return g_split_reduce.load(std::memory_order_relaxed);
}

void set_splitk_early_kv(bool enabled) { g_early_kv.store(enabled, std::memory_order_relaxed); }
bool splitk_early_kv() { return g_early_kv.load(std::memory_order_relaxed); }

bool set_splitk_kernel_variant(int variant) {
  if (variant < 0 || variant >= kSplitkKernelVariants) return false;
  attn::splitk::variant_slot().store(variant, std::memory_order_relaxed);
  return true;
}

cudaError_t launch_paged_decode_splitk(const AttentionRows& rows, const PagedKv& kv, const SplitGeometry& geometry,
                                       int32_t rows_per_cta, float* workspace, cudaStream_t stream) {
  namespace sk = attn::splitk;
  if (rows.num_seqs <= 0) return cudaSuccess;
  const int32_t num_splits = geometry.num_splits, min_kv_per_split = geometry.min_kv_per_split;
  if (kv.num_kv_heads <= 0 || rows.num_heads % kv.num_kv_heads != 0 || num_splits < 1 || min_kv_per_split < 1 ||
      geometry.slices < 1 || geometry.slices > kMaxSplitSlices || geometry.min_kv_per_slice < 1 ||
      workspace == nullptr || rows_per_cta < 1 || kv.block_size < 1) {
    return cudaErrorInvalidValue;
  }
  if (kv.head_dim != 64 && kv.head_dim != 128 && kv.head_dim != 256) return cudaErrorInvalidValue;
  // The reduce gathers sliced records in shared memory sized for the policy's split ceiling (the
  // legacy rule, which may exceed it, never slices).
  if (geometry.slices > 1 && num_splits > sk::kMaxReduceSplits) return cudaErrorInvalidValue;
  sk::SplitParams sp{};
  sp.base = attn::make_decode_params(rows, kv);
  sp.base.num_splits = num_splits;
  sp.base.min_kv_per_split = min_kv_per_split;
  sp.base.split_rule = static_cast<int>(splitk_split_rule());
  // The aligned rule's granule is the split kernel's (warps x tile), which the reduce does not
  // know: sliced plans, whose reduce recomputes split lengths, keep the seed's rule.
  if (sp.base.split_rule == static_cast<int>(SplitRule::kAligned) && geometry.slices > 1) {
    sp.base.split_rule = static_cast<int>(SplitRule::kSeed);
  }
  sp.base.workspace = workspace;
  sp.group = rows.num_heads / kv.num_kv_heads;
  sp.rows_per_cta = std::min({rows_per_cta, sp.group, sk::kMaxRows});
  sp.parts = (sp.group + sp.rows_per_cta - 1) / sp.rows_per_cta;
  sp.early_kv = splitk_early_kv() ? 1 : 0;
  sp.slices = geometry.slices;
  sp.min_per_slice = geometry.min_kv_per_slice;
  sp.slice_ctas = sp.slices;

  sp.block_shift = -1;
  if ((kv.block_size & (kv.block_size - 1)) == 0) {
    sp.block_shift = 0;
    while ((1 << sp.block_shift) < kv.block_size) ++sp.block_shift;
  }
  int variant =
      sk::resolve_variant(splitk_kernel_variant(), sp, rows.num_seqs, kv.dtype == KvDType::kFP8E4M3, kv.head_dim);
  if (variant == 12) {
    sp.slice_ctas = sk::looped_slice_ctas(sp, rows.num_seqs);
    if (sp.slice_ctas == sp.slices) variant = 5;  // one CTA per slice: no loop needed
  }
  if (!sk::device_has_sm90()) variant = sk::cp_async_geometry(variant);
  if (variant >= 13) {  // tensor copies (16 resolved above) where the shape allows, else the cp.async twin
    if (!sk::tensor_copies_ok(kv.head_dim, kv.block_size, sp.block_shift) || kv.num_blocks <= 0) {
      variant = sk::cp_async_geometry(variant);
    } else {
      const int pieces = sk::tensor_box_pieces(kv.head_dim, kv.dtype == KvDType::kBF16 ? 2 : 1);
      const int promotion = g_kv_l2_promotion.get();
      if (!encode_paged_kv_map(kv.k, kv, 16, pieces, sp.k_map, promotion) ||
          !encode_paged_kv_map(kv.v, kv, 16, pieces, sp.v_map, promotion)) {
        return cudaErrorNotSupported;
      }
    }
  }
  // Positions as the MMA rows (23-26, 28-30): a CTA's query heads are one n8 column tile.
  if (variant >= 23) {
    sp.rows_per_cta = std::min(sp.rows_per_cta, sk::kMaxPosRowHeads);
    sp.parts = (sp.group + sp.rows_per_cta - 1) / sp.rows_per_cta;
  }
  const cudaError_t status = kv.dtype == KvDType::kBF16
                                 ? sk::launch_bf16(variant, kv.head_dim, sp, rows.num_seqs, stream)
                                 : sk::launch_fp8(variant, kv.head_dim, sp, rows.num_seqs, stream);
  if (status != cudaSuccess) return status;
  switch (kv.head_dim) {
    case 64:
      return sk::launch_reduce<64>(sp, rows.num_seqs, stream);
    case 128:
      return sk::launch_reduce<128>(sp, rows.num_seqs, stream);
    default:
      return sk::launch_reduce<256>(sp, rows.num_seqs, stream);
  }
}

}  // namespace lathe::cuda
