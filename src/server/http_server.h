#pragma once
// The OpenAI-compatible HTTP front end (cpp-httplib). Routes:
//   GET  /health                 200 when serving, 503 while the model loads
//   GET  /metrics                Prometheus text (server/metrics.h)
//   GET  /v1/models, /v1/models/{id}
//   POST /v1/completions, /v1/chat/completions   (stream: SSE)
//   POST /tokenize, /detokenize  (vLLM's shapes)
// Every error is OpenAI-style JSON (server/api_error.h): 400 invalid input, 401 missing or wrong
// bearer key on /v1/* (when an API key is set), 404 unknown route or model, 413 body over the
// limit, 503 while loading or shutting down, 500 for a failure inside the server. Each request
// runs on a worker thread of its own and everything it throws is caught there, so no request can
// take the process down or disturb another.
#include <cstddef>
#include <memory>
#include <string>

#include "server/metrics.h"
#include "server/service.h"

namespace lathe::server {

struct HttpOptions {
  std::string api_key;                     // empty: no authentication
  size_t max_body_bytes = size_t{16} << 20;  // larger request bodies get 413
  int worker_threads = 64;                 // concurrent connections served (streams hold one each)
  int poll_interval_ms = 50;               // how often a waiting request checks its client is there
};

class HttpServer {
 public:
  explicit HttpServer(HttpOptions options);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds host:port (port 0 picks a free port) and returns the bound port. Throws lathe::Error
  // naming --host / --port when it cannot bind. Requests are answered (503) from listen() on.
  int bind(const std::string& host, int port);
  // Accepts connections until stop(); returns once the listener and every worker are done.
  void listen();
  // Thread-safe; idempotent. In-flight requests end as their streams notice (the service's
  // shutdown() ends every generation first, so nothing waits on the engine).
  void stop();

  // From now on requests are served by `service` (before: 503 "loading").
  void set_service(std::shared_ptr<Service> service);
  Metrics& metrics();

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace lathe::server
