// Paged KV writes and causal paged attention over a batch mixing prefill chunks (with and
// without a cached prefix) and decode rows, against a double-precision softmax(q k^T) v.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
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

struct Geometry {
  int32_t num_kv_heads;
  int32_t group;  // num_heads / num_kv_heads
  int32_t head_dim;
  int32_t block_size;
  DType kv_dtype;
};

std::string geometry_name(const Geometry& g) {
  return "kv_heads=" + std::to_string(g.num_kv_heads) + " group=" + std::to_string(g.group) +
         " hd=" + std::to_string(g.head_dim) + " bs=" + std::to_string(g.block_size) + " kv=" +
         std::string(dtype_name(g.kv_dtype));
}

// One sequence of the test batch: `prefix` tokens cached by an earlier step, `chunk` rows in
// the step under test (chunk 1 after a prefix is a decode row).
struct SeqPlan {
  int32_t prefix;
  int32_t chunk;
};

// What the cache holds for value x: the stored type's rounding (FP8: fp8(x / s) * s).
double cached_value(float x, DType dtype, float scale) {
  switch (dtype) {
    case DType::kBF16:
      return round_bf16(x);
    case DType::kF8E4M3:
      return static_cast<double>(fp8_e4m3_to_float(float_to_fp8_e4m3(x / scale))) * scale;
    default:
      return x;
  }
}

class AttentionHarness {
 public:
  AttentionHarness(const Geometry& g, std::vector<SeqPlan> plans, uint64_t seed, DType act_dtype = DType::kF32)
      : g_(g), plans_(std::move(plans)), rng_(seed), backend_(ops::make_cpu_backend()), act_dtype_(act_dtype) {
    shape_.num_kv_heads = g.num_kv_heads;
    shape_.num_heads = g.num_kv_heads * g.group;
    shape_.head_dim = g.head_dim;
    shape_.scale = 1.0f / std::sqrt(static_cast<float>(g.head_dim));
    cache_shape_.block_size = g.block_size;
    cache_shape_.num_kv_heads = g.num_kv_heads;
    cache_shape_.head_dim = g.head_dim;
    cache_shape_.dtype = g.kv_dtype;
    // Blocks for every sequence, handed out in a shuffled order so tables are not contiguous.
    int32_t blocks_needed = 0;
    max_blocks_ = 0;
    for (const SeqPlan& p : plans_) {
      const int32_t blocks = (p.prefix + p.chunk + g.block_size - 1) / g.block_size;
      blocks_needed += blocks;
      max_blocks_ = std::max(max_blocks_, blocks);
    }
    cache_shape_.num_blocks = blocks_needed + 3;
    std::vector<int32_t> ids(static_cast<size_t>(cache_shape_.num_blocks));
    std::iota(ids.begin(), ids.end(), 0);
    std::shuffle(ids.begin(), ids.end(), rng_.engine());
    size_t next = 0;
    for (const SeqPlan& p : plans_) {
      std::vector<int32_t> table(static_cast<size_t>(max_blocks_), 0);
      const int32_t blocks = (p.prefix + p.chunk + g.block_size - 1) / g.block_size;
      for (int32_t b = 0; b < blocks; ++b) table[static_cast<size_t>(b)] = ids[next++];
      tables_.push_back(table);
    }
    const size_t bytes = static_cast<size_t>(cache_shape_.elements_per_layer()) * dtype_size(g.kv_dtype);
    k_cache_.assign(bytes, 0);
    v_cache_.assign(bytes, 0);
    layer_.k = k_cache_.data();
    layer_.v = v_cache_.data();
    if (g.kv_dtype == DType::kF8E4M3) {
      layer_.k_scale = 0.0213f;  // |k| up to ~4.5 maps to ~211 of fp8's 448
      layer_.v_scale = 0.0177f;
    }
    const int64_t kv_cols = int64_t{g.num_kv_heads} * g.head_dim;
    for (const SeqPlan& p : plans_) {
      const size_t n = static_cast<size_t>((p.prefix + p.chunk) * kv_cols);
      keys_.push_back(rng_.normals(n));
      values_.push_back(rng_.normals(n));
      queries_.push_back(rng_.normals(static_cast<size_t>(p.chunk * shape_.num_heads * g.head_dim)));
      // BF16 activations: the reference sees the bf16 values the backend reads.
      if (act_dtype_ == DType::kBF16) queries_.back() = test::from_bf16_bits(test::to_bf16_bits(queries_.back()));
    }
  }

  // Writes every sequence's cached prefix through the backend (an earlier step), then runs the
  // step under test: the chunk rows' KV writes followed by attention. Returns out [T, nH*hd].
  std::vector<float> run() {
    write_step(/*prefix=*/true);
    const ops::DeviceBatch device = write_step(/*prefix=*/false);
    std::vector<float> q;
    for (const auto& rows : queries_) q.insert(q.end(), rows.begin(), rows.end());
    const int64_t q_cols = int64_t{shape_.num_heads} * shape_.head_dim;
    std::vector<float> out(q.size(), 0.0f);
    const int64_t tokens = static_cast<int64_t>(q.size()) / q_cols;
    if (act_dtype_ == DType::kBF16) {
      std::vector<uint16_t> q_bits = test::to_bf16_bits(q);
      std::vector<uint16_t> out_bits(q.size());
      backend_->attention(device, test::bf16_act(q_bits, tokens, q_cols), shape_, cache_shape_, layer_,
                          test::bf16_act(out_bits, tokens, q_cols));
      return test::from_bf16_bits(out_bits);
    }
    backend_->attention(device, test::f32_act(q, tokens, q_cols), shape_, cache_shape_, layer_,
                        test::f32_act(out, tokens, q_cols));
    return out;
  }

  // Compares `out` with the double reference; the error of each element is judged against the
  // largest |v| its softmax averages (the output is a convex combination of those values).
  void check(const std::vector<float>& out, double bound, const std::string& label) const {
    ErrorStats stats(label + " " + geometry_name(g_));
    const int64_t hd = g_.head_dim;
    const int64_t kv_cols = int64_t{g_.num_kv_heads} * hd;
    const int64_t q_cols = int64_t{shape_.num_heads} * hd;
    int64_t row = 0;
    for (size_t s = 0; s < plans_.size(); ++s) {
      const SeqPlan& p = plans_[s];
      for (int32_t i = 0; i < p.chunk; ++i, ++row) {
        const int64_t visible = p.prefix + i + 1;
        for (int32_t h = 0; h < shape_.num_heads; ++h) {
          const int64_t kvh = h / g_.group;
          const float* qv = &queries_[s][static_cast<size_t>(i * q_cols + h * hd)];
          std::vector<double> scores(static_cast<size_t>(visible));
          double max_score = -INFINITY;
          for (int64_t t = 0; t < visible; ++t) {
            double dot = 0.0;
            for (int64_t d = 0; d < hd; ++d) {
              dot += static_cast<double>(qv[d]) *
                     cached_value(keys_[s][static_cast<size_t>(t * kv_cols + kvh * hd + d)], g_.kv_dtype, layer_.k_scale);
            }
            scores[static_cast<size_t>(t)] = dot * static_cast<double>(shape_.scale);
            max_score = std::max(max_score, scores[static_cast<size_t>(t)]);
          }
          double total = 0.0;
          for (double& sc : scores) {
            sc = std::exp(sc - max_score);
            total += sc;
          }
          for (int64_t d = 0; d < hd; ++d) {
            double acc = 0.0;
            double vmax = 0.0;
            for (int64_t t = 0; t < visible; ++t) {
              const double v = cached_value(values_[s][static_cast<size_t>(t * kv_cols + kvh * hd + d)], g_.kv_dtype, layer_.v_scale);
              acc += scores[static_cast<size_t>(t)] * v;
              vmax = std::max(vmax, std::fabs(v));
            }
            stats.add(out[static_cast<size_t>(row * q_cols + h * hd + d)], acc / total, vmax);
          }
        }
      }
    }
    stats.expect_within(bound);
  }

  // The bytes every written slot holds must be the stored type's encoding of the input.
  void check_cache_contents() const {
    const int64_t hd = g_.head_dim;
    const int64_t kv_cols = int64_t{g_.num_kv_heads} * hd;
    const size_t esize = dtype_size(g_.kv_dtype);
    for (size_t s = 0; s < plans_.size(); ++s) {
      const int32_t len = plans_[s].prefix + plans_[s].chunk;
      for (int32_t t = 0; t < len; ++t) {
        const int64_t block = tables_[s][static_cast<size_t>(t / g_.block_size)];
        for (int32_t h = 0; h < g_.num_kv_heads; ++h) {
          const int64_t base = cache_shape_.offset(block, h, t % g_.block_size);
          for (int64_t d = 0; d < hd; ++d) {
            const size_t src = static_cast<size_t>(t * kv_cols + h * hd + d);
            const size_t at = static_cast<size_t>(base + d) * esize;
            for (int which = 0; which < 2; ++which) {
              const float x = which == 0 ? keys_[s][src] : values_[s][src];
              const std::vector<uint8_t>& cache = which == 0 ? k_cache_ : v_cache_;
              const float scale = which == 0 ? layer_.k_scale : layer_.v_scale;
              if (g_.kv_dtype == DType::kF8E4M3) {
                ASSERT_EQ(cache[at], float_to_fp8_e4m3(x / scale)) << "seq " << s << " pos " << t;
              } else if (g_.kv_dtype == DType::kBF16) {
                uint16_t bits;
                std::memcpy(&bits, &cache[at], 2);
                ASSERT_EQ(bits, to_bf16(x).bits) << "seq " << s << " pos " << t;
              } else {
                float stored;
                std::memcpy(&stored, &cache[at], 4);
                ASSERT_EQ(stored, x) << "seq " << s << " pos " << t;
              }
            }
          }
        }
      }
    }
  }

 private:
  // Builds and uploads the batch of either every prefix (earlier step) or every chunk (the step
  // under test) and writes those rows' K/V through qk_norm_rope_kv_write (no norms, no RoPE).
  ops::DeviceBatch write_step(bool prefix) {
    ops::ForwardBatch batch;
    batch.max_blocks_per_seq = max_blocks_;
    batch.query_start.push_back(0);
    const int64_t kv_cols = int64_t{g_.num_kv_heads} * g_.head_dim;
    std::vector<float> k, v;
    for (size_t s = 0; s < plans_.size(); ++s) {
      const SeqPlan& p = plans_[s];
      const int32_t first = prefix ? 0 : p.prefix;
      const int32_t count = prefix ? p.prefix : p.chunk;
      for (int32_t t = first; t < first + count; ++t) {
        batch.token_ids.push_back(1);
        batch.positions.push_back(t);
        batch.slot_mapping.push_back(tables_[s][static_cast<size_t>(t / g_.block_size)] * g_.block_size + t % g_.block_size);
        k.insert(k.end(), keys_[s].begin() + t * kv_cols, keys_[s].begin() + (t + 1) * kv_cols);
        v.insert(v.end(), values_[s].begin() + t * kv_cols, values_[s].begin() + (t + 1) * kv_cols);
      }
      batch.query_start.push_back(batch.query_start.back() + count);
      batch.context_lens.push_back(first + count);
      batch.block_tables.insert(batch.block_tables.end(), tables_[s].begin(), tables_[s].end());
      batch.logits_rows.push_back(batch.query_start.back() - 1 < 0 ? 0 : batch.query_start.back() - 1);
    }
    if (batch.num_tokens() == 0) batch.logits_rows.clear();
    const ops::DeviceBatch device = backend_->upload_batch(batch);
    const int64_t tokens = batch.num_tokens();
    std::vector<float> q(static_cast<size_t>(tokens * shape_.num_heads * shape_.head_dim), 0.0f);
    ops::RopeParams no_rope;
    backend_->qk_norm_rope_kv_write(device, test::f32_act(q, tokens, int64_t{shape_.num_heads} * shape_.head_dim),
                                    test::f32_act(k, tokens, kv_cols), test::f32_act(v, tokens, kv_cols), nullptr,
                                    nullptr, 1e-6f, no_rope, shape_, cache_shape_, layer_);
    return device;
  }

  Geometry g_;
  std::vector<SeqPlan> plans_;
  Rng rng_;
  std::unique_ptr<ops::Backend> backend_;
  DType act_dtype_;
  ops::AttentionShape shape_;
  ops::KvCacheShape cache_shape_;
  ops::KvCacheLayer layer_;
  int32_t max_blocks_ = 0;
  std::vector<std::vector<int32_t>> tables_;
  std::vector<uint8_t> k_cache_, v_cache_;
  std::vector<std::vector<float>> keys_, values_, queries_;
};

// Prefill chunk over a cached prefix, decode rows, a fresh prefill, a first-token decode.
const std::vector<SeqPlan> kMixedBatch = {{20, 7}, {32, 1}, {0, 12}, {0, 1}, {45, 1}, {16, 16}};

// Scores carry the f32 dot error ((hd/8 + 3) * 2^-24 of sum |q k| * scale, ~1e-5 absolute for
// unit-normal q, k); the weights then move by that relative amount, and the output is judged
// against max |v|: 3e-5 leaves room for exp and the normalising sum.
constexpr double kAttentionBound = 3e-5;

TEST(CpuAttention, MixedBatchEveryGeometry) {
  uint64_t seed = 100;
  for (int32_t group : {1, 2, 4}) {
    for (int32_t head_dim : {64, 128}) {
      for (int32_t block_size : {16, 12}) {
        const Geometry g{2, group, head_dim, block_size, DType::kF32};
        AttentionHarness harness(g, kMixedBatch, seed++);
        const std::vector<float> out = harness.run();
        harness.check_cache_contents();
        harness.check(out, kAttentionBound, "attention mixed batch");
      }
    }
  }
}

TEST(CpuAttention, SingleSequencePrefillThenDecode) {
  const Geometry g{1, 4, 128, 16, DType::kF32};
  AttentionHarness prefill(g, {{0, 40}}, 7);
  prefill.check(prefill.run(), kAttentionBound, "attention one prefill");
  AttentionHarness decode(g, {{40, 1}}, 8);
  decode.check(decode.run(), kAttentionBound, "attention one decode");
}

TEST(CpuAttention, Bf16KvCache) {
  const Geometry g{2, 2, 128, 16, DType::kBF16};
  AttentionHarness harness(g, kMixedBatch, 31);
  const std::vector<float> out = harness.run();
  harness.check_cache_contents();
  harness.check(out, kAttentionBound, "attention bf16 kv");
}

TEST(CpuAttention, Fp8KvCache) {
  for (int32_t block_size : {16, 12}) {
    const Geometry g{2, 4, 64, block_size, DType::kF8E4M3};
    AttentionHarness harness(g, kMixedBatch, 41 + static_cast<uint64_t>(block_size));
    const std::vector<float> out = harness.run();
    harness.check_cache_contents();
    // Against the reference computed on the dequantised cache values: the same f32 bound.
    harness.check(out, kAttentionBound, "attention fp8 kv (vs dequantised reference)");
  }
}

TEST(CpuAttention, Bf16QueriesAndOutput) {
  const Geometry g{2, 2, 64, 16, DType::kBF16};
  AttentionHarness harness(g, kMixedBatch, 51, DType::kBF16);
  // The output's bf16 rounding adds at most 2^-8 of |out| <= max |v|.
  harness.check(harness.run(), kAttentionBound + std::ldexp(1.0, -8), "attention bf16 q/out");
}

TEST(CpuAttention, RejectsBadBatches) {
  auto backend = ops::make_cpu_backend();
  ops::AttentionShape shape{4, 2, 64, 0.125f};
  ops::KvCacheShape cache_shape{4, 16, 2, 64, DType::kF32};
  std::vector<float> k(static_cast<size_t>(cache_shape.elements_per_layer())), v(k.size());
  ops::KvCacheLayer layer{k.data(), v.data()};
  std::vector<float> q(4 * 64 * 2), out(q.size());
  ops::ForwardBatch batch;
  batch.token_ids = {1, 1};
  batch.positions = {0, 1};
  batch.slot_mapping = {0, 1};
  batch.query_start = {0, 2};
  batch.context_lens = {2};
  batch.max_blocks_per_seq = 1;
  batch.block_tables = {7};  // outside the 4-block cache
  const auto attend = [&](const ops::ForwardBatch& b) {
    const ops::DeviceBatch device = backend->upload_batch(b);
    backend->attention(device, test::f32_act(q, 2, 256), shape, cache_shape, layer, test::f32_act(out, 2, 256));
  };
  EXPECT_THROW(attend(batch), Error);
  batch.block_tables = {1};
  EXPECT_NO_THROW(attend(batch));
  batch.context_lens = {1};  // fewer cached positions than query rows
  EXPECT_THROW(attend(batch), Error);
  batch.context_lens = {17};  // needs two blocks, the table holds one
  EXPECT_THROW(attend(batch), Error);
  batch.context_lens = {2};
  batch.slot_mapping = {0, 64};  // one past the last slot
  const ops::DeviceBatch device = backend->upload_batch(batch);
  std::vector<float> kr(2 * 128), vr(2 * 128);
  EXPECT_THROW(backend->qk_norm_rope_kv_write(device, test::f32_act(q, 2, 256), test::f32_act(kr, 2, 128),
                                              test::f32_act(vr, 2, 128), nullptr, nullptr, 1e-6f, ops::RopeParams{},
                                              shape, cache_shape, layer),
               Error);
}

}  // namespace
}  // namespace lathe
