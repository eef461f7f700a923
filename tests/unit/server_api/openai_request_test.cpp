#include "server/openai_request.h"

#include <gtest/gtest.h>

#include "server/api_error.h"

namespace lathe::server {
namespace {

using Json = nlohmann::ordered_json;

ApiError completion_error(const std::string& body) {
  try {
    parse_completion_request(parse_json_body(body));
  } catch (const ApiException& exception) {
    return exception.error;
  }
  ADD_FAILURE() << "no error for " << body;
  return {};
}

ApiError chat_error(const std::string& body) {
  try {
    parse_chat_request(parse_json_body(body));
  } catch (const ApiException& exception) {
    return exception.error;
  }
  ADD_FAILURE() << "no error for " << body;
  return {};
}

TEST(CompletionRequest, ParsesTextAndIdsPrompts) {
  const CompletionRequest text = parse_completion_request(parse_json_body(
      R"({"model":"m","prompt":"hi","max_tokens":5,"temperature":0,"top_k":3,"top_p":0.5,"min_p":0.1,"seed":7,"stop":["a","b"],"stream":true,"stream_options":{"include_usage":true},"unknown_field":1})"));
  EXPECT_EQ(text.prompt_text, "hi");
  EXPECT_EQ(text.sampling.max_tokens, 5);
  EXPECT_EQ(text.sampling.temperature, 0.0f);
  EXPECT_EQ(text.sampling.top_k, 3);
  EXPECT_EQ(text.sampling.seed, 7u);
  EXPECT_EQ(text.sampling.stop.size(), 2u);
  EXPECT_TRUE(text.sampling.stream);
  EXPECT_TRUE(text.sampling.include_usage);
  const CompletionRequest ids = parse_completion_request(parse_json_body(R"({"prompt":[1,2,3]})"));
  ASSERT_TRUE(ids.prompt_ids.has_value());
  EXPECT_EQ(*ids.prompt_ids, (std::vector<int32_t>{1, 2, 3}));
  EXPECT_EQ(ids.sampling.max_tokens, 16);  // OpenAI's default for completions
  const CompletionRequest nested = parse_completion_request(parse_json_body(R"({"prompt":[[4,5]]})"));
  EXPECT_EQ(*nested.prompt_ids, (std::vector<int32_t>{4, 5}));
}

TEST(CompletionRequest, RejectsInvalidFieldsNamingThem) {
  EXPECT_EQ(completion_error(R"({"prompt":"x","max_tokens":0})").param, "max_tokens");
  EXPECT_EQ(completion_error(R"({"prompt":"x","max_tokens":-3})").param, "max_tokens");
  EXPECT_EQ(completion_error(R"({"prompt":"x","max_tokens":"5"})").param, "max_tokens");
  EXPECT_EQ(completion_error(R"({"prompt":"x","temperature":-0.5})").param, "temperature");
  EXPECT_EQ(completion_error(R"({"prompt":"x","temperature":"hot"})").param, "temperature");
  EXPECT_EQ(completion_error(R"({"prompt":"x","top_p":0})").param, "top_p");
  EXPECT_EQ(completion_error(R"({"prompt":"x","n":2})").param, "n");
  EXPECT_EQ(completion_error(R"({"prompt":"x","stop":5})").param, "stop");
  EXPECT_EQ(completion_error(R"({"prompt":"x","stream":"yes"})").param, "stream");
  EXPECT_EQ(completion_error(R"({"prompt":"x","echo":true})").param, "echo");
  EXPECT_EQ(completion_error(R"({"prompt":[-1]})").param, "prompt");
  EXPECT_EQ(completion_error(R"({"prompt":{}})").param, "prompt");
  EXPECT_EQ(completion_error(R"({"max_tokens":3})").param, "prompt");
  EXPECT_EQ(completion_error(R"({"prompt":"x","model":5})").param, "model");
  const ApiError error = completion_error(R"({"prompt":"x","max_tokens":0})");
  EXPECT_EQ(error.status, 400);
  EXPECT_EQ(error.to_json()["error"]["type"], "invalid_request_error");
}

TEST(RequestBody, MalformedJsonIsA400) {
  EXPECT_THROW(parse_json_body("{\"prompt\": "), ApiException);
  EXPECT_THROW(parse_json_body("[1,2]"), ApiException);
  EXPECT_THROW(parse_json_body("\xff\xfe"), ApiException);
}

TEST(ChatRequest, ParsesMessagesToolsAndKwargs) {
  const ChatRequest request = parse_chat_request(parse_json_body(R"({
    "model": "m",
    "messages": [{"role":"system","content":"s"},
                 {"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]},
                 {"role":"assistant","content":null,"tool_calls":[{"id":"1","type":"function","function":{"name":"f","arguments":"{\"x\": 1}"}}]},
                 {"role":"tool","content":"42","tool_call_id":"1"}],
    "tools": [{"type":"function","function":{"name":"f","parameters":{"type":"object"}}}],
    "tool_choice": "auto",
    "chat_template_kwargs": {"enable_thinking": false},
    "max_completion_tokens": 9
  })"));
  EXPECT_EQ(request.messages[1]["content"], "ab");
  EXPECT_TRUE(request.messages[2]["tool_calls"][0]["function"]["arguments"].is_object());
  EXPECT_EQ(request.tools.size(), 1u);
  EXPECT_EQ(request.enable_thinking, false);
  EXPECT_EQ(request.sampling.max_tokens, 9);
}

TEST(ChatRequest, RejectsBadMessagesAndChoices) {
  EXPECT_EQ(chat_error(R"({"messages":[]})").param, "messages");
  EXPECT_EQ(chat_error(R"({"messages":"hi"})").param, "messages");
  EXPECT_EQ(chat_error(R"({"messages":[{"role":"wizard","content":"x"}]})").param, "messages");
  EXPECT_EQ(chat_error(R"({"messages":[{"role":"user"}]})").param, "messages");
  EXPECT_EQ(chat_error(R"({"messages":[{"role":"user","content":5}]})").param, "messages");
  EXPECT_EQ(chat_error(R"({"messages":[{"role":"user","content":"x"}],"tool_choice":"sometimes"})").param, "tool_choice");
  EXPECT_EQ(chat_error(R"({"messages":[{"role":"user","content":"x"}],"tool_choice":"required"})").param, "tool_choice");
  EXPECT_EQ(chat_error(R"({"messages":[{"role":"user","content":"x"}],"tools":{}})").param, "tools");
  EXPECT_EQ(chat_error(R"({"messages":[{"role":"user","content":"x"}],"logprobs":true})").param, "logprobs");
}

TEST(JsonBody, LimitsNestingDepthOutsideStrings) {
  auto nested = [](size_t depth) { return "{\"x\":" + std::string(depth - 1, '[') + std::string(depth - 1, ']') + "}"; };
  EXPECT_NO_THROW(parse_json_body(nested(kMaxJsonDepth)));
  try {
    parse_json_body(nested(kMaxJsonDepth + 1));
    ADD_FAILURE() << "no error for nesting deeper than the limit";
  } catch (const ApiException& exception) {
    EXPECT_EQ(exception.error.status, 400);
    EXPECT_NE(exception.error.message.find("deeper"), std::string::npos);
  }
  // Brackets inside strings (escaped quotes included) do not count.
  const std::string in_string = "{\"x\": \"\\\"" + std::string(1000, '[') + "\"}";
  EXPECT_EQ(parse_json_body(in_string)["x"].get<std::string>().size(), 1001u);
}

TEST(TokenizeRequest, TextAndMessageForms) {
  const TokenizeRequest text = parse_tokenize_request(parse_json_body(R"({"prompt":"hi","add_special_tokens":false})"));
  EXPECT_EQ(text.prompt, "hi");
  EXPECT_FALSE(text.add_special_tokens);
  EXPECT_FALSE(text.chat.has_value());
  const TokenizeRequest chat = parse_tokenize_request(
      parse_json_body(R"({"messages":[{"role":"user","content":"x"}],"add_generation_prompt":false})"));
  ASSERT_TRUE(chat.chat.has_value());
  EXPECT_FALSE(chat.chat->add_generation_prompt);
  const DetokenizeRequest detok = parse_detokenize_request(parse_json_body(R"({"tokens":[1,2,3]})"));
  EXPECT_EQ(detok.tokens, (std::vector<int32_t>{1, 2, 3}));
  for (const char* bad : {R"({})", R"({"prompt":1})", R"({"prompt":"a","messages":[]})"}) {
    EXPECT_THROW(parse_tokenize_request(parse_json_body(bad)), ApiException) << bad;
  }
  for (const char* bad : {R"({})", R"({"tokens":"a"})", R"({"tokens":[-1]})", R"({"tokens":[1.5]})"}) {
    EXPECT_THROW(parse_detokenize_request(parse_json_body(bad)), ApiException) << bad;
  }
}

}  // namespace
}  // namespace lathe::server
