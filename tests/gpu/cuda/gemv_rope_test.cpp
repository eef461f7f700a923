// The q|k|v GEMV tiers' QK-norm / RoPE / KV write epilogue (GemvProblem::rope,
// CudaBackend::linear_qk_norm_rope_kv_write) against the launches it replaces: the q|k|v GEMV into
// a bf16 [m, (heads + 2 kv heads) * 128] output followed by launch_qk_norm_rope_kv_write. The
// q|k|v rows and every cache byte must be equal, on every one-CTA-per-block grid the register ring
// builds (the direct store, the split-K sum in both its forms, three CTAs per SM, the warpgroup-MMA
// tiers), at every tier and several widths (the two halves of 17-32 rows included), for block-128
// FP8 and BF16 weights, BF16 and FP8 caches, a token without a cache slot and positions past 32k,
// and with the fused RMS norm on the input (tiers 1 and 4). Plus what the epilogue refuses.
#include <cuda_runtime.h>
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "backends/cuda/check.h"
#include "backends/cuda/device.h"
#include "backends/cuda/elementwise.h"
#include "backends/cuda/gemv.h"
#include "backends/cuda/rope_kv.h"
#include "core/error.h"
#include "gemv_test_workspace.h"
#include "gpu_test_util.h"

namespace lathe {
namespace {

using gpu_test::DeviceBuffer;

constexpr int kHeadDim = 128;
constexpr int kTokens = 32;
constexpr int kBlockSize = 16;
constexpr int kCacheBlocks = 8;  // 128 slots
constexpr float kEps = 1e-6f;

struct RopeCase {
  int heads, kv_heads;
  int64_t k;
  bool fp8_weights, fp8_cache;
};

class GemvRopeTest : public testing::TestWithParam<RopeCase> {
 protected:
  void SetUp() override {
    const RopeCase& c = GetParam();
    n_ = int64_t{c.heads + 2 * c.kv_heads} * kHeadDim;
    std::mt19937 rng(static_cast<unsigned>(1234 + c.heads * 31 + c.k));
    const size_t count = static_cast<size_t>(n_ * c.k);
    w_ = std::make_unique<DeviceBuffer>(count * (c.fp8_weights ? 1 : 2));
    if (c.fp8_weights) {
      w_->upload(gpu_test::random_fp8(count, rng));
      const size_t scales = static_cast<size_t>((n_ / 128) * (c.k / 128));
      scale_ = std::make_unique<DeviceBuffer>(scales * 4);
      scale_->upload(gpu_test::random_f32(scales, rng, 0.01f, 0.05f));
    } else {
      w_->upload(gpu_test::random_bf16(count, rng, 0.05f));
    }
    x_ = std::make_unique<DeviceBuffer>(static_cast<size_t>(kTokens * c.k) * 2);
    x_->upload(gpu_test::random_bf16(static_cast<size_t>(kTokens * c.k), rng));
    normed_ = std::make_unique<DeviceBuffer>(static_cast<size_t>(kTokens * c.k) * 2);
    norm_weight_ = std::make_unique<DeviceBuffer>(static_cast<size_t>(c.k) * 4);
    norm_weight_->upload(gpu_test::random_f32(static_cast<size_t>(c.k), rng, 0.5f, 1.5f));
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
    workspace_ = std::make_unique<gpu_test::GemvTestWorkspace>();
    ws_ = workspace_->get();
  }

  size_t cache_bytes() const {
    return static_cast<size_t>(kCacheBlocks) * GetParam().kv_heads * kBlockSize * kHeadDim *
           (GetParam().fp8_cache ? 1 : 2);
  }

  // The plain q|k|v GEMV of rows [first, first + rows) of x into y's same rows.
  cuda::GemvProblem problem(int first, int rows, const void* x, void* y) const {
    const RopeCase& c = GetParam();
    cuda::GemvProblem p;
    p.w = w_->get();
    p.weight = c.fp8_weights ? cuda::GemvWeight::kFp8E4M3 : cuda::GemvWeight::kBf16;
    p.n = n_;
    p.k = c.k;
    p.scale_kind = c.fp8_weights ? cuda::GemvScale::kBlock128 : cuda::GemvScale::kNone;
    p.scale = c.fp8_weights ? scale_->as<float>() : nullptr;
    p.x = static_cast<const uint16_t*>(x) + int64_t{first} * c.k;
    p.x_stride = c.k;
    p.y = static_cast<uint16_t*>(y) + int64_t{first} * n_;
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
    a.eps = kEps;
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

  // launch_qk_norm_rope_kv_write over rows [0, m) of y (a q|k|v output) into the caches.
  void rope_kernel(int m, void* y, void* cache_k, void* cache_v) const {
    const RopeCase& c = GetParam();
    cuda::QkNormRopeArgs a = rope_args(0, cache_k, cache_v);
    auto* rows = static_cast<uint16_t*>(y);
    a.tokens = m;
    a.q = rows;
    a.k = rows + int64_t{c.heads} * kHeadDim;
    a.v = rows + int64_t{c.heads + c.kv_heads} * kHeadDim;
    a.q_stride = a.k_stride = a.v_stride = n_;
    cuda::launch_qk_norm_rope_kv_write(a, nullptr);
  }

  void norm_rows(int m) const {
    const int64_t k = GetParam().k;
    cuda::launch_rms_norm(x_->get(), cuda::RowType::kBf16, k, m, k, norm_weight_->as<float>(), kEps,
                          normed_->get(), cuda::RowType::kBf16, k, nullptr);
  }

  bool runs_here(const char* name) const {
    const bool fp8 = GetParam().fp8_weights;
    const cuda::GemvVariant v = cuda::gemv_variant_from_name(name);
    return cuda::gemv_resolve_variant(v, fp8, n_, GetParam().k).kernel == cuda::GemvKernel::kRegisterRing &&
           cuda::gemv_variant_unsupported_reason(fp8, n_, GetParam().k, v).empty();
  }

  // Asserts y's first m rows and both caches are byte-equal between the two sides.
  void expect_equal(const DeviceBuffer& y_want, const DeviceBuffer& y_got, const DeviceBuffer& k_want,
                    const DeviceBuffer& k_got, const DeviceBuffer& v_want, const DeviceBuffer& v_got, int m,
                    const std::string& label) const {
    const size_t row_bytes = static_cast<size_t>(n_) * 2;
    const auto a = y_want.download<uint8_t>(m * row_bytes), b = y_got.download<uint8_t>(m * row_bytes);
    for (int r = 0; r < m; ++r) {
      ASSERT_EQ(std::memcmp(a.data() + r * row_bytes, b.data() + r * row_bytes, row_bytes), 0)
          << label << ": q|k|v row " << r;
    }
    EXPECT_EQ(k_want.download<uint8_t>(cache_bytes()), k_got.download<uint8_t>(cache_bytes()))
        << label << ": k cache";
    EXPECT_EQ(v_want.download<uint8_t>(cache_bytes()), v_got.download<uint8_t>(cache_bytes()))
        << label << ": v cache";
  }

  int64_t n_ = 0;
  std::unique_ptr<DeviceBuffer> w_, scale_, x_, normed_, norm_weight_, positions_, slots_, inv_freq_, q_norm_,
      k_norm_;
  // Every launch leaves the register ring's split slots empty (the next one's sum relies on it).
  void TearDown() override { EXPECT_EQ(workspace_->full_split_slots(), 0u) << "split slots left full"; }
  std::unique_ptr<gpu_test::GemvTestWorkspace> workspace_;
  cuda::GemvWorkspace ws_;
};

// The register-ring grids the epilogue is built for (the two-CTA ring auto takes on q|k|v shapes in
// tiers 1 and 4, with mma.sync or ':wgn'): auto's K split, and the K split forced to 1 (the direct
// store), 3 and 8.
// In the 16-row tier `auto` takes ':wg' for fp8 weights, which the epilogue is not built for: there
// the launch must be refused (the backend then runs the GEMV and the rope kernel), and the ring:
// variants cover the 16-row epilogue.
constexpr const char* kVariants[] = {"auto", "auto:wgn", "ring:g16", "ring:k1:g16", "ring:k3:g16", "ring:k8:g16"};

TEST_P(GemvRopeTest, EpilogueIsByteEqualToGemvThenRopeKernel) {
  const size_t y_bytes = static_cast<size_t>(kTokens * n_) * 2;
  DeviceBuffer y_want(y_bytes), y_got(y_bytes);
  DeviceBuffer k_want(cache_bytes()), v_want(cache_bytes()), k_got(cache_bytes()), v_got(cache_bytes());
  int ran = 0;
  for (const char* name : kVariants) {
    if (!runs_here(name)) continue;
    ++ran;
    const cuda::GemvVariant v = cuda::gemv_variant_from_name(name);
    // (tier, first row, rows) of each launch: the tiers' widths, and 32 rows as the dispatch's two
    // 16-row halves (the second half's tokens start at row 16).
    for (const auto& launches : std::vector<std::vector<std::array<int, 3>>>{{{1, 0, 1}},
                                                                             {{4, 0, 2}},
                                                                             {{4, 0, 4}},
                                                                             {{16, 0, 7}},
                                                                             {{16, 0, 16}},
                                                                             {{16, 0, 16}, {16, 16, 16}}}) {
      for (DeviceBuffer* b : {&y_want, &y_got, &k_want, &v_want, &k_got, &v_got}) b->poison();
      int m = 0;
      const int first_tier = launches.front()[0];
      // Refused where the device runs ':wg' (sm_90a); elsewhere it runs as mma.sync, checked below.
      if (first_tier == 16 && cuda::device_has_wgmma() &&
          cuda::gemv_resolve_variant(v, GetParam().fp8_weights, n_, GetParam().k).wgmma) {
        const cuda::QkNormRopeArgs args = rope_args(0, k_got.get(), v_got.get());
        cuda::GemvProblem p = problem(0, launches.front()[2], x_->get(), y_got.get());
        p.rope = &args;
        EXPECT_NE(cuda::gemv_unsupported_reason(16, p, ws_, v), "") << name << ": ':wg' in the 16-row tier";
        EXPECT_THROW(cuda::gemv_launch(16, p, ws_, nullptr, v), Error) << name;
        continue;
      }
      for (const auto& [tier, first, rows] : launches) {
        cuda::gemv_launch(tier, problem(first, rows, x_->get(), y_want.get()), ws_, nullptr, v);
        const cuda::QkNormRopeArgs args = rope_args(first, k_got.get(), v_got.get());
        cuda::GemvProblem p = problem(first, rows, x_->get(), y_got.get());
        p.rope = &args;
        ASSERT_EQ(cuda::gemv_unsupported_reason(tier, p, ws_, v), "") << name << " tier " << tier;
        cuda::gemv_launch(tier, p, ws_, nullptr, v);
        m = first + rows;
      }
      rope_kernel(m, y_want.get(), k_want.get(), v_want.get());
      expect_equal(y_want, y_got, k_want, k_got, v_want, v_got, m,
                   fmt::format("{} m={} launches={}", name, m, launches.size()));
    }
  }
  EXPECT_GT(ran, 0) << "no variant of the list runs this shape";
}

TEST_P(GemvRopeTest, EpilogueAfterFusedNormIsByteEqualToNormGemvRopeKernel) {
  const size_t y_bytes = static_cast<size_t>(kTokens * n_) * 2;
  DeviceBuffer y_want(y_bytes), y_got(y_bytes);
  DeviceBuffer k_want(cache_bytes()), v_want(cache_bytes()), k_got(cache_bytes()), v_got(cache_bytes());
  for (const char* name : {"auto", "auto:wgn", "ring:k1:g16", "ring:k3:g16"}) {
    if (!runs_here(name)) continue;
    const cuda::GemvVariant v = cuda::gemv_variant_from_name(name);
    for (const auto& [tier, m] : {std::pair{1, 1}, {4, 3}, {4, 4}}) {
      for (DeviceBuffer* b : {&y_want, &y_got, &k_want, &v_want, &k_got, &v_got}) b->poison();
      norm_rows(m);
      cuda::gemv_launch(tier, problem(0, m, normed_->get(), y_want.get()), ws_, nullptr, v);
      rope_kernel(m, y_want.get(), k_want.get(), v_want.get());
      const cuda::QkNormRopeArgs args = rope_args(0, k_got.get(), v_got.get());
      cuda::GemvProblem p = problem(0, m, x_->get(), y_got.get());
      p.norm = {norm_weight_->as<float>(), kEps};
      p.rope = &args;
      cuda::gemv_launch(tier, p, ws_, nullptr, v);
      expect_equal(y_want, y_got, k_want, k_got, v_want, v_got, m,
                   fmt::format("{} tier {} m={}", name, tier, m));
    }
  }
}

// What the epilogue refuses, with a reason (the backend then runs the GEMV and the rope kernel).
TEST_P(GemvRopeTest, RefusesWhatItDoesNotBuild) {
  DeviceBuffer y(static_cast<size_t>(kTokens * n_) * 4), cache(cache_bytes());
  const cuda::QkNormRopeArgs args = rope_args(0, cache.get(), cache.get());
  cuda::GemvProblem p = problem(0, 1, x_->get(), y.get());
  p.rope = &args;
  EXPECT_EQ(cuda::gemv_unsupported_reason(1, p, ws_), "");
  cuda::QkNormRopeArgs hd64 = args;
  hd64.head_dim = 64;
  cuda::GemvProblem bad = p;
  bad.rope = &hd64;
  EXPECT_NE(cuda::gemv_unsupported_reason(1, bad, ws_), "") << "a head must be one 128-row block";
  cuda::QkNormRopeArgs more_kv = args;
  more_kv.num_kv_heads += 1;  // n is no longer (heads + 2 kv heads) x 128
  bad.rope = &more_kv;
  EXPECT_NE(cuda::gemv_unsupported_reason(4, bad, ws_), "");
  cuda::QkNormRopeArgs no_slots = args;
  no_slots.slot_mapping = nullptr;
  bad.rope = &no_slots;
  EXPECT_NE(cuda::gemv_unsupported_reason(1, bad, ws_), "");
  bad = p;
  bad.y_f32 = true;
  EXPECT_NE(cuda::gemv_unsupported_reason(1, bad, ws_), "") << "q|k|v is bf16";
  bad = p;
  bad.y_add = true;
  EXPECT_NE(cuda::gemv_unsupported_reason(1, bad, ws_), "");
  EXPECT_THROW(cuda::gemv_launch(1, p, ws_, nullptr, cuda::gemv_variant_from_name("ringbal")), Error);
  EXPECT_THROW(cuda::gemv_launch(4, p, ws_, nullptr, cuda::gemv_variant_from_name("stream")), Error);
  EXPECT_THROW(cuda::gemv_launch(1, p, ws_, nullptr, cuda::gemv_variant_from_name("ring")), Error)
      << "tiers 1 and 4 build it with 16 steps of x a buffer only";
  EXPECT_THROW(cuda::gemv_launch(1, p, ws_, nullptr, cuda::gemv_variant_from_name("ring:b3:g16")), Error)
      << "not at three CTAs per SM";
  EXPECT_THROW(cuda::gemv_launch(4, p, ws_, nullptr, cuda::gemv_variant_from_name("ring:b3:wgn")), Error)
      << "nor as warpgroup MMAs at three CTAs per SM";
}

std::string rope_case_name(const testing::TestParamInfo<RopeCase>& param_info) {
  const RopeCase& c = param_info.param;
  return fmt::format("h{}kv{}k{}_{}w_{}kv", c.heads, c.kv_heads, c.k, c.fp8_weights ? "fp8" : "bf16",
                     c.fp8_cache ? "fp8" : "bf16");
}

// {heads, kv heads, k, fp8 weights, fp8 cache}: a small shape, Qwen3-8B's q|k|v (FP8 and BF16
// weights, both caches) and Qwen3-32B's.
INSTANTIATE_TEST_SUITE_P(Shapes, GemvRopeTest,
                         testing::Values(RopeCase{4, 2, 1024, true, false}, RopeCase{4, 2, 1024, false, true},
                                         RopeCase{32, 8, 4096, true, false},
                                         RopeCase{32, 8, 4096, true, true},
                                         RopeCase{32, 8, 4096, false, false},
                                         RopeCase{64, 8, 5120, true, false}),
                         rope_case_name);

}  // namespace
}  // namespace lathe
