#pragma once
// OpenAI-style errors: {"error": {"message", "type", "param", "code"}} with an HTTP status.
#include <nlohmann/json.hpp>

#include <optional>
#include <string>

namespace lathe::server {

struct ApiError {
  int status = 400;
  std::string message;
  std::string type = "invalid_request_error";
  std::optional<std::string> param;
  std::optional<std::string> code;

  nlohmann::ordered_json to_json() const;

  static ApiError invalid(std::string message, std::optional<std::string> param = std::nullopt);
  static ApiError unauthorized();
  static ApiError not_found(std::string message);
  static ApiError too_large(size_t limit_bytes);
  static ApiError unavailable(std::string message);
  static ApiError internal(std::string message);
};

// Thrown by request parsing; the HTTP layer turns it into a response.
struct ApiException {
  ApiError error;
};

}  // namespace lathe::server
