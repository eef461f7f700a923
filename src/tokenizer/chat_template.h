#pragma once
// Rendering a conversation through a model's chat template exactly as transformers'
// tokenizer.apply_chat_template(messages, tools=..., add_generation_prompt=..., tokenize=False,
// **kwargs) does (transformers 5.x, utils/chat_template_utils.py), including its input
// preparation:
//   - an empty conversation is an error; every message must be a JSON object;
//   - top-level message keys whose value is null are dropped (OpenAI clients send
//     "content": null beside tool_calls; templates then see the key as undefined);
//   - a message's reasoning (the first non-null of reasoning_content, thinking, reasoning) is
//     copied to both "thinking" (first key) and "reasoning_content";
//   - the template sees: the tokenizer's special tokens that are set (bos_token, eos_token,
//     pad_token, unk_token), then the extra variables (which override them), enable_thinking when
//     given (absent means undefined), messages, tools (None when absent), documents (None) and
//     add_generation_prompt.
// Key order matters (tojson prints it), so requests are nlohmann::ordered_json: parse the
// request body with ordered_json, not json (which sorts keys).
#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <string_view>

#include "tokenizer/jinja/template.h"
#include "tokenizer/tokenizer_config.h"

namespace lathe::tokenizer {

// The special-token strings a template can read; unset ones are not passed (as in transformers'
// special_tokens_map).
struct ChatSpecialTokens {
  std::optional<std::string> bos_token;
  std::optional<std::string> eos_token;
  std::optional<std::string> pad_token;
  std::optional<std::string> unk_token;
};

struct ChatRequest {
  nlohmann::ordered_json messages = nlohmann::ordered_json::array();  // [{"role", "content", ...}]
  nlohmann::ordered_json tools = nullptr;           // null or [JSON schema objects]
  bool add_generation_prompt = false;
  std::optional<bool> enable_thinking;              // unset: undefined inside the template
  nlohmann::ordered_json extra = nlohmann::ordered_json::object();  // more template variables
};

class ChatTemplate {
 public:
  // Parses `source` once; `source_name` names it in error messages. Throws lathe::Error on a
  // syntax error or unsupported construct (with the line and column).
  ChatTemplate(std::string_view source, ChatSpecialTokens special_tokens, std::string source_name = "chat template");

  // The template transformers would pick for this checkpoint: the default one, or for a request
  // with tools the one named "tool_use" when the checkpoint has named templates. Throws
  // lathe::Error when the checkpoint has no chat template.
  static ChatTemplate from_config(const TokenizerConfig& config, bool with_tools = false);

  // Renders `request`. Throws lathe::Error naming the field for malformed input, the template
  // line for a failing template expression, and jinja::RaisedError (what() is exactly the
  // template's message) when the template calls raise_exception().
  std::string render(const ChatRequest& request) const;

 private:
  jinja::Template template_;
  ChatSpecialTokens special_tokens_;
  std::string source_name_;
};

// One-shot convenience: parse `source` and render `request`.
std::string render_chat_template(std::string_view source, const ChatRequest& request,
                                 const ChatSpecialTokens& special_tokens);

}  // namespace lathe::tokenizer
