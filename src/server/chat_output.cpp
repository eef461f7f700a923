#include "server/chat_output.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <random>

namespace lathe::server {
namespace {

constexpr std::string_view kThinkOpen = "<think>";
constexpr std::string_view kThinkClose = "</think>";
constexpr std::string_view kToolOpen = "<tool_call>";
constexpr std::string_view kToolClose = "</tool_call>";

// Length of the longest suffix of `text` that is a proper prefix of one of `tags`.
size_t partial_tag_suffix(const std::string& text, std::initializer_list<std::string_view> tags) {
  size_t longest = 0;
  for (std::string_view tag : tags) {
    const size_t max_len = std::min(text.size(), tag.size() - 1);
    for (size_t len = max_len; len > longest; --len) {
      if (text.compare(text.size() - len, len, tag.substr(0, len)) == 0) {
        longest = len;
        break;
      }
    }
  }
  return longest;
}

std::string trim(const std::string& text) {
  const size_t begin = text.find_first_not_of(" \t\r\n");
  if (begin == std::string::npos) return "";
  const size_t end = text.find_last_not_of(" \t\r\n");
  return text.substr(begin, end - begin + 1);
}

}  // namespace

std::string make_tool_call_id() {
  static std::atomic<uint64_t> counter{0};
  static const uint64_t salt = std::random_device{}() ^
                               static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  std::mt19937_64 rng(salt + counter.fetch_add(1) * 0x9E3779B97F4A7C15ull);
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "call_%016llx%08llx", static_cast<unsigned long long>(rng()),
                static_cast<unsigned long long>(rng() & 0xffffffffull));
  return buffer;
}

bool parse_tool_call_body(const std::string& body, ToolCall& call) {
  const nlohmann::ordered_json parsed = nlohmann::ordered_json::parse(trim(body), nullptr, false);
  if (parsed.is_discarded() || !parsed.is_object()) return false;
  const auto name = parsed.find("name");
  if (name == parsed.end() || !name->is_string()) return false;
  call.name = name->get<std::string>();
  const auto arguments = parsed.find("arguments");
  if (arguments == parsed.end() || arguments->is_null()) {
    call.arguments = "{}";
  } else if (arguments->is_string()) {
    call.arguments = arguments->get<std::string>();
  } else if (arguments->is_object()) {
    call.arguments = arguments->dump();
  } else {
    return false;
  }
  call.id = make_tool_call_id();
  return true;
}

ChatOutputParser::ChatOutputParser(bool starts_in_reasoning, bool parse_tools, bool parse_reasoning)
    : mode_(starts_in_reasoning && parse_reasoning ? Mode::kReasoning : Mode::kStart),
      parse_tools_(parse_tools),
      parse_reasoning_(parse_reasoning) {}

ChatDelta ChatOutputParser::feed(const std::string& text) {
  pending_ += text;
  return drain(/*final=*/false);
}

ChatDelta ChatOutputParser::finish() { return drain(/*final=*/true); }

ChatDelta ChatOutputParser::drain(bool final) {
  ChatDelta delta;
  for (;;) {
    switch (mode_) {
      case Mode::kStart: {
        // Leading whitespace before an opening <think> is not content yet.
        const size_t first = pending_.find_first_not_of(" \t\r\n");
        if (first == std::string::npos) {
          if (final) pending_.clear();
          return delta;
        }
        const std::string_view rest = std::string_view(pending_).substr(first);
        if (parse_reasoning_ && rest.starts_with(kThinkOpen)) {
          pending_.erase(0, first + kThinkOpen.size());
          mode_ = Mode::kReasoning;
          continue;
        }
        if (parse_reasoning_ && !final && kThinkOpen.starts_with(rest)) return delta;  // maybe "<thi"
        mode_ = Mode::kContent;
        continue;
      }
      case Mode::kReasoning: {
        const size_t close = pending_.find(kThinkClose);
        if (close != std::string::npos) {
          delta.reasoning += pending_.substr(0, close);
          pending_.erase(0, close + kThinkClose.size());
          // The template puts "\n\n" after </think>; it is separator, not content.
          skip_newlines_ = true;
          mode_ = Mode::kContent;
          continue;
        }
        const size_t hold = final ? 0 : partial_tag_suffix(pending_, {kThinkClose});
        delta.reasoning += pending_.substr(0, pending_.size() - hold);
        pending_.erase(0, pending_.size() - hold);
        return delta;
      }
      case Mode::kContent: {
        if (skip_newlines_) {
          const size_t next = pending_.find_first_not_of("\r\n");
          pending_.erase(0, next == std::string::npos ? pending_.size() : next);
          if (pending_.empty()) return delta;
          skip_newlines_ = false;
        }
        if (parse_tools_) {
          const size_t open = pending_.find(kToolOpen);
          if (open != std::string::npos) {
            delta.content += pending_.substr(0, open);
            pending_.erase(0, open + kToolOpen.size());
            mode_ = Mode::kToolCall;
            tool_body_.clear();
            continue;
          }
        }
        const size_t hold = (final || !parse_tools_) ? 0 : partial_tag_suffix(pending_, {kToolOpen});
        delta.content += pending_.substr(0, pending_.size() - hold);
        pending_.erase(0, pending_.size() - hold);
        return delta;
      }
      case Mode::kToolCall: {
        const size_t close = pending_.find(kToolClose);
        if (close == std::string::npos) {
          if (!final) {
            const size_t hold = partial_tag_suffix(pending_, {kToolClose});
            tool_body_ += pending_.substr(0, pending_.size() - hold);
            pending_.erase(0, pending_.size() - hold);
            return delta;
          }
          // Output ended inside a tool call: accept the body if it parses, else give it back.
          tool_body_ += pending_;
          pending_.clear();
          ToolCall call;
          if (parse_tool_call_body(tool_body_, call)) {
            delta.tool_calls.push_back(std::move(call));
            ++tool_call_count_;
          } else {
            delta.content += std::string(kToolOpen) + tool_body_;
          }
          mode_ = Mode::kContent;
          return delta;
        }
        tool_body_ += pending_.substr(0, close);
        pending_.erase(0, close + kToolClose.size());
        ToolCall call;
        if (parse_tool_call_body(tool_body_, call)) {
          delta.tool_calls.push_back(std::move(call));
          ++tool_call_count_;
          skip_newlines_ = true;  // the newline(s) between consecutive calls
        } else {
          delta.content += std::string(kToolOpen) + tool_body_ + std::string(kToolClose);
        }
        tool_body_.clear();
        mode_ = Mode::kContent;
        continue;
      }
    }
  }
}

}  // namespace lathe::server
