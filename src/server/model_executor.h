#pragma once
// The bindings of the engine's two seams (engine/executor.h) to the real model and tokenizer:
//  - ModelExecutor: engine::Executor over model::Qwen3Model on any ops::Backend (the CPU
//    reference now; the CUDA backend plugs in through the same Backend&). One step = one
//    Qwen3Model::forward over the engine's ForwardBatch, then Backend::sample once per logits
//    row. Pure-decode steps replay recorded decode graphs (model/decode_graphs.h) when the
//    backend can record them and the caller asks for them.
//  - TextDetokenizer: engine::Detokenizer over tokenizer::StreamingDetokenizer.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "engine/executor.h"
#include "model/decode_graphs.h"
#include "model/device_buffer.h"
#include "model/qwen3.h"
#include "ops/backend.h"
#include "tokenizer/streaming_detokenizer.h"
#include "tokenizer/tokenizer.h"

namespace lathe::server {

struct ExecutorOptions {
  // Record decode graphs at construction (ignored, with a log line, on backends that cannot).
  bool decode_graphs = false;
  int32_t max_decode_seqs = 1;     // the widest decode step (--max-num-seqs); the largest bucket
  int32_t max_blocks_per_seq = 1;  // block-table width of the longest sequence (max-model-len)
};

class ModelExecutor final : public engine::Executor {
 public:
  // `backend` must be the backend `model` was built on and must outlive this executor. The model
  // must accept every step the engine plans: max_tokens_per_step >= --max-num-batched-tokens,
  // max_logits_rows >= --max-num-seqs, and the KV-cache geometry given to EngineConfig.
  ModelExecutor(ops::Backend& backend, std::unique_ptr<model::Qwen3Model> model, const ExecutorOptions& options = {});

  // Engine thread only. Throws lathe::Error when the batch does not fit the model (the engine
  // ends that step's requests with an error and keeps serving).
  std::vector<int32_t> execute(const ops::ForwardBatch& batch, std::span<const ops::SamplingParams> sampling) override;

  // Marks each step's phases on `clock` (nullptr: none; the clock must outlive its use): at
  // entry, once the inputs are on their way, once the forward is issued, and after sampling, when
  // the ids are on the host. So a caller's collect() after a step gives, on the device's clock,
  // the input copy (with the host's packing), the forward, and sampling with the ids' trip back.
  void set_step_clock(ops::OpClock* clock) { clock_ = clock; }

  const model::Qwen3Model& model() const { return *model_; }
  // The recorded decode graphs, or nullptr when every step runs eagerly.
  const model::DecodeGraphs* decode_graphs() const { return graphs_.get(); }

 private:
  void sample(const ops::Act& logits, std::span<const ops::SamplingParams> sampling, std::vector<int32_t>& tokens);

  ops::Backend& backend_;
  std::unique_ptr<model::Qwen3Model> model_;
  model::DeviceBuffer logits_;  // F32 [max_logits_rows, vocab]
  std::vector<ops::SamplingParams> params_;  // reused per step
  std::unique_ptr<model::DecodeGraphs> graphs_;
  ops::OpClock* clock_ = nullptr;
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
