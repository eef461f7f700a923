#include "ops/cuda/chained_launch_lever.h"

#include <cstdlib>
#include <optional>

#include "backends/cuda/chained_launch.h"
#include "core/log.h"
#include "target/levers.h"

namespace lathe::ops::cuda {

void configure_chained_launch(int sm_major) {
  bool enabled = sm_major >= 9;
  bool from_env = false;
  if (const char* raw = std::getenv("LATHE_CHAINED_LAUNCH")) {
    if (const std::optional<bool> parsed = target::parse_on_off(raw)) {
      enabled = enabled && *parsed;
      from_env = true;
    } else {
      spdlog::warn("LATHE_CHAINED_LAUNCH='{}' is not on/off; keeping the default", raw);
    }
  }
  lathe::cuda::set_chained_launch(enabled);
  spdlog::info("cuda backend: chained launches (programmatic dependent launch) {}{}", enabled ? "on" : "off",
               from_env ? " (env)" : "");
}

}  // namespace lathe::ops::cuda
