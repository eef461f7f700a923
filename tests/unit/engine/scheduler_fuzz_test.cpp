// Randomised scheduler runs against the fake model: thousands of steps with random arrivals,
// prompt lengths, max_tokens, stop ids, sampling seeds, cancellations and invalid requests, over
// KV pools small enough to force preemption. Every step checks the block manager, the queues,
// the budget, the planned rows and the ForwardBatch built from them; at the end every request
// must have finished (or been cancelled) with exactly the tokens it produces when run alone.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <optional>
#include <ostream>
#include <random>
#include <set>

#include "core/error.h"
#include "engine/forward_batch.h"
#include "engine/scheduler.h"
#include "fake_model.h"

namespace lathe::engine {
namespace {

using testing::FakeModel;
using testing::reference_generate;

constexpr int32_t kVocab = 50;  // small, so random stop ids really fire

struct FuzzCase {
  const char* name;
  int32_t num_blocks;
  int32_t block_size;
  SchedulerConfig config;
  int steps;     // steps with arrivals; then the run drains
  int max_live;  // arrivals pause while this many requests are unfinished
  uint64_t seed;
  bool expect_preemption;
};

void PrintTo(const FuzzCase& fc, std::ostream* os) {
  *os << fc.name;
}

// What the test knows about one request, independently of the scheduler.
struct Tracked {
  std::vector<int32_t> prompt;
  SequenceParams params;
  TokenStopRules rules;
  std::vector<int32_t> output;
  int32_t computed = 0;        // tokens the cache should hold
  int32_t prefill_target = 0;  // rows below this are prefill rows: the prompt, also after a preemption
  bool preempted = false;
  bool cancelled = false;
  std::optional<FinishReason> finish;

  int32_t num_tokens() const { return static_cast<int32_t>(prompt.size() + output.size()); }
  int32_t token_at(int32_t p) const {
    const auto prompt_len = static_cast<int32_t>(prompt.size());
    return p < prompt_len ? prompt[static_cast<size_t>(p)] : output[static_cast<size_t>(p - prompt_len)];
  }
};

void check_batch(const ScheduledStep& step, const ops::ForwardBatch& batch, const BlockManager& blocks) {
  const auto num_seqs = static_cast<int32_t>(step.seqs.size());
  ASSERT_EQ(batch.num_seqs(), num_seqs);
  ASSERT_EQ(batch.num_tokens(), step.num_tokens);
  ASSERT_EQ(batch.positions.size(), batch.token_ids.size());
  ASSERT_EQ(batch.slot_mapping.size(), batch.token_ids.size());
  ASSERT_EQ(batch.query_start.size(), static_cast<size_t>(num_seqs) + 1);
  ASSERT_EQ(batch.block_tables.size(), static_cast<size_t>(num_seqs) * batch.max_blocks_per_seq);
  ASSERT_EQ(batch.query_start.front(), 0);
  ASSERT_EQ(batch.query_start.back(), batch.num_tokens());
  bool all_decode = num_seqs > 0;
  std::vector<int32_t> expected_logits_rows;
  std::set<int32_t> slots;
  for (int32_t s = 0; s < num_seqs; ++s) {
    const ScheduledSeq& rows = step.seqs[static_cast<size_t>(s)];
    all_decode = all_decode && rows.decode;
    const int32_t first = batch.query_start[static_cast<size_t>(s)];
    ASSERT_EQ(batch.query_start[static_cast<size_t>(s) + 1] - first, rows.num_tokens());
    ASSERT_EQ(batch.context_lens[static_cast<size_t>(s)], rows.start + rows.num_tokens());
    const std::vector<int32_t>& table = blocks.block_table(rows.id);
    for (int32_t r = 0; r < rows.num_tokens(); ++r) {
      const auto row = static_cast<size_t>(first + r);
      const int32_t position = rows.start + r;
      ASSERT_EQ(batch.positions[row], position);  // contiguous, from the cached prefix
      ASSERT_EQ(batch.token_ids[row], rows.token_ids[static_cast<size_t>(r)]);
      const int32_t slot = batch.slot_mapping[row];
      const int32_t block = slot / blocks.block_size();
      ASSERT_NE(block, BlockManager::kScratchBlock);
      ASSERT_LT(static_cast<size_t>(position / blocks.block_size()), table.size());
      ASSERT_EQ(block, table[static_cast<size_t>(position / blocks.block_size())]);  // its own block
      ASSERT_EQ(slot % blocks.block_size(), position % blocks.block_size());
      ASSERT_TRUE(slots.insert(slot).second) << "two rows write one slot";
    }
    const int32_t used = blocks.blocks_for_tokens(rows.context_len());
    for (int32_t j = 0; j < batch.max_blocks_per_seq; ++j) {
      const int32_t entry = batch.block_tables[static_cast<size_t>(s * batch.max_blocks_per_seq + j)];
      ASSERT_EQ(entry, j < used ? table[static_cast<size_t>(j)] : BlockManager::kScratchBlock);
    }
    if (rows.samples) expected_logits_rows.push_back(first + rows.num_tokens() - 1);
  }
  ASSERT_EQ(batch.logits_rows, expected_logits_rows);
  ASSERT_EQ(batch.phase, all_decode ? ops::Phase::kDecode : ops::Phase::kPrefill);
}

// Runs one request alone through a fresh scheduler of the same configuration.
std::vector<int32_t> run_alone(const FuzzCase& fc, const Tracked& request) {
  Scheduler scheduler(fc.config, fc.num_blocks, fc.block_size);
  FakeModel model(fc.num_blocks, fc.block_size, kVocab);
  scheduler.add(1, request.prompt, request.params);
  std::vector<int32_t> output;
  while (scheduler.has_unfinished()) {
    const ScheduledStep step = scheduler.schedule();
    const std::vector<int32_t> sampled =
        model.execute(build_forward_batch(step, scheduler.blocks()), step.sampling_params());
    for (const SeqOutput& out : scheduler.update(step, sampled)) output.push_back(out.token);
  }
  return output;
}

class SchedulerFuzz : public ::testing::TestWithParam<FuzzCase> {};

TEST_P(SchedulerFuzz, EveryRequestEndsWithItsOwnTokensAndNothingLeaks) {
  const FuzzCase& fc = GetParam();
  const SchedulerConfig& config = fc.config;
  Scheduler scheduler(config, fc.num_blocks, fc.block_size);
  const BlockManager& blocks = scheduler.blocks();
  FakeModel model(fc.num_blocks, fc.block_size, kVocab);
  std::mt19937_64 rng(fc.seed);
  auto uniform = [&](int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(rng() % static_cast<uint64_t>(hi - lo + 1));
  };
  auto chance = [&](double p) { return static_cast<double>(rng() % 1000000) < p * 1e6; };

  std::map<SeqId, Tracked> tracked;
  std::set<SeqId> live;
  SeqId next_id = 1;
  int64_t rejected = 0;
  int64_t steps_run = 0;
  int64_t replayed_rows = 0;  // decode rows that put a generated token back after a preemption
  const int drain_limit = 200000;

  for (int i = 0;; ++i) {
    const bool arrivals = i < fc.steps;
    if (!arrivals && !scheduler.has_unfinished()) break;
    ASSERT_LT(i, fc.steps + drain_limit) << "the run did not drain";

    // Arrivals (a few invalid ones must be rejected without changing anything).
    if (arrivals && static_cast<int>(live.size()) < fc.max_live && chance(0.3)) {
      const int32_t max_prompt = config.max_model_len - 1;
      Tracked request;
      const int32_t prompt_len =
          static_cast<int32_t>(chance(0.5) ? uniform(1, std::min(8, max_prompt)) : uniform(1, max_prompt));
      for (int32_t t = 0; t < prompt_len; ++t)
        request.prompt.push_back(static_cast<int32_t>(uniform(0, kVocab - 1)));
      const int32_t room = config.max_model_len - prompt_len;
      request.params.max_tokens = chance(0.2) ? 0 : static_cast<int32_t>(uniform(1, std::min(room, 24)));
      const int num_stop_ids = static_cast<int>(uniform(0, 2));
      for (int s = 0; s < num_stop_ids; ++s) {
        request.params.stop_token_ids.push_back(static_cast<int32_t>(uniform(0, kVocab - 1)));
      }
      if (chance(0.5)) {
        request.params.sampling.temperature = 0.7f;
        request.params.sampling.seed = rng();
      }
      if (chance(0.03)) {
        request.params.max_tokens = room + static_cast<int32_t>(uniform(1, 5));  // too long
        const size_t before = static_cast<size_t>(scheduler.num_waiting() + scheduler.num_running());
        EXPECT_THROW(scheduler.add(next_id, request.prompt, request.params), Error);
        ASSERT_EQ(static_cast<size_t>(scheduler.num_waiting() + scheduler.num_running()), before);
        ASSERT_EQ(scheduler.find(next_id), nullptr);
        ++rejected;
      } else {
        scheduler.add(next_id, request.prompt, request.params);
        request.rules = scheduler.find(next_id)->stop_rules();
        request.prefill_target = prompt_len;
        tracked.emplace(next_id, std::move(request));
        live.insert(next_id);
      }
      ++next_id;
    }

    // Cancellations, of waiting and running requests alike.
    if (!live.empty() && chance(0.03)) {
      auto it = live.begin();
      std::advance(it, static_cast<long>(uniform(0, static_cast<int64_t>(live.size()) - 1)));
      const SeqId id = *it;
      ASSERT_TRUE(scheduler.finish(id));
      ASSERT_FALSE(blocks.has(id));
      tracked[id].cancelled = true;
      live.erase(it);
    }

    const ScheduledStep step = scheduler.schedule();
    ++steps_run;
    ASSERT_TRUE(blocks.check_invariants()) << "step " << i;
    if (step.empty()) {
      ASSERT_FALSE(scheduler.has_unfinished()) << "work was left but nothing scheduled";
    }

    // Budget, max_num_seqs, row plans.
    for (SeqId id : step.preempted) {
      Tracked& t = tracked.at(id);
      t.preempted = true;
      t.computed = 0;  // the prompt is prefilled again, the generated tokens replayed as decode rows
      ASSERT_FALSE(blocks.has(id));
    }
    ASSERT_LE(step.num_tokens, config.max_num_batched_tokens);
    ASSERT_LE(static_cast<int32_t>(step.seqs.size()), config.max_num_seqs);
    ASSERT_LE(scheduler.num_running(), config.max_num_seqs);
    int32_t total = 0;
    bool seen_prefill = false;
    bool cut_short = false;
    std::set<SeqId> in_step;
    for (const ScheduledSeq& rows : step.seqs) {
      const Tracked& t = tracked.at(rows.id);
      ASSERT_TRUE(in_step.insert(rows.id).second);
      ASSERT_EQ(std::count(step.preempted.begin(), step.preempted.end(), rows.id), 0);
      ASSERT_GT(rows.num_tokens(), 0);
      ASSERT_EQ(rows.start, t.computed) << "sequence " << rows.id;
      ASSERT_LE(rows.context_len(), t.num_tokens());
      for (int32_t r = 0; r < rows.num_tokens(); ++r)
        ASSERT_EQ(rows.token_ids[static_cast<size_t>(r)], t.token_at(rows.start + r));
      ASSERT_EQ(rows.samples, rows.context_len() == t.num_tokens());
      ASSERT_EQ(rows.decode, rows.start >= t.prefill_target);
      if (rows.decode) {
        ASSERT_EQ(rows.num_tokens(), 1);
        ASSERT_FALSE(seen_prefill) << "a decode row after a prefill chunk";
        if (!rows.samples) {  // a replayed generated token: only after a preemption
          ASSERT_TRUE(t.preempted) << "sequence " << rows.id;
          ++replayed_rows;
        }
      } else {
        seen_prefill = true;
        ASSERT_LE(rows.context_len(), t.prefill_target) << "a prefill chunk crossed the end of the prompt";
        if (!rows.samples && rows.context_len() < t.prefill_target) cut_short = true;
      }
      if (rows.samples) {
        ASSERT_EQ(rows.sampling.step, t.output.size());
        ASSERT_EQ(rows.sampling.seed, t.params.sampling.seed);
      }
      total += rows.num_tokens();
    }
    ASSERT_EQ(total, step.num_tokens);
    if (cut_short && step.preempted.empty()) {
      ASSERT_EQ(step.num_tokens, config.max_num_batched_tokens) << "a chunk was cut while budget remained";
    }

    // Queues: arrival order, running before waiting, waiting owns no blocks.
    const std::vector<SeqId>& running = scheduler.running_ids();
    const std::vector<SeqId> waiting = scheduler.waiting_ids();
    ASSERT_TRUE(std::is_sorted(running.begin(), running.end()));
    ASSERT_TRUE(std::is_sorted(waiting.begin(), waiting.end()));
    if (!running.empty() && !waiting.empty()) {
      ASSERT_LT(running.back(), waiting.front());
    }
    for (SeqId id : waiting) ASSERT_FALSE(blocks.has(id));

    const ops::ForwardBatch batch = build_forward_batch(step, blocks);
    check_batch(step, batch, blocks);
    if (::testing::Test::HasFatalFailure()) return;
    const std::vector<int32_t> sampled = model.execute(batch, step.sampling_params());
    for (const ScheduledSeq& rows : step.seqs) tracked.at(rows.id).computed = rows.context_len();
    for (const SeqOutput& out : scheduler.update(step, sampled)) {
      Tracked& t = tracked.at(out.id);
      t.output.push_back(out.token);
      if (out.finish) {
        t.finish = out.finish;
        live.erase(out.id);
        ASSERT_FALSE(blocks.has(out.id));
        ASSERT_EQ(scheduler.find(out.id), nullptr);
      }
    }
    ASSERT_TRUE(blocks.check_invariants()) << "step " << i;
  }

  EXPECT_EQ(blocks.num_used(), 0);
  EXPECT_EQ(blocks.num_sequences(), 0u);
  EXPECT_TRUE(live.empty());
  int64_t finished = 0;
  int64_t cancelled = 0;
  int64_t resumed = 0;
  int64_t checked_alone = 0;
  for (const auto& [id, t] : tracked) {
    const auto expected = reference_generate(t.prompt, t.rules, t.params.sampling, kVocab);
    if (t.cancelled) {
      ++cancelled;
      ASSERT_FALSE(t.finish.has_value());
      ASSERT_LE(t.output.size(), expected.output.size());
      ASSERT_TRUE(std::equal(t.output.begin(), t.output.end(), expected.output.begin())) << "request " << id;
      continue;
    }
    ++finished;
    ASSERT_TRUE(t.finish.has_value()) << "request " << id << " never finished";
    ASSERT_EQ(t.output, expected.output) << "request " << id << " (preempted: " << t.preempted << ")";
    ASSERT_EQ(*t.finish, expected.finish) << "request " << id;
    if (t.preempted) ++resumed;
    if (checked_alone < 25 || (t.preempted && checked_alone < 50)) {
      ASSERT_EQ(run_alone(fc, t), t.output) << "request " << id;
      ++checked_alone;
    }
  }
  EXPECT_GT(finished, 50);
  if (fc.expect_preemption) {
    EXPECT_GT(replayed_rows, 0);
  }
  EXPECT_GT(cancelled, 0);
  EXPECT_GT(rejected, 0);
  if (fc.expect_preemption) {
    EXPECT_GT(scheduler.num_preemptions(), 10);
    EXPECT_GT(resumed, 5);
  }
  RecordProperty("steps", static_cast<int>(steps_run));
  std::printf(
      "[%s] steps %lld, requests %lld finished / %lld cancelled / %lld rejected, preemptions %lld, resumed "
      "%lld, replayed rows %lld\n",
      fc.name, static_cast<long long>(steps_run), static_cast<long long>(finished),
      static_cast<long long>(cancelled), static_cast<long long>(rejected),
      static_cast<long long>(scheduler.num_preemptions()), static_cast<long long>(resumed),
      static_cast<long long>(replayed_rows));
}

INSTANTIATE_TEST_SUITE_P(
    Pools, SchedulerFuzz,
    ::testing::Values(
        // 8 usable blocks of 4 = one max_model_len sequence: constant preemption.
        FuzzCase{"tiny_pool",
                 9,
                 4,
                 {.max_num_seqs = 4, .max_num_batched_tokens = 16, .max_model_len = 32},
                 20000,
                 10,
                 1,
                 true},
        FuzzCase{"block_size_1",
                 49,
                 1,
                 {.max_num_seqs = 6, .max_num_batched_tokens = 8, .max_model_len = 40},
                 20000,
                 12,
                 2,
                 true},
        FuzzCase{"odd_block_size",
                 25,
                 3,
                 {.max_num_seqs = 5, .max_num_batched_tokens = 7, .max_model_len = 48},
                 20000,
                 12,
                 3,
                 true},
        FuzzCase{"one_seq_one_token",
                 20,
                 2,
                 {.max_num_seqs = 1, .max_num_batched_tokens = 1, .max_model_len = 32},
                 4000,
                 4,
                 4,
                 false},
        FuzzCase{"roomy",
                 257,
                 16,
                 {.max_num_seqs = 8, .max_num_batched_tokens = 64, .max_model_len = 128},
                 10000,
                 16,
                 5,
                 false},
        FuzzCase{"mid_pool_checked_vocab",
                 33,
                 4,
                 {.max_num_seqs = 8, .max_num_batched_tokens = 24, .max_model_len = 64, .vocab_size = kVocab},
                 20000,
                 16,
                 6,
                 true}),
    [](const ::testing::TestParamInfo<FuzzCase>& param_info) { return std::string(param_info.param.name); });

}  // namespace
}  // namespace lathe::engine
