#include "engine/engine.h"

#include <chrono>
#include <exception>

#include "core/error.h"
#include "engine/forward_batch.h"

namespace lathe::engine {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_between(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

}  // namespace

struct Engine::Active {
  std::shared_ptr<RequestHandle> handle;
  EventCallback on_event;
  std::unique_ptr<Detokenizer> detokenizer;  // null: no text
  StopStringMatcher matcher;
  int32_t prompt_tokens = 0;
  int32_t completion_tokens = 0;
  Clock::time_point submitted;
  Clock::time_point first_token;
  Clock::time_point last_token;
};

Engine::Engine(const EngineConfig& config, std::unique_ptr<Executor> executor,
               DetokenizerFactory detokenizers)
    : config_(config),
      executor_(std::move(executor)),
      detokenizers_(std::move(detokenizers)),
      scheduler_(config.scheduler, config.num_blocks, config.block_size) {
  if (!executor_) fail("internal: the engine needs an executor");
  if (config.pad_blocks_per_seq < 0) fail("internal: pad_blocks_per_seq must be >= 0");
  stats_.kv_blocks_total = scheduler_.blocks().num_usable();
  stats_.block_size = config.block_size;
  thread_ = std::thread([this] { loop(); });
}

Engine::~Engine() {
  shutdown();
}

std::shared_ptr<RequestHandle> Engine::submit(Request request, EventCallback on_event) {
  try {
    for (size_t i = 0; i < request.stop.size(); ++i) {
      if (request.stop[i].empty()) fail("stop[{}] is an empty string: stop strings must not be empty", i);
    }
    if (!request.stop.empty() && !detokenizers_)
      fail("stop strings need a tokenizer, and this engine has none");
    if (!request.ignore_eos) {
      std::vector<int32_t>& ids = request.params.stop_token_ids;
      ids.insert(ids.end(), config_.eos_token_ids.begin(), config_.eos_token_ids.end());
    }
    validate_request(request.prompt, request.params, config_.scheduler);
  } catch (const Error&) {
    std::lock_guard<std::mutex> lock(stats_mutex_);
    ++stats_.requests_rejected;
    throw;
  }
  const auto prompt_tokens = static_cast<uint64_t>(request.prompt.size());
  std::shared_ptr<RequestHandle> handle;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_) fail("the engine is shut down and accepts no more requests");
    handle = std::make_shared<RequestHandle>(next_id_++);
    incoming_.push_back(Pending{handle->id(), std::move(request), handle, std::move(on_event), Clock::now()});
  }
  wake_.notify_one();
  {
    std::lock_guard<std::mutex> lock(stats_mutex_);
    ++stats_.requests_submitted;
    stats_.prompt_tokens_total += prompt_tokens;
  }
  return handle;
}

void Engine::cancel(uint64_t request_id) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    cancels_.push_back(request_id);
  }
  wake_.notify_one();
}

EngineStats Engine::stats() const {
  size_t pending = 0;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    pending = incoming_.size();
  }
  std::lock_guard<std::mutex> lock(stats_mutex_);
  EngineStats snapshot = stats_;
  snapshot.num_waiting += static_cast<int32_t>(pending);
  return snapshot;
}

void Engine::shutdown() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
  // From a callback (the engine thread itself) the loop just ends after this iteration.
  if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) thread_.join();
}

void Engine::loop() {
  for (;;) {
    std::vector<Pending> incoming;
    std::vector<uint64_t> cancels;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] {
        return stopping_ || !incoming_.empty() || !cancels_.empty() || scheduler_.has_unfinished();
      });
      if (stopping_) break;
      incoming.swap(incoming_);
      cancels.swap(cancels_);
    }
    for (Pending& pending : incoming) admit(std::move(pending));
    for (uint64_t id : cancels) {
      if (!active_.contains(id)) continue;  // already ended
      scheduler_.finish(static_cast<SeqId>(id));
      StreamEvent event;
      event.finish = FinishReason::kCancelled;
      end_request(id, std::move(event));
    }
    if (scheduler_.has_unfinished()) run_step();
    publish_stats();
  }

  // Shutdown: every request not yet ended is cancelled (submitted-but-not-admitted ones too).
  std::vector<Pending> incoming;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    incoming.swap(incoming_);
  }
  for (Pending& pending : incoming) admit(std::move(pending));
  std::vector<uint64_t> ids;
  for (const auto& [id, active] : active_) ids.push_back(id);
  for (uint64_t id : ids) {
    scheduler_.finish(static_cast<SeqId>(id));
    StreamEvent event;
    event.finish = FinishReason::kCancelled;
    end_request(id, std::move(event));
  }
  publish_stats();
}

void Engine::admit(Pending pending) {
  auto active = std::make_unique<Active>();
  active->handle = pending.handle;
  active->on_event = std::move(pending.on_event);
  active->prompt_tokens = static_cast<int32_t>(pending.request.prompt.size());
  active->submitted = pending.submitted;
  active->matcher = StopStringMatcher(std::move(pending.request.stop));
  try {
    if (detokenizers_) active->detokenizer = detokenizers_(pending.request.prompt);
    scheduler_.add(static_cast<SeqId>(pending.id), std::move(pending.request.prompt),
                   std::move(pending.request.params));
  } catch (const std::exception& e) {
    // Validated at submit(), so this is an internal failure; the request still gets its final event.
    StreamEvent event;
    event.finish = FinishReason::kError;
    event.error = e.what();
    deliver(*active, std::move(event));
    std::lock_guard<std::mutex> lock(stats_mutex_);
    ++stats_.requests_finished[static_cast<size_t>(FinishReason::kError)];
    return;
  }
  active_.emplace(pending.id, std::move(active));
}

void Engine::run_step() {
  const ScheduledStep step = scheduler_.schedule();
  if (step.empty()) return;
  std::vector<SeqOutput> outputs;
  std::string error;
  try {
    const ops::ForwardBatch batch =
        build_forward_batch(step, scheduler_.blocks(), config_.pad_blocks_per_seq);
    const std::vector<int32_t> sampled = executor_->execute(batch, step.sampling_params());
    outputs = scheduler_.update(step, sampled);
  } catch (const std::exception& e) {
    error = e.what();
    if (error.empty()) error = "the executor failed";
  }
  {
    std::lock_guard<std::mutex> lock(stats_mutex_);
    ++stats_.steps_total;
    stats_.computed_tokens_total += static_cast<uint64_t>(step.num_tokens);
    stats_.preemptions_total += step.preempted.size();
  }
  if (!error.empty()) {
    // The step's sequences are in an unknown state: end them; everything else carries on.
    for (const ScheduledSeq& rows : step.seqs) {
      const auto id = static_cast<uint64_t>(rows.id);
      if (!active_.contains(id)) continue;
      scheduler_.finish(rows.id);
      StreamEvent event;
      event.finish = FinishReason::kError;
      event.error = error;
      end_request(id, std::move(event));
    }
    return;
  }
  for (const SeqOutput& output : outputs) on_token(output);
}

void Engine::on_token(const SeqOutput& output) {
  const auto id = static_cast<uint64_t>(output.id);
  const auto it = active_.find(id);
  if (it == active_.end()) return;
  Active& active = *it->second;
  const Clock::time_point now = Clock::now();
  if (active.completion_tokens == 0) {
    active.first_token = now;
    std::lock_guard<std::mutex> lock(stats_mutex_);
    stats_.time_to_first_token_seconds.observe(seconds_between(active.submitted, now));
  }
  active.last_token = now;
  ++active.completion_tokens;
  {
    std::lock_guard<std::mutex> lock(stats_mutex_);
    ++stats_.generation_tokens_total;
  }

  StreamEvent event;
  event.token_ids.push_back(output.token);
  std::optional<FinishReason> finish = output.finish;
  // A token rule gives kStop only for a stop token id, whose text is never streamed.
  const bool stop_token = finish == FinishReason::kStop;
  if (active.detokenizer && !stop_token) {
    StopStringMatcher::Result released = active.matcher.append(active.detokenizer->append(output.token));
    event.text = std::move(released.text);
    if (released.stopped) {
      if (!finish) scheduler_.finish(output.id);  // free its blocks before the next step
      finish = FinishReason::kStop;
      event.stop_string = std::move(released.matched);
    }
  }
  if (!finish) {
    deliver(active, std::move(event));
    return;
  }
  if (active.detokenizer && event.stop_string.empty()) {
    // Ended by a token rule: release what the detokenizer and the matcher still hold.
    StopStringMatcher::Result released = active.matcher.append(active.detokenizer->flush());
    event.text += released.text;
    if (released.stopped) {
      finish = FinishReason::kStop;
      event.stop_string = std::move(released.matched);
    } else {
      event.text += active.matcher.flush();
    }
  }
  event.finish = finish;
  end_request(id, std::move(event));
}

void Engine::end_request(uint64_t id, StreamEvent event) {
  const auto it = active_.find(id);
  if (it == active_.end()) return;
  Active& active = *it->second;
  const FinishReason reason = event.finish.value_or(FinishReason::kError);
  event.finish = reason;
  {
    std::lock_guard<std::mutex> lock(stats_mutex_);
    ++stats_.requests_finished[static_cast<size_t>(reason)];
    if (reason == FinishReason::kStop || reason == FinishReason::kLength) {
      stats_.e2e_request_latency_seconds.observe(seconds_between(active.submitted, Clock::now()));
      if (active.completion_tokens > 1) {
        stats_.time_per_output_token_seconds.observe(seconds_between(active.first_token, active.last_token) /
                                                     (active.completion_tokens - 1));
      }
    }
  }
  deliver(active, std::move(event));
  active_.erase(it);
}

void Engine::deliver(Active& active, StreamEvent event) {
  event.usage = Usage{active.prompt_tokens, active.completion_tokens};
  if (!active.on_event) {
    active.handle->push(std::move(event));
    return;
  }
  try {
    active.on_event(event);
  } catch (...) {
    // A throwing callback must not take the engine thread down; the event is simply lost.
  }
}

void Engine::publish_stats() {
  std::lock_guard<std::mutex> lock(stats_mutex_);
  stats_.num_running = scheduler_.num_running();
  stats_.num_waiting = scheduler_.num_waiting();
  stats_.kv_blocks_used = scheduler_.blocks().num_used();
}

}  // namespace lathe::engine
