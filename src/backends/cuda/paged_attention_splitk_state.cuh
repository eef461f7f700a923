#pragma once
// A split-K warp's online-softmax state on its way into a split's record: the store of one warp's
// state (o, running max m, running sum l for the 16 rows of its m16 tile) into shared memory, and
// the merge of a CTA's W warp states in warp order 0..W-1. Shared by the per-split kernel
// (paged_attention_splitk.cuh) and the persistent one (paged_attention_splitk_persistent.cuh):
// both give a split the same bytes because they run exactly this arithmetic in this order.
#include "backends/cuda/paged_attention_fp8_frag.cuh"

namespace lathe::cuda::attn::splitk {

// Stores this warp's state for rows [0, rows) of its tile: o of (row, head dim d) at
// o_rows[row * o_pitch + d], m and l at ml[row * ml_pitch] and ml[row * ml_pitch + 1]. o[j] holds
// the MMA accumulator of column tile j (rows g and g + 8, columns 2t and 2t + 1; with FP8 KV the
// columns are the head dims fp8frag::out_dim names).
template <int HD, bool kFp8>
__device__ __forceinline__ void store_warp_state(const float (&o)[HD / 8][4], float m_a, float m_b, float l_a,
                                                 float l_b, int lane, int rows, float* o_rows, int o_pitch,
                                                 float* ml, int ml_pitch) {
  const int g = lane / 4, t = lane % 4;
  const bool top = g < rows, bottom = g + 8 < rows;
#pragma unroll
  for (int j = 0; j < HD / 8; ++j) {
    const int d0 = kFp8 ? fp8frag::out_dim<HD>(j, 2 * t) : j * 8 + 2 * t;
    const int d1 = kFp8 ? fp8frag::out_dim<HD>(j, 2 * t + 1) : d0 + 1;
    if (top) {
      o_rows[g * o_pitch + d0] = o[j][0];
      o_rows[g * o_pitch + d1] = o[j][1];
    }
    if (bottom) {
      o_rows[(g + 8) * o_pitch + d0] = o[j][2];
      o_rows[(g + 8) * o_pitch + d1] = o[j][3];
    }
  }
  if (t == 0) {
    if (top) {
      ml[g * ml_pitch] = m_a;
      ml[g * ml_pitch + 1] = l_a;
    }
    if (bottom) {
      ml[(g + 8) * ml_pitch] = m_b;
      ml[(g + 8) * ml_pitch + 1] = l_b;
    }
  }
}

// The same store for a warp whose tiles ran with positions as the MMA rows (splitk_tile_pos_rows:
// o[i] holds head dims 16i + g and 16i + g + 8 (FP8 KV: fp8frag::out_dim(2i, g) and
// out_dim(2i + 1, g)) of heads 2t and 2t + 1; m and l of those heads, equal across the lanes that
// share t); rows are heads [0, rows), rows <= 8.
template <int HD, bool kFp8>
__device__ __forceinline__ void store_warp_state_pos_rows(const float (&o)[HD / 16][4], float m_a, float m_b,
                                                          float l_a, float l_b, int lane, int rows,
                                                          float* o_rows, int o_pitch, float* ml,
                                                          int ml_pitch) {
  const int g = lane / 4, head_a = 2 * (lane % 4), head_b = head_a + 1;
  const bool has_a = head_a < rows, has_b = head_b < rows;
#pragma unroll
  for (int i = 0; i < HD / 16; ++i) {
    const int d0 = kFp8 ? fp8frag::out_dim<HD>(2 * i, g) : 16 * i + g;
    const int d1 = kFp8 ? fp8frag::out_dim<HD>(2 * i + 1, g) : d0 + 8;
    if (has_a) {
      o_rows[head_a * o_pitch + d0] = o[i][0];
      o_rows[head_a * o_pitch + d1] = o[i][2];
    }
    if (has_b) {
      o_rows[head_b * o_pitch + d0] = o[i][1];
      o_rows[head_b * o_pitch + d1] = o[i][3];
    }
  }
  if (g == 0) {
    if (has_a) {
      ml[head_a * ml_pitch] = m_a;
      ml[head_a * ml_pitch + 1] = l_a;
    }
    if (has_b) {
      ml[head_b * ml_pitch] = m_b;
      ml[head_b * ml_pitch + 1] = l_b;
    }
  }
}

// Merges kWarps warp states of rows [0, rows), thread tid of `threads` taking (row, d) pairs:
//   M = max_w m_w,  f_w = 2^(m_w - M),  out = sum_w o_w f_w,  sum = sum_w l_w f_w  (w ascending)
// and hands each to emit(row, d, out, M, sum). o_at(w, row) points at warp w's o of that row;
// m_at / l_at(w, row) read its max and sum.
template <int HD, int kWarps, typename OAt, typename MAt, typename LAt, typename Emit>
__device__ __forceinline__ void merge_warp_states(int rows, int tid, int threads, const OAt& o_at,
                                                  const MAt& m_at, const LAt& l_at, const Emit& emit) {
  for (int i = tid; i < rows * HD; i += threads) {
    const int row = i / HD, d = i % HD;
    float max_all = -INFINITY;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) max_all = fmaxf(max_all, m_at(w, row));
    float sum = 0.0f, out = 0.0f;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) {
      const float f = exp2f(m_at(w, row) - max_all);
      sum = __fmaf_rn(l_at(w, row), f, sum);
      out = __fmaf_rn(o_at(w, row)[d], f, out);
    }
    emit(row, d, out, max_all, sum);
  }
}

}  // namespace lathe::cuda::attn::splitk
