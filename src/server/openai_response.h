#pragma once
// Engine events -> OpenAI response objects, for /v1/completions and /v1/chat/completions, both
// streamed (one chunk object per "data:" line) and whole. Pure: no HTTP, no engine; the HTTP
// layer feeds the events of one request in order and writes what comes out.
//
// Streaming shapes (OpenAI's):
//   completions: {"id","object":"text_completion","created","model",
//                 "choices":[{"index":0,"text","logprobs":null,"finish_reason"}]}
//   chat:        {"id","object":"chat.completion.chunk","created","model",
//                 "choices":[{"index":0,"delta":{...},"logprobs":null,"finish_reason"}]}
//                the first chunk's delta is {"role":"assistant","content":""}; later deltas carry
//                "content", "reasoning_content" or "tool_calls" ([{index, id, type, function:
//                {name, arguments}}], each call whole in one chunk); the last chunk has an empty
//                delta and the finish_reason.
//   usage:       with stream_options.include_usage every chunk has "usage": null and one more
//                chunk {..., "choices": [], "usage": {...}} follows the last.
// Whole responses carry "usage" always. finish_reason is "stop", "length" or, for chat when
// tool calls were parsed and generation stopped, "tool_calls".
// vLLM's return_token_ids extension adds "token_ids" to choices (and the prompt's ids:
// "prompt_token_ids" in the completion choice / at the top of a chat response and in the
// first chunk).
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "engine/request_stream.h"
#include "server/chat_output.h"

namespace lathe::server {

struct ResponseMeta {
  std::string id;       // "cmpl-..." / "chatcmpl-..."
  int64_t created = 0;  // unix seconds
  std::string model;    // the served model name
};

struct ResponseOptions {
  bool include_usage = false;     // stream_options.include_usage
  bool return_token_ids = false;  // vLLM extension
};

// prefix + 32 random hex digits.
std::string make_response_id(const char* prefix);
int64_t unix_time_now();
nlohmann::ordered_json usage_json(const engine::Usage& usage);

class GenerationResponse {
 public:
  GenerationResponse(ResponseMeta meta, ResponseOptions options, std::vector<int32_t> prompt_ids)
      : meta_(std::move(meta)), options_(options), prompt_ids_(std::move(prompt_ids)) {}
  virtual ~GenerationResponse() = default;

  // Streaming: chunks to send before any event.
  virtual std::vector<nlohmann::ordered_json> start_chunks() = 0;
  // Streaming: chunks for one event (none when it carries nothing to send). Only events with
  // no finish or finish kStop / kLength; errors and cancellations are the caller's.
  virtual std::vector<nlohmann::ordered_json> stream_chunks(const engine::StreamEvent& event) = 0;
  // Whole response: folds one event in (same events as above), then body() after the last.
  virtual void add(const engine::StreamEvent& event) = 0;
  virtual nlohmann::ordered_json body() const = 0;

  // The final usage chunk (include_usage).
  nlohmann::ordered_json usage_chunk(const engine::Usage& usage) const;
  const ResponseMeta& meta() const { return meta_; }
  const ResponseOptions& options() const { return options_; }

 protected:
  // {"id","object",created,model,"choices":[choice]} (+ "usage": null when include_usage).
  nlohmann::ordered_json chunk(const char* object, nlohmann::ordered_json choice) const;
  virtual const char* chunk_object() const = 0;

  ResponseMeta meta_;
  ResponseOptions options_;
  std::vector<int32_t> prompt_ids_;
};

class CompletionResponse final : public GenerationResponse {
 public:
  using GenerationResponse::GenerationResponse;
  std::vector<nlohmann::ordered_json> start_chunks() override { return {}; }
  std::vector<nlohmann::ordered_json> stream_chunks(const engine::StreamEvent& event) override;
  void add(const engine::StreamEvent& event) override;
  nlohmann::ordered_json body() const override;

 private:
  const char* chunk_object() const override { return "text_completion"; }
  nlohmann::ordered_json choice(const std::string& text, const std::vector<int32_t>* token_ids,
                                const char* finish_reason, bool with_prompt_ids) const;

  std::string text_;
  std::vector<int32_t> token_ids_;
  engine::FinishReason finish_ = engine::FinishReason::kStop;
  engine::Usage usage_;
  bool first_chunk_ = true;
};

class ChatResponse final : public GenerationResponse {
 public:
  ChatResponse(ResponseMeta meta, ResponseOptions options, std::vector<int32_t> prompt_ids, ChatOutputParser parser);
  std::vector<nlohmann::ordered_json> start_chunks() override;
  std::vector<nlohmann::ordered_json> stream_chunks(const engine::StreamEvent& event) override;
  void add(const engine::StreamEvent& event) override;
  nlohmann::ordered_json body() const override;

 private:
  const char* chunk_object() const override { return "chat.completion.chunk"; }
  // Delta chunks for what the parser released (and the event's token ids when asked for).
  void delta_chunks(const ChatDelta& delta, const std::vector<int32_t>& token_ids,
                    std::vector<nlohmann::ordered_json>& out);
  const char* finish_reason() const;

  ChatOutputParser parser_;
  std::string reasoning_;
  std::string content_;
  std::vector<ToolCall> tool_calls_;
  std::vector<int32_t> token_ids_;
  engine::FinishReason finish_ = engine::FinishReason::kStop;
  engine::Usage usage_;
  size_t streamed_tool_calls_ = 0;
};

// OpenAI's finish_reason for a request that ended with kStop or kLength.
const char* openai_finish_reason(engine::FinishReason reason, bool tool_calls);

}  // namespace lathe::server
