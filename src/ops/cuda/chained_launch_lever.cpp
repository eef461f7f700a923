#include "ops/cuda/chained_launch_lever.h"

#include <cstdlib>
#include <optional>
#include <string>

#include "backends/cuda/chained_launch.h"
#include "backends/cuda/gemv.h"
#include "backends/cuda/paged_attention.h"
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

static_assert(target::kMaxGemvEarlyWeights == lathe::cuda::kGemvEarlyWeightsMax,
              "the lever grammar and the GEMV accept the same early-weights range");

void configure_gemv_early_weights() {
  bool from_env = false;
  if (const char* raw = std::getenv("LATHE_GEMV_EARLY_WEIGHTS")) {
    if (const std::optional<int32_t> parsed = target::parse_gemv_early_weights(raw)) {
      lathe::cuda::set_gemv_early_weights(*parsed);
      from_env = true;
    } else {
      spdlog::warn("LATHE_GEMV_EARLY_WEIGHTS='{}' is not off/on/<steps 0..{}>; keeping the default", raw,
                   target::kMaxGemvEarlyWeights);
    }
  }
  const int steps = lathe::cuda::gemv_early_weights();
  spdlog::info("cuda backend: decode GEMV weights before the chained-launch wait: {}{}",
               steps < 0    ? std::string("off")
               : steps == 0 ? std::string("ring")
                            : "ring + " + std::to_string(steps) + " steps to L2",
               from_env ? " (env)" : "");
}

void configure_attention_early_kv() {
  bool from_env = false;
  if (const char* raw = std::getenv("LATHE_ATTN_EARLY_KV")) {
    if (const std::optional<bool> parsed = target::parse_on_off(raw)) {
      lathe::cuda::set_splitk_early_kv(*parsed);
      from_env = true;
    } else {
      spdlog::warn("LATHE_ATTN_EARLY_KV='{}' is not on/off; keeping the default", raw);
    }
  }
  spdlog::info("cuda backend: split-K attention K/V tiles before the chained-launch wait: {}{}",
               lathe::cuda::splitk_early_kv() ? "on" : "off", from_env ? " (env)" : "");
}

}  // namespace lathe::ops::cuda
