#pragma once
// One generation request as the scheduler sees it: token ids in, token ids out (pure host code;
// text and stop strings live in the Engine).
//
// Token bookkeeping. tokens() = prompt followed by every generated token (num_tokens() in all).
// The KV cache holds positions [0, num_computed()). The newest generated token is never in the
// cache until the next step computes it, so a decoding sequence always has exactly one
// uncomputed token; a prefilling one has more. A step computes positions
// [num_computed, num_computed + n) and, when that reaches num_tokens(), the last row's logits
// produce the next token.
//
// Phase. A sequence is prefilling while num_computed < prefill_target, where prefill_target is
// the number of tokens it had when it was (re)admitted: the prompt for a fresh sequence, the
// prompt plus everything generated so far for one resumed after preemption (recompute). Its
// rows are decode rows only after that, even if a prefill chunk happens to be one token long
// (ARCHITECTURE rule 7: a prefill chunk's short tail never takes a decode arm by accident).
#include <cstdint>
#include <span>
#include <vector>

#include "engine/block_manager.h"
#include "engine/stop.h"
#include "ops/sampling.h"

namespace lathe::engine {

// What a sequence asks of the scheduler besides its prompt.
struct SequenceParams {
  // Tokens to generate at most; 0 means "as many as max_model_len leaves" (prompt excluded).
  int32_t max_tokens = 0;
  // Any of these ends the sequence with kStop (callers merge the model's EOS ids in here).
  std::vector<int32_t> stop_token_ids;
  // Sampling rule inputs; `step` is ignored here and set per generated token (the index of the
  // token being generated within this request), so draws never depend on the batch.
  ops::SamplingParams sampling;
};

enum class SeqStatus { kWaiting, kRunning, kFinished };

class Sequence {
 public:
  // `rules.max_tokens` must already be resolved (validate_request does it).
  Sequence(SeqId id, std::vector<int32_t> prompt, SequenceParams params, TokenStopRules rules);

  SeqId id() const { return id_; }
  SeqStatus status() const { return status_; }
  const std::vector<int32_t>& tokens() const { return tokens_; }
  int32_t num_tokens() const { return static_cast<int32_t>(tokens_.size()); }
  int32_t prompt_len() const { return prompt_len_; }
  int32_t num_output() const { return num_tokens() - prompt_len_; }
  std::span<const int32_t> output() const { return std::span<const int32_t>(tokens_).subspan(prompt_len_); }
  int32_t num_computed() const { return num_computed_; }
  int32_t num_uncomputed() const { return num_tokens() - num_computed_; }
  bool is_prefilling() const { return num_computed_ < prefill_target_; }
  int32_t num_preemptions() const { return num_preemptions_; }
  const SequenceParams& params() const { return params_; }
  const TokenStopRules& stop_rules() const { return rules_; }
  // Sampling parameters for the token generated next (step = num_output()).
  ops::SamplingParams next_sampling() const;

  // ---- mutations (the Scheduler's; they keep the bookkeeping above consistent) ----------------
  void set_status(SeqStatus status) { status_ = status; }
  // `n` more tokens are now in the cache (n <= num_uncomputed()).
  void mark_computed(int32_t n);
  // Appends a generated token; returns the token rule that ends the sequence, if any.
  std::optional<FinishReason> append_token(int32_t token);
  // Preemption by recompute: the cache contents are gone; every token (prompt and generated) is
  // prefilled again when the sequence is readmitted.
  void reset_for_recompute();

 private:
  SeqId id_;
  std::vector<int32_t> tokens_;
  int32_t prompt_len_;
  SequenceParams params_;
  TokenStopRules rules_;
  SeqStatus status_ = SeqStatus::kWaiting;
  int32_t num_computed_ = 0;
  int32_t prefill_target_;
  int32_t num_preemptions_ = 0;
};

}  // namespace lathe::engine
