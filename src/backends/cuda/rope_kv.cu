#include <cuda_bf16.h>
#include <cuda_fp8.h>

#include <algorithm>

#include "backends/cuda/chained_launch.cuh"
#include "backends/cuda/check.h"
#include "backends/cuda/rope_kv.cuh"

namespace lathe::cuda {
namespace {

constexpr int kWarpsPerBlock = 8;
constexpr int kMaxHeadDim = 512;
constexpr int kValuesPerLane = kMaxHeadDim / 32;
// Warps the launch aims for (about two waves of 64 resident warps on each of 132 SMs): a long
// prefill gives each warp several heads of its token, a decode step one.
constexpr int64_t kTargetWarps = 16384;

// Head h of token t: a query head, then the key heads, then the value heads.
__device__ __forceinline__ const __nv_bfloat16* head_row(const QkNormRopeArgs& a, int64_t t, int h) {
  const int nq = a.num_heads, nkv = a.num_kv_heads, hd = a.head_dim;
  return h < nq         ? static_cast<const __nv_bfloat16*>(a.q) + t * a.q_stride + int64_t{h} * hd
         : h < nq + nkv ? static_cast<const __nv_bfloat16*>(a.k) + t * a.k_stride + int64_t{h - nq} * hd
                        : static_cast<const __nv_bfloat16*>(a.v) + t * a.v_stride + int64_t{h - nq - nkv} * hd;
}

// values[j] = x[lane + 32 j] (0 past head_dim): the lane's share in qk_norm_rope_head's order.
__device__ __forceinline__ void load_head(const __nv_bfloat16* x, int hd, int lane, float (&values)[kValuesPerLane]) {
#pragma unroll
  for (int j = 0; j < kValuesPerLane; ++j) {
    const int e = lane + 32 * j;
    values[j] = e < hd ? __bfloat162float(x[e]) : 0.0f;
  }
}

// Grid (tokens, head slices): warp w of slice y takes heads y * 8 + w, then every 8 * slices-th
// after it, of the block's token, holding the next head's values in registers while it works on
// the current one. The token's (cos, sin) pairs are computed once per block, and the first head's
// load is issued before the position is read, so the two global reads overlap. One warp per
// (token, head), as before, left each warp a chain of dependent global round trips (position,
// then values, then the norm) and the kernel far under its memory traffic's time.
__global__ void qk_norm_rope_kv_kernel(QkNormRopeArgs a) {
  chained_kernel_begin();
  __shared__ float head_buf[kWarpsPerBlock][kMaxHeadDim];
  __shared__ float2 pairs[kMaxHeadDim / 2];
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  const int64_t t = blockIdx.x;
  const int nq = a.num_heads, nkv = a.num_kv_heads, hd = a.head_dim;
  const int heads = nq + 2 * nkv;
  const int stride = kWarpsPerBlock * static_cast<int>(gridDim.y);
  int h = static_cast<int>(blockIdx.y) * kWarpsPerBlock + warp;
  float current[kValuesPerLane] = {};
  if (h < heads) load_head(head_row(a, t, h), hd, lane, current);
  const float position = static_cast<float>(a.positions[t]);
  for (int i = threadIdx.x; i < a.rotary_dim / 2; i += blockDim.x) pairs[i] = rope_cos_sin(a, position, i);
  __syncthreads();
  float* buf = head_buf[warp];
  while (h < heads) {
    const int next = h + stride;
    float upcoming[kValuesPerLane] = {};
    if (next < heads) load_head(head_row(a, t, next), hd, lane, upcoming);
#pragma unroll
    for (int j = 0; j < kValuesPerLane; ++j) {
      if (lane + 32 * j < hd) buf[lane + 32 * j] = current[j];
    }
    __syncwarp();
    // q and k are normalised and rotated in place; v is only read (into the cache).
    qk_norm_rope_head<kMaxHeadDim>(a, t, h, lane, buf,
                                   h < nq + nkv ? const_cast<__nv_bfloat16*>(head_row(a, t, h)) : nullptr,
                                   [&](int i) { return pairs[i]; });
    __syncwarp();  // buf is rewritten for the next head
#pragma unroll
    for (int j = 0; j < kValuesPerLane; ++j) current[j] = upcoming[j];
    h = next;
  }
}

}  // namespace

void launch_qk_norm_rope_kv_write(const QkNormRopeArgs& args, cudaStream_t stream) {
  if (args.tokens <= 0) return;
  if (args.head_dim <= 0 || args.head_dim > kMaxHeadDim || args.rotary_dim < 0 || args.rotary_dim % 2 != 0 ||
      args.rotary_dim > args.head_dim)
    throw_error("qk_norm_rope_kv_write: head_dim must be in 1..512 and rotary_dim even and <= head_dim");
  const int64_t heads = args.num_heads + 2 * args.num_kv_heads;
  const int64_t slices_max = (heads + kWarpsPerBlock - 1) / kWarpsPerBlock;
  const int64_t wanted = (kTargetWarps + args.tokens * kWarpsPerBlock - 1) / (args.tokens * kWarpsPerBlock);
  const auto slices = static_cast<unsigned>(std::clamp<int64_t>(wanted, 1, slices_max));
  launch_chained(qk_norm_rope_kv_kernel, dim3(static_cast<unsigned>(args.tokens), slices), dim3(kWarpsPerBlock * 32),
                 0, stream, args);
}

}  // namespace lathe::cuda
