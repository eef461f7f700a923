#include "server/api_error.h"

namespace lathe::server {

nlohmann::ordered_json ApiError::to_json() const {
  nlohmann::ordered_json body;
  body["message"] = message;
  body["type"] = type;
  body["param"] = param ? nlohmann::ordered_json(*param) : nlohmann::ordered_json(nullptr);
  body["code"] = code ? nlohmann::ordered_json(*code) : nlohmann::ordered_json(nullptr);
  nlohmann::ordered_json wrapper;
  wrapper["error"] = std::move(body);
  return wrapper;
}

ApiError ApiError::invalid(std::string message, std::optional<std::string> param) {
  return ApiError{400, std::move(message), "invalid_request_error", std::move(param), std::nullopt};
}

ApiError ApiError::unauthorized() {
  return ApiError{401, "Invalid or missing API key (send 'Authorization: Bearer <key>')", "authentication_error",
                  std::nullopt, "invalid_api_key"};
}

ApiError ApiError::not_found(std::string message) {
  return ApiError{404, std::move(message), "not_found_error", std::nullopt, "not_found"};
}

ApiError ApiError::too_large(size_t limit_bytes) {
  return ApiError{413, "Request body exceeds the limit of " + std::to_string(limit_bytes) + " bytes",
                  "invalid_request_error", std::nullopt, "request_too_large"};
}

ApiError ApiError::unavailable(std::string message) {
  return ApiError{503, std::move(message), "service_unavailable", std::nullopt, "model_loading"};
}

ApiError ApiError::internal(std::string message) {
  return ApiError{500, std::move(message), "internal_error", std::nullopt, std::nullopt};
}

}  // namespace lathe::server
