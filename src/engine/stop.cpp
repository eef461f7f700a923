#include "engine/stop.h"

#include <algorithm>

namespace lathe::engine {

const char* finish_reason_name(FinishReason reason) {
  switch (reason) {
    case FinishReason::kStop:
      return "stop";
    case FinishReason::kLength:
      return "length";
    case FinishReason::kCancelled:
      return "cancelled";
    case FinishReason::kError:
      return "error";
  }
  return "unknown";
}

std::optional<FinishReason> check_token_stop(const TokenStopRules& rules, int32_t prompt_len,
                                             int32_t num_output, int32_t last_token) {
  if (num_output > 0 && std::find(rules.stop_token_ids.begin(), rules.stop_token_ids.end(), last_token) !=
                            rules.stop_token_ids.end()) {
    return FinishReason::kStop;
  }
  if (num_output >= rules.max_tokens) return FinishReason::kLength;
  if (rules.max_model_len > 0 && prompt_len + num_output >= rules.max_model_len) return FinishReason::kLength;
  return std::nullopt;
}

StopStringMatcher::StopStringMatcher(std::vector<std::string> stops) {
  for (std::string& stop : stops) {
    if (!stop.empty()) stops_.push_back(std::move(stop));
  }
}

StopStringMatcher::Result StopStringMatcher::append(std::string_view piece) {
  Result result;
  if (stopped_) return result;
  pending_.append(piece);

  // Earliest full occurrence of any stop string (ties: any; the cut is the same).
  size_t earliest = std::string::npos;
  const std::string* which = nullptr;
  for (const std::string& stop : stops_) {
    const size_t at = pending_.find(stop);
    if (at < earliest) {
      earliest = at;
      which = &stop;
    }
  }
  if (which != nullptr) {
    result.text = pending_.substr(0, earliest);
    result.stopped = true;
    result.matched = *which;
    pending_.clear();
    stopped_ = true;
    return result;
  }

  // Hold back from the earliest position whose suffix is a proper prefix of some stop string.
  // Only the last (longest stop - 1) bytes can qualify.
  size_t longest = 0;
  for (const std::string& stop : stops_) longest = std::max(longest, stop.size());
  size_t hold_from = pending_.size();
  const size_t first_candidate = pending_.size() > longest ? pending_.size() - longest + 1 : 0;
  for (size_t p = first_candidate; p < pending_.size() && hold_from == pending_.size(); ++p) {
    const std::string_view suffix = std::string_view(pending_).substr(p);
    for (const std::string& stop : stops_) {
      if (suffix.size() < stop.size() && std::string_view(stop).starts_with(suffix)) {
        hold_from = p;
        break;
      }
    }
  }
  result.text = pending_.substr(0, hold_from);
  pending_.erase(0, hold_from);
  return result;
}

std::string StopStringMatcher::flush() {
  if (stopped_) return {};
  std::string rest = std::move(pending_);
  pending_.clear();
  return rest;
}

}  // namespace lathe::engine
