// `lathe chat-template DIR`: reads one JSON object {"messages", "tools"?, "add_generation_prompt"?,
// "enable_thinking"?} on stdin and prints the prompt the checkpoint's chat template renders for
// it, byte for byte as transformers' apply_chat_template(..., tokenize=False), with nothing added.
// The template comes from DIR/chat_template.jinja or DIR/tokenizer_config.json "chat_template"
// (a string, or the "default" entry of a list of named templates; "tool_use" when tools are given
// and the checkpoint has one).
#include <cstdio>
#include <iostream>
#include <iterator>
#include <memory>
#include <string>

#include "app/commands.h"
#include "core/error.h"
#include "tokenizer/chat_template.h"
#include "tokenizer/tokenizer_config.h"

namespace lathe::app {
namespace {

using nlohmann::ordered_json;

tokenizer::ChatRequest parse_request(const std::string& text) {
  ordered_json body;
  try {
    body = ordered_json::parse(text);
  } catch (const ordered_json::parse_error& error) {
    fail("stdin: invalid JSON: {}", error.what());
  }
  if (!body.is_object()) fail("stdin: expected one JSON object {{\"messages\": [...], ...}}, got {}", body.type_name());
  tokenizer::ChatRequest request;
  for (const auto& [key, value] : body.items()) {
    if (key == "messages") {
      if (!value.is_array()) fail("stdin: field 'messages' must be an array, got {}", value.type_name());
      request.messages = value;
    } else if (key == "tools") {
      if (!value.is_null() && !value.is_array()) fail("stdin: field 'tools' must be an array or null, got {}", value.type_name());
      request.tools = value;
    } else if (key == "add_generation_prompt") {
      if (!value.is_boolean()) fail("stdin: field 'add_generation_prompt' must be a boolean, got {}", value.type_name());
      request.add_generation_prompt = value.get<bool>();
    } else if (key == "enable_thinking") {
      if (!value.is_boolean() && !value.is_null()) {
        fail("stdin: field 'enable_thinking' must be a boolean or null, got {}", value.type_name());
      }
      if (value.is_boolean()) request.enable_thinking = value.get<bool>();
    } else {
      fail("stdin: unknown field '{}' (expected messages, tools, add_generation_prompt, enable_thinking)", key);
    }
  }
  if (!body.contains("messages")) fail("stdin: missing field 'messages'");
  return request;
}

int run_chat_template(const std::string& dir) {
  tokenizer::TokenizerConfig config = tokenizer::TokenizerConfig::load(dir);
  std::string input((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
  if (std::cin.bad()) fail("stdin: read error");
  tokenizer::ChatRequest request = parse_request(input);
  tokenizer::ChatTemplate chat_template = tokenizer::ChatTemplate::from_config(config, !request.tools.is_null());
  std::string prompt = chat_template.render(request);
  if (std::fwrite(prompt.data(), 1, prompt.size(), stdout) != prompt.size() || std::fflush(stdout) != 0) {
    fail("stdout: write error");
  }
  return 0;
}

const Registration kChatTemplate{"chat-template",
                                 "Render a conversation (JSON object on stdin) with DIR's chat template",
                                 [](CLI::App& cmd) -> CommandAction {
                                   auto dir = std::make_shared<std::string>();
                                   cmd.add_option("DIR", *dir, "Checkpoint directory with the chat template")
                                       ->required();
                                   return [dir]() { return run_chat_template(*dir); };
                                 }};

}  // namespace
}  // namespace lathe::app
