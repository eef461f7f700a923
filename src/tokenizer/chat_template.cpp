#include "tokenizer/chat_template.h"

#include "core/error.h"
#include "tokenizer/jinja/json_value.h"

namespace lathe::tokenizer {
namespace {

using nlohmann::ordered_json;

// transformers _normalize_chat_messages + _alias_reasoning_fields for one message.
ordered_json prepare_message(const ordered_json& message, size_t index) {
  if (!message.is_object()) {
    fail("messages[{}]: chat messages must be JSON objects, got {}", index, message.type_name());
  }
  ordered_json kept = ordered_json::object();
  for (const auto& [key, value] : message.items()) {
    if (!value.is_null()) kept[key] = value;
  }
  const ordered_json* reasoning = nullptr;
  for (const char* field : {"reasoning_content", "thinking", "reasoning"}) {
    auto it = kept.find(field);
    if (it != kept.end()) {
      reasoning = &*it;
      break;
    }
  }
  if (!reasoning) return kept;
  // {"thinking": reasoning, **message, "reasoning_content": reasoning}
  ordered_json aliased = ordered_json::object();
  aliased["thinking"] = *reasoning;
  for (const auto& [key, value] : kept.items()) aliased[key] = value;
  aliased["reasoning_content"] = *reasoning;
  return aliased;
}

jinja::Value special_token_value(const std::optional<std::string>& token) { return jinja::Value::string(*token); }

}  // namespace

ChatTemplate::ChatTemplate(std::string_view source, ChatSpecialTokens special_tokens, std::string source_name)
    : template_([&]() {
        try {
          return jinja::Template(source);
        } catch (const jinja::TemplateError& error) {
          fail("{}: {}", source_name, error.what());
        }
      }()),
      special_tokens_(std::move(special_tokens)),
      source_name_(std::move(source_name)) {}

ChatTemplate ChatTemplate::from_config(const TokenizerConfig& config, bool with_tools) {
  ChatSpecialTokens tokens{config.bos_token, config.eos_token, config.pad_token, config.unk_token};
  if (with_tools) {
    auto tool_use = config.named_chat_templates.find("tool_use");
    if (tool_use != config.named_chat_templates.end()) {
      return ChatTemplate(tool_use->second, std::move(tokens), config.chat_template_source + "[tool_use]");
    }
  }
  if (!config.chat_template) {
    fail("no chat template: the checkpoint has neither chat_template.jinja nor a default 'chat_template' in "
         "tokenizer_config.json{}",
         config.named_chat_templates.empty() ? "" : " (its named templates have no 'default')");
  }
  return ChatTemplate(*config.chat_template, std::move(tokens), config.chat_template_source);
}

std::string ChatTemplate::render(const ChatRequest& request) const {
  if (!request.messages.is_array()) fail("messages must be a JSON array, got {}", request.messages.type_name());
  if (request.messages.empty()) fail("messages: cannot apply the chat template to an empty conversation");
  if (!request.tools.is_null() && !request.tools.is_array()) {
    fail("tools must be null or a JSON array, got {}", request.tools.type_name());
  }
  if (request.tools.is_array()) {
    for (size_t i = 0; i < request.tools.size(); ++i) {
      if (!request.tools[i].is_object()) fail("tools[{}]: a tool must be a JSON schema object", i);
    }
  }
  if (!request.extra.is_object()) fail("extra chat template variables must be a JSON object");

  ordered_json messages = ordered_json::array();
  for (size_t i = 0; i < request.messages.size(); ++i) messages.push_back(prepare_message(request.messages[i], i));

  jinja::Dict variables;
  if (special_tokens_.bos_token) variables.set("bos_token", special_token_value(special_tokens_.bos_token));
  if (special_tokens_.eos_token) variables.set("eos_token", special_token_value(special_tokens_.eos_token));
  if (special_tokens_.pad_token) variables.set("pad_token", special_token_value(special_tokens_.pad_token));
  if (special_tokens_.unk_token) variables.set("unk_token", special_token_value(special_tokens_.unk_token));
  for (const auto& [key, value] : request.extra.items()) {
    if (key == "messages" || key == "tools" || key == "documents" || key == "add_generation_prompt" ||
        (key == "enable_thinking" && request.enable_thinking)) {
      fail("extra chat template variable '{}' clashes with an argument of the same name", key);
    }
    variables.set(key, jinja::from_json(value));
  }
  if (request.enable_thinking) variables.set("enable_thinking", jinja::Value::boolean(*request.enable_thinking));
  variables.set("messages", jinja::from_json(messages));
  variables.set("tools", jinja::from_json(request.tools));
  variables.set("documents", jinja::Value::none());
  variables.set("add_generation_prompt", jinja::Value::boolean(request.add_generation_prompt));
  try {
    return template_.render(variables);
  } catch (const jinja::TemplateError& error) {
    fail("{}: {}", source_name_, error.what());
  }
}

std::string render_chat_template(std::string_view source, const ChatRequest& request,
                                 const ChatSpecialTokens& special_tokens) {
  return ChatTemplate(source, special_tokens).render(request);
}

}  // namespace lathe::tokenizer
