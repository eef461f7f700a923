#pragma once
// The split reduce done inside the split kernel (SplitReduce::kLastCta, paged_attention.h): each
// CTA, once its records are written, counts itself in on a counter of its (sequence, query rows);
// the CTA whose count completes the num_splits arrivals merges those rows' records into the BF16
// output and sets the counter back to zero. The separate reduce launch, and the kernel boundary
// before it, go away; the merge of a group overlaps the other CTAs' streaming, and only the
// groups that finish last add to the launch's tail.
//
// Bytes: the merge is splitk_reduce's (paged_attention_splitk.cu) for an unsliced launch: over the
// splits in index order 0..S-1, M = max m_i, w_i = 2^(m_i - M), sum = fma(l_i, w_i, sum), o =
// fma(x_i, w_i, o), out = o / sum (0 where M = -inf), rounded to BF16. Which CTA counts last
// changes who merges, never what is merged or in which order, so the bytes do not depend on the
// schedule or the co-batch (tested byte-equal to the separate reduce).
//
// Memory order: every thread fences its record writes before a CTA barrier, after which one
// thread adds to the counter (acquire-release at device scope); the last CTA fences again after
// the barrier that hands it the verdict and reads the records through L2 (ld.global.cg: another
// SM's writes are never in this SM's L1).
//
// The counters are this translation unit's (one array per KV dtype's instantiation file), zero
// at module load, and zero again at the end of every launch (its last arrival resets each one it
// used). So launches that fuse the reduce must not overlap in time: one stream at a time, as a
// serve's decode steps are. A launch whose num_seqs x num_heads exceeds kArrivalSlots, or that is
// sliced or clustered, keeps the separate reduce (launch_paged_decode_splitk).
#include <cuda_bf16.h>

#include "backends/cuda/paged_attention_decode.cuh"

namespace lathe::cuda::attn::splitk {

// Counters: one per (sequence, first query head of a CTA): slot seq * num_heads + head0.
inline constexpr int kArrivalSlots = 1 << 16;
// The most splits the merge takes (the policy's ceiling, kMaxDecodeSplits; one a lane).
inline constexpr int kMaxFusedSplits = 16;

namespace {
__device__ unsigned int g_split_arrivals[kArrivalSlots];
}  // namespace

__device__ __forceinline__ unsigned int arrive_acq_rel(unsigned int* counter) {
  unsigned int prev;
  asm volatile("atom.add.acq_rel.gpu.global.u32 %0, [%1], 1;" : "=r"(prev) : "l"(counter) : "memory");
  return prev;
}

// Every thread of the CTA calls it after its last record write of query rows head0 .. head0 +
// rows - 1 of sequence `seq` (it holds two CTA barriers); `threads` is the CTA's size.
template <int HD>
__device__ __forceinline__ void arrive_and_merge(const DecodeParams& p, int seq, int head0, int rows, int tid,
                                                 int threads) {
  static_assert(HD % 64 == 0, "a lane merges whole pairs of dims in each 64-dim group");
  const int splits = p.num_splits;
  __threadfence();  // this thread's record writes, ordered before the count (release side)
  __syncthreads();
  bool last = false;
  if (tid == 0) {
    unsigned int* counter = g_split_arrivals + static_cast<int64_t>(seq) * p.num_heads + head0;
    last = arrive_acq_rel(counter) == static_cast<unsigned int>(splits - 1);
    if (last) *counter = 0u;  // every arrival of this launch is in: ready for the next launch
  }
  if (!__syncthreads_or(last)) return;
  __threadfence();  // acquire side: the other CTAs' records, read after the count
  // A warp per query row. Lane s < S holds split s's max and sum; the max is a warp reduction (fmaxf
  // is exact, so its order does not matter), the sum runs over the splits in order through
  // shuffles (every lane the same value), and lane l merges the dims 64 j + 2 l, + 1, loading the
  // splits' pairs kChunk at a time, the first chunk together with the maxes and sums (one L2
  // round trip a row for up to kChunk splits).
  constexpr int kRecord = HD + 2, kPairs = HD / 64, kChunk = HD >= 256 ? 4 : 8;
  const int warp = tid / 32, lane = tid % 32, warps = threads / 32;
  const float* group = p.workspace + (static_cast<int64_t>(seq) * p.num_heads + head0) * splits * kRecord;
  for (int row = warp; row < rows; row += warps) {
    const float* recs = group + static_cast<int64_t>(row) * splits * kRecord;
    float2 x[kChunk][kPairs];
    auto load_chunk = [&](int s0) {
#pragma unroll
      for (int c = 0; c < kChunk; ++c) {
#pragma unroll
        for (int j = 0; j < kPairs; ++j) {
          x[c][j] =
              s0 + c < splits
                  ? __ldcg(reinterpret_cast<const float2*>(recs + (s0 + c) * kRecord + 64 * j + 2 * lane))
                  : make_float2(0.0f, 0.0f);  // kRecord even: 8-byte aligned
        }
      }
    };
    load_chunk(0);
    const float m_mine = lane < splits ? __ldcg(recs + lane * kRecord + HD) : -INFINITY;
    const float l_mine = lane < splits ? __ldcg(recs + lane * kRecord + HD + 1) : 0.0f;
    float max_all = m_mine;
#pragma unroll
    for (int off = 16; off > 0; off /= 2)
      max_all = fmaxf(max_all, __shfl_xor_sync(0xffffffffu, max_all, off));
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
    __nv_bfloat16* out =
        p.out + static_cast<int64_t>(seq) * p.out_stride + static_cast<int64_t>(head0 + row) * HD;
#pragma unroll
    for (int j = 0; j < kPairs; ++j) {
      out[64 * j + 2 * lane] = __float2bfloat16_rn(value[j].x);
      out[64 * j + 2 * lane + 1] = __float2bfloat16_rn(value[j].y);
    }
  }
}

}  // namespace lathe::cuda::attn::splitk
