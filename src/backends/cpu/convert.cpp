// Conversions between stored types and f32, and the fixed-order dot products every CPU op
// shares.
#include <algorithm>
#include <cstring>

#include "backends/cpu/cpu_ops.h"
#include "core/error.h"
#include "core/numeric.h"

namespace lathe::cpu {
namespace {

constexpr int kLanes = 8;

// Combines the lanes pairwise in a fixed tree.
inline float reduce_lanes(const float* acc) {
  return ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
}

inline float bf16_bits_to_float(uint16_t bits) { return bits_to_float(static_cast<uint32_t>(bits) << 16); }

}  // namespace

bool is_activation_dtype(DType dtype) {
  return dtype == DType::kF32 || dtype == DType::kBF16 || dtype == DType::kF16;
}

void load_row(const void* src, DType dtype, int64_t n, float* dst) {
  switch (dtype) {
    case DType::kF32:
      std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
      return;
    case DType::kBF16: {
      const auto* in = static_cast<const uint16_t*>(src);
      for (int64_t i = 0; i < n; ++i) dst[i] = bf16_bits_to_float(in[i]);
      return;
    }
    case DType::kF16: {
      const auto* in = static_cast<const f16*>(src);
      for (int64_t i = 0; i < n; ++i) dst[i] = to_float(in[i]);
      return;
    }
    default:
      fail("cpu backend: activation dtype {} is not supported (F32, BF16, F16)", dtype_name(dtype));
  }
}

void store_row(const float* src, int64_t n, void* dst, DType dtype) {
  switch (dtype) {
    case DType::kF32:
      std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
      return;
    case DType::kBF16: {
      auto* out = static_cast<bf16*>(dst);
      for (int64_t i = 0; i < n; ++i) out[i] = to_bf16(src[i]);
      return;
    }
    case DType::kF16: {
      auto* out = static_cast<f16*>(dst);
      for (int64_t i = 0; i < n; ++i) out[i] = to_f16(src[i]);
      return;
    }
    default:
      fail("cpu backend: activation dtype {} is not supported (F32, BF16, F16)", dtype_name(dtype));
  }
}

void decode_weight_row(const void* weight, DType dtype, int64_t cols, int64_t row, const WeightScale& scale,
                       float* dst) {
  const int64_t begin = row * cols;
  switch (dtype) {
    case DType::kF32:
    case DType::kBF16:
    case DType::kF16:
      load_row(static_cast<const char*>(weight) + begin * static_cast<int64_t>(dtype_size(dtype)), dtype, cols,
               dst);
      break;
    case DType::kF8E4M3:
    case DType::kF8E5M2: {
      const float* table = dtype == DType::kF8E4M3 ? fp8_e4m3_table() : fp8_e5m2_table();
      const uint8_t* codes = static_cast<const uint8_t*>(weight) + begin;
      if (scale.data == nullptr) {
        for (int64_t c = 0; c < cols; ++c) dst[c] = table[codes[c]];
        return;
      }
      // Fused decode and scale: one rounding of decode(q) * s.
      const int64_t span = scale.col_stride == 0 ? cols : std::max<int64_t>(1, scale.block_cols);
      const float* row_scale = scale.data + (row / std::max<int64_t>(1, scale.block_rows)) * scale.row_stride;
      for (int64_t c0 = 0; c0 < cols; c0 += span) {
        const float s = row_scale[(c0 / span) * scale.col_stride];
        const int64_t c1 = std::min(cols, c0 + span);
        for (int64_t c = c0; c < c1; ++c) dst[c] = table[codes[c]] * s;
      }
      return;
    }
    default:
      fail("cpu backend: weight dtype {} is not supported (F32, BF16, F16, F8_E4M3, F8_E5M2)", dtype_name(dtype));
  }
  if (scale.data == nullptr) return;
  // A scaled 16/32-bit weight (unusual but well defined): multiply after the decode.
  const int64_t span = scale.col_stride == 0 ? cols : std::max<int64_t>(1, scale.block_cols);
  const float* row_scale = scale.data + (row / std::max<int64_t>(1, scale.block_rows)) * scale.row_stride;
  for (int64_t c0 = 0; c0 < cols; c0 += span) {
    const float s = row_scale[(c0 / span) * scale.col_stride];
    const int64_t c1 = std::min(cols, c0 + span);
    for (int64_t c = c0; c < c1; ++c) dst[c] *= s;
  }
}

float dot(const float* a, const float* b, int64_t n) {
  float acc[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int j = 0; j < kLanes; ++j) acc[j] += a[i + j] * b[i + j];
  }
  for (int j = 0; i + j < n; ++j) acc[j] += a[i + j] * b[i + j];
  return reduce_lanes(acc);
}

void dot4(const float* x, const float* const w[4], int64_t n, float out[4]) {
  float acc0[kLanes] = {};
  float acc1[kLanes] = {};
  float acc2[kLanes] = {};
  float acc3[kLanes] = {};
  const float* w0 = w[0];
  const float* w1 = w[1];
  const float* w2 = w[2];
  const float* w3 = w[3];
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int j = 0; j < kLanes; ++j) {
      const float xv = x[i + j];
      acc0[j] += xv * w0[i + j];
      acc1[j] += xv * w1[i + j];
      acc2[j] += xv * w2[i + j];
      acc3[j] += xv * w3[i + j];
    }
  }
  for (int j = 0; i + j < n; ++j) {
    const float xv = x[i + j];
    acc0[j] += xv * w0[i + j];
    acc1[j] += xv * w1[i + j];
    acc2[j] += xv * w2[i + j];
    acc3[j] += xv * w3[i + j];
  }
  out[0] = reduce_lanes(acc0);
  out[1] = reduce_lanes(acc1);
  out[2] = reduce_lanes(acc2);
  out[3] = reduce_lanes(acc3);
}

}  // namespace lathe::cpu
