#include "engine/scheduler.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"

namespace lathe::engine {

int32_t validate_request(std::span<const int32_t> prompt, const SequenceParams& params,
                         const SchedulerConfig& config) {
  const int64_t prompt_len = static_cast<int64_t>(prompt.size());
  if (prompt_len == 0) fail("the prompt is empty: at least one prompt token is needed");
  if (config.vocab_size > 0) {
    for (size_t i = 0; i < prompt.size(); ++i) {
      if (prompt[i] < 0 || prompt[i] >= config.vocab_size) {
        fail("prompt token {} (at index {}) is outside the vocabulary [0, {})", prompt[i], i,
             config.vocab_size);
      }
    }
  }
  if (prompt_len >= config.max_model_len) {
    fail(
        "the prompt has {} tokens but max_model_len is {}: the prompt must be shorter than max_model_len to "
        "leave room "
        "for at least one generated token",
        prompt_len, config.max_model_len);
  }
  if (params.max_tokens < 0) fail("max_tokens must be at least 1 (got {})", params.max_tokens);
  const int64_t room = config.max_model_len - prompt_len;
  if (params.max_tokens > room) {
    fail(
        "max_tokens is too large: the prompt has {} tokens and max_tokens is {}, together {}, but "
        "max_model_len is {}",
        prompt_len, params.max_tokens, prompt_len + params.max_tokens, config.max_model_len);
  }
  const ops::SamplingParams& sampling = params.sampling;
  if (!std::isfinite(sampling.temperature) || sampling.temperature < 0.0f) {
    fail("temperature must be a finite number >= 0 (got {})", sampling.temperature);
  }
  if (sampling.top_k < 0) fail("top_k must be >= 0 (0 disables it; got {})", sampling.top_k);
  if (!std::isfinite(sampling.top_p) || sampling.top_p <= 0.0f || sampling.top_p > 1.0f) {
    fail("top_p must be in (0, 1] (got {})", sampling.top_p);
  }
  if (!std::isfinite(sampling.min_p) || sampling.min_p < 0.0f || sampling.min_p > 1.0f) {
    fail("min_p must be in [0, 1] (got {})", sampling.min_p);
  }
  return params.max_tokens == 0 ? static_cast<int32_t>(room) : params.max_tokens;
}

int32_t ScheduledStep::num_sampling() const {
  return static_cast<int32_t>(
      std::count_if(seqs.begin(), seqs.end(), [](const ScheduledSeq& s) { return s.samples; }));
}

std::vector<ops::SamplingParams> ScheduledStep::sampling_params() const {
  std::vector<ops::SamplingParams> params;
  for (const ScheduledSeq& s : seqs) {
    if (s.samples) params.push_back(s.sampling);
  }
  return params;
}

Scheduler::Scheduler(const SchedulerConfig& config, int32_t num_blocks, int32_t block_size)
    : config_(config), blocks_(num_blocks, block_size) {
  if (config.max_num_seqs < 1) fail("--max-num-seqs must be at least 1 (got {})", config.max_num_seqs);
  if (config.max_model_len < 2) fail("--max-model-len must be at least 2 (got {})", config.max_model_len);
  if (config.max_num_batched_tokens < config.max_num_seqs) {
    fail(
        "--max-num-batched-tokens ({}) must be at least --max-num-seqs ({}): every running sequence needs a "
        "decode row",
        config.max_num_batched_tokens, config.max_num_seqs);
  }
  if (blocks_.blocks_for_tokens(config.max_model_len) > blocks_.num_usable()) {
    fail(
        "the KV cache holds {} tokens ({} usable blocks of {}), less than one sequence of --max-model-len "
        "{}; lower "
        "--max-model-len or give the cache more memory",
        static_cast<int64_t>(blocks_.num_usable()) * block_size, blocks_.num_usable(), block_size,
        config.max_model_len);
  }
}

Sequence& Scheduler::seq(SeqId id) {
  const auto it = seqs_.find(id);
  if (it == seqs_.end()) fail("internal: unknown sequence {}", id);
  return *it->second;
}

const Sequence* Scheduler::find(SeqId id) const {
  const auto it = seqs_.find(id);
  return it == seqs_.end() ? nullptr : it->second.get();
}

void Scheduler::add(SeqId id, std::vector<int32_t> prompt, SequenceParams params) {
  if (seqs_.contains(id)) fail("internal: sequence id {} is already in use", id);
  TokenStopRules rules;
  rules.max_tokens = validate_request(prompt, params, config_);
  rules.max_model_len = config_.max_model_len;
  rules.stop_token_ids = params.stop_token_ids;
  seqs_.emplace(id, std::make_unique<Sequence>(id, std::move(prompt), std::move(params), std::move(rules)));
  waiting_.push_back(id);
}

void Scheduler::preempt_newest() {
  const SeqId id = running_.back();
  running_.pop_back();
  blocks_.release(id);
  Sequence& victim = seq(id);
  victim.reset_for_recompute();
  victim.set_status(SeqStatus::kWaiting);
  waiting_.push_front(id);  // it arrived before every waiting sequence: FIFO order is kept
  ++num_preemptions_;
}

namespace {

ScheduledSeq plan_rows(const Sequence& s, int32_t n) {
  ScheduledSeq rows;
  rows.id = s.id();
  rows.start = s.num_computed();
  rows.token_ids.assign(s.tokens().begin() + rows.start, s.tokens().begin() + rows.start + n);
  rows.decode = !s.is_prefilling();
  rows.samples = rows.start + n == s.num_tokens();
  rows.sampling = s.next_sampling();
  return rows;
}

}  // namespace

ScheduledStep Scheduler::schedule() {
  ScheduledStep step;
  int32_t budget = config_.max_num_batched_tokens;

  // 1-2. Rows for running sequences: decode rows first, then prefill chunks oldest first.
  std::vector<int32_t> planned(running_.size(), 0);
  for (size_t i = 0; i < running_.size() && budget > 0; ++i) {
    if (!seq(running_[i]).is_prefilling()) {
      planned[i] = 1;
      --budget;
    }
  }
  for (size_t i = 0; i < running_.size() && budget > 0; ++i) {
    const Sequence& s = seq(running_[i]);
    if (s.is_prefilling()) {
      planned[i] = std::min(s.num_prefill_left(), budget);
      budget -= planned[i];
    }
  }

  // 3. Blocks, oldest first; preempt the newest running sequence while the pool is dry. Victims
  // are always at or after index i, so no sequence already given blocks this step is undone.
  for (size_t i = 0; i < running_.size(); ++i) {
    if (planned[i] == 0) continue;
    Sequence& s = seq(running_[i]);
    const int64_t need = static_cast<int64_t>(s.num_computed()) + planned[i];
    while (!blocks_.ensure_capacity(s.id(), need)) {
      const bool self = running_.size() - 1 == i;
      step.preempted.push_back(running_.back());
      planned.pop_back();
      preempt_newest();
      if (self) break;
    }
  }

  budget = config_.max_num_batched_tokens;
  for (const bool decode_group : {true, false}) {
    for (size_t i = 0; i < running_.size(); ++i) {
      const Sequence& s = seq(running_[i]);
      if (planned[i] == 0 || s.is_prefilling() == decode_group) continue;
      step.seqs.push_back(plan_rows(s, planned[i]));
      budget -= planned[i];
    }
  }

  // 4. Admission, strictly FIFO, only when the pool was not short this step.
  if (step.preempted.empty()) {
    while (!waiting_.empty() && num_running() < config_.max_num_seqs && budget > 0) {
      Sequence& s = seq(waiting_.front());
      const int32_t n = std::min(s.num_prefill_left(), budget);
      if (!blocks_.ensure_capacity(s.id(), n)) break;
      waiting_.pop_front();
      running_.push_back(s.id());
      s.set_status(SeqStatus::kRunning);
      step.seqs.push_back(plan_rows(s, n));
      budget -= n;
    }
  }
  step.num_tokens = config_.max_num_batched_tokens - budget;
  return step;
}

std::vector<SeqOutput> Scheduler::update(const ScheduledStep& step, std::span<const int32_t> sampled) {
  if (static_cast<int32_t>(sampled.size()) != step.num_sampling()) {
    fail("internal: the executor returned {} tokens for a step with {} sampling sequences", sampled.size(),
         step.num_sampling());
  }
  std::vector<SeqOutput> outputs;
  size_t next = 0;
  for (const ScheduledSeq& rows : step.seqs) {
    const int32_t token = rows.samples ? sampled[next++] : 0;
    const auto it = seqs_.find(rows.id);
    if (it == seqs_.end()) continue;  // finished or cancelled since schedule()
    Sequence& s = *it->second;
    if (s.status() != SeqStatus::kRunning || s.num_computed() != rows.start) {
      fail("internal: sequence {} changed between schedule() and update()", rows.id);
    }
    s.mark_computed(rows.num_tokens());
    if (!rows.samples) continue;
    if (config_.vocab_size > 0 && (token < 0 || token >= config_.vocab_size)) {
      fail("internal: the executor sampled token {} outside the vocabulary [0, {})", token,
           config_.vocab_size);
    }
    SeqOutput out{rows.id, token, s.append_token(token)};
    if (out.finish) drop(rows.id);
    outputs.push_back(out);
  }
  return outputs;
}

bool Scheduler::finish(SeqId id) {
  const auto it = seqs_.find(id);
  if (it == seqs_.end()) return false;
  drop(id);
  return true;
}

void Scheduler::drop(SeqId id) {
  Sequence& s = seq(id);
  if (s.status() == SeqStatus::kWaiting) {
    waiting_.erase(std::find(waiting_.begin(), waiting_.end(), id));
  } else if (s.status() == SeqStatus::kRunning) {
    running_.erase(std::find(running_.begin(), running_.end(), id));
    blocks_.release(id);
  }
  seqs_.erase(id);
}

}  // namespace lathe::engine
