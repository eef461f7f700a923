// The GEMV tiers' SwiGLU epilogue (GemvProblem::silu_inter, CudaBackend::linear_silu_mul) against
// the launches it replaces: the gate|up GEMV into a bf16 [m, 2I] output followed by
// launch_silu_mul. Byte-equal on every one-CTA-per-block grid the register ring builds (the K split
// forced to 1 for the direct store, the split-K sum in both its forms), at every tier and several
// widths, for block-128, per-channel and BF16 weights (with a bias on one shape), for an
// intermediate size that puts the up rows in the middle of a 128-row scale block, and with the
// fused RMS norm on the input (tiers 1 and 4). Plus what the epilogue refuses.
#include <cuda_runtime.h>
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "backends/cuda/check.h"
#include "backends/cuda/elementwise.h"
#include "backends/cuda/gemv.h"
#include "core/error.h"
#include "gemv_test_workspace.h"
#include "gpu_test_util.h"

namespace lathe {
namespace {

using gpu_test::DeviceBuffer;

struct SiluCase {
  int64_t inter, k;  // gate|up is [2 * inter, k]
  cuda::GemvScale scale;
  bool bias = false;
};

constexpr int kRows = 16;
constexpr float kEps = 1e-6f;

class GemvSiluTest : public testing::TestWithParam<SiluCase> {
 protected:
  void SetUp() override {
    const SiluCase& c = GetParam();
    const int64_t n = 2 * c.inter;
    std::mt19937 rng(static_cast<unsigned>(c.inter * 7 + c.k));
    const size_t count = static_cast<size_t>(n * c.k);
    const bool fp8 = c.scale != cuda::GemvScale::kNone;
    w_ = std::make_unique<DeviceBuffer>(count * (fp8 ? 1 : 2));
    if (fp8) {
      w_->upload(gpu_test::random_fp8(count, rng));
      // Small scales keep gate values where silu is neither 0 nor the identity.
      const size_t scales = c.scale == cuda::GemvScale::kBlock128
                                ? static_cast<size_t>((n + 127) / 128 * (c.k / 128))
                                : static_cast<size_t>(n);
      scale_ = std::make_unique<DeviceBuffer>(scales * 4);
      scale_->upload(gpu_test::random_f32(scales, rng, 0.0005f, 0.002f));
    } else {
      w_->upload(gpu_test::random_bf16(count, rng));
    }
    if (c.bias) {
      bias_ = std::make_unique<DeviceBuffer>(static_cast<size_t>(n) * 4);
      bias_->upload(gpu_test::random_f32(static_cast<size_t>(n), rng, -1.0f, 1.0f));
    }
    x_ = std::make_unique<DeviceBuffer>(static_cast<size_t>(kRows * c.k) * 2);
    x_->upload(gpu_test::random_bf16(static_cast<size_t>(kRows * c.k), rng, fp8 ? 1.0f : 0.1f));
    normed_ = std::make_unique<DeviceBuffer>(static_cast<size_t>(kRows * c.k) * 2);
    norm_weight_ = std::make_unique<DeviceBuffer>(static_cast<size_t>(c.k) * 4);
    norm_weight_->upload(gpu_test::random_f32(static_cast<size_t>(c.k), rng, 0.02f, 0.1f));
    gate_up_ = std::make_unique<DeviceBuffer>(static_cast<size_t>(kRows * n) * 2);
    workspace_ = std::make_unique<gpu_test::GemvTestWorkspace>();
    ws_ = workspace_->get();
  }

  // The plain gate|up GEMV of m rows of x into gate_up_ ([m, 2I] bf16).
  cuda::GemvProblem gate_up_problem(int m, const void* x) const {
    const SiluCase& c = GetParam();
    cuda::GemvProblem p;
    p.w = w_->get();
    p.weight = c.scale != cuda::GemvScale::kNone ? cuda::GemvWeight::kFp8E4M3 : cuda::GemvWeight::kBf16;
    p.n = 2 * c.inter;
    p.k = c.k;
    p.scale_kind = c.scale;
    p.scale = scale_ ? scale_->as<float>() : nullptr;
    p.bias = bias_ ? bias_->as<float>() : nullptr;
    p.x = x;
    p.x_stride = c.k;
    p.y = gate_up_->get();
    p.y_stride = 2 * c.inter;
    p.m = m;
    return p;
  }

  // The same GEMV with the SwiGLU epilogue into y ([m, I] bf16, row stride I).
  cuda::GemvProblem silu_problem(int m, const void* x, void* y) const {
    cuda::GemvProblem p = gate_up_problem(m, x);
    p.silu_inter = GetParam().inter;
    p.y = y;
    p.y_stride = GetParam().inter;
    return p;
  }

  // launch_silu_mul of gate_up_'s m rows into out.
  void silu_mul(int m, void* out) const {
    const int64_t inter = GetParam().inter;
    cuda::launch_silu_mul(gate_up_->get(), cuda::RowType::kBf16, 2 * inter, m, inter, out,
                          cuda::RowType::kBf16, inter, nullptr);
  }

  void norm_rows(int m) const {
    const int64_t k = GetParam().k;
    cuda::launch_rms_norm(x_->get(), cuda::RowType::kBf16, k, m, k, norm_weight_->as<float>(), kEps,
                          normed_->get(), cuda::RowType::kBf16, k, nullptr);
  }

  std::unique_ptr<DeviceBuffer> w_, scale_, bias_, x_, normed_, norm_weight_, gate_up_;
  // Every launch leaves the register ring's split slots empty (the next one's sum relies on it).
  void TearDown() override { EXPECT_EQ(workspace_->full_split_slots(), 0u) << "split slots left full"; }
  std::unique_ptr<gpu_test::GemvTestWorkspace> workspace_;
  cuda::GemvWorkspace ws_;
};

// The register-ring grids the epilogue is built for: auto's choice for the shape (where it is not
// the balanced grid), the K split forced to 1 (the direct store), 3 and 8 (the split-K sum), three
// CTAs per SM, and the warpgroup-MMA tiers (the 16-row one also with x by tensor copies, fp8 only);
// x staged 16 steps a buffer in tiers 1 and 4.
constexpr const char* kVariants[] = {"auto",           "ring:g16",    "ring:k1:g16",    "ring:k3:g16",
                                     "ring:k8:g16",    "ring:b3:g16", "ring:b3:wg:wgn", "ring:wg:wgn",
                                     "ring:wg:wgn:xt", "auto:b3:xt"};

bool runs_here(const SiluCase& c, const char* name) {
  const bool fp8 = c.scale != cuda::GemvScale::kNone;
  const cuda::GemvVariant v = cuda::gemv_variant_from_name(name);
  const cuda::GemvVariant resolved = cuda::gemv_resolve_variant(v, fp8, 2 * c.inter, c.k);
  return resolved.kernel == cuda::GemvKernel::kRegisterRing &&
         cuda::gemv_variant_unsupported_reason(fp8, 2 * c.inter, c.k, v).empty();
}

TEST_P(GemvSiluTest, EpilogueIsByteEqualToGemvThenSiluMul) {
  const SiluCase& c = GetParam();
  const size_t out_bytes = static_cast<size_t>(kRows * c.inter) * 2;
  DeviceBuffer want(out_bytes), got(out_bytes);
  int ran = 0;
  for (const char* name : kVariants) {
    if (!runs_here(c, name)) continue;
    ++ran;
    const cuda::GemvVariant v = cuda::gemv_variant_from_name(name);
    for (const auto& [tier, m] : {std::pair{1, 1}, {4, 1}, {4, 2}, {4, 4}, {16, 5}, {16, 9}, {16, 16}}) {
      const size_t bytes = static_cast<size_t>(m * c.inter) * 2;
      want.poison();
      gate_up_->poison();
      cuda::gemv_launch(tier, gate_up_problem(m, x_->get()), ws_, nullptr, v);
      silu_mul(m, want.get());
      got.poison();
      const cuda::GemvProblem p = silu_problem(m, x_->get(), got.get());
      ASSERT_EQ(cuda::gemv_unsupported_reason(tier, p, ws_), "") << name;
      cuda::gemv_launch(tier, p, ws_, nullptr, v);
      ASSERT_EQ(got.download<uint8_t>(bytes), want.download<uint8_t>(bytes))
          << name << " tier " << tier << " m=" << m;
    }
  }
  EXPECT_GT(ran, 0) << "no variant of the list runs this shape";
}

TEST_P(GemvSiluTest, EpilogueAfterFusedNormIsByteEqualToNormGemvSiluMul) {
  const SiluCase& c = GetParam();
  const size_t out_bytes = static_cast<size_t>(4 * c.inter) * 2;
  DeviceBuffer want(out_bytes), got(out_bytes);
  for (const char* name : {"auto", "ring:k1:g16", "ring:b3:wg:wgn"}) {
    if (!runs_here(c, name)) continue;
    const cuda::GemvVariant v = cuda::gemv_variant_from_name(name);
    for (const auto& [tier, m] : {std::pair{1, 1}, {4, 3}, {4, 4}}) {
      const size_t bytes = static_cast<size_t>(m * c.inter) * 2;
      norm_rows(m);
      want.poison();
      cuda::gemv_launch(tier, gate_up_problem(m, normed_->get()), ws_, nullptr, v);
      silu_mul(m, want.get());
      got.poison();
      cuda::GemvProblem p = silu_problem(m, x_->get(), got.get());
      p.norm = {norm_weight_->as<float>(), kEps};
      cuda::gemv_launch(tier, p, ws_, nullptr, v);
      ASSERT_EQ(got.download<uint8_t>(bytes), want.download<uint8_t>(bytes))
          << name << " tier " << tier << " m=" << m;
    }
  }
}

// What the epilogue refuses, with a reason (the backend then runs the GEMV and silu_mul).
TEST_P(GemvSiluTest, RefusesWhatItDoesNotBuild) {
  const SiluCase& c = GetParam();
  DeviceBuffer y(static_cast<size_t>(kRows * c.inter) * 4);
  const cuda::GemvProblem p = silu_problem(1, x_->get(), y.get());
  cuda::GemvProblem odd = p;
  odd.silu_inter = c.inter - 32;  // n != 2 * silu_inter, and not a multiple of 64
  EXPECT_NE(cuda::gemv_unsupported_reason(1, odd, ws_), "");
  cuda::GemvProblem f32 = p;
  f32.y_f32 = true;
  EXPECT_NE(cuda::gemv_unsupported_reason(1, f32, ws_), "") << "the SwiGLU output is bf16";
  cuda::GemvProblem add = p;
  add.y_add = true;
  EXPECT_NE(cuda::gemv_unsupported_reason(1, add, ws_), "") << "the SwiGLU output is not a residual";
  cuda::GemvProblem short_stride = p;
  short_stride.y_stride = c.inter - 1;
  EXPECT_NE(cuda::gemv_unsupported_reason(1, short_stride, ws_), "");
  EXPECT_THROW(cuda::gemv_launch(1, p, ws_, nullptr, cuda::gemv_variant_from_name("ringbal")), Error);
  EXPECT_THROW(cuda::gemv_launch(4, p, ws_, nullptr, cuda::gemv_variant_from_name("stream")), Error);
  if (c.scale != cuda::GemvScale::kNone) {
    EXPECT_THROW(cuda::gemv_launch(1, p, ws_, nullptr, cuda::gemv_variant_from_name("ring:bits")), Error);
    EXPECT_THROW(cuda::gemv_launch(1, p, ws_, nullptr, cuda::gemv_variant_from_name("ring:s4:g16")), Error)
        << "built for the ring depth auto takes";
  }
  // Tiers 1 and 4 build it with 16 steps of x a buffer (or :wgn) only; tier 16 with its own staging.
  EXPECT_THROW(cuda::gemv_launch(1, p, ws_, nullptr, cuda::gemv_variant_from_name("ring")), Error);
  EXPECT_THROW(cuda::gemv_launch(4, p, ws_, nullptr, cuda::gemv_variant_from_name("ring:k1")), Error);
}

// A gate|up of more row blocks than one wave takes the balanced grid by default: the epilogue says
// no (no launch needed to ask), and the backend keeps the two launches there.
TEST(GemvSiluShapeTest, BalancedDefaultIsRefused) {
  DeviceBuffer dummy(256);
  cuda::GemvProblem p;
  p.w = dummy.get();
  p.weight = cuda::GemvWeight::kFp8E4M3;
  p.n = 51200;  // Qwen3-32B gate|up: 400 row blocks
  p.k = 5120;
  p.scale_kind = cuda::GemvScale::kBlock128;
  p.scale = dummy.as<float>();
  p.x = dummy.get();
  p.x_stride = 5120;
  p.y = dummy.get();
  p.y_stride = 25600;
  p.m = 1;
  p.silu_inter = 25600;
  cuda::GemvWorkspace ws{dummy.as<float>(), cuda::kGemvWorkspaceFloats, dummy.as<int>(),
                         cuda::kGemvCounterCount};
  EXPECT_NE(cuda::gemv_unsupported_reason(1, p, ws).find("SwiGLU"), std::string::npos);
}

std::string silu_case_name(const testing::TestParamInfo<SiluCase>& param) {
  const SiluCase& c = param.param;
  const char* kind = c.scale == cuda::GemvScale::kBlock128     ? "block"
                     : c.scale == cuda::GemvScale::kPerChannel ? "channel"
                                                               : "bf16";
  return fmt::format("i{}_k{}_{}{}", c.inter, c.k, kind, c.bias ? "_bias" : "");
}

// Qwen3-8B's gate|up (I 12288), an intermediate size of 192 (the up rows start half-way into a
// 128-row scale block), per-channel scales with a bias, and BF16 weights.
INSTANTIATE_TEST_SUITE_P(Shapes, GemvSiluTest,
                         testing::Values(SiluCase{12288, 4096, cuda::GemvScale::kBlock128},
                                         SiluCase{192, 1024, cuda::GemvScale::kBlock128},
                                         SiluCase{320, 768, cuda::GemvScale::kPerChannel, true},
                                         SiluCase{12288, 4096, cuda::GemvScale::kNone},
                                         SiluCase{448, 512, cuda::GemvScale::kNone}),
                         silu_case_name);

}  // namespace
}  // namespace lathe
