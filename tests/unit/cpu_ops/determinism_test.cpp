// Results must not depend on the worker thread count (LATHE_CPU_THREADS): the test re-runs this
// binary with several counts, each child hashing the outputs of a fixed workload of every
// threaded op, and requires identical digests.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "backends/cpu/cpu_ops.h"
#include "core/numeric.h"
#include "core/parallel.h"
#include "ops/sampling.h"
#include "test_util.h"

namespace lathe {
namespace {

constexpr const char* kChildEnv = "LATHE_CPU_OPS_DIGEST_CHILD";

class Digest {
 public:
  void add(const void* data, size_t bytes) {
    const auto* p = static_cast<const uint8_t*>(data);
    for (size_t i = 0; i < bytes; ++i) hash_ = (hash_ ^ p[i]) * 0x100000001b3ull;  // FNV-1a
  }
  template <typename T>
  void add(const std::vector<T>& values) {
    add(values.data(), values.size() * sizeof(T));
  }
  uint64_t value() const { return hash_; }

 private:
  uint64_t hash_ = 0xcbf29ce484222325ull;
};

uint64_t workload_digest() {
  test::Rng rng(71);
  Digest digest;
  // linear: BF16 and block-FP8 weights, a prefill-sized batch.
  const int64_t m = 37, n = 300, k = 520;
  std::vector<float> x = rng.normals(static_cast<size_t>(m * k));
  std::vector<uint16_t> w_bf16(static_cast<size_t>(n * k));
  std::vector<uint8_t> w_fp8(static_cast<size_t>(n * k));
  for (size_t i = 0; i < w_bf16.size(); ++i) {
    const float v = rng.normal(0.05f);
    w_bf16[i] = to_bf16(v).bits;
    w_fp8[i] = float_to_fp8_e4m3(v * 2000.0f);
  }
  std::vector<float> scales(static_cast<size_t>(3 * 5), 0.0f);
  for (float& s : scales) s = rng.uniform(1e-4f, 1e-3f);
  std::vector<float> bias = rng.normals(static_cast<size_t>(n));
  std::vector<float> y(static_cast<size_t>(m * n));
  cpu::linear(cpu::Rows{x.data(), DType::kF32, k}, m, k, w_bf16.data(), DType::kBF16, n, cpu::WeightScale{}, bias.data(),
              cpu::Rows{y.data(), DType::kF32, n});
  digest.add(y);
  const cpu::WeightScale block{scales.data(), 128, 128, 5, 1};
  cpu::linear(cpu::Rows{x.data(), DType::kF32, k}, m, k, w_fp8.data(), DType::kF8E4M3, n, block, nullptr,
              cpu::Rows{y.data(), DType::kF32, n});
  digest.add(y);

  // Norms, RoPE and SwiGLU over many rows.
  const int64_t rows = 300, cols = 1024;
  std::vector<float> h = rng.normals(static_cast<size_t>(rows * cols));
  std::vector<float> delta = rng.normals(h.size());
  std::vector<float> weight = rng.normals(static_cast<size_t>(cols));
  std::vector<float> out(h.size());
  cpu::add_rms_norm(cpu::Rows{h.data(), DType::kF32, cols}, cpu::Rows{delta.data(), DType::kF32, cols}, rows, cols,
                    weight.data(), 1e-6f, cpu::Rows{out.data(), DType::kF32, cols});
  digest.add(out);
  std::vector<int32_t> positions(static_cast<size_t>(rows));
  for (size_t i = 0; i < positions.size(); ++i) positions[i] = static_cast<int32_t>(i * 37);
  std::vector<float> inv_freq(64);
  for (size_t i = 0; i < inv_freq.size(); ++i) inv_freq[i] = std::pow(1e6f, -static_cast<float>(i) / 64.0f);
  cpu::head_rms_norm(cpu::Rows{out.data(), DType::kF32, cols}, rows, 8, 128, weight.data(), 1e-6f);
  cpu::rope(cpu::Rows{out.data(), DType::kF32, cols}, rows, 8, 128, positions.data(), inv_freq.data(), 128, 1.0f);
  digest.add(out);
  std::vector<float> act(static_cast<size_t>(rows * cols / 2));
  cpu::silu_mul(cpu::Rows{out.data(), DType::kF32, cols}, rows, cols / 2, cpu::Rows{act.data(), DType::kF32, cols / 2});
  digest.add(act);

  // Paged attention: 3 sequences (prefill chunk over a prefix, decode, fresh prefill), GQA 4.
  cpu::PagedKv kv;
  kv.dtype = DType::kF32;
  kv.num_blocks = 12;
  kv.block_size = 16;
  kv.num_kv_heads = 2;
  kv.head_dim = 64;
  std::vector<float> k_cache = rng.normals(static_cast<size_t>(12 * 2 * 16 * 64));
  std::vector<float> v_cache = rng.normals(k_cache.size());
  kv.k = k_cache.data();
  kv.v = v_cache.data();
  const std::vector<int32_t> query_start = {0, 10, 11, 30};
  const std::vector<int32_t> context_lens = {50, 33, 19};
  const std::vector<int32_t> tables = {3, 7, 1, 0, 5, 9, 2, 0, 11, 4, 0, 0};
  std::vector<float> q = rng.normals(static_cast<size_t>(30 * 8 * 64));
  std::vector<float> attn(q.size());
  cpu::paged_attention(cpu::Rows{q.data(), DType::kF32, 512}, cpu::Rows{attn.data(), DType::kF32, 512}, 3,
                       query_start.data(), context_lens.data(), tables.data(), 4, 8, 0.125f, kv);
  digest.add(attn);

  // Sampling rows are split across threads by the backend; the raw rule per row is hashed here.
  std::vector<int32_t> tokens;
  for (uint64_t seed = 0; seed < 64; ++seed) {
    std::vector<float> logits = rng.normals(500, 2.0f);
    tokens.push_back(cpu::sample_row(logits.data(), 500, 0.9f, 40, 0.9f, 0.01f, ops::sampling_uniform(seed, 3)));
  }
  digest.add(tokens);
  return digest.value();
}

TEST(CpuDeterminism, ThreadCountDoesNotChangeResults) {
  const uint64_t here = workload_digest();
  if (std::getenv(kChildEnv) != nullptr) {
    std::printf("DIGEST %016llx threads %d\n", static_cast<unsigned long long>(here), cpu_threads());
    return;
  }
  // The shell popen starts has its own /proc/self, so resolve this binary's path first.
  char self[4096] = {};
  const ssize_t length = readlink("/proc/self/exe", self, sizeof self - 1);
  ASSERT_GT(length, 0) << "cannot resolve /proc/self/exe";
  for (int threads : {1, 2, 3, 5}) {
    const std::string command = std::string(kChildEnv) + "=1 LATHE_CPU_THREADS=" + std::to_string(threads) + " '" +
                                std::string(self) + "' --gtest_filter=CpuDeterminism.ThreadCountDoesNotChangeResults 2>&1";
    FILE* pipe = popen(command.c_str(), "r");
    ASSERT_NE(pipe, nullptr) << command;
    unsigned long long child = 0;
    int child_threads = 0;
    bool found = false;
    char line[512];
    while (std::fgets(line, sizeof line, pipe) != nullptr) {
      if (std::sscanf(line, "DIGEST %llx threads %d", &child, &child_threads) == 2) found = true;
    }
    EXPECT_EQ(pclose(pipe), 0) << command;
    ASSERT_TRUE(found) << "no digest from " << command;
    EXPECT_EQ(child_threads, threads);
    EXPECT_EQ(child, static_cast<unsigned long long>(here)) << "results differ with " << threads << " threads";
  }
}

}  // namespace
}  // namespace lathe
