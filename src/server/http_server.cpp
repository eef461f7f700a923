#include "server/http_server.h"

#include <sys/socket.h>

#include <exception>

#include "core/error.h"
#include "core/log.h"
#include "server/http_internal.h"

namespace lathe::server {
namespace {

using Json = nlohmann::ordered_json;

// Pending connections the kernel queues before accept(): bursts of clients (a benchmark opening
// hundreds of streams at once) must not be reset.
constexpr int kListenBacklog = 1024;

// Route label for lathe_http_requests_total: the known routes, "other" for anything else (so
// random paths cannot grow the label set without bound).
std::string route_label(const std::string& path) {
  static const char* const kRoutes[] = {"/health",   "/metrics",   "/v1/models", "/v1/completions",
                                        "/v1/chat/completions",    "/tokenize",  "/detokenize"};
  for (const char* route : kRoutes) {
    if (path == route) return route;
  }
  if (path.starts_with("/v1/models/")) return "/v1/models/{id}";
  return "other";
}

// Constant-time comparison (the key must not leak through timing).
bool same_secret(const std::string& given, const std::string& expected) {
  unsigned char diff = given.size() == expected.size() ? 0 : 1;
  for (size_t i = 0; i < given.size(); ++i) {
    diff |= static_cast<unsigned char>(given[i] ^ expected[i % (expected.empty() ? 1 : expected.size())]);
  }
  return diff == 0 && !expected.empty();
}

bool authorized(const httplib::Request& req, const std::string& key) {
  const std::string header = req.get_header_value("Authorization");
  constexpr std::string_view kBearer = "Bearer ";
  if (header.size() <= kBearer.size() || !std::string_view(header).starts_with(kBearer)) return false;
  return same_secret(header.substr(kBearer.size()), key);
}

}  // namespace

bool ListeningServer::set_backlog(int backlog) {
  const socket_t sock = svr_sock_;
  return sock != INVALID_SOCKET && ::listen(sock, backlog) == 0;
}

std::string dump_json(const Json& value) { return value.dump(-1, ' ', false, Json::error_handler_t::replace); }

void send_json(httplib::Response& res, const Json& body, int status) {
  res.status = status;
  res.set_content(dump_json(body), "application/json");
}

void send_error(httplib::Response& res, const ApiError& error) { send_json(res, error.to_json(), error.status); }

namespace {

// Runs `route` with every exception turned into an error response.
enum class BodyRead { kOk, kTooLarge, kFailed };

void run_guarded(HttpServer::Impl& impl, const RouteBody& route, const httplib::Request& req, httplib::Response& res,
                 const std::function<BodyRead(std::string&)>& read_body) {
  try {
    const std::shared_ptr<Service> service = impl.current_service();
    if (!service) {
      send_error(res, ApiError::unavailable("The model is still loading; retry when /health answers 200"));
      return;
    }
    std::string body;
    const BodyRead read = read_body(body);
    if (read != BodyRead::kOk) {
      if (read == BodyRead::kTooLarge) {
        send_error(res, ApiError::too_large(impl.options.max_body_bytes));
      } else {
        send_error(res, ApiError::invalid("The request body could not be read (connection closed or timed out)"));
      }
      res.set_header("Connection", "close");  // the rest of the body was not read
      return;
    }
    route(req, body, res, service);
  } catch (const ApiException& exception) {
    send_error(res, exception.error);
  } catch (const Error& error) {
    // lathe::Error is bad input by contract (a request field, a prompt the tokenizer refuses).
    send_error(res, ApiError::invalid(error.what()));
  } catch (const std::exception& error) {
    spdlog::error("{} {}: internal error: {}", req.method, req.path, error.what());
    send_error(res, ApiError::internal(std::string("internal error: ") + error.what()));
  } catch (...) {
    spdlog::error("{} {}: internal error (unknown exception)", req.method, req.path);
    send_error(res, ApiError::internal("internal error"));
  }
}

}  // namespace

httplib::Server::Handler guarded(HttpServer::Impl& impl, RouteBody route) {
  return [&impl, route = std::move(route)](const httplib::Request& req, httplib::Response& res) {
    run_guarded(impl, route, req, res, [&](std::string& body) {
      body = req.body;
      return body.size() <= impl.options.max_body_bytes ? BodyRead::kOk : BodyRead::kTooLarge;
    });
  };
}

httplib::Server::HandlerWithContentReader guarded_post(HttpServer::Impl& impl, RouteBody route) {
  return [&impl, route = std::move(route)](const httplib::Request& req, httplib::Response& res,
                                           const httplib::ContentReader& reader) {
    run_guarded(impl, route, req, res, [&](std::string& body) {
      const size_t limit = impl.options.max_body_bytes;
      bool too_large = false;
      const bool complete = reader([&](const char* data, size_t length) {
        if (body.size() + length > limit) {
          too_large = true;
          return false;  // stop reading: nothing past the limit is buffered
        }
        body.append(data, length);
        return true;
      });
      // httplib refuses a Content-Length over its payload limit (the same limit) before reading.
      const auto declared = req.get_header_value<uint64_t>("Content-Length");
      if (too_large || declared > limit) return BodyRead::kTooLarge;
      return complete ? BodyRead::kOk : BodyRead::kFailed;
    });
  };
}

HttpServer::HttpServer(HttpOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->options = std::move(options);
  Impl& impl = *impl_;
  httplib::Server& server = impl.server;
  const int threads = std::max(impl.options.worker_threads, 4);
  server.new_task_queue = [threads] { return new httplib::ThreadPool(static_cast<size_t>(threads)); };
  server.set_payload_max_length(impl.options.max_body_bytes);
  // SO_REUSEADDR only: httplib's default adds SO_REUSEPORT, which lets a second server bind the
  // same port and silently take half of the connections instead of failing to start.
  server.set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  // TCP_NODELAY (set on the listener, inherited by every accepted connection): a stream writes
  // its headers and then one small SSE chunk per token. With Nagle's algorithm on, a chunk waits
  // for the ACK of the previous write, which the client may delay by up to 40 ms; the first
  // token of a short prefill paid exactly that.
  server.set_tcp_nodelay(true);

  server.set_pre_routing_handler([&impl](const httplib::Request& req, httplib::Response& res) {
    const bool api = req.path == "/v1" || req.path.starts_with("/v1/");
    if (api && !impl.options.api_key.empty() && !authorized(req, impl.options.api_key)) {
      send_error(res, ApiError::unauthorized());
      res.set_header("WWW-Authenticate", "Bearer");
      return httplib::Server::HandlerResponse::Handled;
    }
    return httplib::Server::HandlerResponse::Unhandled;
  });

  // Errors httplib produces itself (no route: 404; body over the limit: 413; unparsable request:
  // 400) come with an empty body: give them OpenAI's error shape. Bodies set by routes stay.
  server.set_error_handler(httplib::Server::HandlerWithResponse([&impl](const httplib::Request& req,
                                                                       httplib::Response& res) {
    if (!res.body.empty() || res.is_chunked_content_provider_ || res.content_length_ > 0) {
      return httplib::Server::HandlerResponse::Unhandled;
    }
    ApiError error;
    switch (res.status) {
      case 404:
        error = ApiError::not_found("No route " + req.method + " " + req.path);
        break;
      case 413:
        error = ApiError::too_large(impl.options.max_body_bytes);
        break;
      case 400:
        error = ApiError::invalid("The HTTP request could not be read");
        break;
      default:
        error = ApiError{res.status, "HTTP error " + std::to_string(res.status), "invalid_request_error", std::nullopt,
                         std::nullopt};
        if (res.status >= 500) error.type = "internal_error";
        break;
    }
    const int status = res.status;
    send_error(res, error);
    res.status = status;
    return httplib::Server::HandlerResponse::Handled;
  }));

  server.set_exception_handler([](const httplib::Request& req, httplib::Response& res, std::exception_ptr ep) {
    std::string what = "unknown exception";
    try {
      if (ep) std::rethrow_exception(ep);
    } catch (const std::exception& error) {
      what = error.what();
    } catch (...) {
    }
    spdlog::error("{} {}: internal error: {}", req.method, req.path, what);
    send_error(res, ApiError::internal("internal error: " + what));
  });

  server.set_logger([&impl](const httplib::Request& req, const httplib::Response& res) {
    impl.metrics.count_request(route_label(req.path), res.status);
    spdlog::debug("{} {} -> {}", req.method, req.path, res.status);
  });

  register_info_routes(impl);
  register_generation_routes(impl);
}

HttpServer::~HttpServer() { stop(); }

int HttpServer::bind(const std::string& host, int port) {
  if (port < 0 || port > 65535) fail("--port: {} is not a TCP port (0-65535)", port);
  int bound = port;
  if (port == 0) {
    bound = impl_->server.bind_to_any_port(host);
    if (bound < 0) fail("--host {}: cannot bind any port on this address", host);
  } else if (!impl_->server.bind_to_port(host, port)) {
    fail("--host {} --port {}: cannot bind (address in use, not local, or not permitted)", host, port);
  }
  if (!impl_->server.set_backlog(kListenBacklog)) spdlog::warn("serve: could not raise the listen backlog");
  return bound;
}

void HttpServer::listen() { impl_->server.listen_after_bind(); }

void HttpServer::stop() {
  if (impl_->server.is_running()) impl_->server.stop();
}

void HttpServer::set_service(std::shared_ptr<Service> service) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->service = std::move(service);
}

Metrics& HttpServer::metrics() { return impl_->metrics; }

}  // namespace lathe::server
