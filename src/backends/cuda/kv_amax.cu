#include <cuda_bf16.h>
#include <cuda_fp8.h>

#include "backends/cuda/check.h"
#include "backends/cuda/kv_amax.h"

namespace lathe::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int kMaxBlocksPerTensor = 1024;

// grid (blocks, 2): blockIdx.y picks k (0) or v (1). bf16 magnitude bits, widened to f32 bits by
// a 16-bit shift (exact), reduced with integer max.
__global__ void kv_amax_kernel(const __nv_bfloat16* k, int64_t k_stride, const __nv_bfloat16* v,
                               int64_t v_stride, int64_t rows, int64_t cols, unsigned int* amax_bits) {
  const bool is_v = blockIdx.y == 1;
  const __nv_bfloat16* x = is_v ? v : k;
  const int64_t stride = is_v ? v_stride : k_stride;
  const int64_t count = rows * cols;
  unsigned int m = 0;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t r = i / cols;
    const int64_t c = i - r * cols;
    const unsigned int bits = static_cast<unsigned int>(__bfloat16_as_ushort(x[r * stride + c]) & 0x7fffu)
                              << 16;
    m = max(m, bits);
  }
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) m = max(m, __shfl_xor_sync(0xffffffffu, m, off));
  __shared__ unsigned int warp_max[kThreads / 32];
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  if (lane == 0) warp_max[warp] = m;
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned int b = 0;
    for (int w = 0; w < kThreads / 32; ++w) b = max(b, warp_max[w]);
    atomicMax(amax_bits + (is_v ? 1 : 0), b);
  }
}

// One thread per (token, column) of k and of v (blockIdx.y).
__global__ void kv_write_kernel(KvWriteArgs a) {
  const bool is_v = blockIdx.y == 1;
  const int64_t cols = static_cast<int64_t>(a.num_kv_heads) * a.head_dim;
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= a.tokens * cols) return;
  const int64_t t = i / cols;
  const int64_t c = i - t * cols;
  const int32_t slot = a.slot_mapping[t];
  if (slot < 0) return;
  const int64_t head = c / a.head_dim;
  const int64_t e = c - head * a.head_dim;
  const auto* src = static_cast<const __nv_bfloat16*>(is_v ? a.v : a.k);
  const float value = __bfloat162float(src[t * (is_v ? a.v_stride : a.k_stride) + c]);
  const int64_t block = slot / a.block_size;
  const int64_t offset =
      ((block * a.num_kv_heads + head) * a.block_size + slot % a.block_size) * a.head_dim + e;
  void* cache = is_v ? a.cache_v : a.cache_k;
  if (a.cache_fp8) {
    const float scale = is_v ? a.v_scale : a.k_scale;
    static_cast<uint8_t*>(cache)[offset] =
        static_cast<uint8_t>(__nv_cvt_float_to_fp8(value / scale, __NV_SATFINITE, __NV_E4M3));
  } else {
    static_cast<__nv_bfloat16*>(cache)[offset] = __float2bfloat16_rn(value);
  }
}

}  // namespace

void launch_kv_amax(const void* k, int64_t k_stride, const void* v, int64_t v_stride, int64_t rows,
                    int64_t cols, float* amax, cudaStream_t stream) {
  if (rows < 0 || cols < 0) throw_error("kv_amax: negative rows or cols");
  LATHE_CUDA_CHECK(cudaMemsetAsync(amax, 0, 2 * sizeof(float), stream));
  const int64_t count = rows * cols;
  if (count == 0) return;
  const int64_t wanted = (count + kThreads - 1) / kThreads;
  const dim3 grid(static_cast<unsigned>(wanted < kMaxBlocksPerTensor ? wanted : kMaxBlocksPerTensor), 2);
  kv_amax_kernel<<<grid, kThreads, 0, stream>>>(static_cast<const __nv_bfloat16*>(k), k_stride,
                                                static_cast<const __nv_bfloat16*>(v), v_stride, rows, cols,
                                                reinterpret_cast<unsigned int*>(amax));
  LATHE_CUDA_CHECK_LAUNCH();
}

void launch_kv_write(const KvWriteArgs& args, cudaStream_t stream) {
  if (args.tokens <= 0) return;
  if (args.num_kv_heads <= 0 || args.head_dim <= 0 || args.block_size <= 0)
    throw_error("kv_write: num_kv_heads, head_dim and block_size must be positive");
  const int64_t count = args.tokens * args.num_kv_heads * args.head_dim;
  const dim3 grid(static_cast<unsigned>((count + kThreads - 1) / kThreads), 2);
  kv_write_kernel<<<grid, kThreads, 0, stream>>>(args);
  LATHE_CUDA_CHECK_LAUNCH();
}

}  // namespace lathe::cuda
