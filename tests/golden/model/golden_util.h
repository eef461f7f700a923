#pragma once
// Shared helpers of the Qwen3 golden suites: the fixture list, the HF references written by
// tools/make_fixtures.py, error measures, and a directly driven model (backend + Qwen3Model +
// BlockManager) for tests that plan their own steps.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "app/model_runner.h"
#include "engine/block_manager.h"
#include "model/qwen3.h"
#include "ops/backend.h"

namespace lathe::golden {

// Fixture directories under tests/fixtures/models that hold a reference.safetensors, sorted.
std::vector<std::string> fixture_names();
std::filesystem::path fixture_dir(const std::string& name);
// gtest name of a fixture parameter ('-' -> '_').
std::string fixture_test_name(const ::testing::TestParamInfo<std::string>& param);

// reference.safetensors (see tools/make_fixtures.py).
struct Reference {
  int64_t vocab = 0;
  std::vector<int32_t> prompt;        // [T]
  std::vector<float> logits;          // [T, V]
  std::vector<int32_t> greedy;        // [N]
  std::vector<float> greedy_logits;   // [N, V]: row i chose greedy[i]
  std::vector<float> greedy_margins;  // [N]
};
Reference load_reference(const std::filesystem::path& dir);

// max |a - b|, and that over max |ref| (the "relative" error the golden bounds are stated in).
struct ErrorStats {
  double max_abs = 0.0;
  double max_ref = 0.0;
  double rel() const { return max_ref > 0.0 ? max_abs / max_ref : max_abs; }
};
ErrorStats compare(const std::vector<float>& got, const std::vector<float>& ref);
// Number of elements where the two differ bit for bit.
int64_t count_bit_differences(const std::vector<float>& a, const std::vector<float>& b);

// A model driven step by step: tests plan batches with app::plan_step over `blocks`.
struct DirectModel {
  std::unique_ptr<ops::Backend> backend;
  std::unique_ptr<model::Qwen3Model> model;
  std::unique_ptr<engine::BlockManager> blocks;
  DirectModel(const std::filesystem::path& dir, int32_t max_tokens, int32_t num_blocks,
              DType kv_dtype = DType::kF32, int32_t block_size = 16);
  // Runs one step and returns its logits rows, F32 [R, V] on the host.
  std::vector<float> run(const ops::ForwardBatch& batch);
};

// Prefills ref.prompt as sequence 1, then decodes one row per step feeding the reference's greedy
// tokens (teacher forcing, so the comparison does not depend on sampling). Returns the last prompt
// row's logits and every decode step's, [N, V] like ref.greedy_logits. `Model` is driven step by
// step (DirectModel, or a GPU test's twin: blocks and run(ForwardBatch)); its block pool must
// hold the prompt and N tokens.
template <typename Model>
std::vector<float> teacher_forced_logits(Model& m, const Reference& ref) {
  const auto t = static_cast<int64_t>(ref.prompt.size());
  const auto n = static_cast<int64_t>(ref.greedy.size());
  EXPECT_TRUE(m.blocks->ensure_capacity(1, t + n));
  app::SeqRows rows{1, ref.prompt, 0, false, true};
  std::vector<float> got = m.run(app::plan_step({rows}, *m.blocks));
  for (int64_t i = 0; i + 1 < n; ++i) {
    rows = app::SeqRows{1, {ref.greedy[static_cast<size_t>(i)]}, t + i, false, true};
    const ops::ForwardBatch batch = app::plan_step({rows}, *m.blocks);
    EXPECT_EQ(batch.phase, ops::Phase::kDecode);
    const std::vector<float> step = m.run(batch);
    got.insert(got.end(), step.begin(), step.end());
  }
  return got;
}

}  // namespace lathe::golden
