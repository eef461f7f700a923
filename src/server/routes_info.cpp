// Routes that do not generate: /health, /metrics, /v1/models, /tokenize, /detokenize.
#include <fmt/format.h>

#include "server/http_internal.h"
#include "server/openai_request.h"
#include "server/openai_response.h"

namespace lathe::server {
namespace {

using Json = nlohmann::ordered_json;
using ServicePtr = std::shared_ptr<Service>;

Json model_card(const Service& service, int64_t created) {
  Json card;
  card["id"] = service.info().served_model_name;
  card["object"] = "model";
  card["created"] = created;
  card["owned_by"] = "lathe";
  card["root"] = service.info().model_dir;
  card["parent"] = nullptr;
  card["max_model_len"] = service.info().max_model_len;
  return card;
}

// POST /tokenize: {"prompt"} or {"messages", ...} -> {"count", "max_model_len", "tokens"}.
void tokenize_route(const httplib::Request&, const std::string& body, httplib::Response& res,
                    const ServicePtr& service) {
  const TokenizeRequest request = parse_tokenize_request(parse_json_body(body));
  service->check_model(request.model);
  std::vector<int32_t> tokens;
  if (request.prompt) {
    tokens = service->encode(*request.prompt, request.add_special_tokens);
  } else {
    const ChatRequest& chat = *request.chat;
    const ChatPrompt prompt =
        service->prompter().render(chat.messages, chat.tools, chat.add_generation_prompt, chat.chat_template_kwargs);
    tokens = service->encode(prompt.text, false);
  }
  Json reply;
  reply["count"] = tokens.size();
  reply["max_model_len"] = service->info().max_model_len;
  reply["tokens"] = tokens;
  if (request.return_token_strs) {
    Json strs = Json::array();
    for (int32_t id : tokens) strs.push_back(service->tokenizer().is_known(id) ? service->tokenizer().token_text(id) : "");
    reply["token_strs"] = std::move(strs);
  }
  send_json(res, reply);
}

// POST /detokenize: {"tokens"} -> {"prompt"}.
void detokenize_route(const httplib::Request&, const std::string& body, httplib::Response& res,
                      const ServicePtr& service) {
  const DetokenizeRequest request = parse_detokenize_request(parse_json_body(body));
  service->check_model(request.model);
  const int32_t vocab = service->tokenizer().vocab_size();
  for (size_t i = 0; i < request.tokens.size(); ++i) {
    if (request.tokens[i] >= vocab) {
      throw ApiException{ApiError::invalid(
          fmt::format("token {} (at index {}) is outside the vocabulary [0, {})", request.tokens[i], i, vocab),
          "tokens")};
    }
  }
  Json reply;
  reply["prompt"] = service->tokenizer().decode(request.tokens);
  send_json(res, reply);
}

}  // namespace

void register_info_routes(HttpServer::Impl& impl) {
  httplib::Server& server = impl.server;
  const int64_t created = unix_time_now();

  server.Get("/health", [&impl](const httplib::Request&, httplib::Response& res) {
    if (!impl.current_service()) {
      send_error(res, ApiError::unavailable("The model is still loading"));
      return;
    }
    res.status = 200;
    res.set_content("", "text/plain");
  });

  server.Get("/metrics", [&impl](const httplib::Request&, httplib::Response& res) {
    const ServicePtr service = impl.current_service();
    // While loading the engine gauges are all zero; the HTTP counters are already live.
    const engine::EngineStats stats = service ? service->engine().stats() : engine::EngineStats{};
    res.status = 200;
    res.set_content(impl.metrics.render(stats), "text/plain; version=0.0.4; charset=utf-8");
  });

  server.Get("/v1/models", guarded(impl, [created](const httplib::Request&, const std::string&,
                                                   httplib::Response& res, const ServicePtr& service) {
    Json reply;
    reply["object"] = "list";
    reply["data"] = Json::array({model_card(*service, created)});
    send_json(res, reply);
  }));

  server.Get(R"(/v1/models/(.+))", guarded(impl, [created](const httplib::Request& req, const std::string&,
                                                           httplib::Response& res, const ServicePtr& service) {
    service->check_model(req.matches[1].str());
    send_json(res, model_card(*service, created));
  }));

  server.Post("/tokenize", guarded_post(impl, tokenize_route));
  server.Post("/detokenize", guarded_post(impl, detokenize_route));
}

}  // namespace lathe::server
