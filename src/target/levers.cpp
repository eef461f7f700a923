#include "target/levers.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdint>

namespace lathe::target {
namespace {

// Trimmed, lower-cased copy of a lever spelling (the grammar is case-insensitive).
std::string normalise(std::string_view spelling) {
  size_t first = 0;
  size_t last = spelling.size();
  while (first < last && std::isspace(static_cast<unsigned char>(spelling[first]))) ++first;
  while (last > first && std::isspace(static_cast<unsigned char>(spelling[last - 1]))) --last;
  std::string out(spelling.substr(first, last - first));
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

// A whole-string unsigned decimal; nullopt for signs, blanks, trailing text or overflow.
std::optional<uint64_t> parse_decimal(const std::string& text) {
  if (text.empty()) return std::nullopt;
  uint64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

const char* on_off(bool value) { return value ? "on" : "off"; }

}  // namespace

SplitkPolicy SplitkPolicy::pinned_to(uint32_t count) {
  return {Kind::kPinned, std::clamp<uint32_t>(count, 1, kMaxDecodeSplits)};
}

std::optional<SplitkPolicy> parse_splitk_policy(std::string_view spelling) {
  const std::string word = normalise(spelling);
  if (word == "legacy") return SplitkPolicy::legacy();
  if (word == "auto") return SplitkPolicy::automatic();
  if (word == "0" || word == "off" || word == "false" || word == "no") return SplitkPolicy::pinned_to(1);
  // A count must fit 32 bits (larger is not a count at all); in range it clamps to the ceiling.
  std::optional<uint64_t> count = parse_decimal(word);
  if (!count || *count > UINT32_MAX) return std::nullopt;
  return SplitkPolicy::pinned_to(static_cast<uint32_t>(std::min<uint64_t>(*count, kMaxDecodeSplits)));
}

std::string splitk_policy_label(const SplitkPolicy& policy) {
  switch (policy.kind) {
    case SplitkPolicy::Kind::kLegacy:
      return "legacy";
    case SplitkPolicy::Kind::kAuto:
      return "auto";
    case SplitkPolicy::Kind::kPinned:
      break;
  }
  return std::to_string(std::clamp<uint32_t>(policy.pinned, 1, kMaxDecodeSplits));
}

std::optional<bool> parse_on_off(std::string_view spelling) {
  const std::string word = normalise(spelling);
  if (word == "1" || word == "on" || word == "true" || word == "yes") return true;
  if (word == "0" || word == "off" || word == "false" || word == "no") return false;
  return std::nullopt;
}

namespace {

// One cap: "auto" -> 0, "auto:N" -> auto_slices_at_most(N), the off words -> 1, a count clamped to
// 1..kMaxSplitSlices.
std::optional<int32_t> parse_slice_cap(const std::string& word) {
  if (word == "auto") return 0;
  if (const size_t colon = word.find(':'); colon != std::string::npos) {
    if (normalise(std::string_view(word).substr(0, colon)) != "auto") return std::nullopt;
    const std::optional<uint64_t> most = parse_decimal(normalise(std::string_view(word).substr(colon + 1)));
    if (!most || *most < 1) return std::nullopt;
    return auto_slices_at_most(static_cast<int32_t>(std::min<uint64_t>(*most, kMaxSplitSlices)));
  }
  if (word == "0" || word == "off" || word == "false" || word == "no") return 1;
  std::optional<uint64_t> count = parse_decimal(word);
  if (!count || *count > UINT32_MAX) return std::nullopt;
  return static_cast<int32_t>(std::min<uint64_t>(*count, kMaxSplitSlices));
}

std::string slice_cap_label(int32_t cap) {
  if (cap == 0) return "auto";
  if (cap < 0) return "auto:" + std::to_string(-cap);
  return std::to_string(std::min(cap, kMaxSplitSlices));
}

// Whether a lowered spelling names caps per dtype ("bf16:..." / "fp8:..." entries) rather than one
// cap for both (which may itself hold a colon: "auto:2").
bool names_kv_dtypes(const std::string& word) {
  const size_t colon = word.find(':');
  if (colon == std::string::npos) return false;
  const std::string first = normalise(std::string_view(word).substr(0, colon));
  return first == "bf16" || first == "fp8";
}

}  // namespace

std::optional<SplitSlices> parse_split_slices(std::string_view spelling) {
  const std::string word = normalise(spelling);
  if (!names_kv_dtypes(word)) {
    const std::optional<int32_t> cap = parse_slice_cap(word);
    if (!cap) return std::nullopt;
    return SplitSlices(*cap);
  }
  SplitSlices out(1);
  bool seen_bf16 = false;
  bool seen_fp8 = false;
  size_t pos = 0;
  while (pos <= word.size()) {
    const size_t next = std::min(word.find(',', pos), word.size());
    const std::string entry = normalise(std::string_view(word).substr(pos, next - pos));
    pos = next + 1;
    const size_t colon = entry.find(':');
    if (colon == std::string::npos) return std::nullopt;
    const std::string dtype = normalise(std::string_view(entry).substr(0, colon));
    const std::optional<int32_t> cap = parse_slice_cap(normalise(std::string_view(entry).substr(colon + 1)));
    bool& seen = dtype == "fp8" ? seen_fp8 : seen_bf16;
    if (!cap || (dtype != "fp8" && dtype != "bf16") || seen) return std::nullopt;
    seen = true;
    (dtype == "fp8" ? out.fp8 : out.bf16) = *cap;
  }
  return out;
}

std::string split_slices_label(const SplitSlices& slices) {
  if (slices.bf16 == slices.fp8) return slice_cap_label(slices.bf16);
  std::string out;
  if (slices.bf16 != 1) out = "bf16:" + slice_cap_label(slices.bf16);
  if (slices.fp8 != 1) out += (out.empty() ? "fp8:" : ",fp8:") + slice_cap_label(slices.fp8);
  return out;
}

std::optional<int32_t> parse_gemv_max_m(std::string_view spelling) {
  std::optional<uint64_t> value = parse_decimal(normalise(spelling));
  if (!value || *value > static_cast<uint64_t>(kMaxFfnGemvRows)) return std::nullopt;
  return static_cast<int32_t>(*value);
}

std::optional<int32_t> parse_gemv_early_weights(std::string_view spelling) {
  const std::string word = normalise(spelling);
  if (word == "off" || word == "false" || word == "no") return -1;
  if (word == "on" || word == "true" || word == "yes") return 0;
  std::optional<uint64_t> value = parse_decimal(word);
  if (!value || *value > static_cast<uint64_t>(kMaxGemvEarlyWeights)) return std::nullopt;
  return static_cast<int32_t>(*value);
}

std::optional<int32_t> parse_splitk_kernel_variant(std::string_view spelling) {
  std::optional<uint64_t> value = parse_decimal(normalise(spelling));
  if (!value || *value >= static_cast<uint64_t>(kSplitkKernelVariants)) return std::nullopt;
  return static_cast<int32_t>(*value);
}

std::optional<int32_t> parse_kv_l2_promotion(std::string_view spelling) {
  const std::string word = normalise(spelling);
  if (word == "none" || word == "off") return 0;
  const std::optional<uint64_t> value = parse_decimal(word);
  if (!value || (*value != 0 && *value != 64 && *value != 128 && *value != 256)) return std::nullopt;
  return static_cast<int32_t>(*value);
}

std::optional<int32_t> parse_attn_ctas_per_sm(std::string_view spelling) {
  const std::string word = normalise(spelling);
  if (word == "auto") return -1;
  if (word == "off") return 0;
  const std::optional<uint64_t> value = parse_decimal(word);
  if (!value || *value > kMaxAttnCtasPerSm) return std::nullopt;
  return static_cast<int32_t>(*value);
}

std::optional<AttnSplitRule> parse_attn_split_rule(std::string_view spelling) {
  const std::string word = normalise(spelling);
  if (word == "seed") return AttnSplitRule::kSeed;
  if (word == "even") return AttnSplitRule::kEven;
  if (word == "aligned") return AttnSplitRule::kAligned;
  return std::nullopt;
}

std::optional<AttnSplitReduce> parse_attn_split_reduce(std::string_view spelling) {
  const std::string word = normalise(spelling);
  if (word == "auto") return AttnSplitReduce::kAuto;
  if (word == "heads") return AttnSplitReduce::kHeads;
  if (word == "warps") return AttnSplitReduce::kWarps;
  return std::nullopt;
}

Lever<SplitkPolicy> resolve_splitk_policy(std::string_view declared, std::optional<std::string_view> env_raw,
                                          std::string* note) {
  std::string why;
  std::optional<SplitkPolicy> parsed_declared = parse_splitk_policy(declared);
  if (!parsed_declared) why = fmt::format("declared attn_decode_splitk '{}' is not legacy|auto|off|<count>; using legacy", declared);
  const SplitkPolicy fallback = parsed_declared.value_or(SplitkPolicy::legacy());
  Lever<SplitkPolicy> out{fallback, false};
  if (env_raw) {
    if (std::optional<SplitkPolicy> parsed = parse_splitk_policy(*env_raw)) {
      out = {*parsed, true};
    } else {
      why += fmt::format("{}{}='{}' is not legacy|auto|off|<count>; keeping the declared {}", why.empty() ? "" : "; ",
                         kEnvAttnDecodeSplitk, *env_raw, splitk_policy_label(fallback));
    }
  }
  if (note) *note = why;
  return out;
}

Lever<bool> resolve_on_off_lever(const char* env_name, bool declared, std::optional<std::string_view> env_raw,
                                 std::string* note) {
  if (!env_raw) return {declared, false};
  if (std::optional<bool> parsed = parse_on_off(*env_raw)) return {*parsed, true};
  if (note) {
    *note = fmt::format("{}='{}' is not on|off|1|0|true|false|yes|no; keeping the declared {}", env_name, *env_raw,
                        on_off(declared));
  }
  return {declared, false};
}

Lever<SplitSlices> resolve_split_slices_lever(std::string_view declared,
                                              std::optional<std::string_view> env_raw, std::string* note) {
  std::string why;
  const std::optional<SplitSlices> parsed_declared = parse_split_slices(declared);
  if (!parsed_declared) {
    why = fmt::format(
        "declared attn_decode_split_slices '{}' is not auto|auto:<n>|off|<n>|bf16:<cap>,fp8:<cap>; using 1",
        declared);
  }
  Lever<SplitSlices> out{parsed_declared.value_or(SplitSlices(1)), false};
  if (env_raw) {
    if (std::optional<SplitSlices> parsed = parse_split_slices(*env_raw)) {
      out = {*parsed, true};
    } else {
      why += fmt::format(
          "{}{}='{}' is not auto|auto:<n>|off|<n>|bf16:<cap>,fp8:<cap>; keeping the declared {}",
          why.empty() ? "" : "; ", kEnvAttnDecodeSplitSlices, *env_raw, split_slices_label(out.value));
    }
  }
  if (note) *note = why;
  return out;
}

Lever<int32_t> resolve_gemv_max_m_lever(int32_t declared, std::optional<std::string_view> env_raw, std::string* note) {
  if (!env_raw) return {declared, false};
  if (std::optional<int32_t> parsed = parse_gemv_max_m(*env_raw)) return {*parsed, true};
  if (note) {
    *note = fmt::format("{}='{}' is not an integer in 0..{}; keeping the declared {}", kEnvFfnGemvMaxM, *env_raw,
                        kMaxFfnGemvRows, declared);
  }
  return {declared, false};
}

std::string format_levers(const Levers& levers) {
  auto env = [](bool from_env) { return from_env ? " (env)" : ""; };
  return fmt::format("attn_decode_splitk={}{} attn_decode_gqa_pack={}{} attn_decode_split_slices={}{} "
                     "ffn_batch16={}{} ffn_gemv_max_m={}{}",
                     splitk_policy_label(levers.attn_decode_splitk.value), env(levers.attn_decode_splitk.from_env),
                     on_off(levers.attn_decode_gqa_pack.value), env(levers.attn_decode_gqa_pack.from_env),
                     split_slices_label(levers.attn_decode_split_slices.value),
                     env(levers.attn_decode_split_slices.from_env),
                     on_off(levers.ffn_batch16.value), env(levers.ffn_batch16.from_env),
                     levers.ffn_gemv_max_m.value, env(levers.ffn_gemv_max_m.from_env));
}

}  // namespace lathe::target
