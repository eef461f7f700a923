#include "engine/sequence.h"

#include "core/error.h"

namespace lathe::engine {

Sequence::Sequence(SeqId id, std::vector<int32_t> prompt, SequenceParams params, TokenStopRules rules)
    : id_(id),
      tokens_(std::move(prompt)),
      prompt_len_(static_cast<int32_t>(tokens_.size())),
      params_(std::move(params)),
      rules_(std::move(rules)) {
  if (prompt_len_ <= 0) fail("internal: sequence {} has an empty prompt", id);
}

ops::SamplingParams Sequence::next_sampling() const {
  ops::SamplingParams sampling = params_.sampling;
  sampling.step = static_cast<uint64_t>(num_output());
  return sampling;
}

void Sequence::mark_computed(int32_t n) {
  if (n < 0 || n > num_uncomputed()) {
    fail("internal: sequence {} computes {} tokens but has {} uncomputed", id_, n, num_uncomputed());
  }
  num_computed_ += n;
}

std::optional<FinishReason> Sequence::append_token(int32_t token) {
  if (num_uncomputed() != 0) {
    fail("internal: sequence {} samples a token with {} tokens still uncomputed", id_, num_uncomputed());
  }
  tokens_.push_back(token);
  return check_token_stop(rules_, prompt_len_, num_output(), token);
}

void Sequence::reset_for_recompute() {
  num_computed_ = 0;
  ++num_preemptions_;
}

}  // namespace lathe::engine
