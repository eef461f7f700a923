#include <cuda_bf16.h>
#include <cuda_fp8.h>

#include "backends/cuda/chained_launch.cuh"
#include "backends/cuda/check.h"
#include "backends/cuda/rope_kv.h"

namespace lathe::cuda {
namespace {

constexpr int kWarpsPerBlock = 8;
constexpr int kMaxHeadDim = 512;

__global__ void qk_norm_rope_kv_kernel(QkNormRopeArgs a) {
  chained_kernel_begin();
  __shared__ float head_buf[kWarpsPerBlock][kMaxHeadDim];
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  const int heads_per_token = a.num_heads + 2 * a.num_kv_heads;
  const int64_t item = static_cast<int64_t>(blockIdx.x) * kWarpsPerBlock + warp;
  if (item >= a.tokens * heads_per_token) return;
  const int64_t t = item / heads_per_token;
  const int h = static_cast<int>(item % heads_per_token);
  const int hd = a.head_dim;
  float* buf = head_buf[warp];
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
  __nv_bfloat16* x = is_q ? static_cast<__nv_bfloat16*>(a.q) + t * a.q_stride + static_cast<int64_t>(head) * hd
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
    for (int e = lane; e < hd; e += 32) buf[e] = __bfloat162float(__float2bfloat16_rn((buf[e] * inv) * norm[e]));
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

}  // namespace

void launch_qk_norm_rope_kv_write(const QkNormRopeArgs& args, cudaStream_t stream) {
  if (args.tokens <= 0) return;
  if (args.head_dim <= 0 || args.head_dim > kMaxHeadDim || args.rotary_dim < 0 || args.rotary_dim % 2 != 0 ||
      args.rotary_dim > args.head_dim)
    throw_error("qk_norm_rope_kv_write: head_dim must be in 1..512 and rotary_dim even and <= head_dim");
  const int64_t items = args.tokens * (args.num_heads + 2 * args.num_kv_heads);
  const unsigned blocks = static_cast<unsigned>((items + kWarpsPerBlock - 1) / kWarpsPerBlock);
  launch_chained(qk_norm_rope_kv_kernel, dim3(blocks), dim3(kWarpsPerBlock * 32), 0, stream, args);
}

}  // namespace lathe::cuda
