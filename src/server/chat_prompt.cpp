#include "server/chat_prompt.h"

#include <fmt/format.h>

#include "core/error.h"
#include "server/api_error.h"

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

ChatPrompter::ChatPrompter(const tokenizer::TokenizerConfig& config)
    : source_(config.chat_template_source),
      bos_token_(config.bos_token),
      eos_token_(config.eos_token),
      pad_token_(config.pad_token),
      unk_token_(config.unk_token) {
  if (!config.chat_template) {
    unavailable_reason_ = "this model has no chat template (tokenizer_config.json chat_template or chat_template.jinja)";
    return;
  }
  const std::string& source = *config.chat_template;
  try {
    template_ = std::make_unique<tokenizer::jinja::Template>(source);
  } catch (const std::exception& error) {
    unavailable_reason_ = fmt::format("the chat template ({}) could not be parsed: {}", source_, error.what());
    return;
  }
  uses_reasoning_ = source.find("<think>") != std::string::npos;
  supports_tools_ = source.find("tools") != std::string::npos;
}

ChatPrompt ChatPrompter::render(const Json& messages, const Json& tools, bool add_generation_prompt,
                                const Json& kwargs) const {
  if (!template_) throw ApiException{ApiError::invalid(unavailable_reason_, "messages")};
  Json variables = Json::object();
  auto set_token = [&](const char* name, const std::optional<std::string>& value) {
    if (value) variables[name] = *value;
  };
  set_token("bos_token", bos_token_);
  set_token("eos_token", eos_token_);
  set_token("pad_token", pad_token_);
  set_token("unk_token", unk_token_);
  if (kwargs.is_object()) {
    for (const auto& [key, value] : kwargs.items()) variables[key] = value;
  }
  variables["messages"] = messages;
  if (tools.is_array() && !tools.empty()) {
    variables["tools"] = tools;
  } else {
    variables.erase("tools");
  }
  variables["add_generation_prompt"] = add_generation_prompt;
  ChatPrompt prompt;
  try {
    prompt.text = template_->render(variables);
  } catch (const tokenizer::jinja::RaisedError& error) {
    throw ApiException{ApiError::invalid(fmt::format("the chat template refused the messages: {}", error.what()), "messages")};
  } catch (const Error& error) {
    throw ApiException{ApiError::invalid(fmt::format("the chat template failed on these messages: {}", error.what()), "messages")};
  }
  prompt.starts_in_reasoning = uses_reasoning_ && add_generation_prompt && ends_with_trimmed(prompt.text, "<think>");
  return prompt;
}

}  // namespace lathe::server
