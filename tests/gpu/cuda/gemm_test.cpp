// Prefill GEMMs through cuBLASLt: bf16 against a float64 reference; W8A8 block128 and
// per-channel against a float64 reference of the same quantized operands with RANDOM scales
// (proving the scale-tensor layouts); and per-row bit equality across M = 1..512 with the
// algorithm pinned per (n, k), and up to 4096 rows under the prefill GEMM's pin.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "backends/cuda/fp8_weight_layout.h"
#include "backends/cuda/gemm_lt.h"
#include "backends/cuda/quant.h"
#include "gpu_test_util.h"
#include "ops/linear_dispatch.h"

namespace lathe {
namespace {

using cuda::LtGemm;
using cuda::LtKind;
using cuda::LtOperands;
using gpu_test::DeviceBuffer;

constexpr size_t kLtWorkspace = size_t{32} << 20;

struct Fixture {
  explicit Fixture(int64_t pin_m = 256) : lt(workspace.get(), kLtWorkspace, pin_m) {}
  DeviceBuffer workspace{kLtWorkspace};
  LtGemm lt;
};

TEST(LtGemm, Bf16MatchesFloat64Reference) {
  Fixture f;
  const int64_t m = 37, n = 256, k = 512;
  std::mt19937 rng(5);
  const auto w = gpu_test::random_bf16(n * k, rng), x = gpu_test::random_bf16(m * k, rng);
  DeviceBuffer dw(w.size() * 2), dx(x.size() * 2), dy(m * n * 4);
  dw.upload(w);
  dx.upload(x);
  for (const bool f32 : {false, true}) {
    dy.poison();
    LtOperands o{dw.get(), dx.get(), k, dy.get(), n, f32, nullptr, nullptr};
    f.lt.run(LtKind::kBf16, m, n, k, o, nullptr);
    std::vector<double> got, ref;
    const auto y16 = dy.download<uint16_t>(m * n);
    const auto y32 = dy.download<float>(m * n);
    for (int64_t t = 0; t < m; ++t) {
      for (int64_t r = 0; r < n; ++r) {
        double sum = 0;
        for (int64_t i = 0; i < k; ++i) sum += double(gpu_test::bf16_value(w[r * k + i])) * gpu_test::bf16_value(x[t * k + i]);
        ref.push_back(sum);
        got.push_back(f32 ? y32[t * n + r] : gpu_test::bf16_value(y16[t * n + r]));
      }
    }
    EXPECT_LT(gpu_test::normalized_error(got, ref), f32 ? 1e-5 : 4e-3) << (f32 ? "f32 out" : "bf16 out");
  }
}

// Quantizes x on the device and returns the product of the quantized operands computed on the
// host from what the device produced (so the check isolates the GEMM's use of the scales).
struct W8A8Case {
  int64_t m, n, k;
  std::vector<uint8_t> w;
  std::vector<float> w_scale;  // [nb, kb] (block) or [n] (channel)
  std::vector<uint16_t> x;
};

double w8a8_error(Fixture& f, const W8A8Case& c, bool block, bool act_m_major, bool weight_transposed,
                  std::string* note) {
  const int64_t kb = c.k / 128, nb = (c.n + 127) / 128;
  DeviceBuffer dw(c.w.size()), dws(c.w_scale.size() * 4), dws2(c.w_scale.size() * 4 + 64), dx(c.x.size() * 2);
  DeviceBuffer dq(c.m * c.k), dxs((kb + 4) * (c.m + 4) * 4), dy(c.m * c.n * 2);
  dw.upload(cuda::permuted_fp8_rows(c.w, c.n, c.k));  // the stored order the quantizers write x in
  dws.upload(c.w_scale);
  dx.upload(c.x);
  const int64_t pitch = block ? (act_m_major ? cuda::lt_act_scale_pitch(c.m) : kb) : 1;
  if (block) {
    cuda::quantize_act_block128(dx.get(), c.k, c.m, c.k, dq.as<uint8_t>(), dxs.as<float>(), pitch, act_m_major, nullptr);
    cuda::relayout_block_scales(dws.as<float>(), c.n, c.k, dws2.as<float>(), weight_transposed ? nb : kb,
                                weight_transposed, nullptr);
  } else {
    cuda::quantize_act_per_token(dx.get(), c.k, c.m, c.k, dq.as<uint8_t>(), dxs.as<float>(), nullptr);
  }
  dy.poison();
  LtOperands o{dw.get(), dq.get(), c.k, dy.get(), c.n, false, block ? dws2.as<float>() : dws.as<float>(), dxs.as<float>()};
  try {
    f.lt.run(block ? LtKind::kFp8Block : LtKind::kFp8Channel, c.m, c.n, c.k, o, nullptr);
  } catch (const std::exception& e) {
    if (note) *note = e.what();
    return 1e9;
  }
  const auto q = dq.download<uint8_t>(c.m * c.k);
  const auto xs = dxs.download<float>((kb + 4) * (c.m + 4));
  const auto y = dy.download<uint16_t>(c.m * c.n);
  std::vector<double> got, ref;
  for (int64_t t = 0; t < c.m; ++t) {
    for (int64_t r = 0; r < c.n; ++r) {
      double sum = 0;
      for (int64_t i = 0; i < c.k; ++i) {
        const int64_t g = i / 128;
        const double sx = block ? xs[act_m_major ? g * pitch + t : t * pitch + g] : xs[t];
        const double sw = block ? c.w_scale[(r / 128) * kb + g] : c.w_scale[r];
        sum += fp8_e4m3_to_float(q[t * c.k + cuda::fp8_stored_column(i, c.k)]) * sx *
               fp8_e4m3_to_float(c.w[r * c.k + i]) * sw;
      }
      ref.push_back(sum);
      got.push_back(gpu_test::bf16_value(y[t * c.n + r]));
    }
  }
  return gpu_test::normalized_error(got, ref);
}

W8A8Case make_case(int64_t m, int64_t n, int64_t k, bool block, unsigned seed) {
  std::mt19937 rng(seed);
  W8A8Case c{m, n, k, gpu_test::random_fp8(n * k, rng), {}, gpu_test::random_bf16(m * k, rng, 4.0f)};
  c.w_scale = gpu_test::random_f32(block ? ((n + 127) / 128) * (k / 128) : n, rng, 0.01f, 1.0f);
  return c;
}

// e4m3(v), round to nearest with ties to an even code, saturating at 448: the magnitude code
// nearest to |v| among all finite ones, with v's sign (a negative value that rounds to zero gives
// -0, as the hardware conversion does). The host reference of the activation quantizer.
uint8_t e4m3_nearest_even(float v) {
  const double mag = std::fabs(static_cast<double>(v));
  uint8_t best = 0;
  double best_err = INFINITY;
  for (int c = 0; c < 0x7f; ++c) {  // 0x7f is NaN
    const double err = std::fabs(static_cast<double>(fp8_e4m3_to_float(static_cast<uint8_t>(c))) - mag);
    if (err < best_err || (err == best_err && (c & 1) == 0)) {
      best_err = err;
      best = static_cast<uint8_t>(c);
    }
  }
  return std::signbit(v) ? static_cast<uint8_t>(best | 0x80) : best;
}

// quantize_act_block128 against the host reference, byte for byte: the 16-byte path (rows of
// stride k, k % 8 == 0) and the scalar one (an odd row stride) on the same values, both scale
// layouts, a group of zeros and a partial last group; each code where the stored order of fp8
// weights puts its k (k = 1024: permuted inside 64-k blocks; k = 1000: natural).
TEST(LtGemm, ActivationQuantizationMatchesTheReferenceOnBothPaths) {
  std::mt19937 rng(21);
  for (const int64_t k : {int64_t{1024}, int64_t{1000}}) {
    const int64_t m = 37, groups = (k + 127) / 128;
    std::vector<uint16_t> x = gpu_test::random_bf16(m * k, rng, 6.0f);
    for (int64_t i = 0; i < 128 && i < k; ++i) x[5 * k + i] = 0;  // token 5, group 0: all zero
    // Reference: s = max|x_g| / 448 (1 for a zero group), q = e4m3(x / s).
    std::vector<float> ref_s(m * groups);
    std::vector<uint8_t> ref_q(m * k);
    for (int64_t t = 0; t < m; ++t) {
      for (int64_t g = 0; g < groups; ++g) {
        float amax = 0.0f;
        for (int64_t i = g * 128; i < std::min(k, (g + 1) * 128); ++i)
          amax = std::max(amax, std::fabs(gpu_test::bf16_value(x[t * k + i])));
        const float sc = amax > 0.0f ? amax / 448.0f : 1.0f;
        ref_s[t * groups + g] = sc;
        for (int64_t i = g * 128; i < std::min(k, (g + 1) * 128); ++i)
          ref_q[t * k + i] = e4m3_nearest_even(gpu_test::bf16_value(x[t * k + i]) / sc);
      }
    }
    for (const int64_t stride : {k, k + 1}) {
      std::vector<uint16_t> strided(m * stride, 0);
      for (int64_t t = 0; t < m; ++t) std::copy_n(x.begin() + t * k, k, strided.begin() + t * stride);
      DeviceBuffer dx(m * stride * 2), dq(m * k), ds(groups * (m + 4) * 4);
      dx.upload(strided);
      for (const bool m_major : {true, false}) {
        SCOPED_TRACE(fmt::format("k={} stride={} m_major={}", k, stride, m_major));
        const int64_t pitch = m_major ? cuda::lt_act_scale_pitch(m) : groups;
        dq.poison();
        ds.poison();
        cuda::quantize_act_block128(dx.get(), stride, m, k, dq.as<uint8_t>(), ds.as<float>(), pitch, m_major,
                                    nullptr);
        const auto q = dq.download<uint8_t>(m * k);
        const auto sc = ds.download<float>(groups * (m + 4));
        int64_t bad_q = 0, bad_s = 0;
        for (int64_t t = 0; t < m; ++t)
          for (int64_t i = 0; i < k; ++i) bad_q += q[t * k + cuda::fp8_stored_column(i, k)] != ref_q[t * k + i];
        for (int64_t t = 0; t < m; ++t)
          for (int64_t g = 0; g < groups; ++g)
            bad_s += sc[m_major ? g * pitch + t : t * pitch + g] != ref_s[t * groups + g];
        EXPECT_EQ(bad_q, 0);
        EXPECT_EQ(bad_s, 0);
      }
    }
  }
}

TEST(LtGemm, W8A8Block128ScaleLayoutsAgainstReference) {
  Fixture f;
  const W8A8Case c = make_case(40, 384, 512, true, 9);
  // Every candidate layout is tried and reported; the production one (activation scales
  // token-fastest with pitch roundup(m, 4), weight scales in the checkpoint's [nb, kb] order)
  // must match.
  double production = 0;
  for (const bool act_m_major : {true, false}) {
    for (const bool w_t : {false, true}) {
      std::string note;
      const double err = w8a8_error(f, c, true, act_m_major, w_t, &note);
      std::printf("W8A8 block128 candidate: act scales %s, weight scales %s -> normalized error %.3g %s\n",
                  act_m_major ? "[kb][m] (token fastest)" : "[m][kb] (block fastest)",
                  w_t ? "[kb][nb]" : "[nb][kb]", err, note.c_str());
      if (act_m_major && !w_t) production = err;
    }
  }
  std::printf("%s\n", f.lt.plan_info(LtKind::kFp8Block, c.n, c.k, false).c_str());
  EXPECT_LT(production, 4e-3) << "production layout must match the host W8A8 reference";
}

// Where cuBLASLt reads each block scale: one scale index at a time is set to 2 (the rest 1),
// with W = 1 and x = 1 inside one K block and 0 elsewhere, so every output is 128 x (the scales
// of its blocks); the output blocks that double name the (row block, K block) the index governs.
// Prints the map (the evidence a layout fix needs) and asserts that each weight-scale index
// governs exactly one (n block, k block) and each activation-scale index at most one
// (token, k block) with every (token, k block) governed by one index.
TEST(LtGemm, W8A8Block128ScaleIndexProbe) {
  Fixture f;
  constexpr int64_t m = 8, n = 256, k = 512, nb = 2, kb = 4;
  const int64_t pitch = cuda::lt_act_scale_pitch(m);
  constexpr uint8_t kOne = 0x38;  // E4M3 1.0
  DeviceBuffer dw(n * k), dx(m * k), dws(nb * kb * 4), dxs(kb * pitch * 4), dy(m * n * 4);
  dw.upload(std::vector<uint8_t>(static_cast<size_t>(n * k), kOne));
  const auto run = [&](int64_t g, const std::vector<float>& ws, const std::vector<float>& xs) {
    std::vector<uint8_t> x(static_cast<size_t>(m * k), 0);
    for (int64_t t = 0; t < m; ++t) std::fill_n(x.begin() + t * k + g * 128, 128, kOne);
    dx.upload(x);
    dws.upload(ws);
    dxs.upload(xs);
    dy.poison();
    LtOperands o{dw.get(), dx.get(), k, dy.get(), n, true, dws.as<float>(), dxs.as<float>()};
    f.lt.run(LtKind::kFp8Block, m, n, k, o, nullptr);
    return dy.download<float>(m * n);
  };
  std::string wmap, xmap;
  int bad = 0;
  for (int64_t j = 0; j < nb * kb; ++j) {
    std::vector<float> ws(nb * kb, 1.0f), xs(static_cast<size_t>(kb * pitch), 1.0f);
    ws[static_cast<size_t>(j)] = 2.0f;
    int hits = 0;
    wmap += fmt::format(" w[{}]->", j);
    for (int64_t g = 0; g < kb; ++g) {
      const std::vector<float> y = run(g, ws, xs);
      for (int64_t r = 0; r < nb; ++r) {
        if (y[static_cast<size_t>(r * 128)] == 256.0f) {
          ++hits;
          wmap += fmt::format("(n{},k{})", r, g);
        } else if (y[static_cast<size_t>(r * 128)] != 128.0f) {
          wmap += fmt::format("(n{},k{}:{})", r, g, y[static_cast<size_t>(r * 128)]);
        }
      }
    }
    if (hits != 1) ++bad;
  }
  std::vector<int> governed(static_cast<size_t>(m * kb), 0);
  for (int64_t j = 0; j < kb * pitch; ++j) {
    std::vector<float> ws(nb * kb, 1.0f), xs(static_cast<size_t>(kb * pitch), 1.0f);
    xs[static_cast<size_t>(j)] = 2.0f;
    int hits = 0;
    xmap += fmt::format(" x[{}]->", j);
    for (int64_t g = 0; g < kb; ++g) {
      const std::vector<float> y = run(g, ws, xs);
      for (int64_t t = 0; t < m; ++t) {
        const float v = y[static_cast<size_t>(t * n)];
        if (v == 256.0f) {
          ++hits;
          ++governed[static_cast<size_t>(t * kb + g)];
          xmap += fmt::format("(t{},k{})", t, g);
        } else if (v != 128.0f) {
          xmap += fmt::format("(t{},k{}:{})", t, g, v);
        }
      }
    }
    if (hits > 1) ++bad;
  }
  for (int c : governed) bad += c == 1 ? 0 : 1;
  std::printf("W8A8 block128 scale probe (m=%lld n=%lld k=%lld, act pitch %lld):\n weights:%s\n activations:%s\n",
              static_cast<long long>(m), static_cast<long long>(n), static_cast<long long>(k),
              static_cast<long long>(pitch), wmap.c_str(), xmap.c_str());
  EXPECT_EQ(bad, 0) << "some scale index governs no block or several blocks";
}

// The device reordering the CUDA backend uploads fp8 weights through equals the host one
// (fp8_weight_layout.h), k permuted (1024, 960) or not (1000).
TEST(LtGemm, DevicePermutationOfFp8RowsMatchesTheHostOne) {
  std::mt19937 rng(34);
  const int64_t n = 96;
  for (const int64_t k : {int64_t{1024}, int64_t{960}, int64_t{1000}}) {
    const std::vector<uint8_t> w = gpu_test::random_fp8(n * k, rng);
    DeviceBuffer src(n * k), dst(n * k);
    src.upload(w);
    dst.poison();
    cuda::permute_fp8_rows_on_device(src.as<uint8_t>(), dst.as<uint8_t>(), n, k, nullptr);
    EXPECT_EQ(dst.download<uint8_t>(n * k), cuda::permuted_fp8_rows(w, n, k)) << "k=" << k;
  }
}

// dequantize_fp8_weight reads weights in their stored order and writes bf16 in natural order:
// byte-equal to bf16(code * scale) of the natural host matrix, for each scale kind, k permuted
// (1024, 960) and not (1000).
TEST(LtGemm, DequantizationUndoesTheStoredOrder) {
  std::mt19937 rng(33);
  const int64_t n = 256;
  for (const int64_t k : {int64_t{1024}, int64_t{960}, int64_t{1000}}) {
    const int64_t kb = (k + 127) / 128;
    const std::vector<uint8_t> w = gpu_test::random_fp8(n * k, rng);
    const std::vector<float> scales = gpu_test::random_f32(2 * kb, rng, 0.01f, 1.0f);  // enough for every kind
    const std::vector<float> channel = gpu_test::random_f32(n, rng, 0.01f, 1.0f);
    DeviceBuffer dw(n * k), ds(2 * kb * 4), dc(n * 4), dout(n * k * 2);
    dw.upload(cuda::permuted_fp8_rows(w, n, k));
    ds.upload(scales);
    dc.upload(channel);
    for (const int kind : {1, 2, 3}) {
      SCOPED_TRACE(fmt::format("k={} scale kind {}", k, kind));
      dout.poison();
      cuda::dequantize_fp8_weight(dw.as<uint8_t>(), n, k, kind, kind == 2 ? dc.as<float>() : ds.as<float>(),
                                  dout.get(), nullptr);
      const auto out = dout.download<uint16_t>(n * k);
      int64_t bad = 0;
      for (int64_t r = 0; r < n; ++r) {
        for (int64_t i = 0; i < k; ++i) {
          const float s = kind == 1 ? scales[0] : kind == 2 ? channel[r] : scales[(r / 128) * kb + i / 128];
          bad += out[r * k + i] != to_bf16(fp8_e4m3_to_float(w[r * k + i]) * s).bits;
        }
      }
      EXPECT_EQ(bad, 0);
    }
  }
}

TEST(LtGemm, W8A8PerChannelAgainstReference) {
  Fixture f;
  const W8A8Case c = make_case(40, 384, 512, false, 10);
  std::string note;
  const double err = w8a8_error(f, c, false, false, false, &note);
  std::printf("%s\n", f.lt.plan_info(LtKind::kFp8Channel, c.n, c.k, false).c_str());
  EXPECT_LT(err, 4e-3) << note;
}

// One pinned algorithm per (n, k), pinned at `pin_m` rows: a row's bytes must not depend on M.
// Every M up to 512 is checked; with max_m above 512, a few long chunks up to max_m as well.
void check_row_invariance(LtKind kind, int64_t n, int64_t k, int64_t pin_m = 256, int64_t max_m = 512) {
  Fixture f(pin_m);
  const int64_t kMaxM = max_m;
  std::mt19937 rng(static_cast<unsigned>(n + k));
  const bool fp8 = kind != LtKind::kBf16;
  const bool channel = kind == LtKind::kFp8Channel;
  const int64_t kb = k / 128, nb = (n + 127) / 128;
  const int64_t w_scales = channel ? n : nb * kb;
  DeviceBuffer dw(n * k * (fp8 ? 1 : 2)), dx(kMaxM * k * 2), dq(kMaxM * k), dxs(kb * (kMaxM + 4) * 4),
      dws(w_scales * 4), dy(kMaxM * n * 2), dref(kMaxM * n * 2);
  if (fp8) {
    dw.upload(gpu_test::random_fp8(n * k, rng));
    dws.upload(gpu_test::random_f32(w_scales, rng, 0.01f, 1.0f));
  } else {
    dw.upload(gpu_test::random_bf16(n * k, rng));
  }
  dx.upload(gpu_test::random_bf16(kMaxM * k, rng, 4.0f));
  auto run = [&](int64_t m, void* y) {
    LtOperands o{dw.get(), fp8 ? dq.get() : dx.get(), k, y, n, false, dws.as<float>(), dxs.as<float>()};
    if (channel) {
      cuda::quantize_act_per_token(dx.get(), k, m, k, dq.as<uint8_t>(), dxs.as<float>(), nullptr);
    } else if (fp8) {
      cuda::quantize_act_block128(dx.get(), k, m, k, dq.as<uint8_t>(), dxs.as<float>(), cuda::lt_act_scale_pitch(m), true,
                                  nullptr);
    }
    f.lt.run(kind, m, n, k, o, nullptr);
  };
  run(kMaxM, dref.get());
  const auto ref = dref.download<uint16_t>(kMaxM * n);
  int bad_ms = 0;
  std::string evidence;
  // Every M a prefill chunk can bring (1..512), not only the decode-wide 33..512. The
  // block-scaled route only ever sees row counts padded to kLtBlockRowMultiple (the backend
  // pads), so those are the M it is checked at; the other routes take every M.
  const int64_t step = kind == LtKind::kFp8Block ? cuda::kLtBlockRowMultiple : 1;
  std::vector<int64_t> ms;
  for (int64_t m = step; m <= std::min<int64_t>(kMaxM, 512); m += step) ms.push_back(m);
  for (int64_t m : {int64_t{1000}, int64_t{2044}, kMaxM - step}) {
    if (m > 512 && m < kMaxM && m % step == 0) ms.push_back(m);
  }
  for (const int64_t m : ms) {
    dy.poison();
    run(m, dy.get());
    const auto got = dy.download<uint16_t>(m * n);
    int bad_rows = 0;
    int64_t first_bad = -1;
    for (int64_t r = 0; r < m; ++r) {
      if (std::memcmp(got.data() + r * n, ref.data() + r * n, n * 2) != 0) {
        if (first_bad < 0) first_bad = r;
        ++bad_rows;
      }
    }
    if (bad_rows > 0) {
      if (++bad_ms <= 5) evidence += fmt::format(" M={}: {} rows differ (first {})", m, bad_rows, first_bad);
    }
  }
  EXPECT_EQ(bad_ms, 0) << cuda::lt_kind_name(kind) << " n=" << n << " k=" << k << " "
                       << f.lt.plan_info(kind, n, k, false) << ":" << evidence;
}

TEST(LtGemm, RowsAreBitIdenticalAcrossM_Bf16) {
  check_row_invariance(LtKind::kBf16, 512, 1024);
  check_row_invariance(LtKind::kBf16, 1536, 2048);
}

TEST(LtGemm, RowsAreBitIdenticalAcrossM_Fp8Channel) {
  check_row_invariance(LtKind::kFp8Channel, 512, 1024);
  check_row_invariance(LtKind::kFp8Channel, 1536, 2048);
}

TEST(LtGemm, RowsAreBitIdenticalAcrossM_Fp8Block) {
  check_row_invariance(LtKind::kFp8Block, 512, 1024);
  check_row_invariance(LtKind::kFp8Block, 1536, 2048);
}

// The Qwen3-8B shapes the served model runs: fused q|k|v (6144 x 4096) and down (4096 x 12288).
TEST(LtGemm, RowsAreBitIdenticalAcrossM_Qwen3_8B_Shapes) {
  check_row_invariance(LtKind::kBf16, 6144, 4096);
  check_row_invariance(LtKind::kBf16, 4096, 12288);
  check_row_invariance(LtKind::kFp8Block, 6144, 4096);
  check_row_invariance(LtKind::kFp8Block, 4096, 12288);
}

// The prefill GEMM's pin (LinearLevers: the default, or LATHE_GEMM_PREFILL_PIN_M as the backend
// reads it): the same invariance over short and long chunks of the Qwen3-8B shapes, block-scaled
// FP8 and BF16.
TEST(LtGemm, PrefillPinRowsAreBitIdenticalAcrossM_Qwen3_8B_Shapes) {
  const int64_t pin = ops::linear_levers_from_env().gemm_prefill_pin_m;
  for (const auto& [n, k] : {std::pair<int64_t, int64_t>{6144, 4096}, {4096, 12288}, {24576, 4096}}) {
    check_row_invariance(LtKind::kBf16, n, k, pin, 4096);
    check_row_invariance(LtKind::kFp8Block, n, k, pin, 4096);
  }
}

}  // namespace
}  // namespace lathe
