#pragma once
// Splits a Qwen-style assistant output into reasoning, content and tool calls, incrementally.
//
//   [<think>] reasoning </think>  content  <tool_call>{"name": ..., "arguments": {...}}</tool_call> ...
//
// Text is fed as it is detokenised. Each feed returns the deltas that are now certain; text that
// may be the start of a tag ("<", "</thi", "<tool_ca") is held back until the next feed or
// finish(). A tool-call block whose body is not a JSON object with a string "name" is returned
// to the user as content (nothing is silently dropped).
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace lathe::server {

struct ToolCall {
  std::string id;         // "call_<hex>"
  std::string name;
  std::string arguments;  // JSON text of the arguments object
};

struct ChatDelta {
  std::string reasoning;
  std::string content;
  std::vector<ToolCall> tool_calls;  // calls completed by this feed

  bool empty() const { return reasoning.empty() && content.empty() && tool_calls.empty(); }
};

class ChatOutputParser {
 public:
  // starts_in_reasoning: the prompt already opened a <think> block (templates that end the
  // generation prompt with "<think>\n"). parse_tools: false when tool_choice is "none" or no
  // tools were given, so <tool_call> text stays content. parse_reasoning: split <think>.
  ChatOutputParser(bool starts_in_reasoning, bool parse_tools, bool parse_reasoning = true);

  ChatDelta feed(const std::string& text);
  ChatDelta finish();

  size_t tool_call_count() const { return tool_call_count_; }

 private:
  enum class Mode { kStart, kReasoning, kContent, kToolCall };
  ChatDelta drain(bool final);

  Mode mode_;
  bool parse_tools_;
  bool parse_reasoning_;
  std::string pending_;
  std::string tool_body_;
  size_t tool_call_count_ = 0;
  bool skip_newlines_ = false;  // drop separator newlines after </think> and </tool_call>
};

// Parses one tool-call body; false when it is not {"name": string, "arguments": object|string}.
bool parse_tool_call_body(const std::string& body, ToolCall& call);
// A fresh OpenAI-style id ("call_" + 24 hex digits).
std::string make_tool_call_id();

}  // namespace lathe::server
