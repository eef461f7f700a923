#pragma once
// The per-(token, head) routine of the QK-norm + RoPE + paged KV write (rope_kv.h has the
// numerics). One warp runs it for one item; the standalone kernel (rope_kv.cu) and the q|k|v
// decode GEMV's fused epilogue (gemv.cu) both call this function, which is what keeps their bytes
// identical.
#include <cuda_bf16.h>
#include <cuda_fp8.h>

#include <cstdint>

#include "backends/cuda/rope_kv.h"

namespace lathe::cuda {

// Item (t, h) of `a`: token t (< a.tokens), head h of the q | k | v row (h < num_heads: a query
// head, then the key heads, then the value heads). `buf`: this warp's kMaxHeadDim floats of
// shared memory. kMaxHeadDim >= a.head_dim (the caller checks).
template <int kMaxHeadDim>
__device__ __forceinline__ void qk_norm_rope_kv_item(const QkNormRopeArgs& a, int64_t t, int h, int lane,
                                                     float* buf) {
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

  if (h >= a.num_heads + a.num_kv_heads) {  // v head: copy into the cache
    const int kv = h - a.num_heads - a.num_kv_heads;
    const auto* v = static_cast<const __nv_bfloat16*>(a.v) + t * a.v_stride + static_cast<int64_t>(kv) * hd;
    for (int e = lane; e < hd; e += 32) write_cache(a.cache_v, kv, a.v_scale, e, __bfloat162float(v[e]));
    return;
  }
  const bool is_q = h < a.num_heads;
  const int head = is_q ? h : h - a.num_heads;
  __nv_bfloat16* x =
      is_q ? static_cast<__nv_bfloat16*>(a.q) + t * a.q_stride + static_cast<int64_t>(head) * hd
           : static_cast<__nv_bfloat16*>(a.k) + t * a.k_stride + static_cast<int64_t>(head) * hd;
  const float* norm = is_q ? a.q_norm : a.k_norm;
  float ss = 0.0f;
  for (int e = lane; e < hd; e += 32) {
    const float v = __bfloat162float(x[e]);
    buf[e] = v;
    ss = __fmaf_rn(v, v, ss);
  }
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) ss += __shfl_xor_sync(0xffffffffu, ss, off);
  if (norm != nullptr) {
    const float inv = 1.0f / sqrtf(ss / static_cast<float>(hd) + a.eps);
    for (int e = lane; e < hd; e += 32)
      buf[e] = __bfloat162float(__float2bfloat16_rn((buf[e] * inv) * norm[e]));
  }
  __syncwarp();
  const int half = a.rotary_dim / 2;
  const float position = static_cast<float>(a.positions[t]);
  float out[kMaxHeadDim / 32];
#pragma unroll
  for (int j = 0; j < kMaxHeadDim / 32; ++j) {
    const int e = lane + 32 * j;
    if (e >= hd) break;
    float v = buf[e];
    if (e < a.rotary_dim) {
      const int i = e < half ? e : e - half;
      const float angle = position * a.inv_freq[i];
      const float cs = cosf(angle) * a.attention_scaling;
      const float sn = sinf(angle) * a.attention_scaling;
      v = e < half ? buf[e] * cs - buf[e + half] * sn : buf[e] * cs + buf[e - half] * sn;
    }
    out[j] = __bfloat162float(__float2bfloat16_rn(v));
  }
  __syncwarp();
#pragma unroll
  for (int j = 0; j < kMaxHeadDim / 32; ++j) {
    const int e = lane + 32 * j;
    if (e >= hd) break;
    x[e] = __float2bfloat16_rn(out[j]);
    if (!is_q) write_cache(a.cache_k, head, a.k_scale, e, out[j]);
  }
}

}  // namespace lathe::cuda
