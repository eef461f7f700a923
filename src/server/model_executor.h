#pragma once
// The bindings of the engine's two seams (engine/executor.h) to the real model and tokenizer:
//  - ModelExecutor: engine::Executor over model::Qwen3Model on any ops::Backend (the CPU
//    reference now; the CUDA backend plugs in through the same Backend&). One step = one
//    Qwen3Model::forward over the engine's ForwardBatch, then Backend::sample once per logits
//    row. Plan/run and CUDA graphs, when they come, live behind this class.
//  - TextDetokenizer: engine::Detokenizer over tokenizer::StreamingDetokenizer.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "engine/executor.h"
#include "model/device_buffer.h"
#include "model/qwen3.h"
#include "ops/backend.h"
#include "tokenizer/streaming_detokenizer.h"
#include "tokenizer/tokenizer.h"

namespace lathe::server {

class ModelExecutor final : public engine::Executor {
 public:
  // `backend` must be the backend `model` was built on and must outlive this executor. The model
  // must accept every step the engine plans: max_tokens_per_step >= --max-num-batched-tokens,
  // max_logits_rows >= --max-num-seqs, and the KV-cache geometry given to EngineConfig.
  ModelExecutor(ops::Backend& backend, std::unique_ptr<model::Qwen3Model> model);

  // Engine thread only. Throws lathe::Error when the batch does not fit the model (the engine
  // ends that step's requests with an error and keeps serving).
  std::vector<int32_t> execute(const ops::ForwardBatch& batch, std::span<const ops::SamplingParams> sampling) override;

  const model::Qwen3Model& model() const { return *model_; }

 private:
  ops::Backend& backend_;
  std::unique_ptr<model::Qwen3Model> model_;
  model::DeviceBuffer logits_;  // F32 [max_logits_rows, vocab]
  std::vector<ops::SamplingParams> params_;  // reused per step
};

class TextDetokenizer final : public engine::Detokenizer {
 public:
  // skip_special: drop special added tokens (<|im_end|> ...) from the text, as vLLM's default
  // skip_special_tokens=true does; <think> and <tool_call> are not special in Qwen3.
  TextDetokenizer(tokenizer::Tokenizer tokenizer, bool skip_special) : stream_(std::move(tokenizer), skip_special) {}
  std::string append(int32_t token) override { return stream_.push(token); }
  std::string flush() override { return stream_.flush(); }

 private:
  tokenizer::StreamingDetokenizer stream_;
};

// One TextDetokenizer per request.
engine::DetokenizerFactory make_detokenizer_factory(tokenizer::Tokenizer tokenizer, bool skip_special = true);

}  // namespace lathe::server
