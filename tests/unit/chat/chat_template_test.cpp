// Qwen3 and Qwen3.5 conversations rendered by transformers' apply_chat_template(tokenize=False)
// (tools/make_chat_refs.py) must render byte-identically through ChatTemplate; where the template
// or transformers raised, ChatTemplate must raise (raise_exception messages unchanged).
#include <gtest/gtest.h>

#include <filesystem>

#include "test_util.h"
#include "tokenizer/chat_template.h"
#include "tokenizer/jinja/value.h"

namespace lathe::tokenizer {
namespace {

using nlohmann::ordered_json;

ChatRequest to_request(const ordered_json& json) {
  ChatRequest request;
  request.messages = json.at("messages");
  if (json.contains("tools")) request.tools = json.at("tools");
  request.add_generation_prompt = json.value("add_generation_prompt", false);
  if (json.contains("enable_thinking")) request.enable_thinking = json.at("enable_thinking").get<bool>();
  return request;
}

ChatSpecialTokens to_special_tokens(const ordered_json& json) {
  ChatSpecialTokens tokens;
  auto get = [&](const char* key) -> std::optional<std::string> {
    return json.contains(key) ? std::optional<std::string>(json.at(key).get<std::string>()) : std::nullopt;
  };
  tokens.bos_token = get("bos_token");
  tokens.eos_token = get("eos_token");
  tokens.pad_token = get("pad_token");
  tokens.unk_token = get("unk_token");
  return tokens;
}

// Renders every case of `refs` with `chat_template`; returns the number of cases checked.
size_t check_refs(const ordered_json& refs, const ChatTemplate& chat_template) {
  size_t checked = 0;
  for (const auto& c : refs.at("cases")) {
    SCOPED_TRACE(c.at("name").get<std::string>());
    ChatRequest request = to_request(c.at("request"));
    std::string output;
    std::string error;
    bool raised = false;
    try {
      output = chat_template.render(request);
    } catch (const lathe::Error& e) {
      error = e.what();
      raised = dynamic_cast<const jinja::RaisedError*>(&e) != nullptr;
    }
    if (c.value("error", false)) {
      EXPECT_FALSE(error.empty()) << "transformers raised " << c.at("error_message").get<std::string>()
                                  << "\nbut lathe rendered:\n" << output;
      if (c.at("error_type") == "TemplateError") {
        EXPECT_TRUE(raised);
        EXPECT_EQ(error, c.at("error_message").get<std::string>());
      }
    } else {
      EXPECT_TRUE(error.empty()) << error;
      EXPECT_EQ(output, c.at("expected").get<std::string>());
    }
    ++checked;
  }
  return checked;
}

TEST(ChatTemplate, Qwen3MatchesTransformers) {
  ordered_json refs = test::read_json(LATHE_FIXTURES_DIR "/chat/qwen3_chat_refs.json");
  ChatTemplate chat_template(refs.at("chat_template").get<std::string>(), to_special_tokens(refs.at("special_tokens")),
                             "qwen3");
  EXPECT_GE(check_refs(refs, chat_template), 20u);
}

TEST(ChatTemplate, Qwen3_5MatchesTransformers) {
  ordered_json refs = test::read_json(LATHE_FIXTURES_DIR "/chat/qwen3_5_chat_refs.json");
  std::string source = test::read_file(LATHE_FIXTURES_DIR "/chat/qwen3_5_chat_template.jinja");
  ChatTemplate chat_template(source, to_special_tokens(refs.at("special_tokens")), "qwen3.5");
  EXPECT_GE(check_refs(refs, chat_template), 10u);
}

// The references embed the template of shared/tokenizers/qwen3; loading that checkpoint directory
// must give the same template and special tokens (skipped where the shared folder is absent).
TEST(ChatTemplate, Qwen3CheckpointConfigMatchesTheReferences) {
  const std::filesystem::path dir = LATHE_SHARED_DIR "/tokenizers/qwen3";
  if (!std::filesystem::exists(dir / "tokenizer_config.json")) GTEST_SKIP() << "no " << dir;
  ordered_json refs = test::read_json(LATHE_FIXTURES_DIR "/chat/qwen3_chat_refs.json");
  TokenizerConfig config = TokenizerConfig::load(dir);
  ASSERT_TRUE(config.chat_template.has_value());
  EXPECT_EQ(*config.chat_template, refs.at("chat_template").get<std::string>());
  ChatSpecialTokens tokens = to_special_tokens(refs.at("special_tokens"));
  EXPECT_EQ(config.bos_token, tokens.bos_token);
  EXPECT_EQ(config.eos_token, tokens.eos_token);
  EXPECT_EQ(config.pad_token, tokens.pad_token);
  EXPECT_EQ(config.unk_token, tokens.unk_token);
  EXPECT_GE(check_refs(refs, ChatTemplate::from_config(config)), 20u);
}

// transformers' input preparation (null keys dropped, reasoning aliased to "thinking" and
// "reasoning_content", special tokens, documents/tools/enable_thinking variables) through a probe
// template.
TEST(ChatTemplate, InputPreparationMatchesTransformers) {
  ordered_json refs = test::read_json(LATHE_FIXTURES_DIR "/chat/preparation_refs.json");
  ChatTemplate chat_template(refs.at("chat_template").get<std::string>(), to_special_tokens(refs.at("special_tokens")),
                             "probe");
  EXPECT_EQ(check_refs(refs, chat_template), 3u);
}

TEST(ChatTemplate, ExtraVariablesReachTheTemplateAndOverrideSpecialTokens) {
  ChatSpecialTokens tokens;
  tokens.eos_token = "</s>";
  ChatTemplate chat_template("{{ eos_token }}|{{ custom }}", tokens);
  ChatRequest request;
  request.messages = ordered_json::array({{{"role", "user"}, {"content", "x"}}});
  request.extra = {{"custom", "seven"}};
  EXPECT_EQ(chat_template.render(request), "</s>|seven");
  request.extra = {{"eos_token", "override"}};
  EXPECT_EQ(chat_template.render(request), "override|");
}

TEST(ChatTemplate, BadInputIsAClearError) {
  ChatTemplate chat_template("{{ messages|length }}", {});
  ChatRequest request;
  EXPECT_THROW(chat_template.render(request), lathe::Error);  // empty conversation
  request.messages = ordered_json::array({"not an object"});
  EXPECT_THROW(chat_template.render(request), lathe::Error);
  request.messages = ordered_json::array({{{"role", "user"}, {"content", "x"}}});
  request.tools = ordered_json::object();
  EXPECT_THROW(chat_template.render(request), lathe::Error);
  request.tools = nullptr;
  request.extra = {{"messages", 1}};
  EXPECT_THROW(chat_template.render(request), lathe::Error);
  EXPECT_THROW(ChatTemplate("{% for %}", {}), lathe::Error);
}

}  // namespace
}  // namespace lathe::tokenizer
