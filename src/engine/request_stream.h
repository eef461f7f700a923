#pragma once
// What a submitted request streams back, and the thread-safe handle it streams into.
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "engine/stop.h"

namespace lathe::engine {

struct Usage {
  int32_t prompt_tokens = 0;
  int32_t completion_tokens = 0;  // generated tokens, a final stop token included
};

// One event per generated token, the last one carrying `finish`. Text is released under the
// stop-string rules (engine/stop.h): held back while it may start a stop string, never
// including a matched stop string or a stop token's text. The final event may carry text only
// (held-back text released at the end) or nothing new at all (cancellation, error).
struct StreamEvent {
  std::string text;                    // newly released text
  std::vector<int32_t> token_ids;      // newly generated token ids
  std::optional<FinishReason> finish;  // set on the final event only
  std::string stop_string;             // the stop string that matched (finish == kStop by string)
  std::string error;                   // what failed (finish == kError)
  Usage usage;                         // cumulative
};

// Everything a request produced (RequestHandle::wait()).
struct GenerationResult {
  std::string text;
  std::vector<int32_t> token_ids;
  FinishReason finish = FinishReason::kError;
  std::string stop_string;
  std::string error;
  Usage usage;
};

// Called on the engine thread for each event of a request submitted with a callback. It must
// return quickly and must not block on the engine; calling Engine::cancel() from it is allowed.
using EventCallback = std::function<void(const StreamEvent&)>;

// A submitted request. Events queue here unless the request was submitted with a callback.
class RequestHandle {
 public:
  explicit RequestHandle(uint64_t id) : id_(id) {}

  uint64_t id() const { return id_; }
  // Blocks until the next event; nullopt once the final event has been taken.
  std::optional<StreamEvent> next();
  // Like next() but gives up after `timeout` (nullopt: check done() to tell the cases apart).
  std::optional<StreamEvent> next_for(std::chrono::milliseconds timeout);
  // The final event has been taken.
  bool done() const;
  // Blocks until the request ends; folds all remaining events into one result.
  GenerationResult wait();

  // The engine's side: queues an event (the final one when event.finish is set).
  void push(StreamEvent event);

 private:
  std::optional<StreamEvent> pop_locked();

  uint64_t id_;
  mutable std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<StreamEvent> events_;
  bool final_queued_ = false;
  bool final_taken_ = false;
};

}  // namespace lathe::engine
