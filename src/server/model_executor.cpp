#include "server/model_executor.h"

#include <fmt/ranges.h>

#include <algorithm>

#include "core/error.h"
#include "core/log.h"

namespace lathe::server {

ModelExecutor::ModelExecutor(ops::Backend& backend, std::unique_ptr<model::Qwen3Model> model,
                             const ExecutorOptions& options)
    : backend_(backend), model_(std::move(model)) {
  if (!model_) fail("internal: ModelExecutor needs a model");
  if (&model_->backend() != &backend_) fail("internal: ModelExecutor's backend is not the model's backend");
  const auto rows = static_cast<size_t>(model_->options().max_logits_rows);
  logits_ = model::DeviceBuffer(backend_, rows * static_cast<size_t>(model_->vocab_size()) * sizeof(float),
                                "the logits buffer");
  if (!options.decode_graphs) return;
  if (!backend_.capture([] {})) {
    spdlog::info("decode graphs: the {} backend cannot record graphs; every step runs eagerly", backend_.name());
    return;
  }
  const int32_t widest = std::min(options.max_decode_seqs, model_->options().max_logits_rows);
  graphs_ = std::make_unique<model::DecodeGraphs>(*model_, widest, std::max(1, options.max_blocks_per_seq),
                                                  logits_.data());
  spdlog::info("decode graphs: {} buckets ({}) recorded in {:.2f} s; wider steps and prefill run eagerly",
               graphs_->buckets().size(), fmt::join(graphs_->buckets(), ","), graphs_->capture_seconds());
}

std::vector<int32_t> ModelExecutor::execute(const ops::ForwardBatch& batch,
                                            std::span<const ops::SamplingParams> sampling) {
  const auto rows = static_cast<int64_t>(batch.logits_rows.size());
  if (static_cast<int64_t>(sampling.size()) != rows) {
    fail("internal: the step has {} logits rows but {} sampling parameter sets", rows, sampling.size());
  }
  if (rows > model_->options().max_logits_rows) {
    fail("internal: the step samples {} rows, more than the model's {} logits rows", rows,
         model_->options().max_logits_rows);
  }
  std::vector<int32_t> tokens(static_cast<size_t>(rows), 0);
  const auto mark = [this] {
    if (clock_) clock_->mark();
  };
  mark();
  if (graphs_) {
    const ops::Act replayed = graphs_->run(batch, clock_);
    if (replayed.rows > 0) {
      mark();
      sample(replayed, sampling, tokens);
      mark();
      return tokens;
    }
  }
  ops::Act logits;
  logits.data = logits_.data();
  logits.dtype = DType::kF32;
  logits.rows = rows;
  logits.cols = model_->vocab_size();
  logits.stride = logits.cols;
  mark();                          // eager: the inputs travel inside forward()
  model_->forward(batch, logits);  // validates the batch against the model's sizes
  mark();
  if (rows == 0) return tokens;  // a step of prefill chunks that finish no prompt
  sample(logits, sampling, tokens);
  mark();
  return tokens;
}

void ModelExecutor::sample(const ops::Act& logits, std::span<const ops::SamplingParams> sampling,
                           std::vector<int32_t>& tokens) {
  params_.assign(sampling.begin(), sampling.end());
  backend_.sample(logits, params_, tokens.data());
}

engine::DetokenizerFactory make_detokenizer_factory(tokenizer::Tokenizer tokenizer, bool skip_special) {
  return [tokenizer = std::move(tokenizer), skip_special](std::span<const int32_t> /*prompt*/) {
    // Byte-level BPE decodes each token to fixed bytes: no prompt context is needed.
    return std::make_unique<TextDetokenizer>(tokenizer, skip_special);
  };
}

}  // namespace lathe::server
