// The q|k|v decode GEMV with the QK-norm + RoPE + paged KV write fused into it (gemv_launch's
// `rope`) gives the bytes of the two launches it replaces, the GEMV then
// launch_qk_norm_rope_kv_write: the q|k|v rows and every cache row, for each width the dispatch
// route serves (1..32 rows, the halves included), fp8 and bf16 weights, BF16 and FP8 caches, a
// split-K shape and the Qwen3-8B one, and a token without a cache slot. Also: which launches can
// fuse (gemv_rope_unsupported_reason).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "backends/cuda/gemv.h"
#include "backends/cuda/rope_kv.h"
#include "gpu_test_util.h"
#include "ops/linear_dispatch.h"

namespace lathe {
namespace {

using cuda::GemvProblem;
using cuda::GemvScale;
using cuda::GemvWeight;
using gpu_test::DeviceBuffer;

constexpr int kHeadDim = 128;
constexpr int kTokens = 32;
constexpr int kBlockSize = 16;
constexpr int kCacheBlocks = 8;  // 128 slots

struct RopeCase {
  int heads, kv_heads;
  int64_t k;
  bool fp8_weights, fp8_cache;
};

class GemvRopeTest : public testing::TestWithParam<RopeCase> {
 protected:
  void SetUp() override {
    const RopeCase& c = GetParam();
    n_ = static_cast<int64_t>(c.heads + 2 * c.kv_heads) * kHeadDim;
    std::mt19937 rng(1234 + c.heads);
    const size_t count = static_cast<size_t>(n_ * c.k);
    w_ = std::make_unique<DeviceBuffer>(count * (c.fp8_weights ? 1 : 2));
    if (c.fp8_weights) {
      w_->upload(gpu_test::random_fp8(count, rng));
      scale_ = std::make_unique<DeviceBuffer>(static_cast<size_t>((n_ / 128) * (c.k / 128)) * 4);
      scale_->upload(gpu_test::random_f32(static_cast<size_t>((n_ / 128) * (c.k / 128)), rng, 0.01f, 0.05f));
    } else {
      w_->upload(gpu_test::random_bf16(count, rng, 0.05f));
    }
    x_ = std::make_unique<DeviceBuffer>(static_cast<size_t>(kTokens * c.k) * 2);
    x_->upload(gpu_test::random_bf16(static_cast<size_t>(kTokens * c.k), rng));
    std::vector<int32_t> positions(kTokens), slots(kTokens);
    std::uniform_int_distribution<int32_t> pos(0, 40000);
    for (int t = 0; t < kTokens; ++t) {
      positions[t] = pos(rng);
      slots[t] = t == 5 ? -1 : (t * 37 + 3) % (kCacheBlocks * kBlockSize);  // distinct; token 5 not cached
    }
    positions_ = std::make_unique<DeviceBuffer>(kTokens * 4);
    positions_->upload(positions);
    slots_ = std::make_unique<DeviceBuffer>(kTokens * 4);
    slots_->upload(slots);
    std::vector<float> inv_freq(kHeadDim / 2);
    for (int i = 0; i < kHeadDim / 2; ++i) inv_freq[i] = std::pow(1000000.0f, -2.0f * i / kHeadDim);
    inv_freq_ = std::make_unique<DeviceBuffer>(inv_freq.size() * 4);
    inv_freq_->upload(inv_freq);
    q_norm_ = std::make_unique<DeviceBuffer>(kHeadDim * 4);
    q_norm_->upload(gpu_test::random_f32(kHeadDim, rng, 0.5f, 1.5f));
    k_norm_ = std::make_unique<DeviceBuffer>(kHeadDim * 4);
    k_norm_->upload(gpu_test::random_f32(kHeadDim, rng, 0.5f, 1.5f));
    partials_ = std::make_unique<DeviceBuffer>(cuda::kGemvWorkspaceFloats * 4);
    counters_ = std::make_unique<DeviceBuffer>(cuda::kGemvCounterCount * 4);
    LATHE_CUDA_CHECK(cudaMemset(counters_->get(), 0, cuda::kGemvCounterCount * 4));
    ws_ = {partials_->as<float>(), cuda::kGemvWorkspaceFloats, counters_->as<int>(), cuda::kGemvCounterCount};
  }

  size_t cache_bytes() const {
    return static_cast<size_t>(kCacheBlocks) * GetParam().kv_heads * kBlockSize * kHeadDim *
           (GetParam().fp8_cache ? 1 : 2);
  }

  GemvProblem problem(int first, int rows, void* y) const {
    const RopeCase& c = GetParam();
    GemvProblem p;
    p.w = w_->get();
    p.weight = c.fp8_weights ? GemvWeight::kFp8E4M3 : GemvWeight::kBf16;
    p.n = n_;
    p.k = c.k;
    p.scale_kind = c.fp8_weights ? GemvScale::kBlock128 : GemvScale::kNone;
    p.scale = c.fp8_weights ? scale_->as<float>() : nullptr;
    p.x = x_->as<uint16_t>() + static_cast<int64_t>(first) * c.k;
    p.x_stride = c.k;
    p.y = static_cast<uint16_t*>(y) + static_cast<int64_t>(first) * n_;
    p.y_stride = n_;
    p.m = rows;
    return p;
  }

  // Everything but q, k, v, their strides and the token count, for the tokens from `first`.
  cuda::QkNormRopeArgs rope_args(int first, void* cache_k, void* cache_v) const {
    const RopeCase& c = GetParam();
    cuda::QkNormRopeArgs a;
    a.positions = positions_->as<int32_t>() + first;
    a.slot_mapping = slots_->as<int32_t>() + first;
    a.q_norm = q_norm_->as<float>();
    a.k_norm = k_norm_->as<float>();
    a.eps = 1e-6f;
    a.inv_freq = inv_freq_->as<float>();
    a.rotary_dim = kHeadDim;
    a.num_heads = c.heads;
    a.num_kv_heads = c.kv_heads;
    a.head_dim = kHeadDim;
    a.cache_k = cache_k;
    a.cache_v = cache_v;
    a.cache_fp8 = c.fp8_cache;
    a.k_scale = 0.5f;
    a.v_scale = 0.25f;
    a.block_size = kBlockSize;
    return a;
  }

  // The launches of the dispatch route for m rows: (tier, first row, rows).
  static std::vector<std::array<int, 3>> route_launches(int m) {
    const ops::LinearKernels avail{true, true, true, true};
    const ops::LinearRoute route = ops::choose_linear_arm(
        ops::Phase::kDecode, m, ops::LinearWeightKind::kFp8Block128, avail, ops::LinearLevers{});
    switch (route.arm) {
      case ops::LinearArm::kGemv:
        return {{1, 0, m}};
      case ops::LinearArm::kGemvBatch4:
        return {{4, 0, m}};
      case ops::LinearArm::kGemvBatch16:
        return {{16, 0, m}};
      default: {
        const int first = static_cast<int>(route.first_half);
        return {{16, 0, first}, {16, first, m - first}};
      }
    }
  }

  int64_t n_ = 0;
  std::unique_ptr<DeviceBuffer> w_, scale_, x_, positions_, slots_, inv_freq_, q_norm_, k_norm_, partials_,
      counters_;
  cuda::GemvWorkspace ws_;
};

TEST_P(GemvRopeTest, FusedEpilogueGivesTheTwoLaunchesBytes) {
  const RopeCase& c = GetParam();
  const size_t row_bytes = static_cast<size_t>(n_) * 2;
  DeviceBuffer y_ref(kTokens * row_bytes), y_fused(kTokens * row_bytes);
  DeviceBuffer k_ref(cache_bytes()), v_ref(cache_bytes()), k_fused(cache_bytes()), v_fused(cache_bytes());
  for (int m = 1; m <= kTokens; ++m) {
    for (DeviceBuffer* b : {&y_ref, &y_fused, &k_ref, &v_ref, &k_fused, &v_fused}) b->poison();
    for (const auto& [tier, first, rows] : route_launches(m)) {
      cuda::gemv_launch(tier, problem(first, rows, y_ref.get()), ws_, nullptr);
      const cuda::QkNormRopeArgs fused = rope_args(first, k_fused.get(), v_fused.get());
      ASSERT_EQ(cuda::gemv_rope_unsupported_reason(tier, problem(first, rows, y_fused.get()), fused), "")
          << "m=" << m << " tier " << tier;
      cuda::gemv_launch(tier, problem(first, rows, y_fused.get()), ws_, nullptr, {}, &fused);
    }
    cuda::QkNormRopeArgs ref = rope_args(0, k_ref.get(), v_ref.get());
    auto* y = y_ref.as<uint16_t>();
    ref.tokens = m;
    ref.q = y;
    ref.k = y + static_cast<int64_t>(c.heads) * kHeadDim;
    ref.v = y + static_cast<int64_t>(c.heads + c.kv_heads) * kHeadDim;
    ref.q_stride = ref.k_stride = ref.v_stride = n_;
    cuda::launch_qk_norm_rope_kv_write(ref, nullptr);
    const auto a = y_ref.download<uint8_t>(m * row_bytes), b = y_fused.download<uint8_t>(m * row_bytes);
    for (int r = 0; r < m; ++r) {
      ASSERT_EQ(std::memcmp(a.data() + r * row_bytes, b.data() + r * row_bytes, row_bytes), 0)
          << "q|k|v row " << r << " of m=" << m;
    }
    EXPECT_EQ(k_ref.download<uint8_t>(cache_bytes()), k_fused.download<uint8_t>(cache_bytes()))
        << "k cache, m=" << m;
    EXPECT_EQ(v_ref.download<uint8_t>(cache_bytes()), v_fused.download<uint8_t>(cache_bytes()))
        << "v cache, m=" << m;
  }
}

TEST_P(GemvRopeTest, OnlyHeadSizedBlocksOfTheRingFuse) {
  DeviceBuffer y(kTokens * n_ * 2);
  cuda::QkNormRopeArgs a = rope_args(0, nullptr, nullptr);
  EXPECT_EQ(cuda::gemv_rope_unsupported_reason(1, problem(0, 1, y.get()), a), "");
  a.head_dim = 64;
  EXPECT_NE(cuda::gemv_rope_unsupported_reason(1, problem(0, 1, y.get()), a), "");
  a = rope_args(0, nullptr, nullptr);
  a.num_kv_heads += 1;  // n no longer (heads + 2 kv heads) x 128
  EXPECT_NE(cuda::gemv_rope_unsupported_reason(4, problem(0, 4, y.get()), a), "");
  GemvProblem f32 = problem(0, 1, y.get());
  f32.y_f32 = true;
  EXPECT_NE(cuda::gemv_rope_unsupported_reason(1, f32, rope_args(0, nullptr, nullptr)), "");
}

std::string rope_case_name(const testing::TestParamInfo<RopeCase>& param_info) {
  const RopeCase& c = param_info.param;
  return fmt::format("h{}kv{}k{}_{}w_{}kv", c.heads, c.kv_heads, c.k, c.fp8_weights ? "fp8" : "bf16",
                     c.fp8_cache ? "fp8" : "bf16");
}

// {heads, kv heads, k, fp8 weights, fp8 cache}: a small split-K shape, and the Qwen3-8B q|k|v.
INSTANTIATE_TEST_SUITE_P(Shapes, GemvRopeTest,
                         testing::Values(RopeCase{4, 2, 1024, true, false}, RopeCase{4, 2, 1024, false, true},
                                         RopeCase{32, 8, 4096, true, false},
                                         RopeCase{32, 8, 4096, true, true},
                                         RopeCase{32, 8, 4096, false, false}),
                         rope_case_name);

}  // namespace
}  // namespace lathe
