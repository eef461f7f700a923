#pragma once
// Chat requests -> prompt text, through the checkpoint's chat template the way transformers'
// apply_chat_template(messages, tools=..., add_generation_prompt=..., **chat_template_kwargs)
// renders it (tokenizer/chat_template.h does the rendering and transformers' input preparation;
// a request with tools uses the checkpoint's "tool_use" template when it has one). Every
// chat_template_kwargs entry becomes a template variable; enable_thinking is passed as such.
#include <nlohmann/json.hpp>

#include <memory>
#include <optional>
#include <string>

#include "tokenizer/chat_template.h"
#include "tokenizer/tokenizer_config.h"

namespace lathe::server {

// What the rendered prompt means for the output parser (server/chat_output.h).
struct ChatPrompt {
  std::string text;
  // The prompt ends inside an open <think> block (templates whose generation prompt ends with
  // "<think>\n"): the output starts as reasoning.
  bool starts_in_reasoning = false;
};

class ChatPrompter {
 public:
  // Parses config.chat_template. A checkpoint without one, or one the Jinja subset cannot parse,
  // gives a prompter that refuses every chat request with that reason (completions still work).
  explicit ChatPrompter(const tokenizer::TokenizerConfig& config);

  bool available() const { return default_ != nullptr; }
  // Why chat is unavailable (empty when available()).
  const std::string& unavailable_reason() const { return unavailable_reason_; }
  // The template writes <think> blocks, so model output may hold reasoning to split off.
  bool uses_reasoning() const { return uses_reasoning_; }

  // Renders. `messages` is the validated, normalised array (server/openai_request.h); `tools` is
  // null or an array; `kwargs` an object. Throws ApiException (400) when chat is unavailable or
  // the template fails or raises on these messages (the template's message is kept).
  ChatPrompt render(const nlohmann::ordered_json& messages, const nlohmann::ordered_json& tools,
                    bool add_generation_prompt, const nlohmann::ordered_json& kwargs) const;

 private:
  std::unique_ptr<tokenizer::ChatTemplate> default_;
  std::unique_ptr<tokenizer::ChatTemplate> tool_use_;  // the "tool_use" named template, if any
  std::string unavailable_reason_;
  bool uses_reasoning_ = false;
};

}  // namespace lathe::server
