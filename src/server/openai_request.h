#pragma once
// OpenAI request bodies parsed and validated into plain structs. Validation follows OpenAI's
// behaviour where it is documented: wrong types and out-of-range values are 400s naming the
// field (`param`); unknown fields are tolerated. Parsing never touches the engine.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace lathe::server {

struct SamplingRequest {
  std::optional<int64_t> max_tokens;  // absent: until max-model-len (chat) or 16 (completions)
  float temperature = 1.0f;
  float top_p = 1.0f;
  int32_t top_k = 0;  // 0 or -1: disabled
  float min_p = 0.0f;
  std::optional<uint64_t> seed;
  std::vector<std::string> stop;
  std::vector<int32_t> stop_token_ids;  // vLLM extension
  bool ignore_eos = false;              // vLLM extension
  bool stream = false;
  bool include_usage = false;     // stream_options.include_usage
  bool return_token_ids = false;  // vLLM extension: token ids in the choices
};

struct CompletionRequest {
  std::string model;
  // Exactly one of the two is set: a text prompt or token ids.
  std::optional<std::string> prompt_text;
  std::optional<std::vector<int32_t>> prompt_ids;
  SamplingRequest sampling;
};

struct ChatRequest {
  std::string model;
  nlohmann::ordered_json messages;  // validated: array of {role, content, ...}
  nlohmann::ordered_json tools;     // null or array of {type: function, function: {...}}
  // "none" | "auto" | "required" | a function name (from {"type":"function","function":{"name"}})
  std::string tool_choice = "auto";
  std::optional<std::string> tool_choice_function;
  std::optional<bool> enable_thinking;  // chat_template_kwargs.enable_thinking
  nlohmann::ordered_json chat_template_kwargs = nlohmann::ordered_json::object();
  bool add_generation_prompt = true;
  SamplingRequest sampling;
};

// POST /tokenize (vLLM's shapes): {"prompt": text} or {"messages": [...], ...chat fields}.
struct TokenizeRequest {
  std::string model;
  std::optional<std::string> prompt;  // set for the text form
  std::optional<ChatRequest> chat;    // set for the messages form
  bool add_special_tokens = true;     // text form: prepend BOS where the tokenizer config asks
  bool return_token_strs = false;
};

// POST /detokenize: {"tokens": [ids]}.
struct DetokenizeRequest {
  std::string model;
  std::vector<int32_t> tokens;
};

// Throw ApiException (server/api_error.h) on invalid input.
CompletionRequest parse_completion_request(const nlohmann::ordered_json& body);
ChatRequest parse_chat_request(const nlohmann::ordered_json& body);
TokenizeRequest parse_tokenize_request(const nlohmann::ordered_json& body);
DetokenizeRequest parse_detokenize_request(const nlohmann::ordered_json& body);

// Deepest JSON nesting accepted in a request body.
inline constexpr size_t kMaxJsonDepth = 128;

// Parses a request body's text; malformed JSON, nesting deeper than kMaxJsonDepth or a
// non-object body is a 400.
nlohmann::ordered_json parse_json_body(const std::string& text);

}  // namespace lathe::server
