#pragma once
// Continuous-batching scheduler (pure host code, never touches a device; ARCHITECTURE rule 1).
//
// Queues. `waiting` holds sequences that own no KV blocks (new, or preempted); `running` holds
// admitted sequences, each owning the blocks for its computed tokens. Both are kept in arrival
// order, and every running sequence arrived before every waiting one: admission takes the
// waiting head only (strict FIFO, no skipping), and a preempted sequence is the newest running
// one and goes back to the waiting head.
//
// One step (schedule()), vLLM-v1 style, under a token budget of max_num_batched_tokens:
//  1. every running sequence past its prompt gets one decode row (decode rows first): its newest
//     token, or, when it is replaying after a preemption, the next generated token to put back
//     into the cache (an unsampled row);
//  2. running sequences still prefilling get prompt chunks, oldest first, from what is left;
//  3. KV blocks for those rows are allocated on demand, oldest first. When the pool runs dry
//     the NEWEST running sequence is preempted by recompute: its blocks are freed, its
//     generated tokens kept, and it returns to the waiting head to prefill its prompt and
//     replay its generated tokens later (sequence.h; if the newest is the one asking, it
//     preempts itself). The oldest sequence therefore
//     always progresses, and the constructor checks that one max_model_len sequence fits the
//     pool, so every admitted request finishes;
//  4. when nothing was preempted, waiting sequences are admitted from the head while
//     running < max_num_seqs, budget remains and the blocks for their first chunk are free.
// The executor runs the step; update() then appends the sampled tokens and applies the token
// stop rules, releasing a finished sequence's blocks at once.
//
// Determinism contract (ARCHITECTURE rule 6). A sequence's rows in a step are always the
// contiguous positions [num_computed, num_computed + n) of its own tokens, its sampling step
// index is its own output count, and its block table is its own: other sequences influence only
// WHEN it runs and where its prefill chunks are cut (the budget they leave). The kernels
// guarantee that a row's result depends on neither its batch neighbours (batch invariance) nor
// the chunk boundaries (KV tiles anchored at position 0, not at the chunk start); the scheduler
// never splits a sequence differently because of others in any other way. Preemption replays
// the same tokens at the same positions through the same kind of row (prefill rows for the
// prompt, decode rows after it), so a resumed sequence's cache holds the same bytes and it
// produces the same tokens, on CUDA too.
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "engine/block_manager.h"
#include "engine/sequence.h"

namespace lathe::engine {

struct SchedulerConfig {
  int32_t max_num_seqs = 256;             // running sequences at most
  int32_t max_num_batched_tokens = 8192;  // rows per step at most (>= max_num_seqs)
  int32_t max_model_len = 4096;           // prompt + generated tokens at most
  int32_t vocab_size = 0;                 // prompt ids must be < vocab_size (0: unchecked)
};

// Checks a request against the configuration and returns the resolved max_tokens; throws
// lathe::Error naming the field otherwise. Rejects: an empty prompt; a prompt id outside
// [0, vocab_size); a prompt of max_model_len tokens or more (names both lengths); max_tokens < 0;
// prompt + max_tokens > max_model_len (names all three numbers); sampling parameters outside
// their ranges (temperature >= 0, top_k >= 0, 0 < top_p <= 1, 0 <= min_p <= 1, all finite).
int32_t validate_request(std::span<const int32_t> prompt, const SequenceParams& params,
                         const SchedulerConfig& config);

// One sequence's share of a step.
struct ScheduledSeq {
  SeqId id = 0;
  int32_t start = 0;               // first position computed (tokens already cached)
  std::vector<int32_t> token_ids;  // the sequence's tokens [start, start + n)
  bool decode = false;             // a decode row (see Sequence: phase)
  bool samples = false;            // the last row's logits produce a token this step
  ops::SamplingParams sampling;    // for that token (step = its index in the output)

  int32_t num_tokens() const { return static_cast<int32_t>(token_ids.size()); }
  int32_t context_len() const { return start + num_tokens(); }  // cached after this step
};

struct ScheduledStep {
  // Decode rows first, then prefill chunks; each group oldest first.
  std::vector<ScheduledSeq> seqs;
  std::vector<SeqId> preempted;  // sequences preempted while planning this step
  int32_t num_tokens = 0;

  bool empty() const { return seqs.empty(); }
  int32_t num_sampling() const;
  // One entry per logits row, in row order (what Executor::execute takes).
  std::vector<ops::SamplingParams> sampling_params() const;
};

// What update() reports per sampled token.
struct SeqOutput {
  SeqId id = 0;
  int32_t token = 0;
  std::optional<FinishReason> finish;  // set when a token rule ended the sequence
};

class Scheduler {
 public:
  // Throws lathe::Error when the configuration is inconsistent (names the flag).
  Scheduler(const SchedulerConfig& config, int32_t num_blocks, int32_t block_size);

  const SchedulerConfig& config() const { return config_; }
  const BlockManager& blocks() const { return blocks_; }

  // Validates (validate_request) and queues a request; throws lathe::Error when it is rejected
  // or the id is already in use.
  void add(SeqId id, std::vector<int32_t> prompt, SequenceParams params);

  // Plans the next step (empty when nothing is queued). Allocates the step's KV blocks.
  ScheduledStep schedule();

  // Records the step's result: `sampled` has one token per sampling sequence of `step`, in row
  // order. Sequences finished or cancelled since schedule() are skipped. Returns one SeqOutput per
  // token appended.
  std::vector<SeqOutput> update(const ScheduledStep& step, std::span<const int32_t> sampled);

  // Ends a waiting or running sequence now (cancellation, a stop string matched, an executor
  // error), releasing its blocks at once; the caller reports the reason. Returns false for an
  // unknown or already finished id.
  bool finish(SeqId id);

  const Sequence* find(SeqId id) const;
  int32_t num_waiting() const { return static_cast<int32_t>(waiting_.size()); }
  int32_t num_running() const { return static_cast<int32_t>(running_.size()); }
  bool has_unfinished() const { return !waiting_.empty() || !running_.empty(); }
  std::vector<SeqId> waiting_ids() const { return {waiting_.begin(), waiting_.end()}; }
  const std::vector<SeqId>& running_ids() const { return running_; }
  int64_t num_preemptions() const { return num_preemptions_; }

 private:
  Sequence& seq(SeqId id);
  void preempt_newest();
  void drop(SeqId id);

  SchedulerConfig config_;
  BlockManager blocks_;
  std::unordered_map<SeqId, std::unique_ptr<Sequence>> seqs_;
  std::deque<SeqId> waiting_;   // arrival order; own no blocks
  std::vector<SeqId> running_;  // arrival order; all arrived before any waiting one
  int64_t num_preemptions_ = 0;
};

}  // namespace lathe::engine
