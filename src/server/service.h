#pragma once
// Everything the routes need once a model is loaded: the tokenizer, the chat prompter, the
// engine (which owns the executor and the model) and the names the model answers to. Built by
// load_service() (server/model_loader.h) for a checkpoint, or directly by tests over any
// engine::Executor.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "server/chat_prompt.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/tokenizer_config.h"

namespace lathe::server {

struct ServiceInfo {
  std::string served_model_name;  // what responses report as "model"
  std::string model_dir;          // the checkpoint directory (reported as "root")
  int32_t max_model_len = 0;
};

class Service {
 public:
  // `engine` must have been built with a detokenizer factory over `tokenizer` (stop strings and
  // text need it).
  Service(ServiceInfo info, tokenizer::Tokenizer tokenizer, const tokenizer::TokenizerConfig& tokenizer_config,
          std::unique_ptr<engine::Engine> engine);
  ~Service();

  const ServiceInfo& info() const { return info_; }
  engine::Engine& engine() { return *engine_; }
  const engine::Engine& engine() const { return *engine_; }
  const tokenizer::Tokenizer& tokenizer() const { return tokenizer_; }
  const ChatPrompter& prompter() const { return prompter_; }

  // A request's "model" must be empty (absent), the served name or the checkpoint directory's
  // basename; anything else throws ApiException 404 (model_not_found).
  void check_model(const std::string& requested) const;
  // Ids of a text prompt (no special tokens added, except BOS where tokenizer_config.json asks
  // for it and add_special is set).
  std::vector<int32_t> encode(const std::string& text, bool add_special) const;
  // Names accepted by check_model().
  const std::vector<std::string>& model_names() const { return model_names_; }

  // Ends every request (they get their final event) and stops the engine thread.
  void shutdown();

 private:
  ServiceInfo info_;
  tokenizer::Tokenizer tokenizer_;
  ChatPrompter prompter_;
  std::optional<int32_t> bos_id_;  // prepended when the tokenizer config says add_bos_token
  std::vector<std::string> model_names_;
  std::unique_ptr<engine::Engine> engine_;
};

}  // namespace lathe::server
