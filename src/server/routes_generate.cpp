// POST /v1/completions and /v1/chat/completions: request -> engine::Request -> events ->
// OpenAI response (whole or SSE).
//
// Threading. The route runs on an httplib worker thread. It validates and tokenizes (the
// tokenizer and the chat template are thread-safe), submits to the engine, then waits on the
// request's event queue (RequestHandle) with a short timeout, checking between waits that the
// client is still connected (server/connection_probe.h). Streams are written from httplib's
// chunked content provider, which runs on the same worker thread. Whenever the client is gone
// (probe, or a failed write) the request is cancelled at once: the engine frees its KV blocks
// before its next step. The provider's releaser cancels too, so no path leaves a request running.
#include <fmt/format.h>

#include <chrono>
#include <random>

#include "core/error.h"
#include "core/log.h"
#include "server/chat_output.h"
#include "server/connection_probe.h"
#include "server/http_internal.h"
#include "server/openai_request.h"
#include "server/openai_response.h"

namespace lathe::server {
namespace {

using Json = nlohmann::ordered_json;

struct Prepared {
  engine::Request request;
  std::unique_ptr<GenerationResponse> response;
  bool stream = false;
  bool include_usage = false;
};

uint64_t random_seed() {
  static std::mutex mutex;
  static std::mt19937_64 rng{std::random_device{}()};
  std::lock_guard<std::mutex> lock(mutex);
  return rng();
}

// Checks the lengths up front so the error names the request's own field.
void check_lengths(const Service& service, size_t prompt_len, const SamplingRequest& sampling, const char* prompt_param) {
  const int64_t max_len = service.info().max_model_len;
  const auto length = static_cast<int64_t>(prompt_len);
  if (length == 0) throw ApiException{ApiError::invalid("The prompt is empty (0 tokens)", prompt_param)};
  if (length >= max_len) {
    throw ApiException{ApiError::invalid(
        fmt::format("The prompt has {} tokens, but this model's maximum context length (max_model_len) is {} tokens; "
                    "the prompt must be shorter than that to leave room for at least one generated token",
                    length, max_len),
        prompt_param)};
  }
  if (sampling.max_tokens && *sampling.max_tokens > max_len - length) {  // no overflow for huge values
    throw ApiException{ApiError::invalid(
        fmt::format("max_tokens is too large: the prompt has {} tokens and max_tokens is {}, but this model's maximum "
                    "context length (max_model_len) is {} tokens, so at most {} tokens can be generated",
                    length, *sampling.max_tokens, max_len, max_len - length),
        "max_tokens")};
  }
}

engine::Request engine_request(std::vector<int32_t> prompt, const SamplingRequest& sampling) {
  engine::Request request;
  request.prompt = std::move(prompt);
  request.params.max_tokens = static_cast<int32_t>(sampling.max_tokens.value_or(0));  // 0: up to max_model_len
  request.params.stop_token_ids = sampling.stop_token_ids;
  ops::SamplingParams& params = request.params.sampling;
  params.temperature = sampling.temperature;
  params.top_k = sampling.top_k;
  params.top_p = sampling.top_p;
  params.min_p = sampling.min_p;
  // Without a seed every request draws differently; with one it is reproducible whatever else
  // runs (the draw is keyed by (seed, token index), ops/sampling.h).
  params.seed = sampling.seed ? *sampling.seed : random_seed();
  request.stop = sampling.stop;
  request.ignore_eos = sampling.ignore_eos;
  return request;
}

Prepared prepare_completion(const Service& service, const Json& body) {
  const CompletionRequest parsed = parse_completion_request(body);
  service.check_model(parsed.model);
  std::vector<int32_t> prompt = parsed.prompt_ids ? *parsed.prompt_ids : service.encode(*parsed.prompt_text, true);
  check_lengths(service, prompt.size(), parsed.sampling, "prompt");
  Prepared prepared;
  ResponseMeta meta{make_response_id("cmpl-"), unix_time_now(), service.info().served_model_name};
  ResponseOptions options{parsed.sampling.include_usage, parsed.sampling.return_token_ids};
  prepared.response = std::make_unique<CompletionResponse>(std::move(meta), options, prompt);
  prepared.request = engine_request(std::move(prompt), parsed.sampling);
  prepared.stream = parsed.sampling.stream;
  prepared.include_usage = parsed.sampling.include_usage;
  return prepared;
}

Prepared prepare_chat(const Service& service, const Json& body) {
  const ChatRequest parsed = parse_chat_request(body);
  service.check_model(parsed.model);
  // tool_choice "none": the model is not shown the tools and <tool_call> text stays content.
  // A named function: only that tool is shown. "required" cannot be enforced without
  // constrained decoding; it is treated as "auto" (docs/DESIGN.md, "Serving").
  Json tools = parsed.tool_choice == "none" ? Json(nullptr) : parsed.tools;
  if (parsed.tool_choice == "function") {
    Json chosen = Json::array();
    for (const Json& tool : parsed.tools) {
      if (tool["function"]["name"] == *parsed.tool_choice_function) chosen.push_back(tool);
    }
    if (chosen.empty()) {
      throw ApiException{ApiError::invalid(
          fmt::format("tool_choice names the function '{}', which is not among 'tools'", *parsed.tool_choice_function),
          "tool_choice")};
    }
    tools = std::move(chosen);
  }
  const ChatPrompt prompt = service.prompter().render(parsed.messages, tools, parsed.add_generation_prompt,
                                                      parsed.chat_template_kwargs);
  std::vector<int32_t> ids = service.encode(prompt.text, false);
  check_lengths(service, ids.size(), parsed.sampling, "messages");
  const bool parse_tools = tools.is_array() && !tools.empty();
  ChatOutputParser parser(prompt.starts_in_reasoning, parse_tools, service.prompter().uses_reasoning());
  Prepared prepared;
  ResponseMeta meta{make_response_id("chatcmpl-"), unix_time_now(), service.info().served_model_name};
  ResponseOptions options{parsed.sampling.include_usage, parsed.sampling.return_token_ids};
  prepared.response = std::make_unique<ChatResponse>(std::move(meta), options, ids, std::move(parser));
  prepared.request = engine_request(std::move(ids), parsed.sampling);
  prepared.stream = parsed.sampling.stream;
  prepared.include_usage = parsed.sampling.include_usage;
  return prepared;
}

// The error a request that ended with kError / kCancelled reports.
ApiError ended_error(const engine::StreamEvent& event) {
  if (*event.finish == engine::FinishReason::kError) {
    return ApiError::internal("generation failed: " + (event.error.empty() ? std::string("executor error") : event.error));
  }
  return ApiError{503, "The request was cancelled: the server is shutting down", "service_unavailable", std::nullopt,
                  "cancelled"};
}

bool ended_badly(const engine::StreamEvent& event) {
  return *event.finish == engine::FinishReason::kError || *event.finish == engine::FinishReason::kCancelled;
}

std::string sse(const Json& chunk) { return "data: " + dump_json(chunk) + "\n\n"; }

// One streaming request: lives as long as httplib's content provider.
struct StreamState {
  std::shared_ptr<Service> service;  // keeps the engine alive while the stream runs
  std::shared_ptr<engine::RequestHandle> handle;
  std::unique_ptr<GenerationResponse> response;
  ConnectionProbe probe;
  std::chrono::milliseconds poll{50};
  bool started = false;
  bool finished = false;  // the final event has been written (or the stream given up)

  void cancel() {
    if (!finished) service->engine().cancel(handle->id());
    finished = true;
  }

  // Appends the SSE text of one event; true when it was the final one.
  bool render(const engine::StreamEvent& event, std::string& out) {
    if (event.finish && ended_badly(event)) {
      out += sse(ended_error(event).to_json());
    } else {
      for (const Json& chunk : response->stream_chunks(event)) out += sse(chunk);
    }
    if (!event.finish) return false;
    if (response->options().include_usage && !ended_badly(event)) out += sse(response->usage_chunk(event.usage));
    out += "data: [DONE]\n\n";
    return true;
  }

  // httplib's chunked content provider: blocks until there is something to write, writes it,
  // and ends the stream after the final event. False aborts the response (client gone).
  bool pump(httplib::DataSink& sink) {
    std::string out;
    if (!started) {
      started = true;
      for (const Json& chunk : response->start_chunks()) out += sse(chunk);
    }
    bool final = false;
    while (out.empty() && !final) {
      std::optional<engine::StreamEvent> event = handle->next_for(poll);
      if (!event) {
        // Idle (queued, or a long prefill): no write would notice a departed client.
        if (probe.closed()) {
          cancel();
          return false;
        }
        continue;
      }
      // Coalesce whatever else is already queued into one write.
      final = render(*event, out);
      while (!final) {
        std::optional<engine::StreamEvent> more = handle->next_for(std::chrono::milliseconds(0));
        if (!more) break;
        final = render(*more, out);
      }
    }
    if (!out.empty() && !sink.write(out.data(), out.size())) {
      cancel();
      return false;
    }
    if (final) {
      finished = true;
      sink.done();
    }
    return true;
  }
};

void run(HttpServer::Impl& impl, const httplib::Request& req, httplib::Response& res,
         const std::shared_ptr<Service>& service, Prepared prepared) {
  std::shared_ptr<engine::RequestHandle> handle;
  try {
    handle = service->engine().submit(std::move(prepared.request));
  } catch (const Error& error) {
    // Validated again by the engine (vocabulary, lengths, sampling ranges): a 400.
    throw ApiException{ApiError::invalid(error.what())};
  }
  ConnectionProbe probe(req.local_addr, req.local_port, req.remote_addr, req.remote_port);
  const std::chrono::milliseconds poll(std::max(impl.options.poll_interval_ms, 1));

  if (prepared.stream) {
    auto state = std::make_shared<StreamState>();
    state->service = service;
    state->handle = handle;
    state->response = std::move(prepared.response);
    state->probe = probe;
    state->poll = poll;
    res.status = 200;
    res.set_header("Cache-Control", "no-cache");
    res.set_header("X-Accel-Buffering", "no");
    res.set_chunked_content_provider(
        "text/event-stream",
        [state](size_t /*offset*/, httplib::DataSink& sink) {
          try {
            return state->pump(sink);
          } catch (const std::exception& error) {
            spdlog::error("stream {}: {}", state->response->meta().id, error.what());
            state->cancel();
            return false;
          }
        },
        [state](bool /*success*/) { state->cancel(); });  // no-op once the final event was written
    return;
  }

  GenerationResponse& response = *prepared.response;
  bool cancelled = false;
  auto next_check = std::chrono::steady_clock::now() + poll;
  for (;;) {
    std::optional<engine::StreamEvent> event = handle->next_for(poll);
    // Checked by the clock, not only when idle: a request producing tokens faster than the poll
    // interval must still notice that nobody will read its answer.
    if (!cancelled && std::chrono::steady_clock::now() >= next_check) {
      next_check = std::chrono::steady_clock::now() + poll;
      if (probe.closed()) {
        service->engine().cancel(handle->id());  // the final (cancelled) event follows
        cancelled = true;
      }
    }
    if (!event) continue;
    if (event->finish && ended_badly(*event)) {
      if (cancelled && *event->finish == engine::FinishReason::kCancelled) {
        // Nobody reads this; 499 (nginx's "client closed request") keeps it apart in /metrics.
        send_error(res, ApiError{499, "The client closed the connection", "invalid_request_error", std::nullopt,
                                 "client_closed_request"});
      } else {
        send_error(res, ended_error(*event));
      }
      return;
    }
    response.add(*event);
    if (event->finish) break;
  }
  send_json(res, response.body());
}

}  // namespace

void register_generation_routes(HttpServer::Impl& impl) {
  impl.server.Post("/v1/completions",
                   guarded_post(impl, [&impl](const httplib::Request& req, const std::string& body,
                                              httplib::Response& res, const std::shared_ptr<Service>& service) {
                     run(impl, req, res, service, prepare_completion(*service, parse_json_body(body)));
                   }));
  impl.server.Post("/v1/chat/completions",
                   guarded_post(impl, [&impl](const httplib::Request& req, const std::string& body,
                                              httplib::Response& res, const std::shared_ptr<Service>& service) {
                     run(impl, req, res, service, prepare_chat(*service, parse_json_body(body)));
                   }));
}

}  // namespace lathe::server
