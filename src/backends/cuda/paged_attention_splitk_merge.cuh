#pragma once
// The merge of one (sequence, head, head dim)'s split records, shared by the reduce kernel
// (paged_attention_splitk.cu) and the split kernel's in-kernel merge (paged_attention_splitk.cuh,
// the CTA that finishes a (sequence, query rows) group last). One function, so both give the same
// bytes by construction (and a GPU test checks it).
//
// A record is HD + 2 floats: the split's output accumulator o (already times v_scale), its running
// max m (log2 domain) and its sum of weights l. With M = max_i m_i and w_i = 2^(m_i - M):
//   out = (sum_i w_i o_i) / (sum_i w_i l_i), the sums taken in slot order 0..count-1,
// and 0 when every record is neutral (M = -inf: empty splits only).
namespace lathe::cuda::attn::splitk {

// max_at(i), sum_at(i), value_at(i): m, l and this dimension's o of the i-th record to merge. The
// records are read kChunk at a time, every load of a chunk issued before any is used, so a merge
// of up to kChunk records costs two round trips to L2 (the max, then the weighted sums); the
// arithmetic and its order are those of a plain loop over i.
template <typename MaxAt, typename SumAt, typename ValueAt>
__device__ __forceinline__ float merge_split_records(int count, MaxAt max_at, SumAt sum_at, ValueAt value_at) {
  constexpr int kChunk = 16;
  float max_all = -INFINITY;
  for (int base = 0; base < count; base += kChunk) {
    float m[kChunk];
#pragma unroll
    for (int k = 0; k < kChunk; ++k) m[k] = base + k < count ? max_at(base + k) : -INFINITY;
#pragma unroll
    for (int k = 0; k < kChunk; ++k) max_all = fmaxf(max_all, m[k]);
  }
  if (max_all == -INFINITY) return 0.0f;
  float sum = 0.0f, o = 0.0f;
  for (int base = 0; base < count; base += kChunk) {
    float m[kChunk], l[kChunk], x[kChunk];
#pragma unroll
    for (int k = 0; k < kChunk; ++k) {
      const bool used = base + k < count;
      m[k] = used ? max_at(base + k) : -INFINITY;
      l[k] = used ? sum_at(base + k) : 0.0f;
      x[k] = used ? value_at(base + k) : 0.0f;
    }
#pragma unroll
    for (int k = 0; k < kChunk; ++k) {
      if (base + k >= count) break;
      const float w = exp2f(m[k] - max_all);
      sum = __fmaf_rn(l[k], w, sum);
      o = __fmaf_rn(x[k], w, o);
    }
  }
  return __fdiv_rn(o, sum);
}

}  // namespace lathe::cuda::attn::splitk
