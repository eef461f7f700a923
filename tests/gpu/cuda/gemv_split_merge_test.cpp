// The o projection's GEMV merging a decode step's split-K attention records itself
// (GemvProblem::merge; CudaBackend::attention_linear_add_rms_norm_linear) against the launches it
// replaces: the split kernel + its reduce, then the plain GEMV tier. Both runs use the same split
// kernel on the same paged cache; the merged run must leave the attention output unwritten and
// give the same output bytes, on every register-ring grid the merge is built for, at tiers 1 and 4
// with m = 1..4, for sliced and unsliced records and head dims 64, 128 and 256.
#include <cuda_runtime.h>
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "backends/cuda/check.h"
#include "backends/cuda/gemv.h"
#include "backends/cuda/paged_attention.h"
#include "core/error.h"
#include "gpu_test_util.h"

namespace lathe {
namespace {

using gpu_test::DeviceBuffer;

struct MergeCase {
  int num_heads, num_kv_heads, head_dim;
  int64_t n;  // o projection rows
  bool fp8;
  int splits, slices;
};

constexpr int kSeqs = 4;
constexpr int kBlockSize = 16;
// Lengths of the four sequences: long ones, one shorter than a split (empty splits), one token.
constexpr int kLens[kSeqs] = {4099, 700, 37, 1};

class GemvSplitMergeTest : public testing::TestWithParam<MergeCase> {
 protected:
  void SetUp() override {
    const MergeCase& c = GetParam();
    std::mt19937 rng(static_cast<unsigned>(c.num_heads * 131 + c.head_dim * 7 + c.slices));
    k_ = static_cast<int64_t>(c.num_heads) * c.head_dim;
    // Paged cache: each sequence's blocks, shuffled across the pool.
    std::vector<int> first_block(kSeqs + 1, 0);
    for (int s = 0; s < kSeqs; ++s) first_block[s + 1] = first_block[s] + (kLens[s] + kBlockSize - 1) / kBlockSize;
    num_blocks_ = first_block[kSeqs];
    max_blocks_ = 0;
    for (int s = 0; s < kSeqs; ++s) max_blocks_ = std::max(max_blocks_, first_block[s + 1] - first_block[s]);
    std::vector<int32_t> pool(static_cast<size_t>(num_blocks_));
    std::iota(pool.begin(), pool.end(), 0);
    std::shuffle(pool.begin(), pool.end(), rng);
    std::vector<int32_t> tables(static_cast<size_t>(kSeqs * max_blocks_), 0);
    for (int s = 0; s < kSeqs; ++s)
      for (int b = first_block[s]; b < first_block[s + 1]; ++b)
        tables[static_cast<size_t>(s * max_blocks_ + b - first_block[s])] = pool[static_cast<size_t>(b)];
    const size_t cache_elems = static_cast<size_t>(num_blocks_) * c.num_kv_heads * kBlockSize * c.head_dim;
    k_cache_ = upload(gpu_test::random_bf16(cache_elems, rng));
    v_cache_ = upload(gpu_test::random_bf16(cache_elems, rng));
    tables_ = upload(tables);
    lens_ = upload(std::vector<int32_t>(kLens, kLens + kSeqs));
    q_ = upload(gpu_test::random_bf16(static_cast<size_t>(kSeqs * k_), rng, 2.0f));
    records_ = std::make_unique<DeviceBuffer>(static_cast<size_t>(kSeqs) * c.num_heads * c.splits * c.slices *
                                              (c.head_dim + 2) * 4);
    attn_ = std::make_unique<DeviceBuffer>(static_cast<size_t>(kSeqs * k_) * 2);
    const size_t w_count = static_cast<size_t>(c.n * k_);
    if (c.fp8) {
      w_ = upload(gpu_test::random_fp8(w_count, rng));
      scale_ = upload(gpu_test::random_f32(static_cast<size_t>((c.n + 127) / 128 * (k_ / 128)), rng, 0.25f, 2.0f));
    } else {
      w_ = upload(gpu_test::random_bf16(w_count, rng, 0.5f));
    }
    partials_ = std::make_unique<DeviceBuffer>(cuda::kGemvWorkspaceFloats * 4);
    counters_ = std::make_unique<DeviceBuffer>(cuda::kGemvCounterCount * 4);
    LATHE_CUDA_CHECK(cudaMemset(counters_->get(), 0, cuda::kGemvCounterCount * 4));
    ws_ = {partials_->as<float>(), cuda::kGemvWorkspaceFloats, counters_->as<int>(), cuda::kGemvCounterCount};
  }

  template <typename T>
  static std::unique_ptr<DeviceBuffer> upload(const std::vector<T>& host) {
    auto buffer = std::make_unique<DeviceBuffer>(host.size() * sizeof(T));
    buffer->upload(host);
    return buffer;
  }

  // The split kernel over sequences [0, m): with its reduce into attn_ (deferred null), or leaving
  // its records for a merge.
  void attention(int m, cuda::SplitRecords* deferred) {
    const MergeCase& c = GetParam();
    cuda::PagedKv kv;
    kv.k = k_cache_->get();
    kv.v = v_cache_->get();
    kv.num_kv_heads = c.num_kv_heads;
    kv.block_size = kBlockSize;
    kv.head_dim = c.head_dim;
    kv.block_tables = tables_->as<int32_t>();
    kv.max_blocks_per_seq = max_blocks_;
    kv.context_lens = lens_->as<int32_t>();
    kv.num_blocks = num_blocks_;
    cuda::AttentionRows rows;
    rows.q = q_->get();
    rows.q_stride = k_;
    rows.out = attn_->get();
    rows.out_stride = k_;
    rows.num_heads = c.num_heads;
    rows.num_seqs = m;
    rows.scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim));
    const cuda::SplitGeometry geometry{c.splits, 128, c.slices, 256};
    ASSERT_EQ(cuda::launch_paged_decode_splitk(rows, kv, geometry, c.num_heads / c.num_kv_heads,
                                               records_->as<float>(), nullptr, deferred),
              cudaSuccess);
  }

  cuda::GemvProblem problem(int m, void* y) const {
    const MergeCase& c = GetParam();
    cuda::GemvProblem p;
    p.w = w_->get();
    p.weight = c.fp8 ? cuda::GemvWeight::kFp8E4M3 : cuda::GemvWeight::kBf16;
    p.n = c.n;
    p.k = k_;
    p.scale_kind = c.fp8 ? cuda::GemvScale::kBlock128 : cuda::GemvScale::kNone;
    p.scale = c.fp8 ? scale_->as<float>() : nullptr;
    p.x = attn_->get();
    p.x_stride = k_;
    p.y = y;
    p.y_stride = c.n;
    p.m = m;
    return p;
  }

  int64_t k_ = 0;
  int num_blocks_ = 0, max_blocks_ = 0;
  std::unique_ptr<DeviceBuffer> k_cache_, v_cache_, tables_, lens_, q_, records_, attn_, w_, scale_, partials_,
      counters_;
  cuda::GemvWorkspace ws_;
};

TEST_P(GemvSplitMergeTest, MergedInputIsByteEqualToReduceThenGemv) {
  const MergeCase& c = GetParam();
  const size_t row_bytes = static_cast<size_t>(c.n) * 2;
  const int saved_variant = cuda::splitk_kernel_variant();
  // 16: the process default (13 / 15 by grid width); 21: the single-sequence serve's geometry.
  for (const int split_variant : {16, 21}) {
    ASSERT_TRUE(cuda::set_splitk_kernel_variant(split_variant));
    for (const char* name : {"auto", "ring:g16", "ring:b3:g16", "ring:k8:g16"}) {
      const cuda::GemvVariant v = cuda::gemv_variant_from_name(name);
      for (const auto& [tier, m] : {std::pair{1, 1}, {4, 1}, {4, 2}, {4, 3}, {4, 4}}) {
        const std::string where = fmt::format("split variant {} gemv {} tier {} m={}", split_variant, name, tier, m);
        attention(m, nullptr);
        DeviceBuffer y_ref(m * row_bytes), y(m * row_bytes);
        y_ref.poison();
        cuda::gemv_launch(tier, problem(m, y_ref.get()), ws_, nullptr, v);
        const auto want = y_ref.download<uint8_t>(m * row_bytes);

        attn_->poison();
        cuda::SplitRecords records;
        attention(m, &records);
        ASSERT_EQ(records.records, records_->as<float>()) << where;
        ASSERT_EQ(records.num_seqs, m) << where;
        cuda::GemvProblem p = problem(m, y.get());
        p.merge = records;
        ASSERT_EQ(cuda::gemv_unsupported_reason(tier, p, ws_), "") << where;
        y.poison();
        cuda::gemv_launch(tier, p, ws_, nullptr, v);
        ASSERT_EQ(y.download<uint8_t>(m * row_bytes), want) << where;
        // The deferred launch wrote no attention output (no reduce ran).
        const auto attn = attn_->download<uint16_t>(static_cast<size_t>(m * k_));
        ASSERT_TRUE(std::all_of(attn.begin(), attn.end(), [](uint16_t b) { return b == 0xffff; })) << where;
      }
    }
  }
  ASSERT_TRUE(cuda::set_splitk_kernel_variant(saved_variant));
}

// What the merged input refuses, with the reason (the backend then launches the reduce).
TEST_P(GemvSplitMergeTest, RefusesWhatItDoesNotBuild) {
  const MergeCase& c = GetParam();
  cuda::SplitRecords records;
  attention(kSeqs, &records);
  DeviceBuffer y(static_cast<size_t>(kSeqs * c.n) * 2);
  cuda::GemvProblem p = problem(1, y.get());
  p.merge = records;
  EXPECT_EQ(cuda::gemv_unsupported_reason(1, p, ws_), "");
  EXPECT_NE(cuda::gemv_unsupported_reason(16, p, ws_), "") << "only tiers 1 and 4 merge";
  const std::vector<float> ones(static_cast<size_t>(k_), 1.0f);
  DeviceBuffer norm_weight(ones.size() * 4);
  norm_weight.upload(ones);
  cuda::GemvProblem with_norm = p;
  with_norm.norm = {norm_weight.as<float>(), 1e-6f};
  EXPECT_NE(cuda::gemv_unsupported_reason(1, with_norm, ws_), "") << "one input form";
  cuda::GemvProblem wrong_heads = p;
  wrong_heads.merge.num_heads = c.num_heads / 2;
  EXPECT_NE(cuda::gemv_unsupported_reason(1, wrong_heads, ws_), "") << "k = num_heads * head_dim";
  cuda::GemvProblem more_rows = problem(4, y.get());
  more_rows.merge = records;
  more_rows.merge.num_seqs = 3;
  EXPECT_NE(cuda::gemv_unsupported_reason(4, more_rows, ws_), "") << "a sequence per row";
  for (const char* name : {"ring", "ringbal", "stream", "auto:wgn"}) {
    EXPECT_THROW(cuda::gemv_launch(1, p, ws_, nullptr, cuda::gemv_variant_from_name(name)), Error) << name;
  }
}

std::string merge_case_name(const testing::TestParamInfo<MergeCase>& param) {
  const MergeCase& c = param.param;
  return fmt::format("h{}_kv{}_hd{}_n{}_{}_s{}x{}", c.num_heads, c.num_kv_heads, c.head_dim, c.n,
                     c.fp8 ? "fp8" : "bf16", c.splits, c.slices);
}

// Qwen3-8B's o projection with its split count (9, unsliced), Qwen3-32B's with the single-sequence
// serve's slices (5 x 3), a head-dim-256 shape (24/4/256, 11 x 3) and a head-dim-64 one (16 splits).
INSTANTIATE_TEST_SUITE_P(Shapes, GemvSplitMergeTest,
                         testing::Values(MergeCase{32, 8, 128, 4096, true, 9, 1},
                                         MergeCase{64, 8, 128, 5120, true, 5, 3},
                                         MergeCase{24, 4, 256, 1024, false, 11, 3},
                                         MergeCase{16, 8, 64, 512, false, 16, 1}),
                         merge_case_name);

}  // namespace
}  // namespace lathe
