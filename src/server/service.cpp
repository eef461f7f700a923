#include "server/service.h"

#include <fmt/format.h>

#include <filesystem>

#include "server/api_error.h"

namespace lathe::server {

Service::Service(ServiceInfo info, tokenizer::Tokenizer tokenizer, const tokenizer::TokenizerConfig& tokenizer_config,
                 std::unique_ptr<engine::Engine> engine)
    : info_(std::move(info)),
      tokenizer_(std::move(tokenizer)),
      prompter_(tokenizer_config),
      engine_(std::move(engine)) {
  if (tokenizer_config.add_bos_token && tokenizer_config.bos_token) bos_id_ = tokenizer_.token_id(*tokenizer_config.bos_token);
  model_names_.push_back(info_.served_model_name);
  if (!info_.model_dir.empty()) {
    std::filesystem::path dir(info_.model_dir);
    if (!dir.has_filename()) dir = dir.parent_path();  // "models/qwen3/" -> "qwen3"
    const std::string basename = dir.filename().string();
    if (!basename.empty() && basename != info_.served_model_name) model_names_.push_back(basename);
  }
}

Service::~Service() { shutdown(); }

void Service::shutdown() {
  if (engine_) engine_->shutdown();
}

void Service::check_model(const std::string& requested) const {
  if (requested.empty()) return;
  for (const std::string& name : model_names_) {
    if (requested == name) return;
  }
  ApiError error = ApiError::not_found(
      fmt::format("The model '{}' does not exist; this server serves '{}'", requested, info_.served_model_name));
  error.param = "model";
  error.code = "model_not_found";
  throw ApiException{std::move(error)};
}

std::vector<int32_t> Service::encode(const std::string& text, bool add_special) const {
  std::vector<int32_t> ids;
  if (add_special && bos_id_) ids.push_back(*bos_id_);
  const std::vector<int32_t> body = tokenizer_.encode(text);
  ids.insert(ids.end(), body.begin(), body.end());
  return ids;
}

}  // namespace lathe::server
