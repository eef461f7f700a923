// Batch invariance (ARCHITECTURE rule 6) of a whole model: one watched sequence A decodes
// teacher-forced tokens, and A's decode logits must be the same bytes
//   - alone (prefill A, then decode A by itself),
//   - beside 31 other sequences in pure decode steps (all prefilled in one step with A),
//   - in mixed steps (A decodes while other sequences prefill chunks in the same step),
//   - after A's prompt was prefilled in two chunks, each beside other prompts' chunks,
//   - replayed from a decode graph beside the 31 others (backends that record graphs).
// Built twice from this file: gpu_batch_invariance (LATHE_INVARIANCE_GPU: CUDA, Qwen3-8B and
// -8B-FP8 shapes cut to 2 layers, dummy weights: the tiny fixtures never reach the GEMV's split-K
// path or the block-scaled GEMM) and golden_batch_invariance (the CPU reference on the tiny
// fixture's config, which also proves the scenarios themselves). Every scenario reports how many
// of A's logits differ per step.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "app/backend_factory.h"
#include "app/model_runner.h"
#include "engine/block_manager.h"
#include "model/config.h"
#include "model/decode_graphs.h"
#include "model/device_buffer.h"
#include "model/dummy_weights.h"
#include "model/qwen3.h"
#include "ops/cuda_backend.h"

namespace lathe {
namespace {

constexpr int32_t kBlock = 16;
constexpr int32_t kOthers = 31;
constexpr int kDecodeSteps = 4;
constexpr int32_t kPromptA = 97;

struct InvarianceCase {
  std::string name;
  std::string device;      // cuda | cpu
  std::string config_dir;  // relative to the source tree
  int32_t id_max = 0;      // prompt ids are drawn from [100, id_max)
  int32_t long_prompt = 0; // others' prompts are 20 + (i * 37) % long_prompt tokens
};

struct World {
  std::unique_ptr<ops::Backend> backend;
  std::unique_ptr<model::Qwen3Model> model;
  std::unique_ptr<engine::BlockManager> blocks;
  std::unique_ptr<model::DeviceBuffer> logits;
  int64_t vocab = 0;

  explicit World(const InvarianceCase& c) {
    // LATHE_SOURCE_DIR from the environment wins (a binary built in another checkout).
    const char* env = std::getenv("LATHE_SOURCE_DIR");
    const std::filesystem::path root = env != nullptr && *env != '\0' ? env : LATHE_SOURCE_DIR;
    model::ModelConfig config = model::load_model_config(root / c.config_dir);
    config.num_hidden_layers = 2;
    model::Qwen3Weights weights = model::make_dummy_qwen3_weights(config, model::DummyOptions{.seed = 7});
    app::BackendRequest request;
    request.device = c.device;
    request.max_decode_seqs = 64;
    backend = app::make_backend(request);
    model::Qwen3Options options;
    options.max_tokens_per_step = 8192;
    options.max_logits_rows = 64;
    options.num_kv_blocks = 4096;
    options.kv_block_size = kBlock;
    options.kv_dtype = DType::kBF16;
    model = std::make_unique<model::Qwen3Model>(*backend, std::move(config), std::move(weights), options);
    blocks = std::make_unique<engine::BlockManager>(options.num_kv_blocks, kBlock);
    vocab = model->vocab_size();
    logits = std::make_unique<model::DeviceBuffer>(*backend, static_cast<size_t>(64 * vocab) * sizeof(float), "logits");
  }

  // Runs one planned step and returns the logits of logits row `row`.
  std::vector<float> run(const ops::ForwardBatch& batch, size_t row) {
    const auto rows = static_cast<int64_t>(batch.logits_rows.size());
    ops::Act out{logits->data(), DType::kF32, rows, vocab, vocab};
    model->forward(batch, out);
    return download_row(row);
  }

  std::vector<float> download_row(size_t row) {
    std::vector<float> host(static_cast<size_t>(vocab));
    backend->download(host.data(), static_cast<const float*>(logits->data()) + row * static_cast<size_t>(vocab),
                      host.size() * sizeof(float));
    return host;
  }

  void reserve(engine::SeqId seq, int64_t tokens) { ASSERT_TRUE(blocks->ensure_capacity(seq, tokens)); }
};

std::vector<int32_t> random_ids(std::mt19937& rng, int32_t count, int32_t id_max) {
  std::uniform_int_distribution<int32_t> id(100, id_max - 1);
  std::vector<int32_t> out(static_cast<size_t>(count));
  for (int32_t& v : out) v = id(rng);
  return out;
}

int64_t differing(const std::vector<float>& a, const std::vector<float>& b) {
  int64_t n = 0;
  for (size_t i = 0; i < a.size(); ++i) n += std::memcmp(&a[i], &b[i], sizeof(float)) != 0 ? 1 : 0;
  return n;
}

class BatchInvariance : public ::testing::TestWithParam<InvarianceCase> {};

TEST_P(BatchInvariance, WatchedSequenceDecodesTheSameBytesInEveryCompany) {
  const InvarianceCase& tc = GetParam();
  World w(tc);
  std::mt19937 rng(2026);
  const std::vector<int32_t> prompt_a = random_ids(rng, kPromptA, tc.id_max);
  const std::vector<int32_t> forced = random_ids(rng, kDecodeSteps, tc.id_max);  // A's decode inputs
  std::vector<std::vector<int32_t>> others;
  for (int i = 0; i < kOthers; ++i) others.push_back(random_ids(rng, 20 + (i * 37) % tc.long_prompt, tc.id_max));
  engine::SeqId next = 1;
  const auto decode_row = [&](engine::SeqId seq, int64_t start, int step) {
    return app::SeqRows{seq, {forced[static_cast<size_t>(step)]}, start, false, true};
  };
  std::string report;
  int64_t total_diff = 0;
  const auto compare = [&](const std::string& scenario, int step, const std::vector<float>& got,
                           const std::vector<float>& ref) {
    const int64_t d = differing(got, ref);
    total_diff += d;
    if (d > 0) report += " " + scenario + "[step " + std::to_string(step) + "]: " + std::to_string(d);
  };

  // Alone.
  std::vector<std::vector<float>> alone;
  {
    const engine::SeqId a = next++;
    w.reserve(a, kPromptA + kDecodeSteps);
    w.run(app::plan_step({{a, prompt_a, 0, false, true}}, *w.blocks), 0);
    for (int s = 0; s < kDecodeSteps; ++s) alone.push_back(w.run(app::plan_step({decode_row(a, kPromptA + s, s)}, *w.blocks), 0));
  }

  // Beside 31 others in pure decode steps (A is row 7), prefilled together in one step.
  std::vector<engine::SeqId> crowd_ids;
  engine::SeqId crowd_a = 0;
  {
    std::vector<app::SeqRows> prefill;
    for (int i = 0; i < kOthers + 1; ++i) {
      const engine::SeqId id = next++;
      const bool is_a = i == 7;
      const std::vector<int32_t>& p = is_a ? prompt_a : others[static_cast<size_t>(i < 7 ? i : i - 1)];
      w.reserve(id, static_cast<int64_t>(p.size()) + kDecodeSteps);
      prefill.push_back({id, p, 0, false, true});
      crowd_ids.push_back(id);
      if (is_a) crowd_a = id;
    }
    w.run(app::plan_step(prefill, *w.blocks), 0);
    for (int s = 0; s < kDecodeSteps; ++s) {
      std::vector<app::SeqRows> rows;
      for (size_t i = 0; i < crowd_ids.size(); ++i) {
        rows.push_back(decode_row(crowd_ids[i], static_cast<int64_t>(prefill[i].tokens.size()) + s, s));
      }
      compare("beside 31 decode rows", s, w.run(app::plan_step(rows, *w.blocks), 7), alone[static_cast<size_t>(s)]);
    }
  }

  // Mixed steps: A (and 3 other decoders) decode while a fresh prompt prefills beside them.
  {
    const engine::SeqId a = next++;
    w.reserve(a, kPromptA + kDecodeSteps);
    w.run(app::plan_step({{a, prompt_a, 0, false, true}}, *w.blocks), 0);
    std::vector<engine::SeqId> deco;
    for (int i = 0; i < 3; ++i) {
      const engine::SeqId id = next++;
      w.reserve(id, static_cast<int64_t>(others[static_cast<size_t>(i)].size()) + kDecodeSteps);
      w.run(app::plan_step({{id, others[static_cast<size_t>(i)], 0, false, true}}, *w.blocks), 0);
      deco.push_back(id);
    }
    for (int s = 0; s < kDecodeSteps; ++s) {
      const engine::SeqId fresh = next++;
      const std::vector<int32_t>& p = others[static_cast<size_t>(10 + s)];
      w.reserve(fresh, static_cast<int64_t>(p.size()));
      std::vector<app::SeqRows> rows;
      for (size_t i = 0; i < deco.size(); ++i) {
        rows.push_back(decode_row(deco[i], static_cast<int64_t>(others[i].size()) + s, s));
      }
      rows.insert(rows.begin() + 1, decode_row(a, kPromptA + s, s));  // A is decode row 1
      rows.push_back({fresh, p, 0, false, true});
      ops::ForwardBatch mixed = app::plan_step(rows, *w.blocks);
      mixed.num_decode_rows = 4;
      compare("mixed with a prefill chunk", s, w.run(mixed, 1), alone[static_cast<size_t>(s)]);
    }
  }

  // A's prompt in two chunks, each beside other prompts' chunks; then A decodes alone.
  {
    const engine::SeqId a = next++;
    const engine::SeqId b = next++, c = next++;
    w.reserve(a, kPromptA + kDecodeSteps);
    w.reserve(b, static_cast<int64_t>(others[20].size()));
    w.reserve(c, static_cast<int64_t>(others[21].size()));
    const std::vector<int32_t> first(prompt_a.begin(), prompt_a.begin() + 50), second(prompt_a.begin() + 50, prompt_a.end());
    w.run(app::plan_step({{b, others[20], 0, false, true}, {a, first, 0, false, false}}, *w.blocks), 0);
    w.run(app::plan_step({{a, second, 50, false, true}, {c, others[21], 0, false, true}}, *w.blocks), 0);
    for (int s = 0; s < kDecodeSteps; ++s) {
      compare("after a chunked prefill", s, w.run(app::plan_step({decode_row(a, kPromptA + s, s)}, *w.blocks), 0),
              alone[static_cast<size_t>(s)]);
    }
  }

  // Decode graphs beside the 31 others (the crowd's KV rewritten with the same bytes).
  if (w.backend->capture([] {})) {
    const int32_t width = 32;
    model::DecodeGraphs graphs(*w.model, 32, width, w.logits->data());
    for (int s = 0; s < kDecodeSteps; ++s) {
      std::vector<app::SeqRows> rows;
      for (size_t i = 0; i < crowd_ids.size(); ++i) {
        const int64_t len = crowd_ids[i] == crowd_a ? kPromptA
                                                      : static_cast<int64_t>(others[i < 7 ? i : i - 1].size());
        rows.push_back(decode_row(crowd_ids[i], len + s, s));
      }
      const ops::ForwardBatch batch = app::plan_step(rows, *w.blocks);
      ASSERT_LE(batch.max_blocks_per_seq, width);
      ASSERT_EQ(graphs.run(batch).rows, 32);
      compare("graph beside 31", s, w.download_row(7), alone[static_cast<size_t>(s)]);
    }
  }

  std::printf("[%s] watched sequence: %lld logits differ from alone in all scenarios%s\n", tc.name.c_str(),
              static_cast<long long>(total_diff), report.c_str());
  EXPECT_EQ(total_diff, 0) << report;
}

std::string case_name(const ::testing::TestParamInfo<InvarianceCase>& p) { return p.param.name; }

#ifdef LATHE_INVARIANCE_GPU
INSTANTIATE_TEST_SUITE_P(Qwen3_8B_2Layers, BatchInvariance,
                         ::testing::Values(InvarianceCase{"bf16", "cuda", "configs/Qwen3-8B", 150000, 250},
                                           InvarianceCase{"fp8", "cuda", "configs/Qwen3-8B-FP8", 150000, 250}),
                         case_name);
#else
INSTANTIATE_TEST_SUITE_P(TinyCpu, BatchInvariance,
                         ::testing::Values(InvarianceCase{"tiny_cpu", "cpu", "tests/fixtures/models/qwen3-tiny-chat",
                                                          384, 120}),
                         case_name);
#endif

}  // namespace
}  // namespace lathe

#ifdef LATHE_INVARIANCE_GPU
int main(int argc, char** argv) {
  if (!lathe::ops::cuda_available()) {
    std::printf("no CUDA device: gpu_batch_invariance skipped\n");
    return 77;
  }
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
#endif
