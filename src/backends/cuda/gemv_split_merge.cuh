#pragma once
// The register-ring GEMV whose input is a decode step's attention output merged here from the
// split-K records the attention launch left (GemvProblem::merge, GemvInput::kMerge) instead of by
// the split reduce: x[r, h * HD + d] is the reduce's output for (sequence r, head h, d), bit for
// bit (split_merge.cuh: the same max, weights, sums and order). Each CTA:
//   1. before the chained-launch wait: the used record slots of each row's sequence (they follow
//      from its length, which no kernel of the step writes);
//   2. after it, for every (row, head) pair its K range touches: the max M, the weights w_i (kept
//      in shared memory) and the sum of w_i l_i;
//   3. stages its K range of x as round_bf16(sum_i w_i o_i / sum), 16-byte rows of the mma.sync
//      tiers (the only layout built for it).
// Each CTA merges only the heads its own K range covers, so no pair is merged by more CTAs than
// the weight has 128-row blocks.
#include <cuda_bf16.h>

#include <cstdint>

#include "backends/cuda/gemv_common.cuh"
#include "backends/cuda/split_merge.cuh"
#include "backends/cuda/split_records.h"

namespace lathe::cuda::gemv_detail {

template <int kMaxM>
struct MergeShared {
  int16_t slot[kMaxM][kGemvMergeMaxSlots];  // sliced records: each row's used slots, in order
  int count[kMaxM];                          // used slots of each row's sequence
  float max_of[kGemvMergeMaxPairs];          // [pair]: M (-inf: every record neutral)
  float sum_of[kGemvMergeMaxPairs];          // [pair]: sum_i w_i l_i
  float weight[kGemvMergeMaxWeights];        // [pair][used slot]: w_i
};

__device__ __forceinline__ const float* merge_records_of(const SplitRecords& in, int row, int head) {
  return in.records + (static_cast<int64_t>(row) * in.num_heads + head) * split_record_slots(in) * (in.head_dim + 2);
}

// Step 1 (before the wait).
template <int kMaxM>
__device__ __forceinline__ void merge_list_slots(const Params& p, MergeShared<kMaxM>& s) {
  const SplitRecords& in = p.merge;
  if (threadIdx.x >= p.m) return;
  const int r = threadIdx.x;
  if (in.slices <= 1) {
    s.count[r] = in.num_splits;
    return;
  }
  const int len = in.context_lens[r];
  const int per = split_length(len, in.num_splits, in.min_kv_per_split, in.split_rule);
  int n = 0;
  for (int sp = 0; sp < in.num_splits; ++sp) {
    const int used = split_used_slots(in, len, per, sp);
    for (int k = 0; k < used; ++k) s.slot[r][n++] = static_cast<int16_t>(sp * in.slices + k);
  }
  s.count[r] = n;
}

// The first head and the head count of the K range [k_begin, k_end).
struct MergeHeads {
  int first;
  int count;
};
__device__ __forceinline__ MergeHeads merge_heads(const Params& p, int64_t k_begin, int64_t k_end) {
  const int hd = p.merge.head_dim;
  const int first = static_cast<int>(k_begin / hd);
  return {first, static_cast<int>((k_end + hd - 1) / hd) - first};
}

// Step 2 (after the wait): visible to the whole CTA on return. kBatch records' max and sum in
// flight per thread.
template <int kMaxM, int kThreads, int kBatch>
__device__ __forceinline__ void merge_weights(const Params& p, MergeHeads heads, MergeShared<kMaxM>& s) {
  const SplitRecords& in = p.merge;
  const int hd = in.head_dim;
  const int stride = split_record_slots(in);
  const bool sliced = in.slices > 1;
  __syncthreads();  // step 1's slots and counts
  for (int pr = threadIdx.x; pr < p.m * heads.count; pr += kThreads) {
    const int r = pr / heads.count;
    const float* recs = merge_records_of(in, r, heads.first + pr % heads.count);
    const int n = s.count[r];
    auto at = [&](int i) { return (sliced ? s.slot[r][i] : i) * (hd + 2) + hd; };  // the slot's max
    float max_all = -INFINITY;
    for (int i0 = 0; i0 < n; i0 += kBatch) {
      float m[kBatch];
#pragma unroll
      for (int j = 0; j < kBatch; ++j) m[j] = i0 + j < n ? __ldcg(recs + at(i0 + j)) : -INFINITY;
#pragma unroll
      for (int j = 0; j < kBatch; ++j)
        if (i0 + j < n) max_all = split_merge::max_step(max_all, m[j]);
    }
    float sum = 0.0f;
    float* w = s.weight + pr * stride;
    if (max_all != -INFINITY) {
      for (int i0 = 0; i0 < n; i0 += kBatch) {
        float m[kBatch], l[kBatch];
#pragma unroll
        for (int j = 0; j < kBatch; ++j) {
          m[j] = i0 + j < n ? __ldcg(recs + at(i0 + j)) : 0.0f;
          l[j] = i0 + j < n ? __ldcg(recs + at(i0 + j) + 1) : 0.0f;
        }
#pragma unroll
        for (int j = 0; j < kBatch; ++j) {
          if (i0 + j < n) {
            const float wi = split_merge::weight(m[j], max_all);
            sum = split_merge::accumulate(sum, l[j], wi);
            w[i0 + j] = wi;
          }
        }
      }
    }
    s.max_of[pr] = max_all;
    s.sum_of[pr] = sum;
  }
  __syncthreads();
}

// Step 3: the 8 merged elements of x row r at column col (a multiple of 8), as bf16. kBatch
// records (32 bytes each) in flight per thread: as many as the kernel's register budget leaves
// beside its weight ring without spilling.
template <int kMaxM, int kBatch>
__device__ __forceinline__ uint4 merge_vec(const Params& p, MergeHeads heads, const MergeShared<kMaxM>& s, int r,
                                           int64_t col) {
  const SplitRecords& in = p.merge;
  const int hd = in.head_dim;
  const int h = static_cast<int>(col / hd);
  const int d = static_cast<int>(col - static_cast<int64_t>(h) * hd);
  const int pr = r * heads.count + (h - heads.first);
  const float max_all = s.max_of[pr];
  float o[8];
#pragma unroll
  for (int e = 0; e < 8; ++e) o[e] = 0.0f;
  if (max_all != -INFINITY) {
    const float* recs = merge_records_of(in, r, h) + d;
    const float* w = s.weight + pr * split_record_slots(in);
    const bool sliced = in.slices > 1;
    const int n = s.count[r];
    for (int i0 = 0; i0 < n; i0 += kBatch) {
      float2 v[kBatch][4];
#pragma unroll
      for (int j = 0; j < kBatch; ++j) {
        if (i0 + j < n) {
          const int slot = sliced ? s.slot[r][i0 + j] : i0 + j;
          const float2* src = reinterpret_cast<const float2*>(recs + slot * (hd + 2));
#pragma unroll
          for (int e = 0; e < 4; ++e) v[j][e] = __ldcg(src + e);
        }
      }
#pragma unroll
      for (int j = 0; j < kBatch; ++j) {
        if (i0 + j < n) {
          const float wi = w[i0 + j];
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            o[2 * e] = split_merge::accumulate(o[2 * e], v[j][e].x, wi);
            o[2 * e + 1] = split_merge::accumulate(o[2 * e + 1], v[j][e].y, wi);
          }
        }
      }
    }
  }
  const float sum = s.sum_of[pr];
  uint4 out;
  uint32_t* words = reinterpret_cast<uint32_t*>(&out);
#pragma unroll
  for (int e = 0; e < 4; ++e) {
    const __nv_bfloat162 pair = __floats2bfloat162_rn(split_merge::finish(o[2 * e], sum, max_all),
                                                      split_merge::finish(o[2 * e + 1], sum, max_all));
    words[e] = *reinterpret_cast<const uint32_t*>(&pair);
  }
  return out;
}

}  // namespace lathe::cuda::gemv_detail
