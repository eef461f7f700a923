#pragma once
// The per-(token, head) step of the QK-norm + RoPE + paged KV write (rope_kv.h states the
// numerics), for one warp whose shared-memory buffer already holds the head's values. The
// standalone kernel (rope_kv.cu) and the q|k|v decode GEMV's epilogue (gemv_ring_kernel.cuh,
// GemvProblem::rope) both run this function, which is what gives their outputs and cache rows
// the same bytes.
#include <cuda_bf16.h>
#include <cuda_fp8.h>

#include <cstdint>

#include "backends/cuda/rope_kv.h"

namespace lathe::cuda {

// (cos, sin) of rotary pair i's angle at `position`, each times attention_scaling. Every caller
// computes the pair with this one function (inline, or once per token into a table), and the
// rotation below rounds each product and sum explicitly, so a rotated value has the same bits
// whichever way its pair was obtained.
__device__ __forceinline__ float2 rope_cos_sin(const QkNormRopeArgs& a, float position, int i) {
  const float angle = __fmul_rn(position, a.inv_freq[i]);
  return make_float2(__fmul_rn(cosf(angle), a.attention_scaling),
                     __fmul_rn(sinf(angle), a.attention_scaling));
}

// Head h (< num_heads: a query head, then num_kv_heads key heads, then the value heads) of token
// t of `a`. buf[e] holds the head's value e (a bf16 value as float), e < head_dim <= kMaxHeadDim,
// written by this warp (or visible to it); the function overwrites it. Writes the head's result
// (normalised and rotated for q and k, as given for v; v only when `out` is not null) to `out`
// (bf16 [head_dim]) and, for k and v, to the cache slot a.slot_mapping[t] (none when negative).
// cos_sin(i) returns rope_cos_sin(a, position of t, i) for i < rotary_dim / 2.
template <int kMaxHeadDim, class CosSin>
__device__ __forceinline__ void qk_norm_rope_head(const QkNormRopeArgs& a, int64_t t, int h, int lane,
                                                  float* buf, __nv_bfloat16* out, CosSin cos_sin) {
  const int hd = a.head_dim;
  const int32_t slot = a.slot_mapping[t];
  auto write_cache = [&](void* cache, int kv_head, float scale, int e, float value) {
    if (slot < 0) return;
    const int64_t block = slot / a.block_size;
    const int64_t offset = ((block * a.num_kv_heads + kv_head) * a.block_size + slot % a.block_size) * hd + e;
    if (a.cache_fp8) {
      static_cast<uint8_t*>(cache)[offset] =
          static_cast<uint8_t>(__nv_cvt_float_to_fp8(value / scale, __NV_SATFINITE, __NV_E4M3));
    } else {
      static_cast<__nv_bfloat16*>(cache)[offset] = __float2bfloat16_rn(value);
    }
  };
  if (h >= a.num_heads + a.num_kv_heads) {  // v: as given, into the cache
    const int kv = h - a.num_heads - a.num_kv_heads;
    for (int e = lane; e < hd; e += 32) {
      if (out != nullptr) out[e] = __float2bfloat16_rn(buf[e]);
      write_cache(a.cache_v, kv, a.v_scale, e, buf[e]);
    }
    return;
  }
  const bool is_q = h < a.num_heads;
  const int head = is_q ? h : h - a.num_heads;
  const float* norm = is_q ? a.q_norm : a.k_norm;
  // RMSNorm: the sum of squares lane-strided (e = lane, lane + 32, ...), then across the warp.
  float ss = 0.0f;
  for (int e = lane; e < hd; e += 32) ss = __fmaf_rn(buf[e], buf[e], ss);
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) ss += __shfl_xor_sync(0xffffffffu, ss, off);
  if (norm != nullptr) {
    const float inv = 1.0f / sqrtf(ss / static_cast<float>(hd) + a.eps);
    for (int e = lane; e < hd; e += 32)
      buf[e] = __bfloat162float(__float2bfloat16_rn((buf[e] * inv) * norm[e]));
  }
  __syncwarp();
  // Rotate-half RoPE on the first rotary_dim values: pair (i, i + half) turned by position * inv_freq[i].
  const int half = a.rotary_dim / 2;
  float rotated[kMaxHeadDim / 32];
#pragma unroll
  for (int j = 0; j < kMaxHeadDim / 32; ++j) {
    const int e = lane + 32 * j;
    if (e >= hd) break;
    float v = buf[e];
    if (e < a.rotary_dim) {
      const float2 cs = cos_sin(e < half ? e : e - half);
      v = e < half ? __fsub_rn(__fmul_rn(buf[e], cs.x), __fmul_rn(buf[e + half], cs.y))
                   : __fadd_rn(__fmul_rn(buf[e], cs.x), __fmul_rn(buf[e - half], cs.y));
    }
    rotated[j] = __bfloat162float(__float2bfloat16_rn(v));
  }
  __syncwarp();
#pragma unroll
  for (int j = 0; j < kMaxHeadDim / 32; ++j) {
    const int e = lane + 32 * j;
    if (e >= hd) break;
    out[e] = __float2bfloat16_rn(rotated[j]);
    if (!is_q) write_cache(a.cache_k, head, a.k_scale, e, rotated[j]);
  }
}

// The same, each pair computed where it is used (the q|k|v GEMV's epilogue: a few tokens a launch).
template <int kMaxHeadDim>
__device__ __forceinline__ void qk_norm_rope_head(const QkNormRopeArgs& a, int64_t t, int h, int lane,
                                                  float* buf, __nv_bfloat16* out) {
  const float position = static_cast<float>(a.positions[t]);
  qk_norm_rope_head<kMaxHeadDim>(a, t, h, lane, buf, out,
                                 [&](int i) { return rope_cos_sin(a, position, i); });
}

}  // namespace lathe::cuda
