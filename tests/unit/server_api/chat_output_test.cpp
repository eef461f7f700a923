#include "server/chat_output.h"

#include <gtest/gtest.h>

namespace lathe::server {
namespace {

struct Collected {
  std::string reasoning;
  std::string content;
  std::vector<ToolCall> calls;

  void add(const ChatDelta& delta) {
    reasoning += delta.reasoning;
    content += delta.content;
    calls.insert(calls.end(), delta.tool_calls.begin(), delta.tool_calls.end());
  }
};

// Feeds `text` in pieces of `piece` bytes (every split point is exercised across pieces).
Collected run(const std::string& text, size_t piece, bool in_reasoning, bool tools) {
  ChatOutputParser parser(in_reasoning, tools);
  Collected out;
  for (size_t i = 0; i < text.size(); i += piece) out.add(parser.feed(text.substr(i, piece)));
  out.add(parser.finish());
  return out;
}

TEST(ChatOutputParser, SplitsReasoningContentAndToolCallsAtEveryChunking) {
  const std::string text =
      "<think>\nLet me think.\n</think>\n\nSure.<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": "
      "\"Paris\"}}\n</tool_call>\n<tool_call>\n{\"name\": \"f\", \"arguments\": {}}\n</tool_call>";
  for (size_t piece = 1; piece <= text.size(); ++piece) {
    const Collected out = run(text, piece, false, true);
    EXPECT_EQ(out.reasoning, "\nLet me think.\n") << piece;
    EXPECT_EQ(out.content, "Sure.") << piece;
    ASSERT_EQ(out.calls.size(), 2u) << piece;
    EXPECT_EQ(out.calls[0].name, "get_weather");
    EXPECT_EQ(out.calls[0].arguments, R"({"city":"Paris"})");
    EXPECT_EQ(out.calls[1].name, "f");
    EXPECT_TRUE(out.calls[0].id.starts_with("call_"));
    EXPECT_NE(out.calls[0].id, out.calls[1].id);
  }
}

TEST(ChatOutputParser, NoThinkTagMeansAllContent) {
  const Collected out = run("Hello <b>world</b> <thin", 3, false, true);
  EXPECT_EQ(out.reasoning, "");
  EXPECT_EQ(out.content, "Hello <b>world</b> <thin");
}

TEST(ChatOutputParser, PromptOpenedThinking) {
  const Collected out = run("reasoning here</think>\n\nanswer", 2, true, false);
  EXPECT_EQ(out.reasoning, "reasoning here");
  EXPECT_EQ(out.content, "answer");
}

TEST(ChatOutputParser, MalformedToolCallStaysContent) {
  const Collected out = run("x<tool_call>not json</tool_call>y", 4, false, true);
  EXPECT_TRUE(out.calls.empty());
  EXPECT_EQ(out.content, "x<tool_call>not json</tool_call>y");
}

TEST(ChatOutputParser, ToolsOffLeavesTagsInContent) {
  const Collected out = run("<tool_call>{\"name\":\"f\"}</tool_call>", 5, false, false);
  EXPECT_TRUE(out.calls.empty());
  EXPECT_EQ(out.content, "<tool_call>{\"name\":\"f\"}</tool_call>");
}

TEST(ChatOutputParser, UnterminatedThinkingIsReasoning) {
  const Collected out = run("<think>still going", 3, false, true);
  EXPECT_EQ(out.reasoning, "still going");
  EXPECT_EQ(out.content, "");
}

}  // namespace
}  // namespace lathe::server
