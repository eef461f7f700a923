// The Engine over a fake executor (tests/unit/engine/fake_model.h) and a fake detokenizer:
// streaming events, stop strings and stop tokens on text, cancellation, executor failure,
// shutdown, stats, and several threads submitting at once (outputs must equal each request
// run alone).
#include "engine/engine.h"

#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <chrono>
#include <future>
#include <map>
#include <random>
#include <thread>

#include "core/error.h"
#include "fake_model.h"

namespace lathe::engine {
namespace {

using namespace std::chrono_literals;
using testing::FakeModel;
using testing::reference_generate;

constexpr int32_t kVocab = 50;

// Token t detokenizes to kPieces[t % 8]; "" stands for a token whose bytes are not yet a
// complete character.
const std::array<std::string, 8> kPieces = {"a", "b", "ab", "", "c", " ", "ba", "cab"};

class FakeDetokenizer : public Detokenizer {
 public:
  std::string append(int32_t token) override { return kPieces[static_cast<size_t>(token) % kPieces.size()]; }
  std::string flush() override { return ""; }
};

DetokenizerFactory fake_detokenizers() {
  return [](std::span<const int32_t>) { return std::make_unique<FakeDetokenizer>(); };
}

class FakeExecutor : public Executor {
 public:
  FakeExecutor(int32_t num_blocks, int32_t block_size, std::chrono::microseconds delay = 0us,
               int64_t fail_at = -1)
      : model_(num_blocks, block_size, kVocab), delay_(delay), fail_at_(fail_at) {}

  std::vector<int32_t> execute(const ops::ForwardBatch& batch,
                               std::span<const ops::SamplingParams> sampling) override {
    const int64_t call = ++calls_;
    if (delay_.count() > 0) std::this_thread::sleep_for(delay_);
    if (call == fail_at_) throw std::runtime_error("injected device failure");
    return model_.execute(batch, sampling);
  }

 private:
  FakeModel model_;
  std::chrono::microseconds delay_;
  int64_t fail_at_;
  int64_t calls_ = 0;
};

EngineConfig small_config(int32_t num_blocks = 17, int32_t block_size = 4) {
  EngineConfig config;
  config.scheduler = {
      .max_num_seqs = 6, .max_num_batched_tokens = 16, .max_model_len = 64, .vocab_size = kVocab};
  config.num_blocks = num_blocks;
  config.block_size = block_size;
  config.eos_token_ids = {7};
  return config;
}

struct Expected {
  std::string text;
  std::vector<int32_t> tokens;
  FinishReason finish = FinishReason::kLength;
  std::string stop_string;
};

// What a request must produce: the fake model run alone, then the stop rules on its text.
Expected expected_for(const Request& request, const EngineConfig& config) {
  SequenceParams params = request.params;
  if (!request.ignore_eos) {
    params.stop_token_ids.insert(params.stop_token_ids.end(), config.eos_token_ids.begin(),
                                 config.eos_token_ids.end());
  }
  TokenStopRules rules;
  rules.max_tokens = validate_request(request.prompt, params, config.scheduler);
  rules.max_model_len = config.scheduler.max_model_len;
  rules.stop_token_ids = params.stop_token_ids;
  const auto alone = reference_generate(request.prompt, rules, params.sampling, kVocab);
  Expected expected;
  expected.finish = alone.finish;
  for (size_t i = 0; i < alone.output.size(); ++i) {
    const int32_t token = alone.output[i];
    expected.tokens.push_back(token);
    if (i + 1 == alone.output.size() && alone.finish == FinishReason::kStop) break;  // stop token: no text
    expected.text += kPieces[static_cast<size_t>(token) % kPieces.size()];
    size_t cut = std::string::npos;
    std::string matched;
    for (const std::string& stop : request.stop) {
      const size_t at = expected.text.find(stop);
      if (at < cut) {
        cut = at;
        matched = stop;
      }
    }
    if (cut != std::string::npos) {
      expected.text.resize(cut);
      expected.finish = FinishReason::kStop;
      expected.stop_string = matched;
      break;
    }
  }
  return expected;
}

std::vector<int32_t> random_prompt(std::mt19937_64& rng, int32_t len) {
  std::vector<int32_t> prompt;
  for (int32_t i = 0; i < len; ++i) prompt.push_back(static_cast<int32_t>(rng() % kVocab));
  return prompt;
}

void wait_until_idle(const Engine& engine) {
  for (int i = 0; i < 2000; ++i) {
    const EngineStats stats = engine.stats();
    if (stats.num_running == 0 && stats.num_waiting == 0 && stats.kv_blocks_used == 0) return;
    std::this_thread::sleep_for(1ms);
  }
}

TEST(Engine, StreamsOneEventPerTokenAndEndsLikeTheReference) {
  const EngineConfig config = small_config();
  Engine engine(config, std::make_unique<FakeExecutor>(config.num_blocks, config.block_size),
                fake_detokenizers());
  Request request;
  request.prompt = {1, 2, 3, 4, 5};
  request.params.max_tokens = 20;
  request.ignore_eos = true;
  const Expected expected = expected_for(request, config);
  ASSERT_EQ(expected.tokens.size(), 20u);
  std::shared_ptr<RequestHandle> handle = engine.submit(request);
  std::vector<int32_t> tokens;
  std::string text;
  int events = 0;
  while (std::optional<StreamEvent> event = handle->next()) {
    ++events;
    ASSERT_EQ(event->token_ids.size(), 1u);
    tokens.push_back(event->token_ids[0]);
    text += event->text;
    EXPECT_EQ(event->usage.prompt_tokens, 5);
    EXPECT_EQ(event->usage.completion_tokens, events);
    EXPECT_EQ(event->finish.has_value(), events == 20);
    if (event->finish) {
      EXPECT_EQ(*event->finish, FinishReason::kLength);
    }
  }
  EXPECT_TRUE(handle->done());
  EXPECT_EQ(tokens, expected.tokens);
  EXPECT_EQ(text, expected.text);
  wait_until_idle(engine);
  const EngineStats stats = engine.stats();
  EXPECT_EQ(stats.requests_submitted, 1u);
  EXPECT_EQ(stats.finished(FinishReason::kLength), 1u);
  EXPECT_EQ(stats.generation_tokens_total, 20u);
  EXPECT_EQ(stats.prompt_tokens_total, 5u);
  EXPECT_EQ(stats.time_to_first_token_seconds.count, 1u);
  EXPECT_EQ(stats.time_per_output_token_seconds.count, 1u);
  EXPECT_EQ(stats.kv_blocks_total, 16);
  EXPECT_EQ(stats.kv_blocks_used, 0);
}

TEST(Engine, StopStringSpanningTokensCutsTheTextAndEndsTheRequest) {
  const EngineConfig config = small_config();
  Engine engine(config, std::make_unique<FakeExecutor>(config.num_blocks, config.block_size),
                fake_detokenizers());
  Request request;
  request.prompt = {9, 8, 7, 6};
  request.params.max_tokens = 40;
  request.ignore_eos = true;
  // Pick a stop string that spans the 5th and 6th non-empty pieces of the plain output.
  const Expected plain = expected_for(request, config);
  std::vector<std::pair<size_t, std::string>> pieces;  // (token index, piece)
  for (size_t i = 0; i < plain.tokens.size(); ++i) {
    const std::string& piece = kPieces[static_cast<size_t>(plain.tokens[i]) % kPieces.size()];
    if (!piece.empty()) pieces.emplace_back(i, piece);
  }
  ASSERT_GE(pieces.size(), 8u);
  const std::string stop = pieces[4].second.substr(pieces[4].second.size() - 1) + pieces[5].second;
  request.stop = {stop};
  const Expected expected = expected_for(request, config);
  ASSERT_EQ(expected.finish, FinishReason::kStop);
  const GenerationResult result = engine.submit(request)->wait();
  EXPECT_EQ(result.finish, FinishReason::kStop);
  EXPECT_EQ(result.stop_string, stop);
  EXPECT_EQ(result.text, expected.text);
  EXPECT_EQ(result.token_ids, expected.tokens);
  EXPECT_EQ(result.text.find(stop), std::string::npos);
  EXPECT_LE(result.token_ids.size(), pieces[5].first + 1);
  // The sequence left the scheduler when the stop string matched: one step per token, no more.
  wait_until_idle(engine);
  const EngineStats stats = engine.stats();
  EXPECT_EQ(stats.steps_total, result.token_ids.size());
  EXPECT_EQ(stats.generation_tokens_total, result.token_ids.size());
  EXPECT_EQ(stats.finished(FinishReason::kStop), 1u);
}

TEST(Engine, EosEndsWithStopWithoutItsTextUnlessIgnored) {
  EngineConfig config = small_config();
  Request request;
  request.prompt = {3, 1, 4, 1, 5};
  request.params.max_tokens = 30;
  request.ignore_eos = true;
  const Expected plain = expected_for(request, config);
  // EOS := the first generated token from the 4th on whose text is not empty.
  size_t eos_at = 3;
  while (eos_at < plain.tokens.size() &&
         kPieces[static_cast<size_t>(plain.tokens[eos_at]) % kPieces.size()].empty()) {
    ++eos_at;
  }
  ASSERT_LT(eos_at, plain.tokens.size());
  config.eos_token_ids = {plain.tokens[eos_at]};
  Engine engine(config, std::make_unique<FakeExecutor>(config.num_blocks, config.block_size),
                fake_detokenizers());
  const GenerationResult ignored = engine.submit(request)->wait();
  EXPECT_EQ(ignored.token_ids, plain.tokens);
  request.ignore_eos = false;
  const Expected expected = expected_for(request, config);
  const GenerationResult result = engine.submit(request)->wait();
  EXPECT_EQ(result.finish, FinishReason::kStop);
  EXPECT_EQ(result.token_ids, expected.tokens);
  EXPECT_EQ(result.token_ids.back(), config.eos_token_ids[0]);
  EXPECT_EQ(result.text, expected.text);
  const std::string& eos_text = kPieces[static_cast<size_t>(config.eos_token_ids[0]) % kPieces.size()];
  EXPECT_EQ(ignored.text.substr(0, result.text.size() + eos_text.size()), result.text + eos_text);
  EXPECT_EQ(result.usage.completion_tokens, static_cast<int32_t>(expected.tokens.size()));
}

TEST(Engine, RejectsBadRequestsSynchronously) {
  const EngineConfig config = small_config();
  Engine engine(config, std::make_unique<FakeExecutor>(config.num_blocks, config.block_size),
                fake_detokenizers());
  Request request;
  request.prompt = std::vector<int32_t>(70, 1);
  EXPECT_THROW(engine.submit(request), Error);
  request.prompt = {1, 2};
  request.stop = {""};
  EXPECT_THROW(engine.submit(request), Error);
  Engine no_text(config, std::make_unique<FakeExecutor>(config.num_blocks, config.block_size));
  request.stop = {"x"};
  EXPECT_THROW(no_text.submit(request), Error);
  EXPECT_EQ(engine.stats().requests_rejected, 2u);
  EXPECT_EQ(engine.stats().requests_submitted, 0u);
}

TEST(Engine, CancelEndsARunningRequestAndFreesItsBlocks) {
  const EngineConfig config = small_config();
  Engine engine(config, std::make_unique<FakeExecutor>(config.num_blocks, config.block_size, 2000us),
                fake_detokenizers());
  Request request;
  request.prompt = {1, 2, 3};
  request.params.max_tokens = 60;
  request.ignore_eos = true;
  const Expected expected = expected_for(request, config);
  std::shared_ptr<RequestHandle> handle = engine.submit(request);
  std::vector<int32_t> tokens;
  for (int i = 0; i < 3; ++i) {
    std::optional<StreamEvent> event = handle->next();
    ASSERT_TRUE(event.has_value());
    tokens.insert(tokens.end(), event->token_ids.begin(), event->token_ids.end());
  }
  engine.cancel(handle->id());
  const GenerationResult rest = handle->wait();
  EXPECT_EQ(rest.finish, FinishReason::kCancelled);
  tokens.insert(tokens.end(), rest.token_ids.begin(), rest.token_ids.end());
  EXPECT_LT(tokens.size(), 60u);
  EXPECT_TRUE(std::equal(tokens.begin(), tokens.end(), expected.tokens.begin()));
  wait_until_idle(engine);
  EXPECT_EQ(engine.stats().kv_blocks_used, 0);
  EXPECT_EQ(engine.stats().finished(FinishReason::kCancelled), 1u);
  EXPECT_LT(engine.stats().steps_total, 60u);
  engine.cancel(handle->id());  // already ended: a no-op
}

TEST(Engine, ExecutorFailureEndsTheStepsRequestsAndServingContinues) {
  const EngineConfig config = small_config();
  Engine engine(config, std::make_unique<FakeExecutor>(config.num_blocks, config.block_size, 0us, 3),
                fake_detokenizers());
  Request request;
  request.prompt = {5, 6, 7};
  request.params.max_tokens = 10;
  request.ignore_eos = true;
  const GenerationResult failed = engine.submit(request)->wait();
  EXPECT_EQ(failed.finish, FinishReason::kError);
  EXPECT_NE(failed.error.find("injected"), std::string::npos);
  EXPECT_EQ(failed.token_ids.size(), 2u);  // steps 1 and 2 ran
  const GenerationResult ok = engine.submit(request)->wait();
  EXPECT_EQ(ok.finish, FinishReason::kLength);
  EXPECT_EQ(ok.token_ids, expected_for(request, config).tokens);
  wait_until_idle(engine);
  EXPECT_EQ(engine.stats().kv_blocks_used, 0);
}

TEST(Engine, CallbacksMayCancelAndShutdownCancelsTheRest) {
  const EngineConfig config = small_config();
  auto engine = std::make_unique<Engine>(
      config, std::make_unique<FakeExecutor>(config.num_blocks, config.block_size, 1000us),
      fake_detokenizers());
  Request request;
  request.prompt = {2, 4, 6};
  request.params.max_tokens = 50;
  request.ignore_eos = true;
  std::promise<FinishReason> cancelled_reason;
  std::atomic<int> events{0};
  std::shared_ptr<RequestHandle> self;
  Engine* raw = engine.get();
  std::atomic<uint64_t> self_id{0};
  self = raw->submit(request, [&](const StreamEvent& event) {
    if (++events >= 2 && self_id.load() != 0) raw->cancel(self_id.load());
    if (event.finish) cancelled_reason.set_value(*event.finish);
  });
  self_id = self->id();
  EXPECT_EQ(cancelled_reason.get_future().get(), FinishReason::kCancelled);
  EXPECT_LT(events.load(), 50);

  std::vector<std::shared_ptr<RequestHandle>> handles;
  for (int i = 0; i < 4; ++i) handles.push_back(engine->submit(request));
  std::this_thread::sleep_for(5ms);
  engine->shutdown();
  for (auto& handle : handles) EXPECT_EQ(handle->wait().finish, FinishReason::kCancelled);
  EXPECT_THROW(engine->submit(request), Error);
  engine.reset();
}

TEST(Engine, ManyThreadsSubmitAndEveryOutputEqualsTheRequestRunAlone) {
  EngineConfig config = small_config();  // 16 usable blocks of 4 = one max_model_len sequence
  Engine engine(config, std::make_unique<FakeExecutor>(config.num_blocks, config.block_size),
                fake_detokenizers());
  constexpr int kThreads = 4;
  constexpr int kPerThread = 60;
  const std::vector<std::string> stop_pool = {"ab", "cab", "bb", "c c", "aba"};
  std::atomic<int> rejected{0};
  std::atomic<int> failures{0};
  std::atomic<int> by_stop_string{0};
  std::mutex report_mutex;
  std::vector<std::string> reports;
  auto report = [&](const std::string& what) {
    ++failures;
    std::lock_guard<std::mutex> lock(report_mutex);
    if (reports.size() < 10) reports.push_back(what);
  };

  auto worker = [&](int t) {
    std::mt19937_64 rng(1000 + static_cast<uint64_t>(t));
    for (int i = 0; i < kPerThread; ++i) {
      Request request;
      const auto prompt_len = static_cast<int32_t>(1 + rng() % 40);
      request.prompt = random_prompt(rng, prompt_len);
      const int32_t room = config.scheduler.max_model_len - prompt_len;
      request.params.max_tokens = rng() % 5 == 0 ? 0 : static_cast<int32_t>(1 + rng() % std::min(room, 30));
      if (rng() % 2) request.params.stop_token_ids = {static_cast<int32_t>(rng() % kVocab)};
      if (rng() % 2) request.stop = {stop_pool[rng() % stop_pool.size()]};
      request.ignore_eos = rng() % 4 == 0;
      if (rng() % 2) {
        request.params.sampling.temperature = 0.8f;
        request.params.sampling.seed = rng();
      }
      if (rng() % 25 == 0) {
        request.params.max_tokens = room + 1;
        try {
          engine.submit(request);
          report("an oversized request was accepted");
        } catch (const Error&) {
          ++rejected;
        }
        continue;
      }
      const Expected expected = expected_for(request, config);
      const bool cancel = rng() % 10 == 0;
      GenerationResult result;
      if (rng() % 2) {
        // Callback mode: check every event as it streams.
        std::promise<void> finished;
        std::string event_error;
        std::shared_ptr<RequestHandle> handle = engine.submit(request, [&](const StreamEvent& event) {
          if (event.token_ids.size() > 1) event_error = "an event carries more than one token";
          result.text += event.text;
          result.token_ids.insert(result.token_ids.end(), event.token_ids.begin(), event.token_ids.end());
          if (event.usage.completion_tokens != static_cast<int32_t>(result.token_ids.size())) {
            event_error = "usage does not count the tokens streamed";
          }
          if (event.finish) {
            result.finish = *event.finish;
            result.stop_string = event.stop_string;
            finished.set_value();
          }
        });
        if (cancel) engine.cancel(handle->id());
        finished.get_future().wait();
        if (!event_error.empty()) report(event_error);
      } else {
        std::shared_ptr<RequestHandle> handle = engine.submit(request);
        if (cancel) {
          std::this_thread::sleep_for(std::chrono::microseconds(rng() % 500));
          engine.cancel(handle->id());
        }
        result = handle->wait();
      }
      if (!result.stop_string.empty()) ++by_stop_string;
      const bool prefix_tokens =
          result.token_ids.size() <= expected.tokens.size() &&
          std::equal(result.token_ids.begin(), result.token_ids.end(), expected.tokens.begin());
      const bool prefix_text = expected.text.starts_with(result.text);
      if (result.finish == FinishReason::kCancelled) {
        if (!cancel) report("cancelled without a cancel");
        if (!prefix_tokens || !prefix_text)
          report("a cancelled request streamed something it would not produce");
      } else if (result.token_ids != expected.tokens || result.text != expected.text ||
                 result.finish != expected.finish || result.stop_string != expected.stop_string) {
        report("thread " + std::to_string(t) + " request " + std::to_string(i) + ": got " +
               std::to_string(result.token_ids.size()) + " tokens (" + finish_reason_name(result.finish) +
               ") text '" + result.text + "', expected " + std::to_string(expected.tokens.size()) + " (" +
               finish_reason_name(expected.finish) + ") text '" + expected.text + "'");
      }
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) threads.emplace_back(worker, t);
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
  for (const std::string& what : reports) ADD_FAILURE() << what;

  wait_until_idle(engine);
  const EngineStats stats = engine.stats();
  EXPECT_EQ(stats.num_running, 0);
  EXPECT_EQ(stats.num_waiting, 0);
  EXPECT_EQ(stats.kv_blocks_used, 0);
  EXPECT_EQ(stats.requests_rejected, static_cast<uint64_t>(rejected.load()));
  uint64_t ended = 0;
  for (uint64_t count : stats.requests_finished) ended += count;
  EXPECT_EQ(ended, stats.requests_submitted);
  EXPECT_EQ(stats.requests_submitted + stats.requests_rejected, static_cast<uint64_t>(kThreads * kPerThread));
  EXPECT_EQ(stats.finished(FinishReason::kError), 0u);
  // Whether the small pool forces preemption here depends on thread timing (a fast engine can
  // drain requests as they arrive), so it is reported, not asserted; preemption and resumption
  // are asserted deterministically in scheduler_test and scheduler_fuzz_test.
  EXPECT_GT(by_stop_string.load(), 10);
  EXPECT_GT(stats.finished(FinishReason::kLength), 10u);
  std::printf(
      "engine stress: %llu requests (%d by stop string, %llu length, %llu cancelled), %llu steps, "
      "%llu preemptions, %llu generated tokens\n",
      static_cast<unsigned long long>(stats.requests_submitted), by_stop_string.load(),
      static_cast<unsigned long long>(stats.finished(FinishReason::kLength)),
      static_cast<unsigned long long>(stats.finished(FinishReason::kCancelled)),
      static_cast<unsigned long long>(stats.steps_total),
      static_cast<unsigned long long>(stats.preemptions_total),
      static_cast<unsigned long long>(stats.generation_tokens_total));
}

TEST(EngineStats, HistogramBuckets) {
  Histogram histogram({0.1, 1.0});
  histogram.observe(0.05);
  histogram.observe(0.1);
  histogram.observe(0.5);
  histogram.observe(7.0);
  EXPECT_EQ(histogram.counts, (std::vector<uint64_t>{2, 1, 1}));
  EXPECT_EQ(histogram.count, 4u);
  EXPECT_DOUBLE_EQ(histogram.sum, 7.65);
}

}  // namespace
}  // namespace lathe::engine
