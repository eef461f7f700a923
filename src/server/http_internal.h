#pragma once
// Shared by the HTTP server's translation units (not part of the server's public interface).
#include <httplib.h>
#include <nlohmann/json.hpp>

#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "server/api_error.h"
#include "server/http_server.h"

namespace lathe::server {

// httplib::Server whose listen backlog can be raised after binding. httplib 0.11 listens with a
// compiled-in backlog of 5 (CPPHTTPLIB_LISTEN_BACKLOG, fixed in Debian's shared library), so a
// burst of clients connecting at once overflows the accept queue and some connections are reset;
// Linux lets listen() be called again on a listening socket to change the backlog.
class ListeningServer : public httplib::Server {
 public:
  bool set_backlog(int backlog);
};

struct HttpServer::Impl {
  HttpOptions options;
  ListeningServer server;
  Metrics metrics;

  std::mutex mutex;
  std::shared_ptr<Service> service;  // null while loading

  std::shared_ptr<Service> current_service() {
    std::lock_guard<std::mutex> lock(mutex);
    return service;
  }
};

// JSON text for a response body or an SSE line; invalid UTF-8 (which input validation keeps out)
// is replaced rather than thrown on.
std::string dump_json(const nlohmann::ordered_json& value);
void send_json(httplib::Response& res, const nlohmann::ordered_json& body, int status = 200);
void send_error(httplib::Response& res, const ApiError& error);

// A route body: runs with the loaded service and the request body; every exception becomes an
// error response (ApiException as given, lathe::Error as 400, anything else 500), and 503 while
// loading.
using RouteBody = std::function<void(const httplib::Request&, const std::string& body, httplib::Response&,
                                     const std::shared_ptr<Service>&)>;
// For GET routes (the body is empty).
httplib::Server::Handler guarded(HttpServer::Impl& impl, RouteBody route);
// For POST routes: the body is read through httplib's content reader and refused with 413 as
// soon as it passes max_body_bytes. httplib 0.11 applies its own payload limit to bodies with a
// Content-Length but not to chunked ones; this covers both without buffering past the limit.
httplib::Server::HandlerWithContentReader guarded_post(HttpServer::Impl& impl, RouteBody route);

void register_generation_routes(HttpServer::Impl& impl);
void register_info_routes(HttpServer::Impl& impl);

}  // namespace lathe::server
