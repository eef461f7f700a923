#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdint>

#include "backends/cuda/chained_launch.cuh"
#include "backends/cuda/check.h"
#include "backends/cuda/elementwise.h"
#include "backends/cuda/rms_norm_row.cuh"
#include "backends/cuda/silu_mul.cuh"

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

// Deterministic block sum (the fixed tree of rms_norm_row.cuh).
__device__ float block_sum(float v) {
  static_assert(kThreads == norm_row::kNormThreads);
  __shared__ float partial[1][kThreads / 32];
  float vals[1] = {v};
  norm_row::block_sums<1>(vals, partial);
  return vals[0];
}

__global__ void embedding_kernel(const int32_t* ids, const void* table, RowType table_type, int64_t vocab,
                                 int64_t hidden, void* out, RowType out_type, int64_t out_stride) {
  chained_kernel_begin();
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
  chained_kernel_begin();
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
  chained_kernel_begin();
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

// Vectorised BF16 path of the two norms: one CTA per row, each thread holds up to kMaxVecs
// 8-element vectors of the row in registers, so every global load of the row is issued before
// the first use (the scalar kernels above serialise a load round trip per element stride, which
// made a batch-1 norm cost ~16 us on the H200). Same maths and one rounding per store; the sum of
// squares is per thread in element order, then the fixed block tree.
using norm_row::Bf16x8;
using norm_row::kMaxVecs;
using norm_row::kVecElems;
using norm_row::load_vec;
using norm_row::store_vec;

// The row this thread holds (v[j]: vector threadIdx.x + j * kThreads, for those < vecs), scaled
// by 1 / sqrt(mean of squares over the row + eps) and by the weight, stored to out_row.
__device__ __forceinline__ void normalize_row_vectors(const float (&v)[kMaxVecs][kVecElems], int vecs, int cols,
                                                      const float* weight, float eps, __nv_bfloat16* out_row) {
  float ss = 0.0f;
#pragma unroll
  for (int j = 0; j < kMaxVecs; ++j) {
    if (threadIdx.x + j * kThreads < vecs) ss = norm_row::add_squares(v[j], ss);
  }
  const float inv = norm_row::inv_rms(block_sum(ss), cols, eps);
#pragma unroll
  for (int j = 0; j < kMaxVecs; ++j) {
    const int vi = threadIdx.x + j * kThreads;
    if (vi < vecs) {
      const int64_t col = static_cast<int64_t>(vi) * kVecElems;
      store_vec(out_row + col, norm_row::normed_vec(v[j], inv, weight, col));
    }
  }
}

// Fills v[j] with the 8 floats vector_at(col) returns for vector threadIdx.x + j * kThreads of
// the row (col = its first column), for those below vecs; every load is issued before any use.
template <typename VectorAt>
__device__ __forceinline__ void gather_row_vectors(float (&v)[kMaxVecs][kVecElems], int vecs, VectorAt vector_at) {
#pragma unroll
  for (int j = 0; j < kMaxVecs; ++j) {
    const int vi = threadIdx.x + j * kThreads;
    if (vi < vecs) {
      norm_row::to_floats(vector_at(static_cast<int64_t>(vi) * kVecElems), v[j]);
    }
  }
}

__global__ void __launch_bounds__(kThreads) rms_norm_bf16_kernel(const __nv_bfloat16* x, int64_t x_stride, int cols,
                                                                  const float* weight, float eps, __nv_bfloat16* out,
                                                                  int64_t out_stride) {
  chained_kernel_begin();
  const int64_t r = blockIdx.x;
  float v[kMaxVecs][kVecElems];
  gather_row_vectors(v, cols / kVecElems, [&](int64_t col) { return load_vec(x + r * x_stride + col); });
  normalize_row_vectors(v, cols / kVecElems, cols, weight, eps, out + r * out_stride);
}

// residual += delta (rounded to bf16, stored back), then the norm of the new residual row.
__global__ void __launch_bounds__(kThreads)
    add_rms_norm_bf16_kernel(__nv_bfloat16* residual, int64_t res_stride, const __nv_bfloat16* delta,
                             int64_t delta_stride, int cols, const float* weight, float eps, __nv_bfloat16* out,
                             int64_t out_stride) {
  chained_kernel_begin();
  const int64_t r = blockIdx.x;
  float v[kMaxVecs][kVecElems];
  gather_row_vectors(v, cols / kVecElems, [&](int64_t col) {
    const Bf16x8 sum = norm_row::add_rounded(load_vec(residual + r * res_stride + col),
                                             load_vec(delta + r * delta_stride + col));
    store_vec(residual + r * res_stride + col, sum);
    return sum;
  });
  normalize_row_vectors(v, cols / kVecElems, cols, weight, eps, out + r * out_stride);
}

bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

// The vector kernels take BF16 rows of at most kThreads * 8 * kMaxVecs columns, 16-byte aligned
// at every row start, and an f32 weight aligned for float4 loads.
bool vector_row_ok(const void* p, RowType type, int64_t stride, int64_t cols) {
  return type == RowType::kBf16 && aligned16(p) && stride % kVecElems == 0 && cols % kVecElems == 0 &&
         cols <= static_cast<int64_t>(kThreads) * kVecElems * kMaxVecs;
}

__global__ void silu_mul_kernel(const void* gate_up, RowType in_type, int64_t in_stride, int64_t inter, void* out,
                                RowType out_type, int64_t out_stride) {
  chained_kernel_begin();
  const int64_t r = blockIdx.y;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < inter;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const float g = load(gate_up, in_type, r * in_stride + i);
    const float u = load(gate_up, in_type, r * in_stride + inter + i);
    store(out, out_type, r * out_stride + i, silu_mul_value(g, u));
  }
}

// The BF16 SwiGLU with 16-byte accesses: eight gate and eight up values per thread and step (the
// scalar kernel above issues one 2-byte load per element and ran at ~1.2 TB/s on a prefill of
// 8192 rows). The same silu_mul_value per element, so the same bits.
__global__ void silu_mul_bf16_kernel(const __nv_bfloat16* gate_up, int64_t in_stride, int64_t inter,
                                     __nv_bfloat16* out, int64_t out_stride) {
  chained_kernel_begin();
  const int64_t r = blockIdx.y;
  const __nv_bfloat16* gate = gate_up + r * in_stride;
  const __nv_bfloat16* up = gate + inter;
  __nv_bfloat16* y = out + r * out_stride;
  for (int64_t v = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; v * kVecElems < inter;
       v += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t i = v * kVecElems;
    const Bf16x8 g = load_vec(gate + i), u = load_vec(up + i);
    Bf16x8 o;
#pragma unroll
    for (int j = 0; j < 4; ++j)
      o.h[j] = __floats2bfloat162_rn(silu_mul_value(__low2float(g.h[j]), __low2float(u.h[j])),
                                     silu_mul_value(__high2float(g.h[j]), __high2float(u.h[j])));
    store_vec(y + i, o);
  }
}

__global__ void gather_kernel(const void* x, RowType x_type, int64_t x_stride, const int32_t* indices, int64_t cols,
                              void* out, RowType out_type, int64_t out_stride) {
  chained_kernel_begin();
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
  launch_chained(embedding_kernel, dim3(static_cast<unsigned>(tokens)), dim3(kThreads), 0, stream, ids, table, table_type,
                 vocab, hidden, out, out_type, out_stride);
}

void launch_rms_norm(const void* x, RowType x_type, int64_t x_stride, int64_t rows, int64_t cols, const float* weight,
                     float eps, void* out, RowType out_type, int64_t out_stride, cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return;
  if (vector_row_ok(x, x_type, x_stride, cols) && vector_row_ok(out, out_type, out_stride, cols) && aligned16(weight)) {
    launch_chained(rms_norm_bf16_kernel, dim3(static_cast<unsigned>(rows)), dim3(kThreads), 0, stream,
                   static_cast<const __nv_bfloat16*>(x), x_stride, static_cast<int>(cols), weight, eps,
                   static_cast<__nv_bfloat16*>(out), out_stride);
    return;
  }
  launch_chained(rms_norm_kernel, dim3(static_cast<unsigned>(rows)), dim3(kThreads), 0, stream, x, x_type, x_stride, cols,
                 weight, eps, out, out_type, out_stride);
}

void launch_add_rms_norm(void* residual, RowType residual_type, int64_t residual_stride, const void* delta,
                         RowType delta_type, int64_t delta_stride, int64_t rows, int64_t cols, const float* weight,
                         float eps, void* out, RowType out_type, int64_t out_stride, cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return;
  if (vector_row_ok(residual, residual_type, residual_stride, cols) && vector_row_ok(delta, delta_type, delta_stride, cols) &&
      vector_row_ok(out, out_type, out_stride, cols) && aligned16(weight)) {
    launch_chained(add_rms_norm_bf16_kernel, dim3(static_cast<unsigned>(rows)), dim3(kThreads), 0, stream,
                   static_cast<__nv_bfloat16*>(residual), residual_stride, static_cast<const __nv_bfloat16*>(delta),
                   delta_stride, static_cast<int>(cols), weight, eps, static_cast<__nv_bfloat16*>(out), out_stride);
    return;
  }
  launch_chained(add_rms_norm_kernel, dim3(static_cast<unsigned>(rows)), dim3(kThreads), 0, stream, residual, residual_type,
                 residual_stride, delta, delta_type, delta_stride, cols, weight, eps, out, out_type, out_stride);
}

void launch_silu_mul(const void* gate_up, RowType in_type, int64_t in_stride, int64_t rows, int64_t inter, void* out,
                     RowType out_type, int64_t out_stride, cudaStream_t stream) {
  if (rows <= 0 || inter <= 0) return;
  if (in_type == RowType::kBf16 && out_type == RowType::kBf16 && aligned16(gate_up) && aligned16(out) &&
      in_stride % kVecElems == 0 && out_stride % kVecElems == 0 && inter % kVecElems == 0) {
    launch_chained(silu_mul_bf16_kernel, dim3(column_blocks(inter / kVecElems), static_cast<unsigned>(rows)),
                   dim3(kThreads), 0, stream, static_cast<const __nv_bfloat16*>(gate_up), in_stride, inter,
                   static_cast<__nv_bfloat16*>(out), out_stride);
    return;
  }
  launch_chained(silu_mul_kernel, dim3(column_blocks(inter), static_cast<unsigned>(rows)), dim3(kThreads), 0, stream,
                 gate_up, in_type, in_stride, inter, out, out_type, out_stride);
}

void launch_gather_rows(const void* x, RowType x_type, int64_t x_stride, const int32_t* indices, int64_t count,
                        int64_t cols, void* out, RowType out_type, int64_t out_stride, cudaStream_t stream) {
  if (count <= 0) return;
  launch_chained(gather_kernel, dim3(static_cast<unsigned>(count)), dim3(kThreads), 0, stream, x, x_type, x_stride, indices,
                 cols, out, out_type, out_stride);
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
