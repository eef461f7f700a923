#include "ops/linear_dispatch.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <string_view>

namespace lathe::ops {
namespace {

constexpr int64_t kGemvWidest = 32;
constexpr long long kMaxGemmPinM = 65536;  // LATHE_GEMM_PREFILL_PIN_M's ceiling: beyond any chunk

LinearArm gemm_arm(LinearWeightKind kind, const LinearKernels& available) {
  switch (kind) {
    case LinearWeightKind::kBf16:
      return available.gemm_bf16 ? LinearArm::kGemmBf16 : LinearArm::kDequantGemm;
    case LinearWeightKind::kFp8Block128:
      return available.gemm_fp8_block ? LinearArm::kGemmFp8Block : LinearArm::kDequantGemm;
    case LinearWeightKind::kFp8PerChannel:
    case LinearWeightKind::kFp8PerTensor:
      return available.gemm_fp8_channel ? LinearArm::kGemmFp8Channel : LinearArm::kDequantGemm;
    case LinearWeightKind::kOther:
      return LinearArm::kDequantGemm;
  }
  return LinearArm::kDequantGemm;
}

}  // namespace

LinearRoute choose_linear_arm(Phase phase, int64_t m, LinearWeightKind kind, const LinearKernels& available,
                              const LinearLevers& levers) {
  const int64_t gemv_max = std::clamp<int64_t>(levers.gemv_max_m, 0, kGemvWidest);
  const bool gemv_kind = kind != LinearWeightKind::kOther;
  if (phase == Phase::kDecode && available.gemv && gemv_kind && m >= 1 && m <= gemv_max) {
    if (m == 1) return {LinearArm::kGemv, 0};
    if (m <= 4) return {LinearArm::kGemvBatch4, 0};
    if (levers.batch16) {
      if (m <= 16) return {LinearArm::kGemvBatch16, 0};
      if (levers.batch32 && available.gemv_batch32) return {LinearArm::kGemvBatch32, 0};
      return {LinearArm::kGemvBatch16Halves, (m + 1) / 2};
    }
  }
  const int64_t widest = decode_gemv_widest(levers);
  if (phase == Phase::kDecode && available.gemv && gemv_kind && levers.decode_wide_gemv && widest > 0 && m > widest) {
    LinearRoute route{LinearArm::kGemvChunks, 0};
    route.chunk_rows = widest;
    return route;
  }
  return {gemm_arm(kind, available), 0};
}

int64_t decode_gemv_widest(const LinearLevers& levers) {
  const int64_t gemv_max = std::clamp<int64_t>(levers.gemv_max_m, 0, kGemvWidest);
  return levers.batch16 ? gemv_max : std::min<int64_t>(gemv_max, 4);
}

LinearWeightKind linear_weight_kind(DType dtype, ScaleKind scale) {
  if (dtype == DType::kBF16 && scale == ScaleKind::kNone) return LinearWeightKind::kBf16;
  if (dtype == DType::kF8E4M3) {
    switch (scale) {
      case ScaleKind::kPerTensor:
        return LinearWeightKind::kFp8PerTensor;
      case ScaleKind::kPerChannel:
        return LinearWeightKind::kFp8PerChannel;
      case ScaleKind::kBlock128:
        return LinearWeightKind::kFp8Block128;
      case ScaleKind::kNone:
        break;
    }
  }
  return LinearWeightKind::kOther;
}

LinearLevers linear_levers_from_env(std::string* warnings) {
  LinearLevers levers;
  auto warn = [&](const std::string& line) {
    if (warnings) *warnings += line + "\n";
  };
  if (const char* v = std::getenv("LATHE_FFN_BATCH16")) {
    const std::string_view s(v);
    if (s == "0") {
      levers.batch16 = false;
    } else if (s == "1") {
      levers.batch16 = true;
    } else {
      warn(fmt::format("LATHE_FFN_BATCH16={:?} is not 0 or 1; keeping batch16=on", s));
    }
  }
  if (const char* v = std::getenv("LATHE_FFN_DECODE_WIDE")) {
    const std::string_view s(v);
    if (s == "gemv") {
      levers.decode_wide_gemv = true;
    } else if (s == "gemm") {
      levers.decode_wide_gemv = false;
    } else {
      warn(fmt::format("LATHE_FFN_DECODE_WIDE={:?} is not gemm or gemv; keeping decode_wide=gemm", s));
    }
  }
  if (const char* v = std::getenv("LATHE_FFN_FUSED_NORM")) {
    const std::string_view s(v);
    if (s == "0" || s == "1" || s == "4") {
      levers.fused_norm_rows = s[0] - '0';
    } else {
      warn(fmt::format("LATHE_FFN_FUSED_NORM={:?} is not 0, 1 or 4; keeping ffn_fused_norm={}", s,
                       levers.fused_norm_rows));
    }
  }
  // on | off (or 1 | 0) into `value`; anything else warns and keeps it.
  auto on_off = [&](const char* name, const char* label, bool& value) {
    const char* v = std::getenv(name);
    if (v == nullptr) return;
    const std::string_view s(v);
    if (s == "on" || s == "1") {
      value = true;
    } else if (s == "off" || s == "0") {
      value = false;
    } else {
      warn(fmt::format("{}={:?} is not on or off; keeping {}={}", name, s, label, value ? "on" : "off"));
    }
  };
  on_off("LATHE_FFN_FUSED_SILU", "ffn_fused_silu", levers.fused_silu);
  on_off("LATHE_FFN_BATCH32", "ffn_batch32", levers.batch32);
  if (const char* v = std::getenv("LATHE_QKV_FUSED_ROPE")) {
    char* end = nullptr;
    const long value = std::strtol(v, &end, 10);
    if (std::string_view(v) == "off") {
      levers.fused_rope_rows = 0;
    } else if (end == v || *end != '\0' || value < 0 || value > kGemvWidest) {
      warn(fmt::format(
          "LATHE_QKV_FUSED_ROPE={:?} is not off or an integer in 0..32; keeping qkv_fused_rope={}", v,
          levers.fused_rope_rows));
    } else {
      levers.fused_rope_rows = static_cast<int>(value);
    }
  }
  if (const char* v = std::getenv("LATHE_GEMM_PREFILL_PIN_M")) {
    char* end = nullptr;
    const long long value = std::strtoll(v, &end, 10);
    if (end == v || *end != '\0' || value < 1 || value > kMaxGemmPinM) {
      warn(fmt::format(
          "LATHE_GEMM_PREFILL_PIN_M={:?} is not an integer in 1..{}; keeping gemm_prefill_pin_m={}", v,
          kMaxGemmPinM, levers.gemm_prefill_pin_m));
    } else {
      levers.gemm_prefill_pin_m = value;
    }
  }
  if (const char* v = std::getenv("LATHE_FFN_GEMV_MAX_M")) {
    char* end = nullptr;
    const long value = std::strtol(v, &end, 10);
    if (end == v || *end != '\0' || value < 0 || value > kGemvWidest) {
      warn(fmt::format("LATHE_FFN_GEMV_MAX_M={:?} is not an integer in 0..32; keeping gemv_max_m=32", v));
    } else {
      levers.gemv_max_m = static_cast<int>(value);
    }
  }
  return levers;
}

std::string describe_levers(const LinearLevers& levers) {
  const bool b16_env = std::getenv("LATHE_FFN_BATCH16") != nullptr;
  const bool max_env = std::getenv("LATHE_FFN_GEMV_MAX_M") != nullptr;
  std::string out = fmt::format("ffn_batch16={}{} ffn_gemv_max_m={}{}", levers.batch16 ? "on" : "off",
                                b16_env ? " (env)" : "", levers.gemv_max_m, max_env ? " (env)" : "");
  out += fmt::format(" ffn_batch32={}{}", levers.batch32 ? "on" : "off",
                     std::getenv("LATHE_FFN_BATCH32") != nullptr ? " (env)" : "");
  out += fmt::format(" ffn_fused_norm={}{}", levers.fused_norm_rows,
                     std::getenv("LATHE_FFN_FUSED_NORM") != nullptr ? " (env)" : "");
  out += fmt::format(" ffn_fused_silu={}{}", levers.fused_silu ? "on" : "off",
                     std::getenv("LATHE_FFN_FUSED_SILU") != nullptr ? " (env)" : "");
  out += fmt::format(" qkv_fused_rope={}{}", levers.fused_rope_rows,
                     std::getenv("LATHE_QKV_FUSED_ROPE") != nullptr ? " (env)" : "");
  out += fmt::format(" gemm_prefill_pin_m={}{}", levers.gemm_prefill_pin_m,
                     std::getenv("LATHE_GEMM_PREFILL_PIN_M") != nullptr ? " (env)" : "");
  if (levers.decode_wide_gemv) out += " ffn_decode_wide=gemv (env)";  // only the environment arms it
  return out;
}

const char* linear_arm_name(LinearArm arm) {
  switch (arm) {
    case LinearArm::kGemv:
      return "gemv";
    case LinearArm::kGemvBatch4:
      return "gemv_batch4";
    case LinearArm::kGemvBatch16:
      return "gemv_batch16";
    case LinearArm::kGemvBatch16Halves:
      return "gemv_batch16 x2 halves";
    case LinearArm::kGemvBatch32:
      return "gemv_batch32";
    case LinearArm::kGemvChunks:
      return "gemv tiers over row chunks";
    case LinearArm::kGemmBf16:
      return "cublaslt bf16 gemm";
    case LinearArm::kGemmFp8Block:
      return "cublaslt w8a8 block128 gemm";
    case LinearArm::kGemmFp8Channel:
      return "cublaslt w8a8 outer-vector gemm";
    case LinearArm::kDequantGemm:
      return "dequantize to bf16 scratch + cublaslt bf16 gemm";
  }
  return "?";
}

const char* linear_weight_kind_name(LinearWeightKind kind) {
  switch (kind) {
    case LinearWeightKind::kBf16:
      return "bf16";
    case LinearWeightKind::kFp8PerTensor:
      return "fp8 per-tensor";
    case LinearWeightKind::kFp8PerChannel:
      return "fp8 per-channel";
    case LinearWeightKind::kFp8Block128:
      return "fp8 block128";
    case LinearWeightKind::kOther:
      return "other dtype";
  }
  return "?";
}

const char* phase_name(Phase phase) { return phase == Phase::kDecode ? "decode" : "prefill"; }

std::string describe_route(Phase phase, int64_t m, LinearWeightKind kind, const LinearRoute& route,
                           const LinearLevers& levers) {
  std::string why;
  switch (route.arm) {
    case LinearArm::kGemv:
    case LinearArm::kGemvBatch4:
      why = "one weight pass, fp32 accumulation per row";
      break;
    case LinearArm::kGemvBatch16:
      why = "one weight pass for 5..16 rows, each row bit-identical to the m=1 gemv (ffn_batch16=on)";
      break;
    case LinearArm::kGemvBatch16Halves:
      why = "two weight passes on contiguous row halves, each row bit-identical to the m=1 gemv (ffn_batch16=on)";
      break;
    case LinearArm::kGemvBatch32:
      why = "one weight pass for 17..32 rows, each row bit-identical to the m=1 gemv (ffn_batch32=on)";
      break;
    case LinearArm::kGemvChunks:
      why = fmt::format("the gemv tiers over chunks of {} rows, one weight pass per chunk, each row bit-identical to "
                        "the m=1 gemv at any batch width (ffn_decode_wide=gemv)",
                        route.chunk_rows);
      break;
    case LinearArm::kDequantGemm:
      why = kind == LinearWeightKind::kOther ? "weights converted to bf16 first"
                                             : "cuBLASLt cannot take this scale layout/shape: weights dequantized to bf16 first";
      break;
    default:
      why = phase == Phase::kPrefill ? "prefill always takes the GEMM (pinned algorithm, split-K off)"
                                     : "decode rows beyond the gemv tiers (pinned algorithm, split-K off)";
      break;
  }
  return fmt::format("linear route: {} m={} {} weights -> {} ({}; {})", phase_name(phase), m,
                     linear_weight_kind_name(kind), linear_arm_name(route.arm), why, describe_levers(levers));
}

}  // namespace lathe::ops
