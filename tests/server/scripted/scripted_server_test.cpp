// The real HTTP server (routes, SSE, errors) over an Engine whose executor replays scripts, so
// the output the routes turn into OpenAI responses is known exactly: tool calls, reasoning,
// stop strings spanning tokens, an executor failure in one request beside a healthy one, and
// the loading state. The script is chosen by the request's seed; sampling step i returns the
// script's i-th token, then <|im_end|> (an EOS id). Only the sampled tokens are scripted: the
// tokenizer, chat template, engine, scheduler and HTTP layer are the production ones.
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "engine/engine.h"
#include "server/http_server.h"
#include "server/model_executor.h"
#include "server/service.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/tokenizer_config.h"

namespace lathe::server {
namespace {

using Json = nlohmann::json;
using namespace std::chrono_literals;

const std::filesystem::path kModelDir = std::filesystem::path(LATHE_FIXTURES_DIR) / "models" / "qwen3-tiny-chat";
constexpr int32_t kImEnd = 379;  // <|im_end|>: an EOS id of the fixture
constexpr uint64_t kFailingSeed = 666;

const std::string kToolCallText =
    "I will check.<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>";
const std::string kReasoningText = "<think>\nThe user wants a greeting.\n</think>\n\nHello there!";
const std::string kPlainText = "Hello world, this is lathe.";

class ScriptedExecutor final : public engine::Executor {
 public:
  explicit ScriptedExecutor(std::map<uint64_t, std::vector<int32_t>> scripts) : scripts_(std::move(scripts)) {}

  std::vector<int32_t> execute(const ops::ForwardBatch& batch, std::span<const ops::SamplingParams> sampling) override {
    std::vector<int32_t> out;
    for (const ops::SamplingParams& params : sampling) {
      if (params.seed == kFailingSeed) throw std::runtime_error("injected executor failure");
      const auto it = scripts_.find(params.seed);
      const std::vector<int32_t>* script = it == scripts_.end() ? nullptr : &it->second;
      out.push_back(script && params.step < script->size() ? (*script)[params.step] : kImEnd);
    }
    std::this_thread::sleep_for(1ms);  // let streams interleave with the step loop
    (void)batch;
    return out;
  }

 private:
  std::map<uint64_t, std::vector<int32_t>> scripts_;
};

struct Reply {
  int status = 0;
  std::string body;
  Json json() const { return Json::parse(body); }
};

// "data: ..." payloads of an SSE body, in order.
std::vector<std::string> sse_payloads(const std::string& body) {
  std::vector<std::string> out;
  size_t pos = 0;
  while ((pos = body.find("data: ", pos)) != std::string::npos) {
    const size_t end = body.find("\n\n", pos);
    out.push_back(body.substr(pos + 6, end - pos - 6));
    pos = end;
  }
  return out;
}

class ScriptedServer : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    tokenizer_ = std::make_unique<tokenizer::Tokenizer>(tokenizer::Tokenizer::load(kModelDir));
    http_ = std::make_unique<HttpServer>(HttpOptions{"", 4096, 16, 10});
    port_ = http_->bind("127.0.0.1", 0);
    listener_ = std::thread([] { http_->listen(); });
    // Wait until the listener answers (503: no service yet).
    httplib::Client client("127.0.0.1", port_);
    for (int i = 0; i < 200; ++i) {
      if (auto res = client.Get("/health")) break;
      std::this_thread::sleep_for(10ms);
    }
  }

  static void TearDownTestSuite() {
    if (service_) service_->shutdown();
    http_->stop();
    listener_.join();
    http_.reset();
    service_.reset();
  }

  static void start_service() {
    if (service_) return;
    std::map<uint64_t, std::vector<int32_t>> scripts;
    scripts[1] = tokenizer_->encode(kToolCallText);
    scripts[2] = tokenizer_->encode(kReasoningText);
    scripts[3] = tokenizer_->encode(kPlainText);
    engine::EngineConfig config;
    config.scheduler.max_num_seqs = 8;
    config.scheduler.max_num_batched_tokens = 64;
    config.scheduler.max_model_len = 1024;
    config.scheduler.vocab_size = 384;
    config.num_blocks = 256;
    config.block_size = 16;
    config.eos_token_ids = {kImEnd};
    auto engine = std::make_unique<engine::Engine>(config, std::make_unique<ScriptedExecutor>(std::move(scripts)),
                                                   make_detokenizer_factory(*tokenizer_));
    ServiceInfo info{"scripted", kModelDir.string(), 1024};
    service_ = std::make_shared<Service>(info, *tokenizer_, tokenizer::TokenizerConfig::load(kModelDir), std::move(engine));
    http_->set_service(service_);
  }

  static Reply post(const std::string& path, const Json& body) {
    httplib::Client client("127.0.0.1", port_);
    client.set_read_timeout(30, 0);
    auto res = client.Post(path.c_str(), body.dump(), "application/json");
    if (!res) return {};
    return {res->status, res->body};
  }
  static Reply get(const std::string& path) {
    httplib::Client client("127.0.0.1", port_);
    auto res = client.Get(path.c_str());
    if (!res) return {};
    return {res->status, res->body};
  }

  static Json chat_body(uint64_t seed, bool stream) {
    Json tool = {{"type", "function"},
                 {"function",
                  {{"name", "get_weather"},
                   {"description", "Weather of a city"},
                   {"parameters", {{"type", "object"}, {"properties", {{"city", {{"type", "string"}}}}}}}}}};
    return {{"model", "scripted"},
            {"messages", Json::array({{{"role", "user"}, {"content", "Weather in Paris?"}}})},
            {"tools", Json::array({tool})},
            {"seed", seed},
            {"stream", stream},
            {"stream_options", {{"include_usage", true}}}};
  }

  static inline std::unique_ptr<tokenizer::Tokenizer> tokenizer_;
  static inline std::unique_ptr<HttpServer> http_;
  static inline std::shared_ptr<Service> service_;
  static inline std::thread listener_;
  static inline int port_ = 0;
};

void expect_error_shape(const Reply& reply, int status) {
  EXPECT_EQ(reply.status, status) << reply.body;
  const Json body = reply.json();
  ASSERT_TRUE(body.contains("error")) << reply.body;
  const Json& error = body["error"];
  EXPECT_TRUE(error["message"].is_string());
  EXPECT_TRUE(error["type"].is_string());
  EXPECT_TRUE(error.contains("param"));
  EXPECT_TRUE(error.contains("code"));
}

// Runs first (gtest keeps declaration order within a suite): before set_service.
TEST_F(ScriptedServer, AnswersServiceUnavailableWhileLoading) {
  ASSERT_FALSE(service_);
  const Reply health = get("/health");
  expect_error_shape(health, 503);
  expect_error_shape(get("/v1/models"), 503);
  expect_error_shape(post("/v1/completions", {{"prompt", "hi"}}), 503);
  EXPECT_EQ(get("/metrics").status, 200);
  start_service();
  EXPECT_EQ(get("/health").status, 200);
}

TEST_F(ScriptedServer, ParsesToolCallsIntoToolCallsFinishReason) {
  start_service();
  const Reply reply = post("/v1/chat/completions", chat_body(1, false));
  ASSERT_EQ(reply.status, 200) << reply.body;
  const Json body = reply.json();
  EXPECT_EQ(body["object"], "chat.completion");
  const Json& choice = body["choices"][0];
  EXPECT_EQ(choice["finish_reason"], "tool_calls");
  const Json& message = choice["message"];
  EXPECT_EQ(message["role"], "assistant");
  EXPECT_EQ(message["content"], "I will check.");
  ASSERT_EQ(message["tool_calls"].size(), 1u);
  const Json& call = message["tool_calls"][0];
  EXPECT_EQ(call["type"], "function");
  EXPECT_TRUE(call["id"].get<std::string>().starts_with("call_"));
  EXPECT_EQ(call["function"]["name"], "get_weather");
  EXPECT_EQ(Json::parse(call["function"]["arguments"].get<std::string>()), Json({{"city", "Paris"}}));
  // Usage: the script's tokens plus the EOS that ended it.
  EXPECT_EQ(body["usage"]["completion_tokens"], tokenizer_->encode(kToolCallText).size() + 1);
}

TEST_F(ScriptedServer, StreamsToolCallsAsOpenAIChunks) {
  start_service();
  const Reply reply = post("/v1/chat/completions", chat_body(1, true));
  ASSERT_EQ(reply.status, 200) << reply.body;
  const std::vector<std::string> payloads = sse_payloads(reply.body);
  ASSERT_GE(payloads.size(), 4u);
  EXPECT_EQ(payloads.back(), "[DONE]");
  const Json first = Json::parse(payloads[0]);
  EXPECT_EQ(first["object"], "chat.completion.chunk");
  EXPECT_EQ(first["choices"][0]["delta"], Json({{"role", "assistant"}, {"content", ""}}));
  std::string content;
  std::vector<Json> calls;
  std::string finish;
  Json usage;
  for (size_t i = 0; i + 1 < payloads.size(); ++i) {
    const Json chunk = Json::parse(payloads[i]);
    EXPECT_EQ(chunk["id"], first["id"]);
    if (chunk["choices"].empty()) {
      usage = chunk["usage"];
      continue;
    }
    EXPECT_TRUE(chunk["usage"].is_null());
    const Json& delta = chunk["choices"][0]["delta"];
    if (delta.contains("content") && i > 0) content += delta["content"].get<std::string>();
    if (delta.contains("tool_calls")) calls.push_back(delta["tool_calls"][0]);
    if (!chunk["choices"][0]["finish_reason"].is_null()) finish = chunk["choices"][0]["finish_reason"];
  }
  EXPECT_EQ(content, "I will check.");
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0]["index"], 0);
  EXPECT_EQ(calls[0]["function"]["name"], "get_weather");
  EXPECT_EQ(Json::parse(calls[0]["function"]["arguments"].get<std::string>()), Json({{"city", "Paris"}}));
  EXPECT_EQ(finish, "tool_calls");
  EXPECT_EQ(usage["completion_tokens"], tokenizer_->encode(kToolCallText).size() + 1);
}

TEST_F(ScriptedServer, ToolChoiceNoneKeepsToolCallTextAsContent) {
  start_service();
  Json body = chat_body(1, false);
  body["tool_choice"] = "none";
  const Reply reply = post("/v1/chat/completions", body);
  ASSERT_EQ(reply.status, 200) << reply.body;
  const Json body_json = reply.json();
  const Json& choice = body_json["choices"][0];
  EXPECT_EQ(choice["finish_reason"], "stop");
  EXPECT_EQ(choice["message"]["content"], kToolCallText);
  EXPECT_FALSE(choice["message"].contains("tool_calls"));
}

TEST_F(ScriptedServer, SplitsReasoningContent) {
  start_service();
  Json body = chat_body(2, false);
  body.erase("tools");
  const Reply reply = post("/v1/chat/completions", body);
  ASSERT_EQ(reply.status, 200) << reply.body;
  const Json reply_json = reply.json();
  const Json& message = reply_json["choices"][0]["message"];
  EXPECT_EQ(message["content"], "Hello there!");
  EXPECT_NE(message["reasoning_content"].get<std::string>().find("The user wants a greeting."), std::string::npos);
}

TEST_F(ScriptedServer, CompletionStopStringSpanningTokensAndTokenIds) {
  start_service();
  const std::vector<int32_t> script = tokenizer_->encode(kPlainText);
  const Reply whole = post("/v1/completions", {{"prompt", "Say hi"}, {"seed", 3}, {"max_tokens", 100},
                                               {"return_token_ids", true}});
  ASSERT_EQ(whole.status, 200) << whole.body;
  const Json whole_json = whole.json();
  const Json& choice = whole_json["choices"][0];
  EXPECT_EQ(choice["text"], kPlainText);
  EXPECT_EQ(choice["finish_reason"], "stop");
  std::vector<int32_t> expected = script;
  expected.push_back(kImEnd);
  EXPECT_EQ(choice["token_ids"].get<std::vector<int32_t>>(), expected);
  EXPECT_EQ(choice["prompt_token_ids"].get<std::vector<int32_t>>(), tokenizer_->encode("Say hi"));

  const Reply stopped = post("/v1/completions", {{"prompt", "Say hi"}, {"seed", 3}, {"max_tokens", 100},
                                                 {"stop", Json::array({"this is"})}});
  ASSERT_EQ(stopped.status, 200) << stopped.body;
  EXPECT_EQ(stopped.json()["choices"][0]["text"], "Hello world, ");
  EXPECT_EQ(stopped.json()["choices"][0]["finish_reason"], "stop");

  const Reply limited = post("/v1/completions", {{"prompt", "Say hi"}, {"seed", 3}, {"max_tokens", 2}});
  ASSERT_EQ(limited.status, 200) << limited.body;
  EXPECT_EQ(limited.json()["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(limited.json()["usage"]["completion_tokens"], 2);
}

TEST_F(ScriptedServer, ExecutorFailureFailsOnlyItsRequest) {
  start_service();
  // A long healthy stream runs while another request's executor step fails. The failing step
  // holds both sequences when they share it, so the healthy one is started after the failure.
  const Reply failed = post("/v1/completions", {{"prompt", "boom"}, {"seed", kFailingSeed}, {"max_tokens", 5}});
  expect_error_shape(failed, 500);
  EXPECT_NE(failed.json()["error"]["message"].get<std::string>().find("injected executor failure"), std::string::npos);
  const Reply streamed = post("/v1/completions", {{"prompt", "boom"}, {"seed", kFailingSeed}, {"max_tokens", 5},
                                                  {"stream", true}});
  ASSERT_EQ(streamed.status, 200);
  const std::vector<std::string> payloads = sse_payloads(streamed.body);
  ASSERT_EQ(payloads.size(), 2u) << streamed.body;
  EXPECT_TRUE(Json::parse(payloads[0]).contains("error"));
  EXPECT_EQ(payloads[1], "[DONE]");
  // The engine thread survived: later requests are served.
  const Reply healthy = post("/v1/completions", {{"prompt", "Say hi"}, {"seed", 3}, {"max_tokens", 100}});
  ASSERT_EQ(healthy.status, 200) << healthy.body;
  EXPECT_EQ(healthy.json()["choices"][0]["text"], kPlainText);
}

TEST_F(ScriptedServer, ErrorShapesForBadRequests) {
  start_service();
  expect_error_shape(post("/v1/completions", {{"prompt", "x"}, {"max_tokens", 0}}), 400);
  expect_error_shape(post("/v1/completions", {{"prompt", "x"}, {"model", "other"}}), 404);
  expect_error_shape(get("/v1/nothing"), 404);
  // 4096-byte body limit in this fixture.
  expect_error_shape(post("/v1/completions", {{"prompt", std::string(5000, 'a')}}), 413);
  // The checkpoint directory's basename is accepted as well as the served name.
  EXPECT_EQ(post("/v1/completions", {{"prompt", "x"}, {"model", "qwen3-tiny-chat"}, {"seed", 3}}).status, 200);
}

// The server's end of every connection: sockets of this process bound to `port` that have a peer
// (the listener has none). Found through /proc/self/fd, since httplib keeps its sockets private.
std::vector<int> accepted_sockets(int port) {
  std::vector<int> out;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
    const int fd = std::stoi(entry.path().filename().string());
    sockaddr_in local{}, peer{};
    socklen_t local_len = sizeof local, peer_len = sizeof peer;
    if (getsockname(fd, reinterpret_cast<sockaddr*>(&local), &local_len) != 0 || local.sin_family != AF_INET)
      continue;
    if (ntohs(local.sin_port) != port) continue;
    if (getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &peer_len) != 0) continue;
    out.push_back(fd);
  }
  return out;
}

// Nagle's algorithm would hold a stream's small SSE chunks back until the client ACKs the previous
// write (a delayed ACK: up to 40 ms): every accepted connection must have TCP_NODELAY.
TEST_F(ScriptedServer, ConnectionsHaveNagleOff) {
  start_service();
  httplib::Client client("127.0.0.1", port_);
  client.set_keep_alive(true);  // the server keeps its end open while we look at it
  auto res = client.Get("/health");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200);
  const std::vector<int> sockets = accepted_sockets(port_);
  ASSERT_FALSE(sockets.empty()) << "no accepted connection found on port " << port_;
  for (const int fd : sockets) {
    int nodelay = 0;
    socklen_t len = sizeof nodelay;
    ASSERT_EQ(getsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &nodelay, &len), 0);
    EXPECT_NE(nodelay, 0) << "socket " << fd << " has Nagle's algorithm on";
  }
}

}  // namespace
}  // namespace lathe::server
