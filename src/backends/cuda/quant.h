#pragma once
// FP8 helpers for the prefill GEMMs: fused activation quantization (bf16 -> e4m3 + f32 scales)
// and weight dequantization (e4m3 + scales -> bf16) for the routes cuBLASLt cannot take.
#include <cuda_runtime.h>

#include <cstdint>

namespace lathe::cuda {

// Per token per 128-k group: s = max|x_g| / 448 (1 when the group is all zero),
// q = e4m3(x / s) (round to nearest even, saturating). q is [m, k] with row stride k, each row in
// the stored order of fp8 weights (fp8_weight_layout.h), so cuBLASLt pairs the same k.
// Scales: m_major ? s[g * scale_pitch + t] : s[t * scale_pitch + g]  (t token, g group).
void quantize_act_block128(const void* x_bf16, int64_t x_stride, int64_t m, int64_t k, uint8_t* q, float* scales,
                           int64_t scale_pitch, bool m_major, cudaStream_t stream);

// Per token: s[t] = max|x_t| / 448 over the whole row, q = e4m3(x / s) (stored order as above).
void quantize_act_per_token(const void* x_bf16, int64_t x_stride, int64_t m, int64_t k, uint8_t* q, float* scales,
                            cudaStream_t stream);

// out[n, k] (bf16, row stride k, natural order) = bf16(code * s) of w in the stored order of fp8
// weights (fp8_weight_layout.h), with the scale layout of ops::ScaleKind (scale_kind: 0 none,
// 1 per-tensor, 2 per-channel, 3 block128 [ceil(n/128), ceil(k/128)]).
void dequantize_fp8_weight(const uint8_t* w, int64_t n, int64_t k, int scale_kind, const float* scale, void* out_bf16,
                           cudaStream_t stream);

// dst = src ([rows, k] fp8 codes in natural order) in the stored order of fp8 weights
// (fp8_weight_layout.h); both on the device, 16-byte aligned, dst != src.
void permute_fp8_rows_on_device(const uint8_t* src, uint8_t* dst, int64_t rows, int64_t k, cudaStream_t stream);

// Copies a weight block-scale tensor [ceil(n/128), ceil(k/128)] into another layout:
// transposed ? dst[kb * pitch + nb] : dst[nb * pitch + kb].
void relayout_block_scales(const float* src, int64_t n, int64_t k, float* dst, int64_t pitch, bool transposed,
                           cudaStream_t stream);

// dst[i] = *value for i < count (value is a device pointer).
void broadcast_f32(const float* value, float* dst, int64_t count, cudaStream_t stream);

}  // namespace lathe::cuda
