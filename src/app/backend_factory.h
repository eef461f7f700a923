#pragma once
// Choosing and building the compute backend at boot: --device auto picks CUDA when this build has
// it and a device is present, else the CPU. For CUDA the hardware target is resolved once
// (targets/*.toml + LATHE_* levers, one boot line) and handed to the backend, so the split-K
// policy, the GQA-pack arm and the FFN tiers are fixed for the life of the process.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "ops/backend.h"

namespace lathe::app {

struct BackendRequest {
  std::string device = "auto";        // auto | cpu | cuda (--device)
  std::optional<std::string> target;  // --target NAME (default: chosen from the device)
  int32_t max_decode_seqs = 1;        // widest decode batch the caller schedules (--max-num-seqs)
};

// LATHE_PROFILE=1 (read once): make_backend wraps the backend in ops::ProfilingBackend, which
// runs every step eagerly and prints a per-phase table of each step's time at exit.
bool profiling_enabled();

// Throws lathe::Error naming --device for an unknown device or a CUDA request this build or
// machine cannot serve.
std::unique_ptr<ops::Backend> make_backend(const BackendRequest& request);

}  // namespace lathe::app
