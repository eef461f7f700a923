#include <cuda_bf16.h>
#include <cuda_fp8.h>

#include "backends/cuda/chained_launch.cuh"
#include "backends/cuda/check.h"
#include "backends/cuda/rope_kv.cuh"

namespace lathe::cuda {
namespace {

constexpr int kWarpsPerBlock = 8;
constexpr int kMaxHeadDim = 512;

// Grid (tokens, head groups of kWarpsPerBlock): each warp takes one head of the block's token.
// The token's (cos, sin) pairs are computed once per block, not twice per element of every q and
// k head: 18% off this kernel on an 8192-token prefill (docs/PERFORMANCE.md, "Session 33"). The
// kernel is still bound by each warp's chain per head (load, norm, rotation), not by its bytes;
// giving a warp several heads of its token made it 1.9x slower.
__global__ void qk_norm_rope_kv_kernel(QkNormRopeArgs a) {
  chained_kernel_begin();
  __shared__ float head_buf[kWarpsPerBlock][kMaxHeadDim];
  __shared__ float2 pairs[kMaxHeadDim / 2];
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  const int64_t t = blockIdx.x;
  const float position = static_cast<float>(a.positions[t]);
  for (int i = threadIdx.x; i < a.rotary_dim / 2; i += blockDim.x) pairs[i] = rope_cos_sin(a, position, i);
  __syncthreads();
  const int h = static_cast<int>(blockIdx.y) * kWarpsPerBlock + warp;
  // q and k are normalised and rotated in place; v is only read (into the cache).
  const int nq = a.num_heads, nkv = a.num_kv_heads, hd = a.head_dim;
  if (h >= nq + 2 * nkv) return;
  const __nv_bfloat16* x =
      h < nq         ? static_cast<const __nv_bfloat16*>(a.q) + t * a.q_stride + int64_t{h} * hd
      : h < nq + nkv ? static_cast<const __nv_bfloat16*>(a.k) + t * a.k_stride + int64_t{h - nq} * hd
                     : static_cast<const __nv_bfloat16*>(a.v) + t * a.v_stride + int64_t{h - nq - nkv} * hd;
  float* buf = head_buf[warp];
  for (int e = lane; e < hd; e += 32) buf[e] = __bfloat162float(x[e]);
  __syncwarp();
  qk_norm_rope_head<kMaxHeadDim>(a, t, h, lane, buf, h < nq + nkv ? const_cast<__nv_bfloat16*>(x) : nullptr,
                                 [&](int i) { return pairs[i]; });
}

}  // namespace

void launch_qk_norm_rope_kv_write(const QkNormRopeArgs& args, cudaStream_t stream) {
  if (args.tokens <= 0) return;
  if (args.head_dim <= 0 || args.head_dim > kMaxHeadDim || args.rotary_dim < 0 || args.rotary_dim % 2 != 0 ||
      args.rotary_dim > args.head_dim)
    throw_error("qk_norm_rope_kv_write: head_dim must be in 1..512 and rotary_dim even and <= head_dim");
  const int heads = args.num_heads + 2 * args.num_kv_heads;
  const unsigned groups = static_cast<unsigned>((heads + kWarpsPerBlock - 1) / kWarpsPerBlock);
  launch_chained(qk_norm_rope_kv_kernel, dim3(static_cast<unsigned>(args.tokens), groups),
                 dim3(kWarpsPerBlock * 32), 0, stream, args);
}

}  // namespace lathe::cuda
