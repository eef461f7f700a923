#pragma once
// A single-sequence runner for the CLI (`generate`, `logits`): loads a model directory onto a
// backend, prefills a prompt (optionally in chunks), then decodes one token per step, with
// engine::BlockManager owning the KV blocks. The serving engine (engine/) is the multi-sequence
// version of this loop; this one stays small on purpose.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/block_manager.h"
#include "model/config.h"
#include "model/qwen3.h"
#include "ops/backend.h"
#include "ops/kv_cache.h"
#include "ops/sampling.h"

namespace lathe::app {

struct RunnerOptions {
  std::string device = "auto";          // cpu | auto | cuda (--device)
  std::string kv_cache_dtype = "auto";  // auto | f32 | bf16 | fp8 | fp8_e4m3 (--kv-cache-dtype)
  int64_t max_model_len = 0;            // 0: the config's max_position_embeddings
  int32_t prefill_chunk = 0;            // prompt tokens per prefill step; 0: the whole prompt
  int32_t block_size = ops::kDefaultKvBlockSize;  // --block-size
  bool calculate_kv_scales = false;     // FP8 KV: calibrate scales on the first prefill (--calculate-kv-scales)
};

// Decode rows the attention workspace is sized for when a caller does not say (app/backend_factory.h).
inline constexpr int32_t kDefaultMaxDecodeSeqs = 256;
// The backend for --device (auto | cpu | cuda) through app/backend_factory.h, sized for
// kDefaultMaxDecodeSeqs decode rows. Anything else is an error naming the flag.
std::unique_ptr<ops::Backend> make_backend(const std::string& device);
// The KV dtype for --kv-cache-dtype on `backend` ("auto": F32 on the CPU, BF16 elsewhere).
DType parse_kv_cache_dtype(const std::string& name, const ops::Backend& backend);
// Parses "1,2,3" (spaces allowed around ids); errors name --prompt-ids.
std::vector<int32_t> parse_token_ids(const std::string& text, const char* flag);

// One sequence's rows in a step: tokens at positions [start, start + tokens.size()).
struct SeqRows {
  engine::SeqId seq = 0;
  std::vector<int32_t> tokens;
  int64_t start = 0;
  bool all_logits = false;   // return the logits of every row (else see last_logits)
  bool last_logits = true;   // return the logits of the last row
};

// Plans one step (ops/batch.h) over sequences whose blocks already hold start + tokens.size()
// tokens in `blocks`. Rows follow the order of `seqs`; phase is kDecode iff every sequence
// contributes one row at start > 0.
ops::ForwardBatch plan_step(const std::vector<SeqRows>& seqs, const engine::BlockManager& blocks);

struct GenerateOptions {
  int64_t max_tokens = 16;
  ops::SamplingParams sampling;     // step is set per generated token
  std::vector<int32_t> stop_ids;    // eos ids: generation ends after emitting one of them
};

struct GenerateResult {
  std::vector<int32_t> ids;         // generated ids, including a final stop id when one ended it
  std::string finish_reason;        // "stop" (a stop id) or "length"
  int64_t prompt_tokens = 0;
  double prefill_seconds = 0.0;     // prefill steps and the first token's sampling
  double decode_seconds = 0.0;      // every later step (forward + sampling)
  int64_t decode_steps = 0;
};

class ModelRunner {
 public:
  // Loads `dir` (config, weights). Sizes the KV cache for one sequence of up to
  // min(max_seq_tokens, max model length) tokens, and the scratch for prefill steps of
  // min(prefill_chunk or max_prompt_tokens, ...) rows.
  ModelRunner(const std::filesystem::path& dir, const RunnerOptions& options, int64_t max_prompt_tokens,
              int64_t max_seq_tokens);

  const model::ModelConfig& config() const { return model_->config(); }
  model::Qwen3Model& model() { return *model_; }
  ops::Backend& backend() { return *backend_; }
  // The longest sequence (prompt + generated) this runner holds.
  int64_t capacity() const { return capacity_; }
  // The maximum model length (--max-model-len, else max_position_embeddings).
  int64_t max_model_len() const { return max_model_len_; }

  // Logits F32 [T, V] (row-major) of every prompt position.
  std::vector<float> prompt_logits(const std::vector<int32_t>& prompt);
  // Prefill then decode until a stop id, max_tokens or the capacity. on_token sees each id as
  // it is produced.
  GenerateResult generate(const std::vector<int32_t>& prompt, const GenerateOptions& options,
                          const std::function<void(int32_t)>& on_token = {});

 private:
  void check_prompt(const std::vector<int32_t>& prompt) const;
  // Runs one planned step; returns the view of its logits rows in logits_.
  ops::Act step(const ops::ForwardBatch& batch);
  // Prefills `prompt` of a fresh sequence `seq` in chunks; the last chunk returns its last row's
  // logits, or every row's when all_logits (then appended to all_out, [T, V]).
  ops::Act prefill(engine::SeqId seq, const std::vector<int32_t>& prompt, bool all_logits, std::vector<float>* all_out);

  std::unique_ptr<ops::Backend> backend_;
  std::unique_ptr<model::Qwen3Model> model_;
  std::unique_ptr<engine::BlockManager> blocks_;
  model::DeviceBuffer logits_;  // F32 [max_logits_rows, V]
  int64_t capacity_ = 0;
  int64_t max_model_len_ = 0;
  int32_t chunk_ = 0;
  engine::SeqId next_seq_ = 1;
};

}  // namespace lathe::app
