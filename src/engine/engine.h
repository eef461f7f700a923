#pragma once
// The Engine: a request queue and the step loop, on a thread of its own.
//
// Any thread may submit() and cancel(); the engine thread alone touches the Scheduler, the
// Executor and the per-request detokenizers. One loop iteration: take new submissions and
// cancellations -> Scheduler::schedule() -> build_forward_batch() -> Executor::execute() ->
// Scheduler::update() (token stop rules) -> per generated token: detokenize, match stop strings
// (ending the sequence at once when one matches), stream an event. The loop sleeps while no
// request is unfinished.
//
// Semantics the server can rely on:
//  - submit() validates synchronously and throws lathe::Error (a 400-class message naming the
//    field) for a request that can never run; an accepted request always gets exactly one final
//    event (finish set), whatever happens: stop, length, cancel, executor error, shutdown.
//  - Output tokens do not depend on what else is running (engine/scheduler.h: determinism).
//  - Stop token ids (the configured EOS ids unless ignore_eos, plus the request's own) end the
//    request with kStop; the stop token is in token_ids and usage but its text is not streamed.
//  - Stop strings end it with kStop; the text stops just before the stop string.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "engine/engine_stats.h"
#include "engine/executor.h"
#include "engine/request_stream.h"
#include "engine/scheduler.h"

namespace lathe::engine {

struct EngineConfig {
  SchedulerConfig scheduler;
  int32_t num_blocks = 0;              // KV cache blocks (block 0 is the scratch block)
  int32_t block_size = 16;             // tokens per block
  std::vector<int32_t> eos_token_ids;  // the model's EOS ids (generation_config.json)
  int32_t pad_blocks_per_seq = 0;      // fixed block-table width for the executor (0: as needed)
};

// params.sampling.seed is used as given: a server that wants fresh randomness for a request
// without a client seed picks one itself (the draws are then reproducible from that seed).
struct Request {
  std::vector<int32_t> prompt;    // token ids (the server tokenizes and applies the template)
  SequenceParams params;          // max_tokens, extra stop_token_ids, sampling
  std::vector<std::string> stop;  // stop strings, matched on the detokenized text
  bool ignore_eos = false;        // true: EOS ids do not stop the request
};

class Engine {
 public:
  // Starts the engine thread. Throws lathe::Error when the configuration is inconsistent.
  // Without a detokenizer factory no text is produced and stop strings are refused.
  Engine(const EngineConfig& config, std::unique_ptr<Executor> executor,
         DetokenizerFactory detokenizers = {});
  // Shuts down: unfinished requests end with kCancelled.
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Thread-safe. Throws lathe::Error when the request is rejected (or the engine is shut down).
  // With `on_event`, events go to the callback (on the engine thread) instead of the handle's
  // queue; next()/wait() are for handles submitted without one.
  std::shared_ptr<RequestHandle> submit(Request request, EventCallback on_event = {});
  // Thread-safe; the request ends with kCancelled (its KV blocks freed before the next step).
  // A no-op for a request that has already ended.
  void cancel(uint64_t request_id);
  // Thread-safe snapshot (refreshed once per loop iteration).
  EngineStats stats() const;
  // Stops the loop and ends every unfinished request with kCancelled; later submits throw.
  void shutdown();

  const EngineConfig& config() const { return config_; }

 private:
  struct Pending {
    uint64_t id;
    Request request;
    std::shared_ptr<RequestHandle> handle;
    EventCallback on_event;
    std::chrono::steady_clock::time_point submitted;  // TTFT and e2e latency count from here
  };
  struct Active;  // engine-thread state of one request (engine.cpp)

  void loop();
  void admit(Pending pending);
  void run_step();
  void on_token(const SeqOutput& output);
  void end_request(uint64_t id, StreamEvent event);
  void deliver(Active& active, StreamEvent event);
  void publish_stats();

  const EngineConfig config_;
  std::unique_ptr<Executor> executor_;
  DetokenizerFactory detokenizers_;
  Scheduler scheduler_;  // engine thread only

  // Shared with submitting threads, under mutex_.
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::vector<Pending> incoming_;
  std::vector<uint64_t> cancels_;
  bool stopping_ = false;
  std::atomic<uint64_t> next_id_{1};

  // Engine thread only.
  std::unordered_map<uint64_t, std::unique_ptr<Active>> active_;

  mutable std::mutex stats_mutex_;
  EngineStats stats_;

  std::thread thread_;  // last: starts after everything above exists
};

}  // namespace lathe::engine
