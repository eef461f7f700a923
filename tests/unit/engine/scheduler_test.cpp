// Hand-built scheduler scenarios: admission limits, chunked prefill mixed with decode,
// preemption by recompute, cancellation, stop rules, and the ForwardBatch built from a step.
#include "engine/scheduler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <numeric>

#include "core/error.h"
#include "engine/forward_batch.h"
#include "fake_model.h"

namespace lathe::engine {
namespace {

using testing::FakeModel;
using testing::reference_generate;

constexpr int32_t kVocab = 1000;

std::vector<int32_t> iota_prompt(int32_t len, int32_t first = 1) {
  std::vector<int32_t> prompt(static_cast<size_t>(len));
  std::iota(prompt.begin(), prompt.end(), first);
  return prompt;
}

SequenceParams with_max_tokens(int32_t max_tokens) {
  SequenceParams params;
  params.max_tokens = max_tokens;
  return params;
}

std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// Runs one step through the fake model; returns the step that was run.
ScheduledStep run_step(Scheduler& scheduler, FakeModel& model, std::vector<SeqOutput>* outputs = nullptr) {
  ScheduledStep step = scheduler.schedule();
  const ops::ForwardBatch batch = build_forward_batch(step, scheduler.blocks());
  const std::vector<int32_t> sampled = model.execute(batch, step.sampling_params());
  std::vector<SeqOutput> out = scheduler.update(step, sampled);
  if (outputs) *outputs = std::move(out);
  EXPECT_TRUE(scheduler.blocks().check_invariants());
  return step;
}

TEST(Scheduler, RejectsRequestsThatCannotFitWithAReason) {
  SchedulerConfig config{
      .max_num_seqs = 4, .max_num_batched_tokens = 32, .max_model_len = 16, .vocab_size = kVocab};
  Scheduler scheduler(config, 9, 2);
  std::string message = error_of([&] { scheduler.add(1, iota_prompt(20), {}); });
  EXPECT_NE(message.find("20"), std::string::npos) << message;
  EXPECT_NE(message.find("16"), std::string::npos) << message;
  message = error_of([&] { scheduler.add(1, iota_prompt(16), {}); });  // no room for one token
  EXPECT_NE(message.find("max_model_len is 16"), std::string::npos) << message;
  message = error_of([&] { scheduler.add(1, iota_prompt(10), with_max_tokens(7)); });
  EXPECT_NE(message.find("max_tokens"), std::string::npos) << message;
  EXPECT_NE(message.find("17"), std::string::npos) << message;
  EXPECT_NE(error_of([&] { scheduler.add(1, {}, {}); }), "");
  EXPECT_NE(error_of([&] { scheduler.add(1, {1, kVocab}, {}); }).find("vocabulary"), std::string::npos);
  SequenceParams bad_sampling;
  bad_sampling.sampling.top_p = 0.0f;
  EXPECT_NE(error_of([&] { scheduler.add(1, iota_prompt(3), bad_sampling); }).find("top_p"),
            std::string::npos);
  bad_sampling.sampling.top_p = 1.0f;
  bad_sampling.sampling.temperature = -1.0f;
  EXPECT_NE(error_of([&] { scheduler.add(1, iota_prompt(3), bad_sampling); }).find("temperature"),
            std::string::npos);
  EXPECT_FALSE(scheduler.has_unfinished());
  // prompt + max_tokens == max_model_len exactly is accepted.
  scheduler.add(1, iota_prompt(10), with_max_tokens(6));
  EXPECT_EQ(scheduler.find(1)->stop_rules().max_tokens, 6);
  scheduler.add(2, iota_prompt(10), {});
  EXPECT_EQ(scheduler.find(2)->stop_rules().max_tokens, 6);  // default: what max_model_len leaves
}

TEST(Scheduler, RejectsInconsistentConfigurations) {
  EXPECT_NE(error_of([] {
              Scheduler s({.max_num_seqs = 8, .max_num_batched_tokens = 4, .max_model_len = 8}, 64, 4);
            }).find("--max-num-batched-tokens"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              Scheduler s({.max_num_seqs = 1, .max_num_batched_tokens = 4, .max_model_len = 64}, 9, 4);
            }).find("--max-model-len"),
            std::string::npos);
}

TEST(Scheduler, DecodeRowsFirstThenPrefillChunksFromTheRemainingBudget) {
  SchedulerConfig config{
      .max_num_seqs = 4, .max_num_batched_tokens = 8, .max_model_len = 64, .vocab_size = kVocab};
  Scheduler scheduler(config, 64, 4);
  FakeModel model(64, 4, kVocab);
  scheduler.add(1, iota_prompt(3), with_max_tokens(10));
  ScheduledStep step = run_step(scheduler, model);
  ASSERT_EQ(step.seqs.size(), 1u);
  EXPECT_FALSE(step.seqs[0].decode);
  EXPECT_TRUE(step.seqs[0].samples);

  scheduler.add(2, iota_prompt(20, 100), with_max_tokens(5));
  step = scheduler.schedule();
  ASSERT_EQ(step.seqs.size(), 2u);
  EXPECT_EQ(step.seqs[0].id, 1);
  EXPECT_TRUE(step.seqs[0].decode);
  EXPECT_EQ(step.seqs[0].start, 3);
  EXPECT_EQ(step.seqs[1].id, 2);
  EXPECT_FALSE(step.seqs[1].decode);
  EXPECT_EQ(step.seqs[1].num_tokens(), 7);  // 8 - 1 decode row
  EXPECT_FALSE(step.seqs[1].samples);       // the chunk does not finish the prompt
  ops::ForwardBatch batch = build_forward_batch(step, scheduler.blocks());
  EXPECT_EQ(batch.phase, ops::Phase::kPrefill);
  EXPECT_EQ(batch.query_start, (std::vector<int32_t>{0, 1, 8}));
  EXPECT_EQ(batch.context_lens, (std::vector<int32_t>{4, 7}));
  EXPECT_EQ(batch.logits_rows, (std::vector<int32_t>{0}));
  EXPECT_EQ(batch.positions, (std::vector<int32_t>{3, 0, 1, 2, 3, 4, 5, 6}));
  scheduler.update(step, model.execute(batch, step.sampling_params()));

  step = run_step(scheduler, model);  // 1 decode + 7 more prompt tokens (14 of 20)
  EXPECT_EQ(step.seqs[1].start, 7);
  EXPECT_FALSE(step.seqs[1].samples);
  step = run_step(scheduler, model);  // the last 6 prompt tokens: samples the first token
  EXPECT_EQ(step.seqs[1].start, 14);
  EXPECT_EQ(step.seqs[1].num_tokens(), 6);
  EXPECT_TRUE(step.seqs[1].samples);
  EXPECT_EQ(step.num_tokens, 7);

  step = scheduler.schedule();  // both decoding now
  batch = build_forward_batch(step, scheduler.blocks());
  EXPECT_EQ(batch.phase, ops::Phase::kDecode);
  EXPECT_EQ(batch.logits_rows, (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(batch.context_lens, (std::vector<int32_t>{7, 21}));
}

TEST(Scheduler, AdmissionIsFifoAndBoundedByMaxNumSeqs) {
  SchedulerConfig config{
      .max_num_seqs = 2, .max_num_batched_tokens = 100, .max_model_len = 64, .vocab_size = kVocab};
  Scheduler scheduler(config, 64, 4);
  for (SeqId id = 1; id <= 4; ++id) scheduler.add(id, iota_prompt(5), with_max_tokens(3));
  ScheduledStep step = scheduler.schedule();
  ASSERT_EQ(step.seqs.size(), 2u);
  EXPECT_EQ(step.seqs[0].id, 1);
  EXPECT_EQ(step.seqs[1].id, 2);
  EXPECT_EQ(scheduler.num_waiting(), 2);

  // A head that does not fit blocks later (smaller) requests: no skipping.
  Scheduler tight(
      {.max_num_seqs = 4, .max_num_batched_tokens = 100, .max_model_len = 32, .vocab_size = kVocab}, 11,
      4);                                             // 10 usable blocks
  tight.add(1, iota_prompt(24), with_max_tokens(4));  // 6 blocks
  tight.add(2, iota_prompt(20), with_max_tokens(4));  // 5 blocks: does not fit beside 1
  tight.add(3, iota_prompt(4), with_max_tokens(4));   // 1 block: would fit, must wait its turn
  step = tight.schedule();
  ASSERT_EQ(step.seqs.size(), 1u);
  EXPECT_EQ(step.seqs[0].id, 1);
  EXPECT_EQ(tight.waiting_ids(), (std::vector<SeqId>{2, 3}));
}

TEST(Scheduler, PreemptsTheNewestByRecomputeAndResumesWithTheSameTokens) {
  // 6 usable blocks of 2 tokens; three prompts of 4 fill the pool exactly.
  SchedulerConfig config{
      .max_num_seqs = 4, .max_num_batched_tokens = 16, .max_model_len = 12, .vocab_size = kVocab};
  Scheduler scheduler(config, 7, 2);
  FakeModel model(7, 2, kVocab);
  for (SeqId id = 1; id <= 3; ++id)
    scheduler.add(id, iota_prompt(4, static_cast<int32_t>(id) * 10), with_max_tokens(6));
  std::map<SeqId, std::vector<int32_t>> produced;
  std::vector<SeqOutput> outputs;
  run_step(scheduler, model, &outputs);
  for (const SeqOutput& out : outputs) produced[out.id].push_back(out.token);
  ASSERT_EQ(outputs.size(), 3u);
  EXPECT_EQ(scheduler.blocks().num_free(), 0);

  // Sequence 1 needs a block for position 4: the newest (3) is preempted, then 2 gets one too.
  ScheduledStep step = run_step(scheduler, model, &outputs);
  for (const SeqOutput& out : outputs) produced[out.id].push_back(out.token);
  EXPECT_EQ(step.preempted, (std::vector<SeqId>{3}));
  ASSERT_EQ(step.seqs.size(), 2u);
  EXPECT_FALSE(scheduler.blocks().has(3));
  const Sequence* victim = scheduler.find(3);
  ASSERT_NE(victim, nullptr);
  EXPECT_EQ(victim->status(), SeqStatus::kWaiting);
  EXPECT_EQ(victim->num_output(), 1);  // its generated token is kept
  EXPECT_EQ(victim->num_computed(), 0);
  EXPECT_EQ(scheduler.waiting_ids().front(), 3);

  // Resumption: the prompt alone as a prefill chunk (nothing sampled: the generated token is
  // already known), then every later position as a one-token decode row, as when it was generated.
  bool resumed_prompt = false;
  for (int guard = 0; guard < 100 && scheduler.has_unfinished(); ++guard) {
    step = run_step(scheduler, model, &outputs);
    for (const ScheduledSeq& rows : step.seqs) {
      if (rows.id == 3 && rows.start == 0) {
        resumed_prompt = true;
        EXPECT_FALSE(rows.decode);
        EXPECT_FALSE(rows.samples);
        EXPECT_EQ(rows.token_ids.size(), 4u);
      }
      if (rows.id == 3 && rows.start >= 4) {
        EXPECT_TRUE(rows.decode) << "position " << rows.start;
        EXPECT_EQ(rows.token_ids.size(), 1u);
      }
    }
    for (const SeqOutput& out : outputs) produced[out.id].push_back(out.token);
  }
  EXPECT_TRUE(resumed_prompt);
  EXPECT_FALSE(scheduler.has_unfinished());
  EXPECT_EQ(scheduler.blocks().num_used(), 0);
  for (SeqId id = 1; id <= 3; ++id) {
    const auto expected = reference_generate(iota_prompt(4, static_cast<int32_t>(id) * 10),
                                             {.max_tokens = 6, .max_model_len = 12}, {}, kVocab);
    EXPECT_EQ(produced[id], expected.output) << "sequence " << id;
  }
  EXPECT_GE(scheduler.num_preemptions(), 1);
}

TEST(Scheduler, AResumedSequenceReplaysItsGeneratedTokensAsUnsampledDecodeRows) {
  // 6 usable blocks of 2. Sequence 1 (prompt 4, 4 tokens) and sequence 2 (prompt 2, 8 tokens)
  // grow until the pool runs dry and 2, the newest, is preempted with generated tokens kept.
  SchedulerConfig config{
      .max_num_seqs = 2, .max_num_batched_tokens = 16, .max_model_len = 12, .vocab_size = kVocab};
  Scheduler scheduler(config, 7, 2);
  FakeModel model(7, 2, kVocab);
  scheduler.add(1, iota_prompt(4, 10), with_max_tokens(4));
  scheduler.add(2, iota_prompt(2, 40), with_max_tokens(8));
  std::map<SeqId, std::vector<int32_t>> produced;
  std::vector<SeqOutput> outputs;
  ScheduledStep step;
  for (int guard = 0; guard < 20 && step.preempted.empty(); ++guard) {
    step = run_step(scheduler, model, &outputs);
    for (const SeqOutput& out : outputs) produced[out.id].push_back(out.token);
  }
  ASSERT_EQ(step.preempted, (std::vector<SeqId>{2}));
  const auto generated = static_cast<int32_t>(produced[2].size());
  ASSERT_GE(generated, 3) << "the scenario needs tokens to replay";

  // Readmitted: the prompt alone as a prefill chunk, nothing sampled.
  for (int guard = 0; guard < 20; ++guard) {
    step = run_step(scheduler, model, &outputs);
    for (const SeqOutput& out : outputs) produced[out.id].push_back(out.token);
    if (std::any_of(step.seqs.begin(), step.seqs.end(), [](const ScheduledSeq& r) { return r.id == 2; })) break;
  }
  auto rows_of_2 = [&]() -> const ScheduledSeq& {
    const auto it =
        std::find_if(step.seqs.begin(), step.seqs.end(), [](const ScheduledSeq& r) { return r.id == 2; });
    EXPECT_NE(it, step.seqs.end());
    return *it;
  };
  EXPECT_FALSE(rows_of_2().decode);
  EXPECT_FALSE(rows_of_2().samples);
  EXPECT_EQ(rows_of_2().start, 0);
  EXPECT_EQ(rows_of_2().num_tokens(), 2);

  // Every generated token but the newest goes back into the cache through a decode row whose
  // logits are not gathered; then the newest is an ordinary, sampled decode row.
  for (int32_t i = 0; i + 1 < generated; ++i) {
    step = run_step(scheduler, model, &outputs);
    for (const SeqOutput& out : outputs) produced[out.id].push_back(out.token);
    EXPECT_TRUE(rows_of_2().decode);
    EXPECT_FALSE(rows_of_2().samples);
    EXPECT_EQ(rows_of_2().start, 2 + i);
    EXPECT_EQ(rows_of_2().token_ids, (std::vector<int32_t>{produced[2][static_cast<size_t>(i)]}));
    EXPECT_EQ(build_forward_batch(step, scheduler.blocks()).logits_rows.size(), static_cast<size_t>(step.num_sampling()));
  }
  step = run_step(scheduler, model, &outputs);
  for (const SeqOutput& out : outputs) produced[out.id].push_back(out.token);
  EXPECT_TRUE(rows_of_2().decode);
  EXPECT_TRUE(rows_of_2().samples);
  EXPECT_EQ(rows_of_2().start, 2 + generated - 1);

  for (int guard = 0; guard < 100 && scheduler.has_unfinished(); ++guard) {
    run_step(scheduler, model, &outputs);
    for (const SeqOutput& out : outputs) produced[out.id].push_back(out.token);
  }
  EXPECT_FALSE(scheduler.has_unfinished());
  EXPECT_EQ(scheduler.blocks().num_used(), 0);
  EXPECT_EQ(produced[1], reference_generate(iota_prompt(4, 10), {.max_tokens = 4, .max_model_len = 12}, {}, kVocab).output);
  EXPECT_EQ(produced[2], reference_generate(iota_prompt(2, 40), {.max_tokens = 8, .max_model_len = 12}, {}, kVocab).output);
}

TEST(Scheduler, TheNewestPreemptsItselfWhenItIsTheOneShortOfBlocks) {
  // 4 usable blocks of 2: sequence 1 holds 3, sequence 2 holds 1 and needs a second.
  SchedulerConfig config{
      .max_num_seqs = 2, .max_num_batched_tokens = 8, .max_model_len = 8, .vocab_size = kVocab};
  Scheduler scheduler(config, 5, 2);
  FakeModel model(5, 2, kVocab);
  scheduler.add(1, iota_prompt(6), with_max_tokens(1));
  scheduler.add(2, iota_prompt(2), with_max_tokens(4));
  run_step(scheduler, model);  // 1 finishes at once (max_tokens 1); 2 holds one block
  EXPECT_EQ(scheduler.find(1), nullptr);
  scheduler.add(3, iota_prompt(4, 50), with_max_tokens(2));
  ScheduledStep step = run_step(scheduler, model);  // 2 decodes (pos 2: a new block), 3 admitted
  ASSERT_EQ(step.seqs.size(), 2u);
  EXPECT_EQ(scheduler.blocks().num_free(), 0);
  // Now 2 decodes at position 3 (its block has room) and 3 decodes at position 6: 3 is the newest
  // and the one short of a block, so it preempts itself.
  step = run_step(scheduler, model);
  EXPECT_EQ(step.preempted, (std::vector<SeqId>{3}));
  ASSERT_EQ(step.seqs.size(), 1u);
  EXPECT_EQ(step.seqs[0].id, 2);
}

TEST(Scheduler, CancellationReleasesBlocksAtOnceAndUpdateSkipsIt) {
  SchedulerConfig config{
      .max_num_seqs = 4, .max_num_batched_tokens = 64, .max_model_len = 64, .vocab_size = kVocab};
  Scheduler scheduler(config, 32, 4);
  FakeModel model(32, 4, kVocab);
  scheduler.add(1, iota_prompt(10), with_max_tokens(20));
  scheduler.add(2, iota_prompt(10), with_max_tokens(20));
  run_step(scheduler, model);
  scheduler.add(3, iota_prompt(5), with_max_tokens(20));
  EXPECT_TRUE(scheduler.finish(3));  // waiting: removed, no blocks involved
  EXPECT_FALSE(scheduler.finish(3));
  ScheduledStep step = scheduler.schedule();
  const int32_t free_before = scheduler.blocks().num_free();
  const int32_t held_by_1 = static_cast<int32_t>(scheduler.blocks().block_table(1).size());
  ASSERT_GT(held_by_1, 0);
  EXPECT_TRUE(scheduler.finish(1));  // running, between schedule() and update(): blocks return now
  EXPECT_FALSE(scheduler.blocks().has(1));
  EXPECT_EQ(scheduler.blocks().num_free(), free_before + held_by_1);
  std::vector<int32_t> fake_tokens(static_cast<size_t>(step.num_sampling()), 5);
  const std::vector<SeqOutput> outputs = scheduler.update(step, fake_tokens);
  ASSERT_EQ(outputs.size(), 1u);
  EXPECT_EQ(outputs[0].id, 2);
  EXPECT_TRUE(scheduler.blocks().check_invariants());
  EXPECT_EQ(scheduler.num_running(), 1);
}

TEST(Scheduler, StopTokenAndLengthRulesEndSequencesAndFreeTheirBlocks) {
  SchedulerConfig config{
      .max_num_seqs = 4, .max_num_batched_tokens = 64, .max_model_len = 20, .vocab_size = kVocab};
  Scheduler scheduler(config, 32, 4);
  FakeModel model(32, 4, kVocab);
  const std::vector<int32_t> prompt = iota_prompt(6);
  const auto alone = reference_generate(prompt, {.max_tokens = 14, .max_model_len = 20}, {}, kVocab);
  ASSERT_EQ(alone.output.size(), 14u);
  SequenceParams stop_on_third;
  stop_on_third.stop_token_ids = {alone.output[2]};
  scheduler.add(1, prompt, stop_on_third);
  scheduler.add(2, prompt, with_max_tokens(4));
  scheduler.add(3, prompt, {});  // runs to max_model_len
  std::map<SeqId, std::pair<size_t, FinishReason>> finished;
  std::map<SeqId, size_t> counts;
  for (int guard = 0; guard < 100 && scheduler.has_unfinished(); ++guard) {
    std::vector<SeqOutput> outputs;
    run_step(scheduler, model, &outputs);
    for (const SeqOutput& out : outputs) {
      ++counts[out.id];
      if (out.finish) {
        finished[out.id] = {counts[out.id], *out.finish};
        EXPECT_FALSE(scheduler.blocks().has(out.id));
      }
    }
  }
  // The first occurrence of the stop token ends sequence 1 (it may appear before index 2).
  size_t first_stop = 0;
  while (alone.output[first_stop] != alone.output[2]) ++first_stop;
  EXPECT_EQ(finished[1], std::make_pair(first_stop + 1, FinishReason::kStop));
  EXPECT_EQ(finished[2], std::make_pair(size_t{4}, FinishReason::kLength));
  EXPECT_EQ(finished[3], std::make_pair(size_t{14}, FinishReason::kLength));
  EXPECT_EQ(scheduler.blocks().num_used(), 0);
}

TEST(ForwardBatch, PadsBlockTablesWithTheScratchBlock) {
  SchedulerConfig config{
      .max_num_seqs = 4, .max_num_batched_tokens = 64, .max_model_len = 64, .vocab_size = kVocab};
  Scheduler scheduler(config, 32, 4);
  scheduler.add(1, iota_prompt(9), {});
  scheduler.add(2, iota_prompt(3), {});
  const ScheduledStep step = scheduler.schedule();
  const ops::ForwardBatch batch = build_forward_batch(step, scheduler.blocks(), 16);
  EXPECT_EQ(batch.max_blocks_per_seq, 16);
  ASSERT_EQ(batch.block_tables.size(), 32u);
  const std::vector<int32_t>& table1 = scheduler.blocks().block_table(1);
  ASSERT_EQ(table1.size(), 3u);
  for (int32_t j = 0; j < 16; ++j) {
    EXPECT_EQ(batch.block_tables[static_cast<size_t>(j)], j < 3 ? table1[static_cast<size_t>(j)] : 0);
  }
  EXPECT_EQ(batch.block_tables[16], scheduler.blocks().block_table(2)[0]);
  EXPECT_EQ(batch.block_tables[17], 0);
  EXPECT_EQ(batch.slot_mapping[9], scheduler.blocks().block_table(2)[0] * 4);
  EXPECT_EQ(batch.logits_rows, (std::vector<int32_t>{8, 11}));
  const ops::ForwardBatch narrow = build_forward_batch(step, scheduler.blocks());
  EXPECT_EQ(narrow.max_blocks_per_seq, 3);
  EXPECT_TRUE(build_forward_batch(ScheduledStep{}, scheduler.blocks()).token_ids.empty());
}

}  // namespace
}  // namespace lathe::engine
