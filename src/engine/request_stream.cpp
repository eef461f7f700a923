#include "engine/request_stream.h"

namespace lathe::engine {

void RequestHandle::push(StreamEvent event) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (final_queued_) return;  // nothing follows the final event
    final_queued_ = event.finish.has_value();
    events_.push_back(std::move(event));
  }
  ready_.notify_all();
}

std::optional<StreamEvent> RequestHandle::pop_locked() {
  if (events_.empty()) return std::nullopt;
  StreamEvent event = std::move(events_.front());
  events_.pop_front();
  if (event.finish) final_taken_ = true;
  return event;
}

std::optional<StreamEvent> RequestHandle::next() {
  std::unique_lock<std::mutex> lock(mutex_);
  ready_.wait(lock, [&] { return final_taken_ || !events_.empty(); });
  return pop_locked();
}

std::optional<StreamEvent> RequestHandle::next_for(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mutex_);
  ready_.wait_for(lock, timeout, [&] { return final_taken_ || !events_.empty(); });
  return pop_locked();
}

bool RequestHandle::done() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return final_taken_;
}

GenerationResult RequestHandle::wait() {
  GenerationResult result;
  while (std::optional<StreamEvent> event = next()) {
    result.text += event->text;
    result.token_ids.insert(result.token_ids.end(), event->token_ids.begin(), event->token_ids.end());
    result.usage = event->usage;
    if (event->finish) {
      result.finish = *event->finish;
      result.stop_string = event->stop_string;
      result.error = event->error;
    }
  }
  return result;
}

}  // namespace lathe::engine
