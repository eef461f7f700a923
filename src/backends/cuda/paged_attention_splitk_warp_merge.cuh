#pragma once
// One warp merges the split records of one (sequence, head) into its BF16 output row, in registers
// (the reduce by warps, SplitReduce::kWarps; paged_attention_splitk.cu).
//
// Records: `splits` of them from `recs`, HD + 2 floats each (o[HD] scaled by the split's own max,
// then that max m (log2 domain) and the sum l). The merge is splitk_reduce's, for an unsliced
// launch: over the splits in index order 0..S-1, M = max m_i, w_i = 2^(m_i - M), sum = fma(l_i,
// w_i, sum), o = fma(x_i, w_i, o), out = o / sum (0 where M = -inf), rounded to BF16; so are its
// bytes (tested). How: lane s < S holds split s's max and sum; the max is a warp reduction (fmaxf
// is exact: where maxes tie at +0 / -0 the sign may differ, and M enters only as m_i - M, which
// does not see it), the sum runs over the splits in order through shuffles (every lane the same
// value), and lane l merges the dims 64 j + 2 l, + 1, loading the splits' pairs kChunk at a
// time, the first chunk together with the maxes and sums: one L2 round trip for up to kChunk
// splits, which is 16 (every count the policy allows) at head dim 128 and 8 at 256 (session 66's
// 8 at head dim 128 took two round trips for Qwen3-8B's 9 splits). No shared memory: a reduce
// launched chained before a GEMV must not take the shared memory its dependent's CTAs are sized
// for (session 66: a version staging the records in shared memory lengthened the Qwen3-8B-FP8
// decode step by 8% at batch 1, likely that way).
#include <cuda_bf16.h>

#include <cstdint>

namespace lathe::cuda::attn::splitk {

// The most splits one warp merges: a lane holds one split's max and sum.
inline constexpr int kMaxWarpMergeSplits = 32;

template <int HD>
__device__ __forceinline__ void warp_merge_records(const float* recs, int splits, int lane,
                                                   __nv_bfloat16* out) {
  static_assert(HD % 64 == 0, "a lane merges whole pairs of dims in each 64-dim group");
  // A chunk is at most 32 pairs a lane in flight (64 registers) and 16 splits.
  constexpr int kRecord = HD + 2, kPairs = HD / 64, kChunk = 32 / kPairs < 16 ? 32 / kPairs : 16;
  float2 x[kChunk][kPairs];
  auto load_chunk = [&](int s0) {
#pragma unroll
    for (int c = 0; c < kChunk; ++c) {
#pragma unroll
      for (int j = 0; j < kPairs; ++j) {
        x[c][j] = s0 + c < splits  // kRecord is even: every pair is 8-byte aligned
                      ? *reinterpret_cast<const float2*>(recs + (s0 + c) * kRecord + 64 * j + 2 * lane)
                      : make_float2(0.0f, 0.0f);
      }
    }
  };
  load_chunk(0);
  const float m_mine = lane < splits ? recs[lane * kRecord + HD] : -INFINITY;
  const float l_mine = lane < splits ? recs[lane * kRecord + HD + 1] : 0.0f;
  float max_all = m_mine;
#pragma unroll
  for (int off = 16; off > 0; off /= 2) max_all = fmaxf(max_all, __shfl_xor_sync(0xffffffffu, max_all, off));
  float2 value[kPairs];
#pragma unroll
  for (int j = 0; j < kPairs; ++j) value[j] = make_float2(0.0f, 0.0f);
  if (max_all != -INFINITY) {
    const float w_mine = lane < splits ? exp2f(m_mine - max_all) : 0.0f;
    float sum = 0.0f;
    float2 o[kPairs];
#pragma unroll
    for (int j = 0; j < kPairs; ++j) o[j] = make_float2(0.0f, 0.0f);
    for (int s0 = 0; s0 < splits; s0 += kChunk) {
      if (s0 > 0) load_chunk(s0);
#pragma unroll
      for (int c = 0; c < kChunk; ++c) {
        if (s0 + c >= splits) break;
        const float w = __shfl_sync(0xffffffffu, w_mine, s0 + c);
        sum = __fmaf_rn(__shfl_sync(0xffffffffu, l_mine, s0 + c), w, sum);
#pragma unroll
        for (int j = 0; j < kPairs; ++j) {
          o[j].x = __fmaf_rn(x[c][j].x, w, o[j].x);
          o[j].y = __fmaf_rn(x[c][j].y, w, o[j].y);
        }
      }
    }
#pragma unroll
    for (int j = 0; j < kPairs; ++j) value[j] = make_float2(__fdiv_rn(o[j].x, sum), __fdiv_rn(o[j].y, sum));
  }
#pragma unroll
  for (int j = 0; j < kPairs; ++j) {
    out[64 * j + 2 * lane] = __float2bfloat16_rn(value[j].x);  // two stores: the row stride may be odd
    out[64 * j + 2 * lane + 1] = __float2bfloat16_rn(value[j].y);
  }
}

}  // namespace lathe::cuda::attn::splitk
