// The GEMV tiers that normalise their own input (GemvProblem::norm, gemv_fused_norm.cuh) against
// the two launches they replace: launch_add_rms_norm (residual += delta in place, out = the norm)
// followed by the plain GEMV on that out. The outputs and the updated residual must be byte-equal,
// on every grid the register ring builds, in tiers 1 and 4 at m = 1..4, twice in a row (the grid's
// arrival counter re-arms itself), and the rows must match the m = 1 launch of their own row.
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
#include "gpu_test_util.h"

namespace lathe {
namespace {

using gpu_test::DeviceBuffer;

struct NormCase {
  int64_t n, k;
  bool fp8;
};

constexpr int kRows = 4;
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
      scale_ = std::make_unique<DeviceBuffer>(static_cast<size_t>((c.n + 127) / 128 * (c.k / 128)) * 4);
      scale_->upload(
          gpu_test::random_f32(static_cast<size_t>((c.n + 127) / 128 * (c.k / 128)), rng, 0.25f, 2.0f));
    } else {
      w_->upload(gpu_test::random_bf16(count, rng));
    }
    // A residual stream of larger values than the update, as in a model; a norm weight near 1.
    residual_host_ = gpu_test::random_bf16(static_cast<size_t>(kRows * c.k), rng, 4.0f);
    delta_host_ = gpu_test::random_bf16(static_cast<size_t>(kRows * c.k), rng, 0.5f);
    norm_weight_host_ = gpu_test::random_f32(static_cast<size_t>(c.k), rng, 0.5f, 1.5f);
    residual_ = std::make_unique<DeviceBuffer>(residual_host_.size() * 2);
    delta_ = std::make_unique<DeviceBuffer>(delta_host_.size() * 2);
    delta_->upload(delta_host_);
    normed_ = std::make_unique<DeviceBuffer>(residual_host_.size() * 2);
    norm_weight_ = std::make_unique<DeviceBuffer>(norm_weight_host_.size() * 4);
    norm_weight_->upload(norm_weight_host_);
    partials_ = std::make_unique<DeviceBuffer>(cuda::kGemvWorkspaceFloats * 4);
    counters_ = std::make_unique<DeviceBuffer>((cuda::kGemvCounterCount + 1) * 4);
    LATHE_CUDA_CHECK(cudaMemset(counters_->get(), 0, (cuda::kGemvCounterCount + 1) * 4));
    ws_ = {partials_->as<float>(), cuda::kGemvWorkspaceFloats, counters_->as<int>(), cuda::kGemvCounterCount,
           counters_->as<int>() + cuda::kGemvCounterCount};
  }

  cuda::GemvProblem problem(int m, void* y, const void* x) const {
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
    p.y_f32 = true;
    p.m = m;
    return p;
  }

  cuda::GemvNormInput norm_input(void* residual, int first_row = 0) const {
    const int64_t k = GetParam().k;
    cuda::GemvNormInput in;
    in.residual = static_cast<uint16_t*>(residual) + first_row * k;
    in.residual_stride = k;
    in.delta = delta_->as<uint16_t>() + first_row * k;
    in.delta_stride = k;
    in.weight = norm_weight_->as<float>();
    in.eps = kEps;
    return in;
  }

  // The two launches the fused tier replaces; returns (y, residual after) as bytes.
  std::pair<std::vector<uint8_t>, std::vector<uint8_t>> unfused(int tier, int m, const cuda::GemvVariant& v) {
    const int64_t k = GetParam().k;
    residual_->upload(residual_host_);
    cuda::launch_add_rms_norm(residual_->get(), cuda::RowType::kBf16, k, delta_->get(), cuda::RowType::kBf16,
                              k, m, k, norm_weight_->as<float>(), kEps, normed_->get(), cuda::RowType::kBf16,
                              k, nullptr);
    DeviceBuffer y(static_cast<size_t>(m * GetParam().n) * 4);
    y.poison();
    cuda::gemv_launch(tier, problem(m, y.get(), normed_->get()), ws_, nullptr, v);
    return {y.download<uint8_t>(static_cast<size_t>(m * GetParam().n) * 4),
            residual_->download<uint8_t>(static_cast<size_t>(m * k) * 2)};
  }

  std::pair<std::vector<uint8_t>, std::vector<uint8_t>> fused(int tier, int m, const cuda::GemvVariant& v) {
    const int64_t k = GetParam().k;
    residual_->upload(residual_host_);
    DeviceBuffer y(static_cast<size_t>(m * GetParam().n) * 4);
    y.poison();
    cuda::GemvProblem p = problem(m, y.get(), nullptr);
    p.norm = norm_input(residual_->get());
    EXPECT_EQ(cuda::gemv_unsupported_reason(tier, p, ws_), "");
    cuda::gemv_launch(tier, p, ws_, nullptr, v);
    return {y.download<uint8_t>(static_cast<size_t>(m * GetParam().n) * 4),
            residual_->download<uint8_t>(static_cast<size_t>(m * k) * 2)};
  }

  std::vector<uint16_t> residual_host_, delta_host_;
  std::vector<float> norm_weight_host_;
  std::unique_ptr<DeviceBuffer> w_, scale_, residual_, delta_, normed_, norm_weight_, partials_, counters_;
  cuda::GemvWorkspace ws_;
};

TEST_P(GemvFusedNormTest, OutputAndResidualAreByteEqualToNormThenGemv) {
  const NormCase& c = GetParam();
  const size_t row_bytes = static_cast<size_t>(c.n) * 4;
  for (const char* name :
       {"auto", "ring:b3", "ringbal", "ringbal:b3", "auto:wgn", "ring:b3:wgn", "ringbal:b3:wgn"}) {
    const cuda::GemvVariant v = cuda::gemv_variant_from_name(name);
    ASSERT_EQ(cuda::gemv_variant_unsupported_reason(c.fp8, c.n, c.k, v), "") << name;
    // Each row alone through the unfused m = 1 launch: the bytes every fused row must have.
    std::vector<uint8_t> single;
    for (int r = 0; r < kRows; ++r) {
      residual_->upload(residual_host_);
      cuda::launch_add_rms_norm(static_cast<uint16_t*>(residual_->get()) + r * c.k, cuda::RowType::kBf16, c.k,
                                delta_->as<uint16_t>() + r * c.k, cuda::RowType::kBf16, c.k, 1, c.k,
                                norm_weight_->as<float>(), kEps, normed_->get(), cuda::RowType::kBf16, c.k,
                                nullptr);
      DeviceBuffer y(row_bytes);
      cuda::gemv_launch(1, problem(1, y.get(), normed_->get()), ws_, nullptr, v);
      const auto row = y.download<uint8_t>(row_bytes);
      single.insert(single.end(), row.begin(), row.end());
    }
    for (const auto& [tier, m] : {std::pair{1, 1}, {4, 1}, {4, 2}, {4, 3}, {4, 4}}) {
      const auto [y_ref, res_ref] = unfused(tier, m, v);
      for (int round = 0; round < 2; ++round) {
        const auto [y, res] = fused(tier, m, v);
        ASSERT_EQ(y, y_ref) << name << " tier " << tier << " m=" << m << " round " << round;
        ASSERT_EQ(res, res_ref) << name << " tier " << tier << " m=" << m << " round " << round
                                << ": residual";
        for (int r = 0; r < m; ++r) {
          ASSERT_EQ(std::memcmp(y.data() + r * row_bytes, single.data() + r * row_bytes, row_bytes), 0)
              << name << " tier " << tier << " m=" << m << " row " << r << " against its m = 1 launch";
        }
      }
    }
  }
}

// What the fused tiers refuse, with the reason (the backend then runs the two ops).
TEST_P(GemvFusedNormTest, RefusesWhatItDoesNotBuild) {
  const NormCase& c = GetParam();
  DeviceBuffer y(static_cast<size_t>(kRows * c.n) * 4);
  cuda::GemvProblem p = problem(1, y.get(), nullptr);
  p.norm = norm_input(residual_->get());
  EXPECT_EQ(cuda::gemv_unsupported_reason(1, p, ws_), "");
  EXPECT_NE(cuda::gemv_unsupported_reason(16, p, ws_), "") << "only tiers 1 and 4 are built";
  cuda::GemvWorkspace no_counter = ws_;
  no_counter.norm_arrivals = nullptr;
  EXPECT_NE(cuda::gemv_unsupported_reason(1, p, no_counter), "");
  cuda::GemvProblem odd = p;
  odd.norm.delta_stride = c.k + 4;
  EXPECT_NE(cuda::gemv_unsupported_reason(1, odd, ws_), "");
  EXPECT_THROW(cuda::gemv_launch(1, p, ws_, nullptr, cuda::gemv_variant_from_name("stream")), Error);
  if (c.fp8) {
    EXPECT_THROW(cuda::gemv_launch(1, p, ws_, nullptr, cuda::gemv_variant_from_name("ring:bits")), Error);
  }
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
