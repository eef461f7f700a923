// The GEMV tiers' two halves of a fused residual add + RMS norm (CudaBackend::
// linear_add_rms_norm_linear) against the launches they replace:
//   GemvProblem::norm: tiers 1 and 4 normalise their own input, byte-equal to launch_rms_norm
//     followed by the plain GEMV, on every grid the register ring builds, at m = 1..4, and each row
//     equal to the m = 1 launch of that row;
//   GemvProblem::y_add: a GEMV adding its bf16 output into the residual stream, byte-equal to the
//     GEMV into a bf16 delta followed by launch_add_rms_norm's residual update.
#include <cuda_runtime.h>
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstring>
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

struct NormCase {
  int64_t n, k;
  bool fp8;
};

constexpr int kRows = 16;
constexpr float kEps = 1e-6f;

class GemvFusedNormTest : public testing::TestWithParam<NormCase> {
 protected:
  void SetUp() override {
    const NormCase& c = GetParam();
    std::mt19937 rng(static_cast<unsigned>(c.n * 31 + c.k));
    const size_t count = static_cast<size_t>(c.n * c.k);
    w_ = std::make_unique<DeviceBuffer>(count * (c.fp8 ? 1 : 2));
    if (c.fp8) {
      w_->upload(gpu_test::random_fp8(count, rng));
      const size_t scales = static_cast<size_t>((c.n + 127) / 128 * (c.k / 128));
      scale_ = std::make_unique<DeviceBuffer>(scales * 4);
      scale_->upload(gpu_test::random_f32(scales, rng, 0.25f, 2.0f));
    } else {
      w_->upload(gpu_test::random_bf16(count, rng));
    }
    // Residual-stream rows larger than a layer's update, and a norm weight near 1.
    x_host_ = gpu_test::random_bf16(static_cast<size_t>(kRows * c.k), rng, 4.0f);
    x_ = std::make_unique<DeviceBuffer>(x_host_.size() * 2);
    x_->upload(x_host_);
    normed_ = std::make_unique<DeviceBuffer>(x_host_.size() * 2);
    norm_weight_ = std::make_unique<DeviceBuffer>(static_cast<size_t>(c.k) * 4);
    norm_weight_->upload(gpu_test::random_f32(static_cast<size_t>(c.k), rng, 0.5f, 1.5f));
    residual_host_ = gpu_test::random_bf16(static_cast<size_t>(kRows * c.n), rng, 4.0f);
    workspace_ = std::make_unique<gpu_test::GemvTestWorkspace>();
    ws_ = workspace_->get();
  }

  cuda::GemvProblem problem(int m, void* y, const void* x, bool f32) const {
    const NormCase& c = GetParam();
    cuda::GemvProblem p;
    p.w = w_->get();
    p.weight = c.fp8 ? cuda::GemvWeight::kFp8E4M3 : cuda::GemvWeight::kBf16;
    p.n = c.n;
    p.k = c.k;
    p.scale_kind = c.fp8 ? cuda::GemvScale::kBlock128 : cuda::GemvScale::kNone;
    p.scale = c.fp8 ? scale_->as<float>() : nullptr;
    p.x = x;
    p.x_stride = c.k;
    p.y = y;
    p.y_stride = c.n;
    p.y_f32 = f32;
    p.m = m;
    return p;
  }

  cuda::GemvNormInput norm() const { return {norm_weight_->as<float>(), kEps}; }

  // launch_rms_norm of rows [first, first + m) of x into normed_.
  void norm_rows(int first, int m) {
    const int64_t k = GetParam().k;
    cuda::launch_rms_norm(x_->as<uint16_t>() + first * k, cuda::RowType::kBf16, k, m, k,
                          norm_weight_->as<float>(), kEps, normed_->get(), cuda::RowType::kBf16, k, nullptr);
  }

  std::vector<uint16_t> x_host_, residual_host_;
  std::unique_ptr<DeviceBuffer> w_, scale_, x_, normed_, norm_weight_;
  // Every launch leaves the register ring's split slots empty (the next one's sum relies on it).
  void TearDown() override { EXPECT_EQ(workspace_->full_split_slots(), 0u) << "split slots left full"; }
  std::unique_ptr<gpu_test::GemvTestWorkspace> workspace_;
  cuda::GemvWorkspace ws_;
};

TEST_P(GemvFusedNormTest, NormalisedInputIsByteEqualToNormThenGemv) {
  const NormCase& c = GetParam();
  const size_t row_bytes = static_cast<size_t>(c.n) * 4;
  // ":wgnu" (auto's choice on the two-CTA balanced grid: fp8 with ":xt") runs the fused rows with
  // mma.sync and the m = 1 reference rows with the n8 warpgroup MMA.
  const char* wgnu = c.fp8 ? "ringbal:wg:wgnu:xt" : "ringbal:wg:wgnu";
  for (const char* name : {"auto", "ring:b3", "ringbal", "ringbal:b3", "auto:wgn", "ring:b3:wgn",
                           "ringbal:b3:wgn", "ringbal:wg:wgn", wgnu}) {
    const cuda::GemvVariant v = cuda::gemv_variant_from_name(name);
    ASSERT_EQ(cuda::gemv_variant_unsupported_reason(c.fp8, c.n, c.k, v), "") << name;
    // Each row alone through the norm kernel and the m = 1 GEMV: the bytes every fused row must have.
    DeviceBuffer single(4 * row_bytes);
    for (int r = 0; r < 4; ++r) {
      norm_rows(r, 1);
      cuda::gemv_launch(1, problem(1, static_cast<char*>(single.get()) + r * row_bytes, normed_->get(), true),
                        ws_, nullptr, v);
    }
    const auto single_rows = single.download<uint8_t>(4 * row_bytes);
    for (const auto& [tier, m] : {std::pair{1, 1}, {4, 1}, {4, 2}, {4, 3}, {4, 4}}) {
      norm_rows(0, m);
      DeviceBuffer y_ref(m * row_bytes), y(m * row_bytes);
      y_ref.poison();
      cuda::gemv_launch(tier, problem(m, y_ref.get(), normed_->get(), true), ws_, nullptr, v);
      y.poison();
      cuda::GemvProblem p = problem(m, y.get(), x_->get(), true);
      p.norm = norm();
      ASSERT_EQ(cuda::gemv_unsupported_reason(tier, p, ws_, v), "");
      cuda::gemv_launch(tier, p, ws_, nullptr, v);
      const auto got = y.download<uint8_t>(m * row_bytes);
      ASSERT_EQ(got, y_ref.download<uint8_t>(m * row_bytes)) << name << " tier " << tier << " m=" << m;
      ASSERT_EQ(std::memcmp(got.data(), single_rows.data(), m * row_bytes), 0)
          << name << " tier " << tier << " m=" << m << ": a row differs from its m = 1 launch";
    }
  }
}

TEST_P(GemvFusedNormTest, AddIntoResidualIsByteEqualToGemvThenAddNorm) {
  const NormCase& c = GetParam();
  const size_t out_elems = static_cast<size_t>(kRows) * c.n;
  DeviceBuffer residual(out_elems * 2), delta(out_elems * 2), scratch(out_elems * 2),
      ones(static_cast<size_t>(c.n) * 4);
  ones.upload(std::vector<float>(static_cast<size_t>(c.n), 1.0f));
  const char* wgnu = c.fp8 ? "ringbal:wg:wgnu:xt" : "ringbal:wg:wgnu";
  for (const char* name : {"auto", "ring:b3", "ringbal:b3", "auto:wgn", wgnu}) {
    const cuda::GemvVariant v = cuda::gemv_variant_from_name(name);
    for (const auto& [tier, m] : {std::pair{1, 1}, {4, 3}, {4, 4}, {16, 9}}) {
      // Reference: the GEMV's bf16 output, then the add + norm kernel's residual update.
      residual.upload(residual_host_);
      cuda::gemv_launch(tier, problem(m, delta.get(), x_->get(), false), ws_, nullptr, v);
      cuda::launch_add_rms_norm(residual.get(), cuda::RowType::kBf16, c.n, delta.get(), cuda::RowType::kBf16,
                                c.n, m, c.n, ones.as<float>(), kEps, scratch.get(), cuda::RowType::kBf16, c.n,
                                nullptr);
      const auto want = residual.download<uint16_t>(static_cast<size_t>(m) * c.n);
      residual.upload(residual_host_);
      cuda::GemvProblem p = problem(m, residual.get(), x_->get(), false);
      p.y_add = true;
      cuda::gemv_launch(tier, p, ws_, nullptr, v);
      ASSERT_EQ(residual.download<uint16_t>(static_cast<size_t>(m) * c.n), want)
          << name << " tier " << tier << " m=" << m;
    }
  }
}

// What the fused tiers refuse, with the reason (the backend then runs the separate ops).
TEST_P(GemvFusedNormTest, RefusesWhatItDoesNotBuild) {
  const NormCase& c = GetParam();
  DeviceBuffer y(static_cast<size_t>(kRows * c.n) * 4);
  cuda::GemvProblem p = problem(1, y.get(), x_->get(), true);
  p.norm = norm();
  EXPECT_EQ(cuda::gemv_unsupported_reason(1, p, ws_), "");
  EXPECT_NE(cuda::gemv_unsupported_reason(16, p, ws_), "") << "only tiers 1 and 4 normalise";
  // The fused input does not exempt the rest of the problem from its checks.
  cuda::GemvProblem short_stride = p;
  short_stride.y_stride = c.n - 1;
  EXPECT_NE(cuda::gemv_unsupported_reason(1, short_stride, ws_), "");
  if (c.fp8) {
    cuda::GemvProblem no_scale = p;
    no_scale.scale = nullptr;
    EXPECT_NE(cuda::gemv_unsupported_reason(1, no_scale, ws_), "");
  }
  cuda::GemvProblem misaligned = p;
  misaligned.norm.weight = norm_weight_->as<float>() + 1;
  EXPECT_NE(cuda::gemv_unsupported_reason(1, misaligned, ws_), "");
  EXPECT_THROW(cuda::gemv_launch(1, p, ws_, nullptr, cuda::gemv_variant_from_name("stream")), Error);
  if (c.fp8) {
    EXPECT_THROW(cuda::gemv_launch(1, p, ws_, nullptr, cuda::gemv_variant_from_name("ring:bits")), Error);
  }
  cuda::GemvProblem add_f32 = problem(1, y.get(), x_->get(), true);
  add_f32.y_add = true;
  EXPECT_NE(cuda::gemv_unsupported_reason(1, add_f32, ws_), "") << "y_add adds into a bf16 residual";
}

std::string norm_case_name(const testing::TestParamInfo<NormCase>& param) {
  const NormCase& c = param.param;
  return fmt::format("n{}_k{}_{}", c.n, c.k, c.fp8 ? "fp8" : "bf16");
}

// Qwen3-8B's q|k|v and gate|up (the fused sites), Qwen3-32B's (k 5120), and small odd shapes.
INSTANTIATE_TEST_SUITE_P(Shapes, GemvFusedNormTest,
                         testing::Values(NormCase{6144, 4096, true}, NormCase{24576, 4096, true},
                                         NormCase{10240, 5120, true}, NormCase{6144, 4096, false},
                                         NormCase{24576, 4096, false}, NormCase{200, 1024, true},
                                         NormCase{1000, 384, false}),
                         norm_case_name);

}  // namespace
}  // namespace lathe
