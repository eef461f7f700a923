#include "app/model_runner.h"

#include "app/backend_factory.h"
#include "app/cli_lists.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include "core/dtype.h"
#include "core/error.h"
#include "core/log.h"
#include "model/weights.h"

namespace lathe::app {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace

std::unique_ptr<ops::Backend> make_backend(const std::string& device) {
  BackendRequest request;
  request.device = device;
  request.max_decode_seqs = kDefaultMaxDecodeSeqs;
  return make_backend(request);
}

DType parse_kv_cache_dtype(const std::string& name, const ops::Backend& backend) {
  if (name == "auto") return backend.kind() == ops::DeviceKind::kCpu ? DType::kF32 : DType::kBF16;
  if (name == "f32" || name == "float32") return DType::kF32;
  if (name == "bf16" || name == "bfloat16") return DType::kBF16;
  if (name == "fp8" || name == "fp8_e4m3") return DType::kF8E4M3;
  fail("--kv-cache-dtype: unknown dtype '{}' (expected auto, f32, bf16, fp8 or fp8_e4m3)", name);
}

std::vector<int32_t> parse_token_ids(const std::string& text, const char* flag) {
  const std::vector<int64_t> values =
      parse_int_list(text, 0, flag, "a token id (expected comma-separated non-negative integers)");
  std::vector<int32_t> ids;
  ids.reserve(values.size());
  for (int64_t value : values) {
    if (value > INT32_MAX) fail("{}: '{}' is not a token id (expected comma-separated non-negative integers)", flag, value);
    ids.push_back(static_cast<int32_t>(value));
  }
  return ids;
}

ops::ForwardBatch plan_step(const std::vector<SeqRows>& seqs, const engine::BlockManager& blocks) {
  ops::ForwardBatch batch;
  bool decode = !seqs.empty();
  batch.query_start.push_back(0);
  for (const SeqRows& s : seqs) {
    const auto n = static_cast<int64_t>(s.tokens.size());
    if (n == 0) fail("plan_step: sequence {} has no rows", s.seq);
    decode = decode && n == 1 && s.start > 0;
    const int64_t context = s.start + n;
    batch.max_blocks_per_seq = std::max(batch.max_blocks_per_seq, blocks.blocks_for_tokens(context));
  }
  for (const SeqRows& s : seqs) {
    const auto n = static_cast<int64_t>(s.tokens.size());
    const int64_t context = s.start + n;
    if (blocks.capacity(s.seq) < context) {
      fail("plan_step: sequence {} holds {} tokens, the step needs {}", s.seq, blocks.capacity(s.seq), context);
    }
    const int32_t first_row = batch.num_tokens();
    for (int64_t i = 0; i < n; ++i) {
      batch.token_ids.push_back(s.tokens[static_cast<size_t>(i)]);
      batch.positions.push_back(static_cast<int32_t>(s.start + i));
      batch.slot_mapping.push_back(blocks.slot(s.seq, s.start + i));
      if (s.all_logits) batch.logits_rows.push_back(first_row + static_cast<int32_t>(i));
    }
    if (!s.all_logits && s.last_logits) batch.logits_rows.push_back(first_row + static_cast<int32_t>(n - 1));
    batch.query_start.push_back(batch.num_tokens());
    batch.context_lens.push_back(static_cast<int32_t>(context));
    const std::vector<int32_t>& table = blocks.block_table(s.seq);
    const int32_t used = blocks.blocks_for_tokens(context);
    for (int32_t b = 0; b < batch.max_blocks_per_seq; ++b) {
      batch.block_tables.push_back(b < used ? table[static_cast<size_t>(b)] : engine::BlockManager::kScratchBlock);
    }
  }
  batch.phase = decode ? ops::Phase::kDecode : ops::Phase::kPrefill;
  batch.num_decode_rows = decode ? batch.num_tokens() : 0;
  return batch;
}

ModelRunner::ModelRunner(const std::filesystem::path& dir, const RunnerOptions& options, int64_t max_prompt_tokens,
                         int64_t max_seq_tokens) {
  if (options.block_size < 1 || options.block_size > ops::kMaxKvBlockSize) {
    fail("--block-size must be in [1, {}], got {}", ops::kMaxKvBlockSize, options.block_size);
  }
  if (options.max_model_len < 0) fail("--max-model-len must be positive, got {}", options.max_model_len);
  if (options.prefill_chunk < 0) fail("--max-num-batched-tokens must be positive, got {}", options.prefill_chunk);
  model::ModelConfig config = model::load_model_config(dir);
  backend_ = make_backend(options.device);
  const DType kv_dtype = parse_kv_cache_dtype(options.kv_cache_dtype, *backend_);
  max_model_len_ = options.max_model_len > 0 ? options.max_model_len : config.max_position_embeddings;
  if (max_model_len_ <= 0) max_model_len_ = max_seq_tokens;
  capacity_ = std::min(std::max<int64_t>(max_seq_tokens, 1), max_model_len_);
  const int64_t prompt_rows = std::clamp<int64_t>(max_prompt_tokens, 1, capacity_);
  chunk_ = static_cast<int32_t>(options.prefill_chunk > 0 ? std::min<int64_t>(options.prefill_chunk, prompt_rows)
                                                          : prompt_rows);

  const int64_t blocks_needed = (capacity_ + options.block_size - 1) / options.block_size + 1;  // + scratch block
  if (blocks_needed > INT32_MAX / options.block_size) fail("--max-model-len {} is too large", max_model_len_);
  blocks_ = std::make_unique<engine::BlockManager>(static_cast<int32_t>(blocks_needed), options.block_size);

  model::Qwen3Options model_options;
  model_options.max_tokens_per_step = chunk_;
  model_options.max_logits_rows = chunk_;
  model_options.num_kv_blocks = static_cast<int32_t>(blocks_needed);
  model_options.kv_block_size = options.block_size;
  model_options.kv_dtype = kv_dtype;
  model_options.calculate_kv_scales = options.calculate_kv_scales;
  model::Qwen3Weights weights = model::load_qwen3_weights(config);
  model_ = std::make_unique<model::Qwen3Model>(*backend_, std::move(config), std::move(weights), model_options);
  logits_ = model::DeviceBuffer(*backend_, static_cast<size_t>(chunk_) * static_cast<size_t>(model_->vocab_size()) *
                                               sizeof(float),
                                "the logits buffer");
}

void ModelRunner::check_prompt(const std::vector<int32_t>& prompt) const {
  if (prompt.empty()) fail("--prompt-ids: the prompt is empty");
  const int64_t vocab = model_->vocab_size();
  for (int32_t id : prompt) {
    if (id < 0 || id >= vocab) fail("--prompt-ids: id {} is outside the model's vocabulary [0, {})", id, vocab);
  }
  if (static_cast<int64_t>(prompt.size()) > capacity_) {
    fail("--prompt-ids: the prompt has {} tokens, more than the maximum model length {}", prompt.size(), capacity_);
  }
}

ops::Act ModelRunner::step(const ops::ForwardBatch& batch) {
  ops::Act logits;
  logits.data = logits_.data();
  logits.dtype = DType::kF32;
  logits.rows = static_cast<int64_t>(batch.logits_rows.size());
  logits.cols = model_->vocab_size();
  logits.stride = logits.cols;
  model_->forward(batch, logits);
  return logits;
}

ops::Act ModelRunner::prefill(engine::SeqId seq, const std::vector<int32_t>& prompt, bool all_logits,
                              std::vector<float>* all_out) {
  const auto total = static_cast<int64_t>(prompt.size());
  if (!blocks_->ensure_capacity(seq, total)) fail("the KV cache cannot hold a prompt of {} tokens", total);
  ops::Act logits;
  for (int64_t start = 0; start < total; start += chunk_) {
    const int64_t n = std::min<int64_t>(chunk_, total - start);
    SeqRows rows;
    rows.seq = seq;
    rows.tokens.assign(prompt.begin() + start, prompt.begin() + start + n);
    rows.start = start;
    rows.all_logits = all_logits;
    rows.last_logits = start + n == total;
    logits = step(plan_step({rows}, *blocks_));
    if (all_logits) {
      const size_t count = static_cast<size_t>(logits.rows * logits.cols);
      const size_t offset = all_out->size();
      all_out->resize(offset + count);
      backend_->download(all_out->data() + offset, logits.data, count * sizeof(float));
    }
  }
  return logits;
}

std::vector<float> ModelRunner::prompt_logits(const std::vector<int32_t>& prompt) {
  check_prompt(prompt);
  const engine::SeqId seq = next_seq_++;
  std::vector<float> out;
  out.reserve(prompt.size() * static_cast<size_t>(model_->vocab_size()));
  try {
    prefill(seq, prompt, /*all_logits=*/true, &out);
  } catch (...) {
    blocks_->release(seq);
    throw;
  }
  blocks_->release(seq);
  return out;
}

GenerateResult ModelRunner::generate(const std::vector<int32_t>& prompt, const GenerateOptions& options,
                                     const std::function<void(int32_t)>& on_token) {
  check_prompt(prompt);
  GenerateResult result;
  result.prompt_tokens = static_cast<int64_t>(prompt.size());
  const int64_t room = max_model_len_ - result.prompt_tokens;
  if (room <= 0) {
    fail("--prompt-ids: the prompt ({} tokens) reaches the maximum model length {}; nothing can be generated",
         result.prompt_tokens, max_model_len_);
  }
  const int64_t limit = std::min(options.max_tokens, room);
  if (limit < options.max_tokens && log_once("runner.max_tokens_capped")) {
    spdlog::info("generate: max tokens capped at {} by the maximum model length {}", limit, max_model_len_);
  }
  result.finish_reason = "length";
  if (limit <= 0) return result;

  const engine::SeqId seq = next_seq_++;
  struct Release {
    engine::BlockManager& blocks;
    engine::SeqId seq;
    ~Release() { blocks.release(seq); }
  } release{*blocks_, seq};

  auto emit = [&](int32_t id) -> bool {  // true when generation goes on
    result.ids.push_back(id);
    if (on_token) on_token(id);
    if (std::find(options.stop_ids.begin(), options.stop_ids.end(), id) != options.stop_ids.end()) {
      result.finish_reason = "stop";
      return false;
    }
    return static_cast<int64_t>(result.ids.size()) < limit;
  };
  ops::SamplingParams params = options.sampling;
  int32_t token = 0;

  const Clock::time_point prefill_start = Clock::now();
  ops::Act logits = prefill(seq, prompt, /*all_logits=*/false, nullptr);
  params.step = 0;
  backend_->sample(logits, {params}, &token);
  result.prefill_seconds = seconds_since(prefill_start);

  const Clock::time_point decode_start = Clock::now();
  int64_t position = result.prompt_tokens;
  while (emit(token)) {
    if (!blocks_->ensure_capacity(seq, position + 1)) fail("the KV cache cannot hold {} tokens", position + 1);
    SeqRows rows;
    rows.seq = seq;
    rows.tokens = {token};
    rows.start = position;
    logits = step(plan_step({rows}, *blocks_));
    params.step = static_cast<uint64_t>(result.ids.size());
    backend_->sample(logits, {params}, &token);
    ++position;
    ++result.decode_steps;
  }
  result.decode_seconds = seconds_since(decode_start);
  return result;
}

}  // namespace lathe::app
