#pragma once
// Row-wise kernels of the forward pass. Raw pointers, sizes, strides (in elements) and a
// stream; activations are BF16 or F32 (`f32` flags), weights of norms are f32. Numerics follow
// the CPU reference (backends/cpu/row_ops.cpp): f32 arithmetic, one rounding at each store.
#include <cuda_runtime.h>

#include <cstdint>

namespace lathe::cuda {

enum class RowType { kBf16, kF16, kF32 };

// out[t, :] = table[ids[t], :]; ids outside [0, vocab) produce a zero row (the engine validates
// ids before they reach the device).
void launch_embedding(const int32_t* ids, int64_t tokens, const void* table, RowType table_type, int64_t vocab,
                      int64_t hidden, void* out, RowType out_type, int64_t out_stride, cudaStream_t stream);

// out = (x * inv_rms) * weight per row, inv_rms = 1 / sqrt(mean(x^2) + eps).
void launch_rms_norm(const void* x, RowType x_type, int64_t x_stride, int64_t rows, int64_t cols, const float* weight,
                     float eps, void* out, RowType out_type, int64_t out_stride, cudaStream_t stream);

// residual = round(residual + delta); out = rms_norm(residual as stored). out may alias delta.
void launch_add_rms_norm(void* residual, RowType residual_type, int64_t residual_stride, const void* delta,
                         RowType delta_type, int64_t delta_stride, int64_t rows, int64_t cols, const float* weight,
                         float eps, void* out, RowType out_type, int64_t out_stride, cudaStream_t stream);

// out[t, i] = silu(gate_up[t, i]) * gate_up[t, inter + i].
void launch_silu_mul(const void* gate_up, RowType in_type, int64_t in_stride, int64_t rows, int64_t inter, void* out,
                     RowType out_type, int64_t out_stride, cudaStream_t stream);

// out[i, :] = x[indices[i], :] (indices in device memory), converting the element type.
void launch_gather_rows(const void* x, RowType x_type, int64_t x_stride, const int32_t* indices, int64_t count,
                        int64_t cols, void* out, RowType out_type, int64_t out_stride, cudaStream_t stream);

// y[r, c] = round(y[r, c] + bias[c]).
void launch_bias_add(void* y, RowType y_type, int64_t y_stride, int64_t rows, int64_t cols, const float* bias,
                     cudaStream_t stream);

// dst (bf16, count elements) = src (f16 or f32) rounded; weights cuBLASLt cannot take directly.
void launch_convert_to_bf16(const void* src, RowType src_type, int64_t count, void* dst, cudaStream_t stream);

}  // namespace lathe::cuda
