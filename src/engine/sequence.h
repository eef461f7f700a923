#pragma once
// One generation request as the scheduler sees it: token ids in, token ids out (pure host code;
// text and stop strings live in the Engine).
//
// Token bookkeeping. tokens() = prompt followed by every generated token (num_tokens() in all).
// The KV cache holds positions [0, num_computed()). The newest generated token is never in the
// cache until the next step computes it, so a decoding sequence always has exactly one
// uncomputed token. A step computes positions [num_computed, num_computed + n) and, when that
// reaches num_tokens(), the last row's logits produce the next token.
//
// Phase. A sequence is prefilling while num_computed < prompt_len: its rows are prefill rows,
// even when a chunk happens to be one token long (ARCHITECTURE rule 7: a prefill chunk's short
// tail never takes a decode arm by accident). Every position from prompt_len on is computed by a
// decode row, one position per step, exactly as it was when that token was generated. After a
// preemption by recompute this means a REPLAY: the prompt is prefilled again, then each
// generated token but the newest is fed back as a decode row whose logits are not sampled, so
// the cache holds the same bytes as before the preemption on every backend (a decode row's bits
// differ from a prefill row's on CUDA), and the continuation is the one the sequence would have
// produced unpreempted. The cost is one step per generated token to catch up.
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
  bool is_prefilling() const { return num_computed_ < prompt_len_; }
  // Prompt positions still to prefill (0 once the prompt is in the cache).
  int32_t num_prefill_left() const { return is_prefilling() ? prompt_len_ - num_computed_ : 0; }
  // Past the prompt with more than the newest token uncomputed: resumed after a preemption and
  // replaying generated tokens as unsampled decode rows.
  bool is_replaying() const { return !is_prefilling() && num_uncomputed() > 1; }
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
  // Preemption by recompute: the cache contents are gone; when readmitted the sequence prefills
  // its prompt and replays its generated tokens (see "Phase" above).
  void reset_for_recompute();

 private:
  SeqId id_;
  std::vector<int32_t> tokens_;
  int32_t prompt_len_;
  SequenceParams params_;
  TokenStopRules rules_;
  SeqStatus status_ = SeqStatus::kWaiting;
  int32_t num_computed_ = 0;
  int32_t num_preemptions_ = 0;
};

}  // namespace lathe::engine
