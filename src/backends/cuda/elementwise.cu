#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>

#include "backends/cuda/check.h"
#include "backends/cuda/elementwise.h"

namespace lathe::cuda {
namespace {

constexpr int kThreads = 256;

__device__ __forceinline__ float load(const void* base, RowType type, int64_t i) {
  switch (type) {
    case RowType::kBf16:
      return __bfloat162float(static_cast<const __nv_bfloat16*>(base)[i]);
    case RowType::kF16:
      return __half2float(static_cast<const __half*>(base)[i]);
    default:
      return static_cast<const float*>(base)[i];
  }
}

__device__ __forceinline__ void store(void* base, RowType type, int64_t i, float v) {
  switch (type) {
    case RowType::kBf16:
      static_cast<__nv_bfloat16*>(base)[i] = __float2bfloat16_rn(v);
      break;
    case RowType::kF16:
      static_cast<__half*>(base)[i] = __float2half_rn(v);
      break;
    default:
      static_cast<float*>(base)[i] = v;
      break;
  }
}

// Value as it reads back after a store of this type (the residual stream is normalised as held).
__device__ __forceinline__ float rounded(RowType type, float v) {
  switch (type) {
    case RowType::kBf16:
      return __bfloat162float(__float2bfloat16_rn(v));
    case RowType::kF16:
      return __half2float(__float2half_rn(v));
    default:
      return v;
  }
}

// Deterministic block sum (fixed tree over warps).
__device__ float block_sum(float v) {
  __shared__ float partial[kThreads / 32];
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
  __syncthreads();
  if ((threadIdx.x & 31) == 0) partial[threadIdx.x >> 5] = v;
  __syncthreads();
  float total = 0.0f;
#pragma unroll
  for (int w = 0; w < kThreads / 32; ++w) total += partial[w];
  return total;
}

__global__ void embedding_kernel(const int32_t* ids, const void* table, RowType table_type, int64_t vocab,
                                 int64_t hidden, void* out, RowType out_type, int64_t out_stride) {
  const int64_t t = blockIdx.x;
  const int32_t id = ids[t];
  const bool valid = id >= 0 && id < vocab;
  for (int64_t c = threadIdx.x; c < hidden; c += blockDim.x) {
    const float v = valid ? load(table, table_type, static_cast<int64_t>(id) * hidden + c) : 0.0f;
    store(out, out_type, t * out_stride + c, v);
  }
}

__global__ void rms_norm_kernel(const void* x, RowType x_type, int64_t x_stride, int64_t cols, const float* weight,
                                float eps, void* out, RowType out_type, int64_t out_stride) {
  const int64_t r = blockIdx.x;
  float ss = 0.0f;
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
    const float v = load(x, x_type, r * x_stride + c);
    ss = __fmaf_rn(v, v, ss);
  }
  const float mean = block_sum(ss) / static_cast<float>(cols);
  const float inv = 1.0f / sqrtf(mean + eps);
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
    const float v = load(x, x_type, r * x_stride + c);
    store(out, out_type, r * out_stride + c, (v * inv) * weight[c]);
  }
}

__global__ void add_rms_norm_kernel(void* residual, RowType res_type, int64_t res_stride, const void* delta,
                                    RowType delta_type, int64_t delta_stride, int64_t cols, const float* weight,
                                    float eps, void* out, RowType out_type, int64_t out_stride) {
  const int64_t r = blockIdx.x;
  float ss = 0.0f;
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
    const float sum = rounded(res_type, load(residual, res_type, r * res_stride + c) + load(delta, delta_type, r * delta_stride + c));
    store(residual, res_type, r * res_stride + c, sum);
    ss = __fmaf_rn(sum, sum, ss);
  }
  const float mean = block_sum(ss) / static_cast<float>(cols);
  const float inv = 1.0f / sqrtf(mean + eps);
  // Each thread re-reads only the elements it wrote itself.
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
    const float v = load(residual, res_type, r * res_stride + c);
    store(out, out_type, r * out_stride + c, (v * inv) * weight[c]);
  }
}

__global__ void silu_mul_kernel(const void* gate_up, RowType in_type, int64_t in_stride, int64_t inter, void* out,
                                RowType out_type, int64_t out_stride) {
  const int64_t r = blockIdx.y;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < inter;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const float g = load(gate_up, in_type, r * in_stride + i);
    const float u = load(gate_up, in_type, r * in_stride + inter + i);
    store(out, out_type, r * out_stride + i, g / (1.0f + expf(-g)) * u);
  }
}

__global__ void gather_kernel(const void* x, RowType x_type, int64_t x_stride, const int32_t* indices, int64_t cols,
                              void* out, RowType out_type, int64_t out_stride) {
  const int64_t i = blockIdx.x;
  const int64_t src = indices[i];
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) store(out, out_type, i * out_stride + c, load(x, x_type, src * x_stride + c));
}

__global__ void bias_kernel(void* y, RowType y_type, int64_t y_stride, int64_t cols, const float* bias) {
  const int64_t r = blockIdx.y;
  for (int64_t c = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; c < cols;
       c += static_cast<int64_t>(gridDim.x) * blockDim.x)
    store(y, y_type, r * y_stride + c, load(y, y_type, r * y_stride + c) + bias[c]);
}

__global__ void convert_kernel(const void* src, RowType src_type, int64_t count, __nv_bfloat16* dst) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    dst[i] = __float2bfloat16_rn(load(src, src_type, i));
}

unsigned column_blocks(int64_t cols) { return static_cast<unsigned>(std::min<int64_t>((cols + kThreads - 1) / kThreads, 64)); }

}  // namespace

void launch_embedding(const int32_t* ids, int64_t tokens, const void* table, RowType table_type, int64_t vocab,
                      int64_t hidden, void* out, RowType out_type, int64_t out_stride, cudaStream_t stream) {
  if (tokens <= 0) return;
  embedding_kernel<<<static_cast<unsigned>(tokens), kThreads, 0, stream>>>(ids, table, table_type, vocab, hidden, out,
                                                                          out_type, out_stride);
  LATHE_CUDA_CHECK_LAUNCH();
}

void launch_rms_norm(const void* x, RowType x_type, int64_t x_stride, int64_t rows, int64_t cols, const float* weight,
                     float eps, void* out, RowType out_type, int64_t out_stride, cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return;
  rms_norm_kernel<<<static_cast<unsigned>(rows), kThreads, 0, stream>>>(x, x_type, x_stride, cols, weight, eps, out,
                                                                       out_type, out_stride);
  LATHE_CUDA_CHECK_LAUNCH();
}

void launch_add_rms_norm(void* residual, RowType residual_type, int64_t residual_stride, const void* delta,
                         RowType delta_type, int64_t delta_stride, int64_t rows, int64_t cols, const float* weight,
                         float eps, void* out, RowType out_type, int64_t out_stride, cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return;
  add_rms_norm_kernel<<<static_cast<unsigned>(rows), kThreads, 0, stream>>>(
      residual, residual_type, residual_stride, delta, delta_type, delta_stride, cols, weight, eps, out, out_type, out_stride);
  LATHE_CUDA_CHECK_LAUNCH();
}

void launch_silu_mul(const void* gate_up, RowType in_type, int64_t in_stride, int64_t rows, int64_t inter, void* out,
                     RowType out_type, int64_t out_stride, cudaStream_t stream) {
  if (rows <= 0 || inter <= 0) return;
  silu_mul_kernel<<<dim3(column_blocks(inter), static_cast<unsigned>(rows)), kThreads, 0, stream>>>(
      gate_up, in_type, in_stride, inter, out, out_type, out_stride);
  LATHE_CUDA_CHECK_LAUNCH();
}

void launch_gather_rows(const void* x, RowType x_type, int64_t x_stride, const int32_t* indices, int64_t count,
                        int64_t cols, void* out, RowType out_type, int64_t out_stride, cudaStream_t stream) {
  if (count <= 0) return;
  gather_kernel<<<static_cast<unsigned>(count), kThreads, 0, stream>>>(x, x_type, x_stride, indices, cols, out, out_type,
                                                                      out_stride);
  LATHE_CUDA_CHECK_LAUNCH();
}

void launch_bias_add(void* y, RowType y_type, int64_t y_stride, int64_t rows, int64_t cols, const float* bias,
                     cudaStream_t stream) {
  if (rows <= 0 || cols <= 0 || bias == nullptr) return;
  bias_kernel<<<dim3(column_blocks(cols), static_cast<unsigned>(rows)), kThreads, 0, stream>>>(y, y_type, y_stride, cols,
                                                                                             bias);
  LATHE_CUDA_CHECK_LAUNCH();
}

void launch_convert_to_bf16(const void* src, RowType src_type, int64_t count, void* dst, cudaStream_t stream) {
  if (count <= 0) return;
  convert_kernel<<<132 * 8, kThreads, 0, stream>>>(src, src_type, count, static_cast<__nv_bfloat16*>(dst));
  LATHE_CUDA_CHECK_LAUNCH();
}

}  // namespace lathe::cuda
