#include "server/openai_response.h"

#include <chrono>
#include <cstdio>
#include <mutex>
#include <random>

namespace lathe::server {
namespace {

using Json = nlohmann::ordered_json;

Json tool_call_json(const ToolCall& call) {
  Json function;
  function["name"] = call.name;
  function["arguments"] = call.arguments;
  Json out;
  out["id"] = call.id;
  out["type"] = "function";
  out["function"] = std::move(function);
  return out;
}

}  // namespace

std::string make_response_id(const char* prefix) {
  static std::mutex mutex;
  static std::mt19937_64 rng{std::random_device{}() ^
                             static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count())};
  uint64_t a = 0;
  uint64_t b = 0;
  {
    std::lock_guard<std::mutex> lock(mutex);
    a = rng();
    b = rng();
  }
  char buffer[40];
  std::snprintf(buffer, sizeof buffer, "%016llx%016llx", static_cast<unsigned long long>(a),
                static_cast<unsigned long long>(b));
  return std::string(prefix) + buffer;
}

int64_t unix_time_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

Json usage_json(const engine::Usage& usage) {
  Json out;
  out["prompt_tokens"] = usage.prompt_tokens;
  out["completion_tokens"] = usage.completion_tokens;
  out["total_tokens"] = usage.prompt_tokens + usage.completion_tokens;
  return out;
}

const char* openai_finish_reason(engine::FinishReason reason, bool tool_calls) {
  if (reason == engine::FinishReason::kLength) return "length";
  return tool_calls ? "tool_calls" : "stop";
}

Json GenerationResponse::chunk(const char* object, Json choice) const {
  Json out;
  out["id"] = meta_.id;
  out["object"] = object;
  out["created"] = meta_.created;
  out["model"] = meta_.model;
  out["choices"] = Json::array({std::move(choice)});
  if (options_.include_usage) out["usage"] = nullptr;
  return out;
}

Json GenerationResponse::usage_chunk(const engine::Usage& usage) const {
  Json out;
  out["id"] = meta_.id;
  out["object"] = chunk_object();
  out["created"] = meta_.created;
  out["model"] = meta_.model;
  out["choices"] = Json::array();
  out["usage"] = usage_json(usage);
  return out;
}

// ---- completions ------------------------------------------------------------------------------

Json CompletionResponse::choice(const std::string& text, const std::vector<int32_t>* token_ids,
                                const char* finish_reason, bool with_prompt_ids) const {
  Json out;
  out["index"] = 0;
  out["text"] = text;
  out["logprobs"] = nullptr;
  out["finish_reason"] = finish_reason ? Json(finish_reason) : Json(nullptr);
  if (options_.return_token_ids) {
    if (with_prompt_ids) out["prompt_token_ids"] = prompt_ids_;
    out["token_ids"] = token_ids ? Json(*token_ids) : Json::array();
  }
  return out;
}

std::vector<Json> CompletionResponse::stream_chunks(const engine::StreamEvent& event) {
  std::vector<Json> out;
  const bool final = event.finish.has_value();
  // Without token ids a chunk with no text says nothing; with them every token is reported.
  if (!final && event.text.empty() && !(options_.return_token_ids && !event.token_ids.empty())) return out;
  const char* reason = final ? openai_finish_reason(*event.finish, false) : nullptr;
  out.push_back(chunk("text_completion", choice(event.text, &event.token_ids, reason, first_chunk_)));
  first_chunk_ = false;
  return out;
}

void CompletionResponse::add(const engine::StreamEvent& event) {
  text_ += event.text;
  token_ids_.insert(token_ids_.end(), event.token_ids.begin(), event.token_ids.end());
  usage_ = event.usage;
  if (event.finish) finish_ = *event.finish;
}

Json CompletionResponse::body() const {
  Json out;
  out["id"] = meta_.id;
  out["object"] = "text_completion";
  out["created"] = meta_.created;
  out["model"] = meta_.model;
  out["choices"] = Json::array({choice(text_, &token_ids_, openai_finish_reason(finish_, false), true)});
  out["usage"] = usage_json(usage_);
  return out;
}

// ---- chat -------------------------------------------------------------------------------------

ChatResponse::ChatResponse(ResponseMeta meta, ResponseOptions options, std::vector<int32_t> prompt_ids,
                           ChatOutputParser parser)
    : GenerationResponse(std::move(meta), options, std::move(prompt_ids)), parser_(std::move(parser)) {}

const char* ChatResponse::finish_reason() const {
  return openai_finish_reason(finish_, !tool_calls_.empty() && finish_ == engine::FinishReason::kStop);
}

std::vector<Json> ChatResponse::start_chunks() {
  Json delta;
  delta["role"] = "assistant";
  delta["content"] = "";
  Json choice;
  choice["index"] = 0;
  choice["delta"] = std::move(delta);
  choice["logprobs"] = nullptr;
  choice["finish_reason"] = nullptr;
  Json first = chunk("chat.completion.chunk", std::move(choice));
  if (options_.return_token_ids) first["prompt_token_ids"] = prompt_ids_;
  return {std::move(first)};
}

void ChatResponse::delta_chunks(const ChatDelta& delta, const std::vector<int32_t>& token_ids, std::vector<Json>& out) {
  std::vector<Json> deltas;
  if (!delta.reasoning.empty()) deltas.push_back(Json{{"reasoning_content", delta.reasoning}});
  if (!delta.content.empty()) deltas.push_back(Json{{"content", delta.content}});
  for (const ToolCall& call : delta.tool_calls) {
    tool_calls_.push_back(call);  // the finish reason reflects every call streamed
    Json entry = tool_call_json(call);
    Json indexed;
    indexed["index"] = streamed_tool_calls_++;
    for (auto& [key, value] : entry.items()) indexed[key] = value;
    deltas.push_back(Json{{"tool_calls", Json::array({std::move(indexed)})}});
  }
  if (deltas.empty() && options_.return_token_ids && !token_ids.empty()) deltas.push_back(Json::object());
  for (size_t i = 0; i < deltas.size(); ++i) {
    Json choice;
    choice["index"] = 0;
    choice["delta"] = std::move(deltas[i]);
    choice["logprobs"] = nullptr;
    choice["finish_reason"] = nullptr;
    // The event's token ids ride on its first chunk.
    if (options_.return_token_ids) choice["token_ids"] = i == 0 ? Json(token_ids) : Json::array();
    out.push_back(chunk("chat.completion.chunk", std::move(choice)));
  }
}

std::vector<Json> ChatResponse::stream_chunks(const engine::StreamEvent& event) {
  std::vector<Json> out;
  ChatDelta delta = parser_.feed(event.text);
  if (!event.finish) {
    delta_chunks(delta, event.token_ids, out);
    return out;
  }
  ChatDelta rest = parser_.finish();
  delta.reasoning += rest.reasoning;
  delta.content += rest.content;
  for (ToolCall& call : rest.tool_calls) delta.tool_calls.push_back(std::move(call));
  finish_ = *event.finish;
  delta_chunks(delta, event.token_ids, out);
  Json choice;
  choice["index"] = 0;
  choice["delta"] = Json::object();
  choice["logprobs"] = nullptr;
  choice["finish_reason"] = finish_reason();
  if (options_.return_token_ids) choice["token_ids"] = Json::array();
  out.push_back(chunk("chat.completion.chunk", std::move(choice)));
  return out;
}

void ChatResponse::add(const engine::StreamEvent& event) {
  auto fold = [&](ChatDelta delta) {
    reasoning_ += delta.reasoning;
    content_ += delta.content;
    for (ToolCall& call : delta.tool_calls) tool_calls_.push_back(std::move(call));
  };
  fold(parser_.feed(event.text));
  token_ids_.insert(token_ids_.end(), event.token_ids.begin(), event.token_ids.end());
  usage_ = event.usage;
  if (event.finish) {
    fold(parser_.finish());
    finish_ = *event.finish;
  }
}

Json ChatResponse::body() const {
  Json message;
  message["role"] = "assistant";
  // OpenAI sends content null when the turn is only tool calls.
  message["content"] = content_.empty() && !tool_calls_.empty() ? Json(nullptr) : Json(content_);
  if (!reasoning_.empty()) message["reasoning_content"] = reasoning_;
  if (!tool_calls_.empty()) {
    Json calls = Json::array();
    for (const ToolCall& call : tool_calls_) calls.push_back(tool_call_json(call));
    message["tool_calls"] = std::move(calls);
  }
  Json choice;
  choice["index"] = 0;
  choice["message"] = std::move(message);
  choice["logprobs"] = nullptr;
  choice["finish_reason"] = finish_reason();
  if (options_.return_token_ids) choice["token_ids"] = token_ids_;
  Json out;
  out["id"] = meta_.id;
  out["object"] = "chat.completion";
  out["created"] = meta_.created;
  out["model"] = meta_.model;
  out["choices"] = Json::array({std::move(choice)});
  out["usage"] = usage_json(usage_);
  if (options_.return_token_ids) out["prompt_token_ids"] = prompt_ids_;
  return out;
}

}  // namespace lathe::server
