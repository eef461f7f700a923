#pragma once
// A tiny in-process OpenAI-style server for the load-generator tests: GET /v1/models lists one
// model; POST /v1/completions streams max_tokens SSE chunks (one "x" token each) after a fixed
// first-token delay and a fixed interval per token, then a usage chunk and [DONE]. It records
// every request body and the largest number of completion requests in flight at once.
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

namespace httplib {
class Server;
}

namespace lathe::testing {

struct FakeServerConfig {
  double first_token_delay_s = 0.05;
  double token_interval_s = 0.004;
  bool send_usage = true;
  int fail_every = 0;  // > 0: every fail_every-th completion request (1-based) answers HTTP 500
  std::string model_id = "tiny";
};

class FakeOpenAiServer {
 public:
  explicit FakeOpenAiServer(FakeServerConfig config = {});
  ~FakeOpenAiServer();
  FakeOpenAiServer(const FakeOpenAiServer&) = delete;
  FakeOpenAiServer& operator=(const FakeOpenAiServer&) = delete;

  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int max_in_flight() const { return max_in_flight_.load(); }
  int completion_requests() const { return requests_.load(); }
  std::vector<nlohmann::json> bodies() const;

 private:
  void on_start(int in_flight);
  FakeServerConfig config_;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  int port_ = 0;
  std::atomic<int> in_flight_{0};
  std::atomic<int> max_in_flight_{0};
  std::atomic<int> requests_{0};
  mutable std::mutex mutex_;
  std::vector<nlohmann::json> bodies_;
};

}  // namespace lathe::testing
