#include "server/openai_request.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "server/api_error.h"

namespace lathe::server {
namespace {

using Json = nlohmann::ordered_json;

[[noreturn]] void invalid(const std::string& param, const std::string& message) {
  throw ApiException{ApiError::invalid(message, param)};
}

const char* type_name(const Json& value) {
  switch (value.type()) {
    case Json::value_t::null:
      return "null";
    case Json::value_t::boolean:
      return "boolean";
    case Json::value_t::string:
      return "string";
    case Json::value_t::array:
      return "array";
    case Json::value_t::object:
      return "object";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
      return "integer";
    case Json::value_t::number_float:
      return "number";
    default:
      return "unknown";
  }
}

// A field that is absent or null counts as not given.
const Json* field(const Json& body, const char* name) {
  const auto it = body.find(name);
  if (it == body.end() || it->is_null()) return nullptr;
  return &*it;
}

double number_field(const Json& value, const char* name) {
  if (!value.is_number()) invalid(name, fmt::format("'{}' must be a number, got {}", name, type_name(value)));
  const double number = value.get<double>();
  if (!std::isfinite(number)) invalid(name, fmt::format("'{}' must be finite", name));
  return number;
}

int64_t integer_field(const Json& value, const char* name) {
  if (value.is_number_integer() || value.is_number_unsigned()) {
    if (value.is_number_unsigned() && value.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      invalid(name, fmt::format("'{}' is too large", name));
    }
    return value.get<int64_t>();
  }
  // OpenAI accepts 5.0 for an integer field; reject 5.5.
  if (value.is_number_float()) {
    const double number = value.get<double>();
    if (std::isfinite(number) && number == std::floor(number) && std::fabs(number) < 9.0e15) {
      return static_cast<int64_t>(number);
    }
  }
  invalid(name, fmt::format("'{}' must be an integer, got {}", name, type_name(value)));
}

bool bool_field(const Json& value, const char* name) {
  if (!value.is_boolean()) invalid(name, fmt::format("'{}' must be a boolean, got {}", name, type_name(value)));
  return value.get<bool>();
}

std::string model_field(const Json& body) {
  const Json* model = field(body, "model");
  if (!model) return "";
  if (!model->is_string()) invalid("model", fmt::format("'model' must be a string, got {}", type_name(*model)));
  return model->get<std::string>();
}

std::vector<int32_t> token_id_array(const Json& value, const char* name) {
  std::vector<int32_t> ids;
  ids.reserve(value.size());
  for (const Json& item : value) {
    const int64_t id = integer_field(item, name);
    if (id < 0 || id > std::numeric_limits<int32_t>::max()) invalid(name, fmt::format("'{}' has an invalid token id {}", name, id));
    ids.push_back(static_cast<int32_t>(id));
  }
  return ids;
}

SamplingRequest parse_sampling(const Json& body, bool chat) {
  SamplingRequest sampling;
  const char* max_name = "max_tokens";
  const Json* max_tokens = field(body, "max_tokens");
  if (chat && field(body, "max_completion_tokens")) {
    max_tokens = field(body, "max_completion_tokens");
    max_name = "max_completion_tokens";
  }
  if (max_tokens) {
    const int64_t value = integer_field(*max_tokens, max_name);
    if (value <= 0) invalid(max_name, fmt::format("'{}' must be at least 1, got {}", max_name, value));
    sampling.max_tokens = value;
  } else if (!chat) {
    sampling.max_tokens = 16;  // OpenAI's completions default
  }
  if (const Json* value = field(body, "temperature")) {
    const double temperature = number_field(*value, "temperature");
    if (temperature < 0.0) invalid("temperature", fmt::format("'temperature' must be >= 0, got {}", temperature));
    sampling.temperature = static_cast<float>(temperature);
  }
  if (const Json* value = field(body, "top_p")) {
    const double top_p = number_field(*value, "top_p");
    if (top_p <= 0.0 || top_p > 1.0) invalid("top_p", fmt::format("'top_p' must be in (0, 1], got {}", top_p));
    sampling.top_p = static_cast<float>(top_p);
  }
  if (const Json* value = field(body, "top_k")) {
    const int64_t top_k = integer_field(*value, "top_k");
    if (top_k < -1) invalid("top_k", fmt::format("'top_k' must be -1, 0 (disabled) or positive, got {}", top_k));
    sampling.top_k = top_k <= 0 ? 0 : static_cast<int32_t>(std::min<int64_t>(top_k, std::numeric_limits<int32_t>::max()));
  }
  if (const Json* value = field(body, "min_p")) {
    const double min_p = number_field(*value, "min_p");
    if (min_p < 0.0 || min_p > 1.0) invalid("min_p", fmt::format("'min_p' must be in [0, 1], got {}", min_p));
    sampling.min_p = static_cast<float>(min_p);
  }
  if (const Json* value = field(body, "seed")) {
    sampling.seed = static_cast<uint64_t>(integer_field(*value, "seed"));
  }
  if (const Json* value = field(body, "stop")) {
    if (value->is_string()) {
      sampling.stop.push_back(value->get<std::string>());
    } else if (value->is_array()) {
      for (const Json& item : *value) {
        if (!item.is_string()) invalid("stop", "'stop' must be a string or an array of strings");
        sampling.stop.push_back(item.get<std::string>());
      }
    } else {
      invalid("stop", fmt::format("'stop' must be a string or an array of strings, got {}", type_name(*value)));
    }
    for (const std::string& stop : sampling.stop) {
      if (stop.empty()) invalid("stop", "'stop' strings must not be empty");
    }
  }
  if (const Json* value = field(body, "stop_token_ids")) {
    if (!value->is_array()) invalid("stop_token_ids", "'stop_token_ids' must be an array of integers");
    sampling.stop_token_ids = token_id_array(*value, "stop_token_ids");
  }
  if (const Json* value = field(body, "ignore_eos")) sampling.ignore_eos = bool_field(*value, "ignore_eos");
  if (const Json* value = field(body, "stream")) sampling.stream = bool_field(*value, "stream");
  if (const Json* value = field(body, "stream_options")) {
    if (!value->is_object()) invalid("stream_options", "'stream_options' must be an object");
    if (const Json* usage = field(*value, "include_usage")) sampling.include_usage = bool_field(*usage, "stream_options.include_usage");
  }
  if (const Json* value = field(body, "return_token_ids")) sampling.return_token_ids = bool_field(*value, "return_token_ids");
  if (const Json* value = field(body, "n")) {
    const int64_t n = integer_field(*value, "n");
    if (n != 1) invalid("n", fmt::format("only n=1 is supported, got {}", n));
  }
  if (const Json* value = field(body, "logprobs")) {
    // Completions take an integer, chat a boolean; false / 0 mean "off".
    const bool wanted = value->is_boolean() ? value->get<bool>() : integer_field(*value, "logprobs") != 0;
    if (wanted) invalid("logprobs", "logprobs are not supported by this server yet");
  }
  if (const Json* value = field(body, "top_logprobs")) {
    if (integer_field(*value, "top_logprobs") != 0) invalid("top_logprobs", "logprobs are not supported by this server yet");
  }
  for (const char* penalty : {"presence_penalty", "frequency_penalty"}) {
    if (const Json* value = field(body, penalty)) {
      if (number_field(*value, penalty) != 0.0) invalid(penalty, fmt::format("'{}' is not supported yet (only 0)", penalty));
    }
  }
  if (const Json* value = field(body, "repetition_penalty")) {
    if (number_field(*value, "repetition_penalty") != 1.0) {
      invalid("repetition_penalty", "'repetition_penalty' is not supported yet (only 1)");
    }
  }
  if (field(body, "logit_bias")) {
    const Json& bias = body["logit_bias"];
    if (!bias.is_object()) invalid("logit_bias", "'logit_bias' must be an object");
    if (!bias.empty()) invalid("logit_bias", "'logit_bias' is not supported yet");
  }
  return sampling;
}

void validate_message(const Json& message, size_t index) {
  const std::string where = fmt::format("messages[{}]", index);
  if (!message.is_object()) invalid("messages", where + " must be an object");
  const Json* role = field(message, "role");
  if (!role || !role->is_string()) invalid("messages", where + ".role must be a string");
  const std::string role_name = role->get<std::string>();
  if (role_name != "system" && role_name != "user" && role_name != "assistant" && role_name != "tool" &&
      role_name != "developer") {
    invalid("messages", fmt::format("{}.role '{}' is not one of system, developer, user, assistant, tool", where, role_name));
  }
  if (const Json* content = field(message, "content")) {
    if (content->is_array()) {
      for (const Json& part : *content) {
        if (!part.is_object() || !part.contains("type") || !part["type"].is_string()) {
          invalid("messages", where + ".content parts must be objects with a 'type'");
        }
        if (part["type"] != "text") {
          invalid("messages", fmt::format("{}.content part type '{}' is not supported (text only)", where,
                                          part["type"].get<std::string>()));
        }
        if (!part.contains("text") || !part["text"].is_string()) invalid("messages", where + ".content text part needs a string 'text'");
      }
    } else if (!content->is_string()) {
      invalid("messages", fmt::format("{}.content must be a string or an array of parts, got {}", where, type_name(*content)));
    }
  } else if (role_name != "assistant") {
    invalid("messages", where + ".content is required");
  }
  if (const Json* calls = field(message, "tool_calls")) {
    if (!calls->is_array()) invalid("messages", where + ".tool_calls must be an array");
    for (const Json& call : *calls) {
      if (!call.is_object() || !call.contains("function") || !call["function"].is_object() ||
          !call["function"].contains("name") || !call["function"]["name"].is_string()) {
        invalid("messages", where + ".tool_calls entries need function.name");
      }
    }
  }
}

// Chat templates expect plain string content; join text parts as transformers does for text-only.
Json normalise_message(const Json& message) {
  Json copy = message;
  // An assistant turn that only calls tools arrives with content null or absent; templates
  // concatenate and search the content, so give them an empty string.
  if (!copy.contains("content") || copy["content"].is_null()) copy["content"] = "";
  if (copy.contains("content") && copy["content"].is_array()) {
    std::string text;
    for (const Json& part : copy["content"]) text += part["text"].get<std::string>();
    copy["content"] = text;
  }
  // Tool-call arguments arrive as JSON strings from the SDK; Qwen's template prints them as is
  // when they are strings, and tojson's them when they are objects. Parse strings that hold a
  // JSON object so the rendering matches what the model saw when it produced them.
  if (copy.contains("tool_calls") && copy["tool_calls"].is_array()) {
    for (Json& call : copy["tool_calls"]) {
      Json& function = call["function"];
      if (function.contains("arguments") && function["arguments"].is_string()) {
        Json parsed = Json::parse(function["arguments"].get<std::string>(), nullptr, false);
        if (!parsed.is_discarded() && parsed.is_object()) function["arguments"] = std::move(parsed);
      }
    }
  }
  return copy;
}

}  // namespace

Json parse_json_body(const std::string& text) {
  // nlohmann parses and destroys iteratively, but the code that walks request values (the chat
  // template's JSON conversion, tojson) recurses: a body nested thousands of levels deep would
  // overflow a worker's stack. Real requests nest a few levels (tool schemas a few dozen).
  size_t depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth) {
        throw ApiException{ApiError::invalid(fmt::format("The request body nests JSON deeper than {} levels", kMaxJsonDepth))};
      }
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  Json body;
  try {
    body = Json::parse(text);
  } catch (const Json::exception& error) {
    // nlohmann's message names the byte offset and the cause (e.g. an ill-formed UTF-8 byte).
    throw ApiException{ApiError::invalid(fmt::format("The request body is not valid JSON: {}", error.what()))};
  }
  if (!body.is_object()) throw ApiException{ApiError::invalid("The request body must be a JSON object")};
  return body;
}

CompletionRequest parse_completion_request(const Json& body) {
  CompletionRequest request;
  request.model = model_field(body);
  const Json* prompt = field(body, "prompt");
  if (!prompt) invalid("prompt", "'prompt' is required");
  if (prompt->is_string()) {
    request.prompt_text = prompt->get<std::string>();
  } else if (prompt->is_array()) {
    if (prompt->empty()) invalid("prompt", "'prompt' must not be empty");
    const Json& first = (*prompt)[0];
    if (first.is_number()) {
      request.prompt_ids = token_id_array(*prompt, "prompt");
    } else if (prompt->size() == 1 && first.is_string()) {
      request.prompt_text = first.get<std::string>();
    } else if (prompt->size() == 1 && first.is_array()) {
      request.prompt_ids = token_id_array(first, "prompt");
      if (request.prompt_ids->empty()) invalid("prompt", "'prompt' must not be empty");
    } else {
      invalid("prompt", "batched prompts are not supported: send one prompt per request");
    }
  } else {
    invalid("prompt", fmt::format("'prompt' must be a string or an array of token ids, got {}", type_name(*prompt)));
  }
  if (const Json* echo = field(body, "echo")) {
    if (bool_field(*echo, "echo")) invalid("echo", "'echo' is not supported");
  }
  if (const Json* suffix = field(body, "suffix")) {
    if (!suffix->is_string() || !suffix->get<std::string>().empty()) invalid("suffix", "'suffix' is not supported");
  }
  if (const Json* best_of = field(body, "best_of")) {
    if (integer_field(*best_of, "best_of") != 1) invalid("best_of", "only best_of=1 is supported");
  }
  request.sampling = parse_sampling(body, /*chat=*/false);
  return request;
}

ChatRequest parse_chat_request(const Json& body) {
  ChatRequest request;
  request.model = model_field(body);
  const Json* messages = field(body, "messages");
  if (!messages) invalid("messages", "'messages' is required");
  if (!messages->is_array()) invalid("messages", fmt::format("'messages' must be an array, got {}", type_name(*messages)));
  if (messages->empty()) invalid("messages", "'messages' must not be empty");
  request.messages = Json::array();
  for (size_t i = 0; i < messages->size(); ++i) {
    validate_message((*messages)[i], i);
    request.messages.push_back(normalise_message((*messages)[i]));
  }
  if (const Json* tools = field(body, "tools")) {
    if (!tools->is_array()) invalid("tools", "'tools' must be an array");
    for (const Json& tool : *tools) {
      if (!tool.is_object() || !tool.contains("function") || !tool["function"].is_object() ||
          !tool["function"].contains("name") || !tool["function"]["name"].is_string()) {
        invalid("tools", "each tool must be {\"type\": \"function\", \"function\": {\"name\": ...}}");
      }
    }
    if (!tools->empty()) request.tools = *tools;
  }
  if (const Json* choice = field(body, "tool_choice")) {
    if (choice->is_string()) {
      request.tool_choice = choice->get<std::string>();
      if (request.tool_choice != "none" && request.tool_choice != "auto" && request.tool_choice != "required") {
        invalid("tool_choice", fmt::format("'tool_choice' '{}' is not one of none, auto, required", request.tool_choice));
      }
    } else if (choice->is_object() && choice->contains("function") && (*choice)["function"].is_object() &&
               (*choice)["function"].contains("name") && (*choice)["function"]["name"].is_string()) {
      request.tool_choice = "function";
      request.tool_choice_function = (*choice)["function"]["name"].get<std::string>();
    } else {
      invalid("tool_choice", "'tool_choice' must be none, auto, required or {\"type\":\"function\",\"function\":{\"name\"}}");
    }
    if ((request.tool_choice == "required" || request.tool_choice == "function") && request.tools.is_null()) {
      invalid("tool_choice", "'tool_choice' requires 'tools'");
    }
  }
  if (const Json* kwargs = field(body, "chat_template_kwargs")) {
    if (!kwargs->is_object()) invalid("chat_template_kwargs", "'chat_template_kwargs' must be an object");
    request.chat_template_kwargs = *kwargs;
    if (const Json* thinking = field(*kwargs, "enable_thinking")) {
      request.enable_thinking = bool_field(*thinking, "chat_template_kwargs.enable_thinking");
    }
  }
  if (const Json* add = field(body, "add_generation_prompt")) request.add_generation_prompt = bool_field(*add, "add_generation_prompt");
  if (const Json* format = field(body, "response_format")) {
    if (!format->is_object() || !format->contains("type") || (*format)["type"] != "text") {
      invalid("response_format", "only response_format {\"type\": \"text\"} is supported");
    }
  }
  request.sampling = parse_sampling(body, /*chat=*/true);
  return request;
}

TokenizeRequest parse_tokenize_request(const Json& body) {
  TokenizeRequest request;
  request.model = model_field(body);
  const Json* prompt = field(body, "prompt");
  const Json* messages = field(body, "messages");
  if (prompt && messages) invalid("prompt", "give either 'prompt' or 'messages', not both");
  if (prompt) {
    if (!prompt->is_string()) invalid("prompt", fmt::format("'prompt' must be a string, got {}", type_name(*prompt)));
    request.prompt = prompt->get<std::string>();
    if (const Json* value = field(body, "add_special_tokens")) request.add_special_tokens = bool_field(*value, "add_special_tokens");
  } else if (messages) {
    // The chat form takes the chat request's fields (messages, tools, add_generation_prompt,
    // chat_template_kwargs); sampling fields are ignored by the route.
    request.chat = parse_chat_request(body);
    request.add_special_tokens = false;
  } else {
    invalid("prompt", "'prompt' (a string) or 'messages' (an array) is required");
  }
  if (const Json* value = field(body, "return_token_strs")) request.return_token_strs = bool_field(*value, "return_token_strs");
  return request;
}

DetokenizeRequest parse_detokenize_request(const Json& body) {
  DetokenizeRequest request;
  request.model = model_field(body);
  const Json* tokens = field(body, "tokens");
  if (!tokens) invalid("tokens", "'tokens' is required");
  if (!tokens->is_array()) invalid("tokens", fmt::format("'tokens' must be an array of token ids, got {}", type_name(*tokens)));
  request.tokens = token_id_array(*tokens, "tokens");
  return request;
}

}  // namespace lathe::server
