#pragma once
// Operator levers: the knobs a hardware target declares in targets/<name>.toml [defaults] and an
// operator may override through LATHE_* environment variables. They are resolved ONCE at boot
// (target/target.h: resolve_target) into one Levers value that is passed explicitly to whoever
// needs it; nothing on a hot path reads the environment (ARCHITECTURE rules 4 and 5).
//
// Grammar shared by every lever: the spelling is trimmed and compared case-insensitively. A
// spelling that does not parse never arms anything: the declaration is kept and the resolution
// records a note saying so (a typo must not silently switch a kernel geometry).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace lathe::target {

// Hard ceiling on the paged-decode split count; pinned counts are clamped to 1..kMaxDecodeSplits
// and the split-K workspace is sized against it (see ops/splitk_policy.h for the reasons).
inline constexpr uint32_t kMaxDecodeSplits = 16;

// How a serve picks its paged-decode split-K count (the arithmetic is in ops/splitk_policy.h).
struct SplitkPolicy {
  enum class Kind {
    kLegacy,  // sm_count / (num_q_heads * max(num_seqs, max_decode_seqs)): reads the live batch
    kAuto,    // two waves of CTAs at the single-sequence shape; a function of configuration only
    kPinned,  // an operator-chosen count in 1..kMaxDecodeSplits (1 = no split-K)
  };
  Kind kind = Kind::kAuto;
  uint32_t pinned = 1;  // meaningful for kPinned only

  static SplitkPolicy legacy() { return {Kind::kLegacy, 1}; }
  static SplitkPolicy automatic() { return {Kind::kAuto, 1}; }
  // Clamps `count` into 1..kMaxDecodeSplits.
  static SplitkPolicy pinned_to(uint32_t count);

  friend bool operator==(const SplitkPolicy&, const SplitkPolicy&) = default;
};

// "legacy" | "auto" | "0" / "off" / "false" / "no" (= pinned 1) | a decimal count (clamped to
// 1..kMaxDecodeSplits). nullopt for anything else.
std::optional<SplitkPolicy> parse_splitk_policy(std::string_view spelling);

// The spelling that parse_splitk_policy maps back to the same policy: "legacy", "auto" or the
// pinned count in decimal.
std::string splitk_policy_label(const SplitkPolicy& policy);

// "1" / "on" / "true" / "yes" -> true; "0" / "off" / "false" / "no" -> false; else nullopt.
std::optional<bool> parse_on_off(std::string_view spelling);

// Cap on the slices of one split-K split (ops/splitk_policy.h: decode_split_slices).
inline constexpr int32_t kMaxSplitSlices = 8;

// One slice cap: 0 = the policy's rule (auto), -N (N in 2..kMaxSplitSlices - 1) = the policy's rule
// but at most N slices ("auto:N": a part whose slices pay, but not as many as fill the SMs), 1 =
// splits are not sliced, N = at most N slices whatever the shape (pinned).
constexpr int32_t auto_slices_at_most(int32_t most) {
  return most <= 1 ? 1 : (most >= kMaxSplitSlices ? 0 : -most);
}

// The slice caps of a serve, one per KV cache dtype (each as above). A KV cache of FP8 codes takes
// `fp8`, every other one `bf16`.
// An FP8 tile is bound by its per-position work more than by its bytes, so more CTAs per split pay
// for it where they do not for BF16 (targets/h100.toml). A plain count converts to the same cap
// for both.
struct SplitSlices {
  int32_t bf16 = 0;
  int32_t fp8 = 0;
  constexpr SplitSlices(int32_t both = 0) : bf16(both), fp8(both) {}  // NOLINT: a count is a cap for both
  constexpr SplitSlices(int32_t bf16_cap, int32_t fp8_cap) : bf16(bf16_cap), fp8(fp8_cap) {}
  constexpr int32_t for_kv(bool fp8_kv) const { return fp8_kv ? fp8 : bf16; }
  bool operator==(const SplitSlices&) const = default;
};

// attn_decode_split_slices, one cap for both KV dtypes: "auto" -> 0 (the policy's rule); "auto:N"
// (N >= 1 in decimal) -> auto_slices_at_most(N); "0" / "off" / "false" / "no" -> 1 (splits are not
// sliced); a decimal count -> that cap, clamped to 1..kMaxSplitSlices. Or caps per dtype: a comma
// list of "bf16:<cap>" and "fp8:<cap>" (each at most once), a dtype not named keeping whole splits
// (e.g. "fp8:auto:2": FP8 caches slice by auto's rule, at most 2, BF16 caches not). Else nullopt.
std::optional<SplitSlices> parse_split_slices(std::string_view spelling);
// The cap's word ("auto" for 0, "auto:N" for -N, else the count in decimal) when both dtypes share
// it, else the per-dtype list without the dtypes that keep whole splits, e.g. "fp8:auto:2"
// (parse_split_slices maps it back).
std::string split_slices_label(const SplitSlices& slices);

// Largest decode width the FFN GEMV tiers serve (ffn_gemv_max_m); wider decode rows take the GEMM.
inline constexpr int32_t kMaxFfnGemvRows = 32;

// A decimal integer in 0..kMaxFfnGemvRows (0 = the GEMV tiers never serve the FFN); else nullopt.
std::optional<int32_t> parse_gemv_max_m(std::string_view spelling);

// LATHE_GEMV_EARLY_WEIGHTS (backends/cuda/gemv.h, gemv_early_weights): "off" / "false" / "no"
// -> -1, nothing read before the chained-launch wait; "on" / "true" / "yes" -> 0, the register
// ring's first steps; a decimal N in 1..kMaxGemvEarlyWeights -> those and N more
// steps prefetched into L2. "0" means the ring only (a count), not off. Else nullopt.
inline constexpr int32_t kMaxGemvEarlyWeights = 64;
std::optional<int32_t> parse_gemv_early_weights(std::string_view spelling);

// LATHE_ATTN_SPLITK_KERNEL (measurement lever; backends/cuda/paged_attention.h lists the
// variants): a decimal variant number in 0..kSplitkKernelVariants - 1; else nullopt.
inline constexpr int32_t kSplitkKernelVariants = 31;
std::optional<int32_t> parse_splitk_kernel_variant(std::string_view spelling);

// LATHE_ATTN_SPLIT_RULE (measurement lever; backends/cuda/split_length.h): how a sequence's length
// is cut into splits, "seed" (max(ceil(L / S), floor), the default), "even" or "aligned"; else
// nullopt.
enum class AttnSplitRule { kSeed, kEven, kAligned };
std::optional<AttnSplitRule> parse_attn_split_rule(std::string_view spelling);

// LATHE_ATTN_SPLIT_REDUCE (measurement lever; backends/cuda/split_reduce.h): how the split-K
// records are merged, "auto" (the default: heads for one sequence, warps from two), "heads" (a CTA
// per sequence and head) or "warps" (a warp per sequence and head); else nullopt.
enum class AttnSplitReduce { kAuto, kHeads, kWarps };
std::optional<AttnSplitReduce> parse_attn_split_reduce(std::string_view spelling);

// LATHE_ATTN_KV_L2_PROMOTION (measurement lever; backends/cuda/paged_attention.h
// set_splitk_kv_l2_promotion): the L2 promotion of the split-K tensor copies' K/V requests in
// bytes, "0" / "none" / "off" -> 0, or "64", "128", "256"; else nullopt.
std::optional<int32_t> parse_kv_l2_promotion(std::string_view spelling);

// LATHE_ATTN_CTAS_PER_SM (backends/cuda/paged_attention.h set_splitk_ctas_per_sm): "auto" -> -1
// (the wave-fill choice per launch), "off" / "0" -> 0 (as many as fit), or a cap "1".."8"; else
// nullopt.
inline constexpr int32_t kMaxAttnCtasPerSm = 8;
std::optional<int32_t> parse_attn_ctas_per_sm(std::string_view spelling);

// One resolved lever: its value and whether the value came from the environment (the boot line
// marks those "(env)").
template <typename T>
struct Lever {
  T value{};
  bool from_env = false;
};

// Every lever of one process, resolved once at boot.
struct Levers {
  // Paged-decode split-K policy. Env: LATHE_ATTN_DECODE_SPLITK.
  Lever<SplitkPolicy> attn_decode_splitk{SplitkPolicy::automatic(), false};
  // Arms the GQA-packed non-split decode kernel where its shape gate admits the model.
  // Env: LATHE_ATTN_DECODE_GQA_PACK.
  Lever<bool> attn_decode_gqa_pack{false, false};
  // Caps on the slices a split-K split is cut into for narrow launches, per KV cache dtype
  // (0 = auto). Env: LATHE_ATTN_DECODE_SPLIT_SLICES.
  Lever<SplitSlices> attn_decode_split_slices{0, false};
  // Lets the FFN GEMV take its batch16 tier (5 <= m <= 32). Env: LATHE_FFN_BATCH16.
  Lever<bool> ffn_batch16{true, false};
  // Widest decode row count the GEMV tiers serve; wider takes the GEMM. Env: LATHE_FFN_GEMV_MAX_M.
  Lever<int32_t> ffn_gemv_max_m{kMaxFfnGemvRows, false};
};

// The environment variable names, one per lever (kept here so docs and tests share them).
inline constexpr const char* kEnvAttnDecodeSplitk = "LATHE_ATTN_DECODE_SPLITK";
inline constexpr const char* kEnvAttnDecodeGqaPack = "LATHE_ATTN_DECODE_GQA_PACK";
inline constexpr const char* kEnvAttnDecodeSplitSlices = "LATHE_ATTN_DECODE_SPLIT_SLICES";
inline constexpr const char* kEnvFfnBatch16 = "LATHE_FFN_BATCH16";
inline constexpr const char* kEnvFfnGemvMaxM = "LATHE_FFN_GEMV_MAX_M";

// Resolution of one lever against an optional raw environment spelling. Pure (the environment is
// an argument) so every rule is unit-testable. Returns the lever; when env_raw is present but does
// not parse, the declaration is kept and `note` (if given) receives a one-line explanation.
//
// The split policy's declaration is a spelling too (targets/*.toml): one that does not parse
// resolves to legacy (with a note), the rule the declaration had before it was written down; an
// environment spelling that parses overrides it and is marked from_env.
Lever<SplitkPolicy> resolve_splitk_policy(std::string_view declared, std::optional<std::string_view> env_raw,
                                          std::string* note = nullptr);
Lever<bool> resolve_on_off_lever(const char* env_name, bool declared, std::optional<std::string_view> env_raw,
                                 std::string* note = nullptr);
// The slices declaration is a spelling (targets/*.toml); one that does not parse resolves to 1
// (no slicing, the behaviour before the key existed), with a note.
Lever<SplitSlices> resolve_split_slices_lever(std::string_view declared,
                                              std::optional<std::string_view> env_raw,
                                              std::string* note = nullptr);
Lever<int32_t> resolve_gemv_max_m_lever(int32_t declared, std::optional<std::string_view> env_raw,
                                        std::string* note = nullptr);

// "attn_decode_splitk=auto attn_decode_gqa_pack=off attn_decode_split_slices=auto ffn_batch16=on
// ffn_gemv_max_m=32", with
// " (env)" after each value that came from the environment.
std::string format_levers(const Levers& levers);

}  // namespace lathe::target
