#pragma once
// The arithmetic of merging one (sequence, head)'s split-K records (split_records.h), in slot
// order i = 0, 1, ... over the used slots:
//   M = max_i m_i,  w_i = 2^(m_i - M),  out = round_bf16((sum_i w_i o_i) / (sum_i w_i l_i))
// with the max, the weights and both sums taken in that order by these functions; an all-neutral
// (M = -inf) head gives 0. The split reduce and the GEMV that merges records while staging its
// input (gemv_split_merge.cuh) both use them, so their outputs are the same bits.
#include <cuda_bf16.h>

#include <cmath>

namespace lathe::cuda::split_merge {

__device__ __forceinline__ float max_step(float max_all, float m_i) { return fmaxf(max_all, m_i); }

// w_i; called only when max_all != -inf.
__device__ __forceinline__ float weight(float m_i, float max_all) { return exp2f(m_i - max_all); }

// acc + value * w_i, one rounding (the running sum of l_i and each output's sum of o_i).
__device__ __forceinline__ float accumulate(float acc, float value, float w) { return __fmaf_rn(value, w, acc); }

__device__ __forceinline__ float finish(float o, float sum, float max_all) {
  return max_all == -INFINITY ? 0.0f : __fdiv_rn(o, sum);
}

}  // namespace lathe::cuda::split_merge
