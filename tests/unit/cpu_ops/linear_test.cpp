// linear y = x . W^T (+ b) for F32, BF16, F16 weights and FP8 E4M3 weights under each scale kind,
// against a double-precision loop over the dequantised weights (W8A16: w = fp8(q) * s).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/numeric.h"
#include "ops/backend.h"
#include "test_util.h"

namespace lathe {
namespace {

using test::ErrorStats;
using test::Rng;

// A weight in its stored form plus the exact value every element stands for.
struct TestWeight {
  ops::WeightView view;
  std::vector<uint8_t> bytes;
  std::vector<float> scale;
  std::vector<float> bias;
  std::vector<double> ref;  // [N, K] decoded (and scaled) values
};

// The f32 scale multiplying element (n, k) under `kind` (the layout documented in ops/tensor.h).
float scale_at(const std::vector<float>& scale, ops::ScaleKind kind, int64_t n, int64_t k, int64_t cols) {
  switch (kind) {
    case ops::ScaleKind::kPerTensor:
      return scale[0];
    case ops::ScaleKind::kPerChannel:
      return scale[static_cast<size_t>(n)];
    case ops::ScaleKind::kBlock128:
      return scale[static_cast<size_t>((n / 128) * ((cols + 127) / 128) + k / 128)];
    case ops::ScaleKind::kNone:
      break;
  }
  return 1.0f;
}

TestWeight make_weight(DType dtype, ops::ScaleKind kind, int64_t n_out, int64_t k_in, bool with_bias, Rng& rng) {
  TestWeight w;
  const size_t count = static_cast<size_t>(n_out * k_in);
  std::vector<float> values(count);
  for (size_t i = 0; i < count; ++i) values[i] = rng.normal(0.05f);
  w.ref.resize(count);
  w.bytes.resize(count * dtype_size(dtype));
  if (dtype == DType::kF8E4M3) {
    // Scales from the max magnitude of each group (a non-power-of-two multiplier), as a
    // quantiser would choose them; each group also gets a random factor so groups differ.
    w.scale.assign(static_cast<size_t>(ops::scale_count(kind, n_out, k_in)), 0.0f);
    for (int64_t n = 0; n < n_out; ++n) {
      for (int64_t k = 0; k < k_in; ++k) {
        size_t s = 0;
        if (kind == ops::ScaleKind::kPerChannel) s = static_cast<size_t>(n);
        if (kind == ops::ScaleKind::kBlock128) s = static_cast<size_t>((n / 128) * ((k_in + 127) / 128) + k / 128);
        w.scale[s] = std::max(w.scale[s], std::fabs(values[static_cast<size_t>(n * k_in + k)]) / 448.0f);
      }
    }
    for (float& s : w.scale) s *= rng.uniform(1.0f, 3.0f);
    for (int64_t n = 0; n < n_out; ++n) {
      for (int64_t k = 0; k < k_in; ++k) {
        const size_t i = static_cast<size_t>(n * k_in + k);
        const float s = scale_at(w.scale, kind, n, k, k_in);
        const uint8_t code = float_to_fp8_e4m3(values[i] / s);
        w.bytes[i] = code;
        w.ref[i] = static_cast<double>(fp8_e4m3_to_float(code)) * static_cast<double>(s);
      }
    }
  } else {
    for (size_t i = 0; i < count; ++i) {
      if (dtype == DType::kF32) {
        std::memcpy(&w.bytes[i * 4], &values[i], 4);
        w.ref[i] = values[i];
      } else if (dtype == DType::kBF16) {
        const bf16 b = to_bf16(values[i]);
        std::memcpy(&w.bytes[i * 2], &b, 2);
        w.ref[i] = to_float(b);
      } else {
        const f16 h = to_f16(values[i]);
        std::memcpy(&w.bytes[i * 2], &h, 2);
        w.ref[i] = to_float(h);
      }
    }
  }
  if (with_bias) w.bias = rng.normals(static_cast<size_t>(n_out), 0.5f);
  w.view = ops::WeightView{w.bytes.data(), dtype, n_out, k_in, kind, w.scale.empty() ? nullptr : w.scale.data(),
                           w.bias.empty() ? nullptr : w.bias.data()};
  return w;
}

struct Shape {
  int64_t m, n, k;
};

struct WeightCase {
  DType dtype;
  ops::ScaleKind kind;
};

const Shape kShapes[] = {{1, 37, 64}, {5, 300, 200}, {17, 129, 257}, {3, 256, 384}, {40, 70, 130}, {2, 5, 3}};
const WeightCase kWeightCases[] = {
    {DType::kF32, ops::ScaleKind::kNone},         {DType::kBF16, ops::ScaleKind::kNone},
    {DType::kF16, ops::ScaleKind::kNone},         {DType::kF8E4M3, ops::ScaleKind::kPerTensor},
    {DType::kF8E4M3, ops::ScaleKind::kPerChannel}, {DType::kF8E4M3, ops::ScaleKind::kBlock128},
};

// The f32 accumulation error bound for a dot of length k, relative to sum_k |x_k w_k| + |b|:
// 8 lanes of k/8 sequential adds, a 3-level tree, the bias add and the f32 rounding of each
// dequantised weight.
double accumulation_bound(int64_t k) { return (static_cast<double>(k) / 8.0 + 6.0) * std::ldexp(1.0, -24); }

std::string case_name(const WeightCase& c, const Shape& s, bool bias) {
  return std::string(dtype_name(c.dtype)) + "/" + ops::scale_kind_name(c.kind) + " m=" + std::to_string(s.m) +
         " n=" + std::to_string(s.n) + " k=" + std::to_string(s.k) + (bias ? " +bias" : "");
}

TEST(CpuLinear, F32ActivationsEveryWeightKind) {
  auto backend = ops::make_cpu_backend();
  Rng rng(21);
  int index = 0;
  for (const WeightCase& wc : kWeightCases) {
    for (const Shape& shape : kShapes) {
      const bool with_bias = (index++ % 2) == 1;
      TestWeight w = make_weight(wc.dtype, wc.kind, shape.n, shape.k, with_bias, rng);
      std::vector<float> x = rng.normals(static_cast<size_t>(shape.m * shape.k));
      std::vector<float> y(static_cast<size_t>(shape.m * shape.n));
      backend->linear(ops::Phase::kPrefill, test::f32_act(x, shape.m, shape.k), w.view, test::f32_act(y, shape.m, shape.n));
      ErrorStats stats("linear " + case_name(wc, shape, with_bias));
      for (int64_t m = 0; m < shape.m; ++m) {
        for (int64_t n = 0; n < shape.n; ++n) {
          double sum = with_bias ? w.bias[static_cast<size_t>(n)] : 0.0;
          double magnitude = with_bias ? std::fabs(sum) : 0.0;
          for (int64_t k = 0; k < shape.k; ++k) {
            const double term = static_cast<double>(x[static_cast<size_t>(m * shape.k + k)]) * w.ref[static_cast<size_t>(n * shape.k + k)];
            sum += term;
            magnitude += std::fabs(term);
          }
          stats.add(y[static_cast<size_t>(m * shape.n + n)], sum, magnitude);
        }
      }
      stats.expect_within(accumulation_bound(shape.k));
    }
  }
}

TEST(CpuLinear, Bf16ActivationsInAndOut) {
  auto backend = ops::make_cpu_backend();
  Rng rng(22);
  const Shape shape{6, 200, 300};
  for (const WeightCase& wc : {kWeightCases[1], kWeightCases[5]}) {
    TestWeight w = make_weight(wc.dtype, wc.kind, shape.n, shape.k, true, rng);
    std::vector<uint16_t> x = test::to_bf16_bits(rng.normals(static_cast<size_t>(shape.m * shape.k)));
    std::vector<uint16_t> y(static_cast<size_t>(shape.m * shape.n));
    backend->linear(ops::Phase::kDecode, test::bf16_act(x, shape.m, shape.k), w.view, test::bf16_act(y, shape.m, shape.n));
    const std::vector<float> xf = test::from_bf16_bits(x);
    const std::vector<float> yf = test::from_bf16_bits(y);
    // Allowed error: the final bf16 rounding (half an ulp of an 8-bit significand, at most 2^-8
    // relative) plus the f32 accumulation bound;
    // the statistic is the fraction of that allowance used.
    ErrorStats stats("linear bf16 activations " + case_name(wc, shape, true) + " (fraction of allowance)");
    for (int64_t m = 0; m < shape.m; ++m) {
      for (int64_t n = 0; n < shape.n; ++n) {
        double sum = w.bias[static_cast<size_t>(n)];
        double magnitude = std::fabs(sum);
        for (int64_t k = 0; k < shape.k; ++k) {
          const double term = static_cast<double>(xf[static_cast<size_t>(m * shape.k + k)]) * w.ref[static_cast<size_t>(n * shape.k + k)];
          sum += term;
          magnitude += std::fabs(term);
        }
        const double allowed = std::ldexp(std::fabs(sum), -8) + accumulation_bound(shape.k) * magnitude * (1.0 + std::ldexp(1.0, -8));
        stats.add(yf[static_cast<size_t>(m * shape.n + n)], sum, allowed);
      }
    }
    stats.expect_within(1.0);
  }
}

// A row's output must not depend on which other rows are in the batch (ARCHITECTURE rule 6):
// each row computed alone is bit-identical to the same row computed in a batch.
TEST(CpuLinear, RowsAreBatchInvariant) {
  auto backend = ops::make_cpu_backend();
  Rng rng(23);
  const Shape shape{70, 131, 2100};  // k large enough that the activation block holds < 70 rows
  for (const WeightCase& wc : {kWeightCases[1], kWeightCases[5]}) {
    TestWeight w = make_weight(wc.dtype, wc.kind, shape.n, shape.k, true, rng);
    std::vector<float> x = rng.normals(static_cast<size_t>(shape.m * shape.k));
    std::vector<float> y(static_cast<size_t>(shape.m * shape.n));
    backend->linear(ops::Phase::kPrefill, test::f32_act(x, shape.m, shape.k), w.view, test::f32_act(y, shape.m, shape.n));
    for (int64_t m : {int64_t{0}, int64_t{33}, shape.m - 1}) {
      std::vector<float> x_row(x.begin() + m * shape.k, x.begin() + (m + 1) * shape.k);
      std::vector<float> y_row(static_cast<size_t>(shape.n));
      backend->linear(ops::Phase::kDecode, test::f32_act(x_row, 1, shape.k), w.view, test::f32_act(y_row, 1, shape.n));
      EXPECT_EQ(0, std::memcmp(y_row.data(), &y[static_cast<size_t>(m * shape.n)], y_row.size() * sizeof(float)))
          << dtype_name(wc.dtype) << " row " << m << " differs between batch and single-row runs";
    }
  }
}

TEST(CpuLinear, StridedViews) {
  auto backend = ops::make_cpu_backend();
  Rng rng(24);
  const int64_t m = 4, n = 20, k = 33, x_stride = 40, y_stride = 27;
  TestWeight w = make_weight(DType::kBF16, ops::ScaleKind::kNone, n, k, false, rng);
  std::vector<float> x = rng.normals(static_cast<size_t>(m * x_stride));
  std::vector<float> y(static_cast<size_t>(m * y_stride), -7.0f);
  backend->linear(ops::Phase::kPrefill, test::f32_act(x, m, k, x_stride), w.view, test::f32_act(y, m, n, y_stride));
  ErrorStats stats("linear strided");
  for (int64_t r = 0; r < m; ++r) {
    for (int64_t c = 0; c < n; ++c) {
      double sum = 0.0, magnitude = 0.0;
      for (int64_t i = 0; i < k; ++i) {
        const double term = static_cast<double>(x[static_cast<size_t>(r * x_stride + i)]) * w.ref[static_cast<size_t>(c * k + i)];
        sum += term;
        magnitude += std::fabs(term);
      }
      stats.add(y[static_cast<size_t>(r * y_stride + c)], sum, magnitude);
    }
    for (int64_t c = n; c < y_stride; ++c) EXPECT_EQ(y[static_cast<size_t>(r * y_stride + c)], -7.0f) << "padding written";
  }
  stats.expect_within(accumulation_bound(k));
}

TEST(CpuLinear, RejectsMismatchedShapes) {
  auto backend = ops::make_cpu_backend();
  Rng rng(25);
  TestWeight w = make_weight(DType::kF32, ops::ScaleKind::kNone, 8, 16, false, rng);
  std::vector<float> x(2 * 15), y(2 * 8);
  EXPECT_THROW(backend->linear(ops::Phase::kPrefill, test::f32_act(x, 2, 15), w.view, test::f32_act(y, 2, 8)), Error);
  std::vector<float> x2(2 * 16), y2(2 * 9);
  EXPECT_THROW(backend->linear(ops::Phase::kPrefill, test::f32_act(x2, 2, 16), w.view, test::f32_act(y2, 2, 9)), Error);
  ops::WeightView no_scale = w.view;
  no_scale.dtype = DType::kF8E4M3;
  no_scale.scale_kind = ops::ScaleKind::kPerTensor;
  no_scale.scale = nullptr;
  std::vector<float> y3(2 * 8);
  EXPECT_THROW(backend->linear(ops::Phase::kPrefill, test::f32_act(x2, 2, 16), no_scale, test::f32_act(y3, 2, 8)), Error);
}

}  // namespace
}  // namespace lathe
