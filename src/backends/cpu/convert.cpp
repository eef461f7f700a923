// Conversions between stored types and f32, and the fixed-order dot products every CPU op
// shares.
#include <algorithm>
#include <cstring>

#include "backends/cpu/cpu_ops.h"
#include "backends/cpu/internal.h"
#include "core/error.h"
#include "core/numeric.h"

namespace lathe::cpu {
namespace {

constexpr int kLanes = 8;
// Half of the 8 lanes: a 4-float vector (GCC/Clang vector extension, one SSE register).
typedef float Quad __attribute__((vector_size(4 * sizeof(float))));

inline Quad load_quad(const float* p) {
  Quad v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

typedef uint32_t Quad32 __attribute__((vector_size(4 * sizeof(uint32_t))));
typedef uint16_t Quad16 __attribute__((vector_size(4 * sizeof(uint16_t))));

// Four bf16 values widened exactly to f32 (bits << 16).
inline Quad load_bf16_quad(const uint16_t* p) {
  Quad16 bits;
  std::memcpy(&bits, p, sizeof bits);
  const Quad32 wide = __builtin_convertvector(bits, Quad32) << 16;
  Quad v;
  std::memcpy(&v, &wide, sizeof v);
  return v;
}

// Spills lanes 0-3 (lo) and 4-7 (hi) to an array.
inline void store_lanes(const Quad& lo, const Quad& hi, float* lanes) {
  std::memcpy(lanes, &lo, sizeof lo);
  std::memcpy(lanes + 4, &hi, sizeof hi);
}

// Combines the lanes pairwise in a fixed tree.
inline float reduce_lanes(const float* acc) {
  return ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
}

inline float bf16_bits_to_float(uint16_t bits) { return bits_to_float(static_cast<uint32_t>(bits) << 16); }

// Calls fn(c0, c1, s) for each run [c0, c1) of weight row `row`'s columns that shares one scale s
// (the whole row for per-tensor and per-channel scales, block_cols columns for block scales).
template <typename Fn>
void for_each_scale_span(const WeightScale& scale, int64_t row, int64_t cols, Fn&& fn) {
  const int64_t span = scale.col_stride == 0 ? cols : std::max<int64_t>(1, scale.block_cols);
  const float* row_scale = scale.data + (row / std::max<int64_t>(1, scale.block_rows)) * scale.row_stride;
  for (int64_t c0 = 0; c0 < cols; c0 += span)
    fn(c0, std::min(cols, c0 + span), row_scale[(c0 / span) * scale.col_stride]);
}

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
      for_each_scale_span(scale, row, cols, [&](int64_t c0, int64_t c1, float s) {
        for (int64_t c = c0; c < c1; ++c) dst[c] = table[codes[c]] * s;
      });
      return;
    }
    default:
      fail("cpu backend: weight dtype {} is not supported (F32, BF16, F16, F8_E4M3, F8_E5M2)", dtype_name(dtype));
  }
  if (scale.data == nullptr) return;
  // A scaled 16/32-bit weight (unusual but well defined): multiply after the decode.
  for_each_scale_span(scale, row, cols, [&](int64_t c0, int64_t c1, float s) {
    for (int64_t c = c0; c < c1; ++c) dst[c] *= s;
  });
}

// The lanes are explicit vectors (lanes 0-3 and 4-7) so the compiler cannot pick a different
// association: lane j accumulates elements j, j + 8, j + 16, ... in order, the scalar tail
// continues lanes 0..n%8-1, and reduce_lanes combines them.
float dot(const float* a, const float* b, int64_t n) {
  Quad lo = {};
  Quad hi = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    lo += load_quad(a + i) * load_quad(b + i);
    hi += load_quad(a + i + 4) * load_quad(b + i + 4);
  }
  float lanes[kLanes];
  store_lanes(lo, hi, lanes);
  for (int j = 0; i + j < n; ++j) lanes[j] += a[i + j] * b[i + j];
  return reduce_lanes(lanes);
}

namespace {

inline Quad load_weight_quad(const float* p) {
  return load_quad(p);
}
inline Quad load_weight_quad(const uint16_t* p) {
  return load_bf16_quad(p);
}
inline float weight_to_float(float w) {
  return w;
}
inline float weight_to_float(uint16_t bits) {
  return bf16_bits_to_float(bits);
}

// dot() of x against four weight rows at once (x's lanes loaded once); Weight is f32 or bf16 bits,
// widened exactly, so each out[r] equals dot(x, row r as f32) bit for bit.
template <typename Weight>
void dot4_rows(const float* x, const Weight* const w[4], int64_t n, float out[4]) {
  Quad lo[4] = {};
  Quad hi[4] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    const Quad x_lo = load_quad(x + i);
    const Quad x_hi = load_quad(x + i + 4);
    for (int r = 0; r < 4; ++r) {
      lo[r] += x_lo * load_weight_quad(w[r] + i);
      hi[r] += x_hi * load_weight_quad(w[r] + i + 4);
    }
  }
  for (int r = 0; r < 4; ++r) {
    float lanes[kLanes];
    store_lanes(lo[r], hi[r], lanes);
    for (int j = 0; i + j < n; ++j) lanes[j] += x[i + j] * weight_to_float(w[r][i + j]);
    out[r] = reduce_lanes(lanes);
  }
}

}  // namespace

void dot4(const float* x, const float* const w[4], int64_t n, float out[4]) {
  dot4_rows(x, w, n, out);
}

void detail::dot4_bf16(const float* x, const uint16_t* const w[4], int64_t n, float out[4]) {
  dot4_rows(x, w, n, out);
}

}  // namespace lathe::cpu
