// RMSNorm (+ residual), QK-norm, RoPE (full and partial), SwiGLU, embedding and row gather
// against naive double-precision loops.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "backends/cpu/cpu_ops.h"
#include "core/error.h"
#include "core/numeric.h"
#include "ops/backend.h"
#include "test_util.h"

namespace lathe {
namespace {

using test::ErrorStats;
using test::Rng;

// Each normalised output is x * inv_rms * w: no cancellation, so its error relative to itself is
// a few f32 roundings plus half the relative error of the f32 mean of squares, which the 8-lane
// accumulation bounds by (cols / 8 + 3) * 2^-24 (<= 8e-6 for cols <= 1024).
constexpr double kNormBound = 5e-6;

// y = w * x / sqrt(mean(x^2) + eps) over one row, in double.
std::vector<double> ref_rms_norm(const float* x, int64_t n, const float* w, double eps) {
  double ms = 0.0;
  for (int64_t i = 0; i < n; ++i) ms += static_cast<double>(x[i]) * x[i];
  ms /= static_cast<double>(n);
  const double inv = 1.0 / std::sqrt(ms + eps);
  std::vector<double> y(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) y[static_cast<size_t>(i)] = static_cast<double>(w[i]) * x[i] * inv;
  return y;
}

TEST(CpuRowOps, RmsNormF32) {
  auto backend = ops::make_cpu_backend();
  Rng rng(1);
  for (int64_t cols : {1, 7, 64, 1000, 1024}) {
    const int64_t rows = 9;
    std::vector<float> x = rng.normals(static_cast<size_t>(rows * cols), 3.0f);
    std::vector<float> w = rng.normals(static_cast<size_t>(cols));
    std::vector<float> out(x.size());
    backend->rms_norm(test::f32_act(x, rows, cols), w.data(), 1e-6f, test::f32_act(out, rows, cols));
    ErrorStats stats("rms_norm f32 cols=" + std::to_string(cols));
    for (int64_t r = 0; r < rows; ++r) {
      const auto ref = ref_rms_norm(&x[static_cast<size_t>(r * cols)], cols, w.data(), 1e-6);
      for (int64_t c = 0; c < cols; ++c) {
        const double want = ref[static_cast<size_t>(c)];
        stats.add(out[static_cast<size_t>(r * cols + c)], want, std::fabs(want));
      }
    }
    stats.expect_within(kNormBound);
  }
}

TEST(CpuRowOps, RmsNormStridedAndInPlace) {
  auto backend = ops::make_cpu_backend();
  Rng rng(2);
  const int64_t rows = 5, cols = 96, stride = 130;
  std::vector<float> x = rng.normals(static_cast<size_t>(rows * stride));
  std::vector<float> w = rng.normals(static_cast<size_t>(cols));
  std::vector<float> original = x;
  ops::Act view = test::f32_act(x, rows, cols, stride);
  backend->rms_norm(view, w.data(), 1e-5f, view);
  ErrorStats stats("rms_norm strided in place");
  for (int64_t r = 0; r < rows; ++r) {
    const auto ref = ref_rms_norm(&original[static_cast<size_t>(r * stride)], cols, w.data(), 1e-5);
    for (int64_t c = 0; c < cols; ++c) {
      stats.add(x[static_cast<size_t>(r * stride + c)], ref[static_cast<size_t>(c)], std::fabs(ref[static_cast<size_t>(c)]));
    }
    for (int64_t c = cols; c < stride; ++c) {
      EXPECT_EQ(x[static_cast<size_t>(r * stride + c)], original[static_cast<size_t>(r * stride + c)]) << "padding touched";
    }
  }
  stats.expect_within(kNormBound);
}

TEST(CpuRowOps, AddRmsNorm) {
  auto backend = ops::make_cpu_backend();
  Rng rng(3);
  const int64_t rows = 6, cols = 768;
  for (bool alias_out : {false, true}) {
    std::vector<float> residual = rng.normals(static_cast<size_t>(rows * cols), 2.0f);
    std::vector<float> delta = rng.normals(static_cast<size_t>(rows * cols));
    std::vector<float> w = rng.normals(static_cast<size_t>(cols));
    const std::vector<float> residual0 = residual;
    std::vector<float> out(residual.size());
    ops::Act res_act = test::f32_act(residual, rows, cols);
    // Aliasing out with delta: the model reuses the delta buffer for the normalised output.
    ops::Act out_act = alias_out ? test::f32_act(delta, rows, cols) : test::f32_act(out, rows, cols);
    const std::vector<float> delta0 = delta;
    backend->add_rms_norm(res_act, test::f32_act(delta, rows, cols), w.data(), 1e-6f, out_act);
    const std::vector<float>& got = alias_out ? delta : out;
    ErrorStats sum_stats(std::string("add_rms_norm residual") + (alias_out ? " (out aliases delta)" : ""));
    ErrorStats norm_stats(std::string("add_rms_norm out") + (alias_out ? " (out aliases delta)" : ""));
    for (int64_t r = 0; r < rows; ++r) {
      std::vector<float> sum_f(static_cast<size_t>(cols));
      for (int64_t c = 0; c < cols; ++c) {
        const size_t i = static_cast<size_t>(r * cols + c);
        const double s = static_cast<double>(residual0[i]) + delta0[i];
        sum_stats.add(residual[i], s, std::fabs(s));
        sum_f[static_cast<size_t>(c)] = static_cast<float>(s);
      }
      const auto ref = ref_rms_norm(sum_f.data(), cols, w.data(), 1e-6);
      for (int64_t c = 0; c < cols; ++c) {
        norm_stats.add(got[static_cast<size_t>(r * cols + c)], ref[static_cast<size_t>(c)], std::fabs(ref[static_cast<size_t>(c)]));
      }
    }
    sum_stats.expect_within(6e-8);  // one f32 rounding of the sum
    norm_stats.expect_within(kNormBound);
  }
}

TEST(CpuRowOps, RmsNormBf16Activations) {
  auto backend = ops::make_cpu_backend();
  Rng rng(4);
  const int64_t rows = 4, cols = 512;
  std::vector<uint16_t> x = test::to_bf16_bits(rng.normals(static_cast<size_t>(rows * cols)));
  std::vector<float> w = rng.normals(static_cast<size_t>(cols));
  std::vector<uint16_t> out(x.size());
  backend->rms_norm(test::bf16_act(x, rows, cols), w.data(), 1e-6f, test::bf16_act(out, rows, cols));
  const std::vector<float> xf = test::from_bf16_bits(x);
  const std::vector<float> got = test::from_bf16_bits(out);
  ErrorStats stats("rms_norm bf16 in/out");
  for (int64_t r = 0; r < rows; ++r) {
    const auto ref = ref_rms_norm(&xf[static_cast<size_t>(r * cols)], cols, w.data(), 1e-6);
    for (int64_t c = 0; c < cols; ++c) stats.add(got[static_cast<size_t>(r * cols + c)], ref[static_cast<size_t>(c)], std::fabs(ref[static_cast<size_t>(c)]));
  }
  stats.expect_within(1.0 / 256.0 + 1e-5);  // the final bf16 rounding: half an ulp of 8 bits
}

// A BF16 residual stream: the sum is stored rounded to bf16 and the norm reads that stored sum.
TEST(CpuRowOps, AddRmsNormBf16Residual) {
  auto backend = ops::make_cpu_backend();
  Rng rng(14);
  const int64_t rows = 3, cols = 256;
  std::vector<uint16_t> residual = test::to_bf16_bits(rng.normals(static_cast<size_t>(rows * cols), 2.0f));
  std::vector<uint16_t> delta = test::to_bf16_bits(rng.normals(static_cast<size_t>(rows * cols)));
  const std::vector<float> r0 = test::from_bf16_bits(residual);
  const std::vector<float> d0 = test::from_bf16_bits(delta);
  std::vector<float> w = rng.normals(static_cast<size_t>(cols));
  std::vector<uint16_t> out(residual.size());
  backend->add_rms_norm(test::bf16_act(residual, rows, cols), test::bf16_act(delta, rows, cols), w.data(), 1e-6f,
                        test::bf16_act(out, rows, cols));
  const std::vector<float> stored = test::from_bf16_bits(residual);
  const std::vector<float> got = test::from_bf16_bits(out);
  ErrorStats sum_stats("add_rms_norm bf16 residual");
  ErrorStats norm_stats("add_rms_norm bf16 out (of the stored residual)");
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      const size_t i = static_cast<size_t>(r * cols + c);
      const double s = static_cast<double>(r0[i]) + d0[i];
      sum_stats.add(stored[i], s, std::fabs(s));
    }
    const auto ref = ref_rms_norm(&stored[static_cast<size_t>(r * cols)], cols, w.data(), 1e-6);
    for (int64_t c = 0; c < cols; ++c) {
      norm_stats.add(got[static_cast<size_t>(r * cols + c)], ref[static_cast<size_t>(c)], std::fabs(ref[static_cast<size_t>(c)]));
    }
  }
  sum_stats.expect_within(std::ldexp(1.0, -8) + 1e-7);  // bf16 rounding of the (f32) sum
  norm_stats.expect_within(std::ldexp(1.0, -8) + kNormBound);
}

TEST(CpuRowOps, HeadRmsNorm) {
  Rng rng(5);
  for (int64_t head_dim : {64, 128}) {
    const int64_t rows = 7, heads = 6, cols = heads * head_dim;
    std::vector<float> x = rng.normals(static_cast<size_t>(rows * cols), 4.0f);
    std::vector<float> w = rng.normals(static_cast<size_t>(head_dim));
    const std::vector<float> x0 = x;
    cpu::head_rms_norm(cpu::Rows{x.data(), DType::kF32, cols}, rows, heads, head_dim, w.data(), 1e-6f);
    ErrorStats stats("qk-norm head_dim=" + std::to_string(head_dim));
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t h = 0; h < heads; ++h) {
        const size_t base = static_cast<size_t>(r * cols + h * head_dim);
        const auto ref = ref_rms_norm(&x0[base], head_dim, w.data(), 1e-6);
        for (int64_t d = 0; d < head_dim; ++d) stats.add(x[base + static_cast<size_t>(d)], ref[static_cast<size_t>(d)], std::fabs(ref[static_cast<size_t>(d)]));
      }
    }
    stats.expect_within(kNormBound);
  }
}

// inv_freq[i] = theta^(-2i/r) in f32, as the model builds it.
std::vector<float> make_inv_freq(int64_t rotary_dim, double theta) {
  std::vector<float> inv(static_cast<size_t>(rotary_dim / 2));
  for (size_t i = 0; i < inv.size(); ++i) {
    inv[i] = static_cast<float>(std::pow(theta, -2.0 * static_cast<double>(i) / static_cast<double>(rotary_dim)));
  }
  return inv;
}

void check_rope(int64_t head_dim, int64_t rotary_dim, float scaling, uint64_t seed) {
  Rng rng(seed);
  const int64_t rows = 11, heads = 4, cols = heads * head_dim;
  std::vector<float> x = rng.normals(static_cast<size_t>(rows * cols));
  const std::vector<float> x0 = x;
  std::vector<int32_t> positions(static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r) positions[static_cast<size_t>(r)] = static_cast<int32_t>(r < 4 ? r : rng.integer(0, 200000));
  const std::vector<float> inv_freq = make_inv_freq(rotary_dim, 1e6);
  cpu::rope(cpu::Rows{x.data(), DType::kF32, cols}, rows, heads, head_dim, positions.data(), inv_freq.data(), rotary_dim,
            scaling);
  ErrorStats stats("rope head_dim=" + std::to_string(head_dim) + " rotary_dim=" + std::to_string(rotary_dim) +
                   " scaling=" + std::to_string(scaling));
  const int64_t half = rotary_dim / 2;
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t h = 0; h < heads; ++h) {
      const size_t base = static_cast<size_t>(r * cols + h * head_dim);
      for (int64_t i = 0; i < half; ++i) {
        // The angle is defined as an f32 product (spec); cos/sin and the rotation in double.
        const float angle_f32 = static_cast<float>(positions[static_cast<size_t>(r)]) * inv_freq[static_cast<size_t>(i)];
        const double c = std::cos(static_cast<double>(angle_f32)) * scaling;
        const double s = std::sin(static_cast<double>(angle_f32)) * scaling;
        const double x1 = x0[base + static_cast<size_t>(i)];
        const double x2 = x0[base + static_cast<size_t>(i + half)];
        const double norm = (std::fabs(x1) + std::fabs(x2)) * scaling;
        stats.add(x[base + static_cast<size_t>(i)], x1 * c - x2 * s, norm);
        stats.add(x[base + static_cast<size_t>(i + half)], x2 * c + x1 * s, norm);
      }
      for (int64_t d = rotary_dim; d < head_dim; ++d) {
        EXPECT_EQ(x[base + static_cast<size_t>(d)], x0[base + static_cast<size_t>(d)]) << "tail dim " << d << " changed";
      }
    }
  }
  stats.expect_within(1e-6);
}

TEST(CpuRowOps, RopeFull) {
  check_rope(128, 128, 1.0f, 6);
  check_rope(64, 64, 1.0f, 7);
}

TEST(CpuRowOps, RopePartialPassesTail) {
  check_rope(128, 32, 1.0f, 8);
  check_rope(256, 64, 1.0f, 9);
}

TEST(CpuRowOps, RopeAttentionScaling) { check_rope(128, 128, 1.1386f, 10); }

TEST(CpuRowOps, RopeRejectsBadRotaryDim) {
  std::vector<float> x(64);
  std::vector<int32_t> pos(1);
  std::vector<float> inv(40);
  EXPECT_THROW(cpu::rope(cpu::Rows{x.data(), DType::kF32, 64}, 1, 1, 64, pos.data(), inv.data(), 65, 1.0f), Error);
  EXPECT_THROW(cpu::rope(cpu::Rows{x.data(), DType::kF32, 64}, 1, 1, 64, pos.data(), inv.data(), 31, 1.0f), Error);
}

TEST(CpuRowOps, SiluMul) {
  auto backend = ops::make_cpu_backend();
  Rng rng(11);
  const int64_t rows = 5, inter = 333;
  std::vector<float> gate_up = rng.normals(static_cast<size_t>(rows * 2 * inter), 4.0f);
  std::vector<float> out(static_cast<size_t>(rows * inter));
  backend->silu_mul(test::f32_act(gate_up, rows, 2 * inter), test::f32_act(out, rows, inter));
  ErrorStats stats("silu_mul");
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t i = 0; i < inter; ++i) {
      const double g = gate_up[static_cast<size_t>(r * 2 * inter + i)];
      const double u = gate_up[static_cast<size_t>(r * 2 * inter + inter + i)];
      const double want = g / (1.0 + std::exp(-g)) * u;
      stats.add(out[static_cast<size_t>(r * inter + i)], want, std::fabs(want));
    }
  }
  stats.expect_within(1e-6);
}

TEST(CpuRowOps, SiluMulBf16) {
  auto backend = ops::make_cpu_backend();
  Rng rng(15);
  const int64_t rows = 3, inter = 100;
  std::vector<uint16_t> gate_up = test::to_bf16_bits(rng.normals(static_cast<size_t>(rows * 2 * inter), 3.0f));
  std::vector<uint16_t> out(static_cast<size_t>(rows * inter));
  backend->silu_mul(test::bf16_act(gate_up, rows, 2 * inter), test::bf16_act(out, rows, inter));
  const std::vector<float> in = test::from_bf16_bits(gate_up);
  const std::vector<float> got = test::from_bf16_bits(out);
  ErrorStats stats("silu_mul bf16");
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t i = 0; i < inter; ++i) {
      const double g = in[static_cast<size_t>(r * 2 * inter + i)];
      const double u = in[static_cast<size_t>(r * 2 * inter + inter + i)];
      const double want = g / (1.0 + std::exp(-g)) * u;
      stats.add(got[static_cast<size_t>(r * inter + i)], want, std::fabs(want));
    }
  }
  stats.expect_within(std::ldexp(1.0, -8) + 1e-6);
}

TEST(CpuRowOps, Embedding) {
  auto backend = ops::make_cpu_backend();
  Rng rng(12);
  const int64_t vocab = 50, hidden = 40;
  const std::vector<float> values = rng.normals(static_cast<size_t>(vocab * hidden));
  std::vector<uint16_t> bf(values.size());
  std::vector<f16> half(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    bf[i] = to_bf16(values[i]).bits;
    half[i] = to_f16(values[i]);
  }
  ops::ForwardBatch batch;
  batch.token_ids = {3, 0, 49, 3, 17};
  batch.positions = {0, 1, 2, 3, 4};
  batch.slot_mapping = {-1, -1, -1, -1, -1};
  batch.query_start = {0, 5};
  batch.context_lens = {5};
  batch.max_blocks_per_seq = 0;
  const ops::DeviceBatch device = backend->upload_batch(batch);
  struct Case {
    DType dtype;
    const void* data;
  };
  for (const Case& c : {Case{DType::kF32, values.data()}, Case{DType::kBF16, bf.data()}, Case{DType::kF16, half.data()}}) {
    ops::WeightView table{c.data, c.dtype, vocab, hidden};
    std::vector<float> out(static_cast<size_t>(5 * hidden));
    backend->embedding(device, table, test::f32_act(out, 5, hidden));
    for (int64_t t = 0; t < 5; ++t) {
      for (int64_t d = 0; d < hidden; ++d) {
        const size_t src = static_cast<size_t>(batch.token_ids[static_cast<size_t>(t)] * hidden + d);
        const float want = c.dtype == DType::kF32 ? values[src] : c.dtype == DType::kBF16 ? to_float(bf16{bf[src]}) : to_float(half[src]);
        ASSERT_EQ(out[static_cast<size_t>(t * hidden + d)], want) << dtype_name(c.dtype) << " row " << t;
      }
    }
  }
  batch.token_ids[2] = 50;
  const ops::DeviceBatch bad = backend->upload_batch(batch);
  std::vector<float> out(static_cast<size_t>(5 * hidden));
  EXPECT_THROW(backend->embedding(bad, ops::WeightView{values.data(), DType::kF32, vocab, hidden}, test::f32_act(out, 5, hidden)),
               Error);
}

TEST(CpuRowOps, GatherLogitsRows) {
  auto backend = ops::make_cpu_backend();
  Rng rng(13);
  const int64_t rows = 6, cols = 23;
  std::vector<float> x = rng.normals(static_cast<size_t>(rows * cols));
  ops::ForwardBatch batch;
  batch.token_ids = std::vector<int32_t>(static_cast<size_t>(rows), 1);
  batch.positions = std::vector<int32_t>(static_cast<size_t>(rows), 0);
  batch.slot_mapping = std::vector<int32_t>(static_cast<size_t>(rows), -1);
  batch.query_start = {0, 2, 6};
  batch.context_lens = {2, 4};
  batch.logits_rows = {1, 5, 0};
  const ops::DeviceBatch device = backend->upload_batch(batch);
  std::vector<float> out(static_cast<size_t>(3 * cols));
  backend->gather_logits_rows(device, test::f32_act(x, rows, cols), test::f32_act(out, 3, cols));
  for (size_t i = 0; i < 3; ++i) {
    for (int64_t c = 0; c < cols; ++c) {
      EXPECT_EQ(out[i * static_cast<size_t>(cols) + static_cast<size_t>(c)], x[static_cast<size_t>(batch.logits_rows[i] * cols + c)]);
    }
  }
}

}  // namespace
}  // namespace lathe
