// CpuBackend plumbing (memory, batch upload, validation) and the fused
// qk_norm_rope_kv_write op against a double-precision QK-norm + RoPE.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "core/error.h"
#include "ops/backend.h"
#include "test_util.h"

namespace lathe {
namespace {

using test::ErrorStats;
using test::Rng;

TEST(CpuBackend, Identity) {
  auto backend = ops::make_cpu_backend();
  EXPECT_EQ(backend->kind(), ops::DeviceKind::kCpu);
  EXPECT_EQ(backend->name(), "cpu");
  EXPECT_EQ(backend->activation_dtype(), DType::kF32);
}

TEST(CpuBackend, MemoryRoundTrip) {
  auto backend = ops::make_cpu_backend();
  for (size_t bytes : {size_t{0}, size_t{1}, size_t{100}, size_t{1} << 20}) {
    void* ptr = backend->alloc(bytes);
    ASSERT_NE(ptr, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(ptr) % 64, 0u);
    std::vector<uint8_t> src(bytes), dst(bytes, 0xAB);
    for (size_t i = 0; i < bytes; ++i) src[i] = static_cast<uint8_t>(i * 31 + 7);
    backend->upload(ptr, src.data(), bytes);
    backend->synchronize();
    backend->download(dst.data(), ptr, bytes);
    EXPECT_EQ(src, dst);
    backend->fill_zero(ptr, bytes);
    backend->download(dst.data(), ptr, bytes);
    EXPECT_EQ(dst, std::vector<uint8_t>(bytes, 0));
    backend->free(ptr);
  }
  EXPECT_THROW(backend->alloc(SIZE_MAX - 1000), Error);
  EXPECT_THROW(backend->alloc(SIZE_MAX - 3), Error);  // would wrap when rounded up
}

ops::ForwardBatch small_batch() {
  ops::ForwardBatch batch;
  batch.phase = ops::Phase::kPrefill;
  batch.token_ids = {5, 6, 7, 8};
  batch.positions = {0, 1, 2, 9};
  batch.slot_mapping = {16, 17, 18, 41};
  batch.query_start = {0, 3, 4};
  batch.context_lens = {3, 10};
  batch.max_blocks_per_seq = 2;
  batch.block_tables = {1, 0, 3, 2};
  batch.logits_rows = {2, 3};
  return batch;
}

TEST(CpuBackend, UploadBatchCopiesEveryArray) {
  auto backend = ops::make_cpu_backend();
  ops::ForwardBatch batch = small_batch();
  const ops::DeviceBatch d = backend->upload_batch(batch);
  batch.token_ids[0] = 99;  // the device copy is independent of the host arrays
  EXPECT_EQ(d.phase, ops::Phase::kPrefill);
  EXPECT_EQ(d.num_tokens, 4);
  EXPECT_EQ(d.num_seqs, 2);
  EXPECT_EQ(d.max_blocks_per_seq, 2);
  EXPECT_EQ(d.max_query_len, 3);
  EXPECT_EQ(d.max_context_len, 10);
  EXPECT_EQ(d.num_logits_rows, 2);
  EXPECT_EQ(d.token_ids[0], 5);
  EXPECT_EQ(d.positions[3], 9);
  EXPECT_EQ(d.slot_mapping[3], 41);
  EXPECT_EQ(d.query_start[2], 4);
  EXPECT_EQ(d.context_lens[1], 10);
  EXPECT_EQ(d.block_tables[2], 3);
  EXPECT_EQ(d.logits_rows[1], 3);
}

TEST(CpuBackend, UploadBatchRejectsInconsistentArrays) {
  auto backend = ops::make_cpu_backend();
  {
    ops::ForwardBatch b = small_batch();
    b.positions.pop_back();
    EXPECT_THROW(backend->upload_batch(b), Error);
  }
  {
    ops::ForwardBatch b = small_batch();
    b.query_start = {0, 3};
    EXPECT_THROW(backend->upload_batch(b), Error);
  }
  {
    ops::ForwardBatch b = small_batch();
    b.query_start = {0, 3, 5};
    EXPECT_THROW(backend->upload_batch(b), Error);
  }
  {
    ops::ForwardBatch b = small_batch();
    b.block_tables.pop_back();
    EXPECT_THROW(backend->upload_batch(b), Error);
  }
  {
    ops::ForwardBatch b = small_batch();
    b.logits_rows = {4};
    EXPECT_THROW(backend->upload_batch(b), Error);
  }
}

// qk_norm_rope_kv_write: per-head RMSNorm (q_norm / k_norm), RoPE at the batch positions, and
// the post-RoPE k (and untouched v) in the cache at slot_mapping.
TEST(CpuBackend, QkNormRopeKvWrite) {
  auto backend = ops::make_cpu_backend();
  Rng rng(61);
  const ops::ForwardBatch batch = small_batch();
  const ops::DeviceBatch device = backend->upload_batch(batch);
  const int64_t tokens = 4;
  for (int32_t rotary_dim : {64, 16}) {
    const ops::AttentionShape shape{4, 2, 64, 0.125f};
    const ops::KvCacheShape cache_shape{4, 16, 2, 64, DType::kF32};
    std::vector<float> k_cache(static_cast<size_t>(cache_shape.elements_per_layer()), 0.0f);
    std::vector<float> v_cache(k_cache.size(), 0.0f);
    const ops::KvCacheLayer layer{k_cache.data(), v_cache.data()};
    std::vector<float> q = rng.normals(static_cast<size_t>(tokens * 4 * 64), 2.0f);
    std::vector<float> k = rng.normals(static_cast<size_t>(tokens * 2 * 64), 2.0f);
    std::vector<float> v = rng.normals(static_cast<size_t>(tokens * 2 * 64));
    const std::vector<float> q0 = q, k0 = k, v0 = v;
    std::vector<float> q_norm = rng.normals(64), k_norm = rng.normals(64);
    std::vector<float> inv_freq(static_cast<size_t>(rotary_dim / 2));
    for (size_t i = 0; i < inv_freq.size(); ++i) {
      inv_freq[i] = static_cast<float>(std::pow(10000.0, -2.0 * static_cast<double>(i) / rotary_dim));
    }
    const ops::RopeParams rope{inv_freq.data(), rotary_dim, 1.25f};
    backend->qk_norm_rope_kv_write(device, test::f32_act(q, tokens, 256), test::f32_act(k, tokens, 128),
                                   test::f32_act(v, tokens, 128), q_norm.data(), k_norm.data(), 1e-6f, rope, shape,
                                   cache_shape, layer);
    // Reference: normalise each head in double, then rotate with cos/sin of the f32 angle.
    const auto reference = [&](const std::vector<float>& x0, int64_t heads, const std::vector<float>& w, int64_t t,
                               int64_t h) {
      const float* head = &x0[static_cast<size_t>((t * heads + h) * 64)];
      double ms = 0.0;
      for (int d = 0; d < 64; ++d) ms += static_cast<double>(head[d]) * head[d];
      const double inv = 1.0 / std::sqrt(ms / 64.0 + 1e-6);
      std::vector<double> y(64);
      for (int d = 0; d < 64; ++d) y[static_cast<size_t>(d)] = head[d] * inv * w[static_cast<size_t>(d)];
      std::vector<double> out = y;
      const int half = rotary_dim / 2;
      for (int i = 0; i < half; ++i) {
        const float angle = static_cast<float>(batch.positions[static_cast<size_t>(t)]) * inv_freq[static_cast<size_t>(i)];
        const double c = std::cos(static_cast<double>(angle)) * 1.25;
        const double s = std::sin(static_cast<double>(angle)) * 1.25;
        out[static_cast<size_t>(i)] = y[static_cast<size_t>(i)] * c - y[static_cast<size_t>(i + half)] * s;
        out[static_cast<size_t>(i + half)] = y[static_cast<size_t>(i + half)] * c + y[static_cast<size_t>(i)] * s;
      }
      return out;
    };
    ErrorStats q_stats("qk_norm_rope q rotary_dim=" + std::to_string(rotary_dim));
    ErrorStats k_stats("qk_norm_rope k (in place and cached) rotary_dim=" + std::to_string(rotary_dim));
    for (int64_t t = 0; t < tokens; ++t) {
      const int64_t slot = batch.slot_mapping[static_cast<size_t>(t)];
      for (int64_t h = 0; h < 4; ++h) {
        const auto want = reference(q0, 4, q_norm, t, h);
        double norm = 0.0;
        for (double w : want) norm = std::fmax(norm, std::fabs(w));
        for (int d = 0; d < 64; ++d) q_stats.add(q[static_cast<size_t>((t * 4 + h) * 64 + d)], want[static_cast<size_t>(d)], norm);
      }
      for (int64_t h = 0; h < 2; ++h) {
        const auto want = reference(k0, 2, k_norm, t, h);
        double norm = 0.0;
        for (double w : want) norm = std::fmax(norm, std::fabs(w));
        const int64_t cached = cache_shape.offset(slot / 16, h, slot % 16);
        for (int d = 0; d < 64; ++d) {
          const float got = k[static_cast<size_t>((t * 2 + h) * 64 + d)];
          k_stats.add(got, want[static_cast<size_t>(d)], norm);
          ASSERT_EQ(k_cache[static_cast<size_t>(cached + d)], got) << "cached k differs from the rotated k";
          ASSERT_EQ(v_cache[static_cast<size_t>(cached + d)], v0[static_cast<size_t>((t * 2 + h) * 64 + d)]);
        }
      }
    }
    // Judged against the head's largest output: the norm's relative error (<= 5e-6, see the
    // row-op tests) plus the rotation's few roundings.
    q_stats.expect_within(1e-5);
    k_stats.expect_within(1e-5);
  }
}

}  // namespace
}  // namespace lathe
