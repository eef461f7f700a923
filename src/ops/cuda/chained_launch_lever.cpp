#include "ops/cuda/chained_launch_lever.h"

#include <fmt/format.h>

#include <cstdlib>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "backends/cuda/chained_launch.h"
#include "backends/cuda/gemv.h"
#include "backends/cuda/paged_attention.h"
#include "core/log.h"
#include "ops/splitk_policy.h"
#include "target/levers.h"

namespace lathe::ops::cuda {
namespace {

// Reads the environment lever `name` with `parse` (a target/levers.h grammar returning an
// optional); returns the parsed value, or nullopt when unset or unparseable (the latter with a
// warning naming `grammar`, the default kept; once per process, though a lever may be read again
// when the serve's configuration arrives).
template <typename Parse>
auto env_lever(const char* name, Parse parse, const std::string& grammar) -> decltype(parse("")) {
  const char* raw = std::getenv(name);
  if (raw == nullptr) return std::nullopt;
  auto parsed = parse(raw);
  if (!parsed) {
    const std::string warning = fmt::format("{}='{}' is not {}; keeping the default", name, raw, grammar);
    if (log_once(warning)) spdlog::warn("{}", warning);
  }
  return parsed;
}

const char* env_mark(bool from_env) { return from_env ? " (env)" : ""; }

void configure_attention_kv_l2_promotion() {
  const std::optional<int32_t> env =
      env_lever("LATHE_ATTN_KV_L2_PROMOTION", target::parse_kv_l2_promotion, "none/0/64/128/256 (bytes)");
  if (env) lathe::cuda::set_splitk_kv_l2_promotion(*env);
  const int bytes = lathe::cuda::splitk_kv_l2_promotion();
  spdlog::info("cuda backend: split-K attention K/V copies' L2 promotion: {}{}",
               bytes == 0 ? std::string("none") : std::to_string(bytes) + " bytes",
               env_mark(env.has_value()));
}

static_assert(target::kMaxAttnCtasPerSm == lathe::cuda::kSplitkMaxCtasPerSm,
              "the lever grammar and the split-K launcher accept the same caps");

void configure_attention_ctas_per_sm() {
  const std::optional<int32_t> env =
      env_lever("LATHE_ATTN_CTAS_PER_SM", target::parse_attn_ctas_per_sm, "auto/off/<cap 1..8>");
  if (env) lathe::cuda::set_splitk_ctas_per_sm(*env);
  const int setting = lathe::cuda::splitk_ctas_per_sm();
  std::string resolved = "at most " + std::to_string(setting);
  if (setting == lathe::cuda::kSplitkCtasPerSmAuto)
    resolved = "auto (one wave spread over the SMs, several filled; BF16 at the fewer per SM on a tie)";
  if (setting == lathe::cuda::kSplitkCtasPerSmOff) resolved = "as many as fit";
  spdlog::info("cuda backend: split-K attention CTAs per SM: {}{}", resolved, env_mark(env.has_value()));
}

}  // namespace

void configure_chained_launch(int sm_major) {
  const std::optional<bool> env = env_lever("LATHE_CHAINED_LAUNCH", target::parse_on_off, "on/off");
  const bool enabled = sm_major >= 9 && env.value_or(true);
  lathe::cuda::set_chained_launch(enabled);
  spdlog::info("cuda backend: chained launches (programmatic dependent launch) {}{}", enabled ? "on" : "off",
               env_mark(env.has_value()));
}

static_assert(target::kMaxGemvEarlyWeights == lathe::cuda::kGemvEarlyWeightsMax,
              "the lever grammar and the GEMV accept the same early-weights range");

void configure_gemv_early_weights() {
  const std::optional<int32_t> env =
      env_lever("LATHE_GEMV_EARLY_WEIGHTS", target::parse_gemv_early_weights,
                "off/on/<steps 0.." + std::to_string(target::kMaxGemvEarlyWeights) + ">");
  if (env) lathe::cuda::set_gemv_early_weights(*env);
  const int steps = lathe::cuda::gemv_early_weights();
  spdlog::info("cuda backend: decode GEMV weights before the chained-launch wait: {}{}",
               steps < 0    ? std::string("off")
               : steps == 0 ? std::string("ring")
                            : "ring + " + std::to_string(steps) + " steps to L2",
               env_mark(env.has_value()));
}

void configure_gemv_shape_variants() {
  const char* raw = std::getenv("LATHE_GEMV_SHAPE_VARIANTS");
  if (raw == nullptr) return;
  std::string why;
  std::optional<std::vector<lathe::cuda::GemvShapeVariant>> parsed =
      lathe::cuda::parse_gemv_shape_variants(raw, &why);
  if (!parsed) {
    const std::string warning = fmt::format(
        "LATHE_GEMV_SHAPE_VARIANTS='{}' does not parse ({}); keeping the default kernels", raw, why);
    if (log_once(warning)) spdlog::warn("{}", warning);
    return;
  }
  std::string listed;
  for (const lathe::cuda::GemvShapeVariant& e : *parsed)
    listed += fmt::format("{}{}/{}x{}={}", listed.empty() ? "" : ",", e.fp8 ? "fp8" : "bf16", e.n, e.k,
                          lathe::cuda::gemv_variant_name(e.variant));
  lathe::cuda::set_gemv_shape_variants(std::move(*parsed));
  spdlog::info("cuda backend: decode GEMV kernels overridden per shape: {} (env)",
               listed.empty() ? "none" : listed);
}

void configure_gemv_split_sum() {
  const std::optional<bool> env = env_lever("LATHE_GEMV_SPLIT_SUM", target::parse_on_off, "on/off");
  if (env) lathe::cuda::set_gemv_split_sum(*env);
  // A row count in 0..32, the grammar of LATHE_FFN_GEMV_MAX_M.
  const std::optional<int32_t> nowait =
      env_lever("LATHE_GEMV_SPLIT_SUM_NOWAIT_ROWS", target::parse_gemv_max_m, "a row count in 0..32");
  if (nowait) lathe::cuda::set_gemv_split_sum_nowait_rows(*nowait);
  spdlog::info(
      "cuda backend: decode GEMV split-K sums shared by the splits (':sa' kernels): {}{}, no wait up to {} "
      "rows{}",
      lathe::cuda::gemv_split_sum() ? "on" : "off", env_mark(env.has_value()),
      lathe::cuda::gemv_split_sum_nowait_rows(), env_mark(nowait.has_value()));
}

void configure_gemv_levers() {
  configure_gemv_early_weights();
  configure_gemv_shape_variants();
  configure_gemv_split_sum();
}

void configure_attention_early_kv() {
  const std::optional<bool> env = env_lever("LATHE_ATTN_EARLY_KV", target::parse_on_off, "on/off");
  if (env) lathe::cuda::set_splitk_early_kv(*env);
  spdlog::info("cuda backend: split-K attention K/V tiles before the chained-launch wait: {}{}",
               lathe::cuda::splitk_early_kv() ? "on" : "off", env_mark(env.has_value()));
  configure_attention_kv_l2_promotion();
  configure_attention_ctas_per_sm();
}

void configure_prefill_attention() {
  const std::optional<bool> env = env_lever("LATHE_PREFILL_WS", target::parse_on_off, "on/off");
  if (env) lathe::cuda::set_prefill_wgmma(*env);
  spdlog::info("cuda backend: prefill attention at head dim 128: {}{}",
               lathe::cuda::prefill_uses_wgmma(128)
                   ? "warp-specialised warpgroup MMA (KV blocks of a multiple of 16 positions)"
                   : "mma.sync",
               env_mark(env.has_value()));
}

static_assert(target::kSplitkKernelVariants == lathe::cuda::kSplitkKernelVariants,
              "the lever grammar and the split-K kernel know the same variants");

bool configure_attention_kernel(std::optional<uint32_t> max_decode_seqs) {
  const std::optional<int32_t> variant =
      env_lever("LATHE_ATTN_SPLITK_KERNEL", target::parse_splitk_kernel_variant,
                "a split-K kernel variant 0.." + std::to_string(target::kSplitkKernelVariants - 1));
  std::string origin = env_mark(variant.has_value());
  if (variant) {
    lathe::cuda::set_splitk_kernel_variant(*variant);
  } else if (max_decode_seqs) {
    lathe::cuda::set_splitk_kernel_variant(decode_splitk_kernel(*max_decode_seqs));
    origin = " (widest decode batch " + std::to_string(*max_decode_seqs) + ")";
  }
  const std::optional<target::AttnSplitRule> rule =
      env_lever("LATHE_ATTN_SPLIT_RULE", target::parse_attn_split_rule, "seed/even/aligned");
  if (rule) {
    lathe::cuda::set_splitk_split_rule(*rule == target::AttnSplitRule::kEven      ? lathe::cuda::SplitRule::kEven
                                       : *rule == target::AttnSplitRule::kAligned ? lathe::cuda::SplitRule::kAligned
                                                                                  : lathe::cuda::SplitRule::kSeed);
  }
  const std::optional<target::AttnSplitReduce> reduce =
      env_lever("LATHE_ATTN_SPLIT_REDUCE", target::parse_attn_split_reduce, "auto/heads/warps");
  if (reduce) {
    lathe::cuda::set_splitk_reduce_mode(
        *reduce == target::AttnSplitReduce::kWarps   ? lathe::cuda::SplitReduce::kWarps
        : *reduce == target::AttnSplitReduce::kHeads ? lathe::cuda::SplitReduce::kHeadCtas
                                                     : lathe::cuda::SplitReduce::kAuto);
  }
  spdlog::info("cuda backend: split-K attention kernel variant {}{}, split rule {}{}, split reduce {}{}",
               lathe::cuda::splitk_kernel_variant(), origin,
               lathe::cuda::split_rule_name(lathe::cuda::splitk_split_rule()), env_mark(rule.has_value()),
               lathe::cuda::split_reduce_name(lathe::cuda::splitk_reduce_mode()),
               env_mark(reduce.has_value()));
  return variant.has_value();
}

}  // namespace lathe::ops::cuda
