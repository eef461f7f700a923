#include "ops/cuda/backend_levers.h"

#include <cstdlib>
#include <optional>

#include "backends/cuda/chained_launch.h"
#include "core/log.h"
#include "target/levers.h"

namespace lathe::ops::cuda {
namespace {

// The on/off value of environment variable `name`, if set and well-formed.
std::optional<bool> env_on_off(const char* name) {
  const char* raw = std::getenv(name);
  if (raw == nullptr) return std::nullopt;
  const std::optional<bool> parsed = target::parse_on_off(raw);
  if (!parsed) spdlog::warn("{}='{}' is not on/off; keeping the default", name, raw);
  return parsed;
}

}  // namespace

void configure_chained_launch(int sm_major) {
  bool enabled = sm_major >= 9;
  const std::optional<bool> env = env_on_off("LATHE_CHAINED_LAUNCH");
  const bool from_env = env.has_value();
  if (env) enabled = enabled && *env;
  lathe::cuda::set_chained_launch(enabled);
  spdlog::info("cuda backend: chained launches (programmatic dependent launch) {}{}", enabled ? "on" : "off",
               from_env ? " (env)" : "");
}

bool resolve_fused_swiglu_down() {
  const std::optional<bool> env = env_on_off("LATHE_FUSE_SWIGLU_DOWN");
  const bool enabled = env.value_or(true);
  spdlog::info("cuda backend: SwiGLU fused into the down projection's decode GEMV {}{}", enabled ? "on" : "off",
               env ? " (env)" : "");
  return enabled;
}

}  // namespace lathe::ops::cuda
