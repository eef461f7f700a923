#pragma once
// The `lathe serve` process: bind the port, answer 503 while the model loads, serve, and shut
// down cleanly on SIGINT / SIGTERM.
#include <functional>
#include <memory>

#include "core/dtype.h"
#include "ops/backend.h"
#include "server/model_loader.h"

namespace lathe::server {

// Makes the backend (and resolves the KV dtype on it) once the port is bound; throws lathe::Error
// naming the flag at fault.
struct BackendChoice {
  std::unique_ptr<ops::Backend> backend;
  DType kv_dtype = DType::kF32;
};
using BackendFactory = std::function<BackendChoice()>;

// Runs until a signal asks it to stop (exit status 0) or loading fails (throws lathe::Error after
// closing the port).
int run_serve(const ServeOptions& options, const BackendFactory& make_backend);

}  // namespace lathe::server
