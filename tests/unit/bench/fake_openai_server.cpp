#include "fake_openai_server.h"

#include <httplib.h>

#include <chrono>
#include <stdexcept>

namespace lathe::testing {
namespace {

void sleep_s(double s) { std::this_thread::sleep_for(std::chrono::duration<double>(s)); }

std::string event(const nlohmann::json& j) { return "data: " + j.dump() + "\n\n"; }

}  // namespace

FakeOpenAiServer::FakeOpenAiServer(FakeServerConfig config)
    : config_(std::move(config)), server_(std::make_unique<httplib::Server>()) {
  server_->new_task_queue = [] { return new httplib::ThreadPool(32); };
  server_->Get("/v1/models", [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(nlohmann::json{{"object", "list"}, {"data", {{{"id", config_.model_id}, {"object", "model"}}}}}.dump(),
                    "application/json");
  });
  server_->Post("/v1/completions", [this](const httplib::Request& req, httplib::Response& res) {
    const int index = ++requests_;
    nlohmann::json body = nlohmann::json::parse(req.body, nullptr, false);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      bodies_.push_back(body);
    }
    if (config_.fail_every > 0 && index % config_.fail_every == 0) {
      res.status = 500;
      res.set_content(R"({"error":{"message":"injected failure","type":"server_error"}})", "application/json");
      return;
    }
    const int64_t max_tokens = body.value("max_tokens", int64_t{16});
    const int64_t prompt_tokens = body.contains("prompt") && body["prompt"].is_array()
                                      ? static_cast<int64_t>(body["prompt"].size()) : 0;
    on_start(++in_flight_);
    res.set_chunked_content_provider("text/event-stream", [this, max_tokens, prompt_tokens](size_t, httplib::DataSink& sink) {
      sleep_s(config_.first_token_delay_s);
      for (int64_t i = 0; i < max_tokens; ++i) {
        if (i > 0) sleep_s(config_.token_interval_s);
        const std::string chunk = event({{"id", "cmpl-1"}, {"object", "text_completion"},
                                         {"choices", {{{"index", 0}, {"text", "x"}, {"finish_reason", nullptr}}}}});
        if (!sink.write(chunk.data(), chunk.size())) break;
      }
      if (config_.send_usage) {
        const std::string usage = event({{"id", "cmpl-1"}, {"choices", nlohmann::json::array()},
                                         {"usage", {{"prompt_tokens", prompt_tokens}, {"completion_tokens", max_tokens},
                                                    {"total_tokens", prompt_tokens + max_tokens}}}});
        sink.write(usage.data(), usage.size());
      }
      const std::string done = "data: [DONE]\n\n";
      sink.write(done.data(), done.size());
      --in_flight_;
      sink.done();
      return true;
    });
  });
  port_ = server_->bind_to_any_port("127.0.0.1");
  if (port_ <= 0) throw std::runtime_error("fake server: cannot bind a loopback port");
  thread_ = std::thread([this] { server_->listen_after_bind(); });
  for (int i = 0; i < 500 && !server_->is_running(); ++i) sleep_s(0.002);
}

FakeOpenAiServer::~FakeOpenAiServer() {
  server_->stop();
  if (thread_.joinable()) thread_.join();
}

void FakeOpenAiServer::on_start(int in_flight) {
  int seen = max_in_flight_.load();
  while (in_flight > seen && !max_in_flight_.compare_exchange_weak(seen, in_flight)) {
  }
}

std::vector<nlohmann::json> FakeOpenAiServer::bodies() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return bodies_;
}

}  // namespace lathe::testing
