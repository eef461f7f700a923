#include "server/chat_prompt.h"

#include <fmt/format.h>

#include "core/error.h"
#include "server/api_error.h"
#include "tokenizer/jinja/value.h"

namespace lathe::server {
namespace {

using Json = nlohmann::ordered_json;

// Whether `text`, ignoring trailing whitespace, ends with `suffix`.
bool ends_with_trimmed(const std::string& text, std::string_view suffix) {
  const size_t end = text.find_last_not_of(" \t\r\n");
  if (end == std::string::npos) return false;
  return std::string_view(text).substr(0, end + 1).ends_with(suffix);
}

}  // namespace

ChatPrompter::ChatPrompter(const tokenizer::TokenizerConfig& config) {
  try {
    default_ = std::make_unique<tokenizer::ChatTemplate>(tokenizer::ChatTemplate::from_config(config, false));
    if (config.named_chat_templates.contains("tool_use")) {
      tool_use_ = std::make_unique<tokenizer::ChatTemplate>(tokenizer::ChatTemplate::from_config(config, true));
    }
  } catch (const std::exception& error) {
    default_.reset();
    tool_use_.reset();
    unavailable_reason_ = fmt::format("chat is unavailable for this model: {}", error.what());
    return;
  }
  std::string sources = config.chat_template.value_or("");
  for (const auto& [name, source] : config.named_chat_templates) sources += source;
  uses_reasoning_ = sources.find("<think>") != std::string::npos;
}

ChatPrompt ChatPrompter::render(const Json& messages, const Json& tools, bool add_generation_prompt,
                                const Json& kwargs) const {
  if (!default_) throw ApiException{ApiError::invalid(unavailable_reason_, "messages")};
  tokenizer::ChatRequest request;
  request.messages = messages;
  const bool with_tools = tools.is_array() && !tools.empty();
  if (with_tools) request.tools = tools;
  request.add_generation_prompt = add_generation_prompt;
  if (kwargs.is_object()) {
    for (const auto& [key, value] : kwargs.items()) {
      if (key == "enable_thinking" && value.is_boolean()) {
        request.enable_thinking = value.get<bool>();
      } else {
        request.extra[key] = value;
      }
    }
  }
  const tokenizer::ChatTemplate& chosen = with_tools && tool_use_ ? *tool_use_ : *default_;
  ChatPrompt prompt;
  try {
    prompt.text = chosen.render(request);
  } catch (const tokenizer::jinja::RaisedError& error) {
    throw ApiException{ApiError::invalid(fmt::format("the chat template refused the messages: {}", error.what()), "messages")};
  } catch (const Error& error) {
    throw ApiException{ApiError::invalid(fmt::format("the chat template failed on these messages: {}", error.what()), "messages")};
  }
  prompt.starts_in_reasoning = uses_reasoning_ && add_generation_prompt && ends_with_trimmed(prompt.text, "<think>");
  return prompt;
}

}  // namespace lathe::server
