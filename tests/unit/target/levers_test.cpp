// Lever grammar and resolution (target/levers.h): trimmed, case-insensitive spellings; an
// unparseable environment value keeps the declaration and says so; values from the environment
// are marked.
#include <gtest/gtest.h>

#include "target/levers.h"

namespace lathe::target {
namespace {

TEST(LeverGrammar, SplitkSpellings) {
  EXPECT_EQ(parse_splitk_policy("legacy"), SplitkPolicy::legacy());
  EXPECT_EQ(parse_splitk_policy("  AUTO \t"), SplitkPolicy::automatic());
  EXPECT_EQ(parse_splitk_policy("Legacy"), SplitkPolicy::legacy());
  for (const char* off : {"0", "off", "OFF", "false", "no", " No "}) {
    EXPECT_EQ(parse_splitk_policy(off), SplitkPolicy::pinned_to(1)) << off;
  }
  EXPECT_EQ(parse_splitk_policy("1"), SplitkPolicy::pinned_to(1));
  EXPECT_EQ(parse_splitk_policy("8"), SplitkPolicy::pinned_to(8));
  EXPECT_EQ(parse_splitk_policy(" 16 "), SplitkPolicy::pinned_to(16));
  // Counts above the ceiling clamp to it; a number that does not fit 32 bits is no count.
  EXPECT_EQ(parse_splitk_policy("17"), SplitkPolicy::pinned_to(16));
  EXPECT_EQ(parse_splitk_policy("4294967295")->pinned, 16u);
  for (const char* bad : {"4294967296", "", "  ", "autoo", "-1", "+4", "1.5", "4x", "x4", "on", "yes", "true", "legacy auto"}) {
    EXPECT_FALSE(parse_splitk_policy(bad).has_value()) << "'" << bad << "'";
  }
}

TEST(LeverGrammar, PinnedConstructorClamps) {
  EXPECT_EQ(SplitkPolicy::pinned_to(0).pinned, 1u);
  EXPECT_EQ(SplitkPolicy::pinned_to(5).pinned, 5u);
  EXPECT_EQ(SplitkPolicy::pinned_to(1000).pinned, kMaxDecodeSplits);
}

TEST(LeverGrammar, LabelRoundTrips) {
  std::vector<SplitkPolicy> all = {SplitkPolicy::legacy(), SplitkPolicy::automatic()};
  for (uint32_t n = 1; n <= kMaxDecodeSplits; ++n) all.push_back(SplitkPolicy::pinned_to(n));
  for (const SplitkPolicy& policy : all) {
    const std::string label = splitk_policy_label(policy);
    std::optional<SplitkPolicy> back = parse_splitk_policy(label);
    ASSERT_TRUE(back.has_value()) << label;
    EXPECT_EQ(*back, policy) << label;
  }
  EXPECT_EQ(splitk_policy_label(SplitkPolicy::legacy()), "legacy");
  EXPECT_EQ(splitk_policy_label(SplitkPolicy::automatic()), "auto");
  EXPECT_EQ(splitk_policy_label(SplitkPolicy::pinned_to(1)), "1");
  EXPECT_EQ(splitk_policy_label(*parse_splitk_policy("off")), "1");
}

TEST(LeverGrammar, OnOff) {
  for (const char* on : {"1", "on", "ON", " true", "yes", "Yes "}) EXPECT_EQ(parse_on_off(on), true) << on;
  for (const char* off : {"0", "off", "false", "NO"}) EXPECT_EQ(parse_on_off(off), false) << off;
  for (const char* bad : {"", "2", "onn", "enable", "y", "-1"}) EXPECT_FALSE(parse_on_off(bad).has_value()) << bad;
}

TEST(LeverGrammar, GemvMaxM) {
  EXPECT_EQ(parse_gemv_max_m("0"), 0);
  EXPECT_EQ(parse_gemv_max_m(" 16 "), 16);
  EXPECT_EQ(parse_gemv_max_m("32"), 32);
  for (const char* bad : {"33", "-1", "", "x", "8.0", "99999999999999999999"}) {
    EXPECT_FALSE(parse_gemv_max_m(bad).has_value()) << bad;
  }
}

TEST(LeverGrammar, GemvEarlyWeights) {
  EXPECT_EQ(parse_gemv_early_weights("off"), -1);
  EXPECT_EQ(parse_gemv_early_weights(" No "), -1);
  EXPECT_EQ(parse_gemv_early_weights("ON"), 0);
  EXPECT_EQ(parse_gemv_early_weights("0"), 0);  // a count: the ring's own steps, not off
  EXPECT_EQ(parse_gemv_early_weights("16"), 16);
  EXPECT_EQ(parse_gemv_early_weights("64"), 64);
  for (const char* bad : {"65", "-1", "", "of", "8.0", "1 6"}) {
    EXPECT_FALSE(parse_gemv_early_weights(bad).has_value()) << bad;
  }
}

TEST(LeverGrammar, SplitkKernelVariant) {
  EXPECT_EQ(parse_splitk_kernel_variant("0"), 0);
  EXPECT_EQ(parse_splitk_kernel_variant(" 5 "), 5);
  EXPECT_EQ(parse_splitk_kernel_variant("30"), kSplitkKernelVariants - 1);
  for (const char* bad : {"31", "-1", "", "five", "5.0", "1 2", "0x5"}) {
    EXPECT_FALSE(parse_splitk_kernel_variant(bad).has_value()) << bad;
  }
}

TEST(LeverGrammar, KvL2Promotion) {
  EXPECT_EQ(parse_kv_l2_promotion("none"), 0);
  EXPECT_EQ(parse_kv_l2_promotion(" OFF "), 0);
  EXPECT_EQ(parse_kv_l2_promotion("0"), 0);
  EXPECT_EQ(parse_kv_l2_promotion("64"), 64);
  EXPECT_EQ(parse_kv_l2_promotion("128"), 128);
  EXPECT_EQ(parse_kv_l2_promotion(" 256"), 256);
  for (const char* bad : {"", "32", "512", "257", "-64", "on", "256B", "1e2"}) {
    EXPECT_FALSE(parse_kv_l2_promotion(bad).has_value()) << bad;
  }
}

TEST(LeverGrammar, AttnCtasPerSm) {
  EXPECT_EQ(parse_attn_ctas_per_sm("auto"), -1);
  EXPECT_EQ(parse_attn_ctas_per_sm(" AUTO "), -1);
  EXPECT_EQ(parse_attn_ctas_per_sm("off"), 0);
  EXPECT_EQ(parse_attn_ctas_per_sm("0"), 0);
  EXPECT_EQ(parse_attn_ctas_per_sm("1"), 1);
  EXPECT_EQ(parse_attn_ctas_per_sm("3"), 3);
  EXPECT_EQ(parse_attn_ctas_per_sm("8"), kMaxAttnCtasPerSm);
  for (const char* bad : {"", "9", "-1", "on", "3.0", "2 3", "autos"}) {
    EXPECT_FALSE(parse_attn_ctas_per_sm(bad).has_value()) << bad;
  }
}

TEST(LeverGrammar, AttnSplitRule) {
  EXPECT_EQ(parse_attn_split_rule("seed"), AttnSplitRule::kSeed);
  EXPECT_EQ(parse_attn_split_rule(" EVEN "), AttnSplitRule::kEven);
  EXPECT_EQ(parse_attn_split_rule("Aligned"), AttnSplitRule::kAligned);
  for (const char* bad : {"", "evn", "equal", "1", "even seed"}) {
    EXPECT_FALSE(parse_attn_split_rule(bad).has_value()) << bad;
  }
}

TEST(LeverGrammar, AttnSplitReduce) {
  EXPECT_EQ(parse_attn_split_reduce(" Auto"), AttnSplitReduce::kAuto);
  EXPECT_EQ(parse_attn_split_reduce("heads"), AttnSplitReduce::kHeads);
  EXPECT_EQ(parse_attn_split_reduce(" Warps "), AttnSplitReduce::kWarps);
  EXPECT_EQ(parse_attn_split_reduce("WARPS"), AttnSplitReduce::kWarps);
  for (const char* bad : {"", "head", "on", "1", "heads warps", "last"}) {
    EXPECT_FALSE(parse_attn_split_reduce(bad).has_value()) << bad;
  }
}

TEST(LeverResolution, SplitkEnvironmentOverridesAndIsMarked) {
  std::string note;
  Lever<SplitkPolicy> lever = resolve_splitk_policy("auto", std::nullopt, &note);
  EXPECT_EQ(lever.value, SplitkPolicy::automatic());
  EXPECT_FALSE(lever.from_env);
  EXPECT_TRUE(note.empty());

  lever = resolve_splitk_policy("auto", "8", &note);
  EXPECT_EQ(lever.value, SplitkPolicy::pinned_to(8));
  EXPECT_TRUE(lever.from_env);

  lever = resolve_splitk_policy("auto", "legacy", &note);
  EXPECT_EQ(lever.value, SplitkPolicy::legacy());
  EXPECT_TRUE(lever.from_env);
}

TEST(LeverResolution, SplitkTypoKeepsTheDeclaration) {
  std::string note;
  Lever<SplitkPolicy> lever = resolve_splitk_policy("4", "atuo", &note);
  EXPECT_EQ(lever.value, SplitkPolicy::pinned_to(4));
  EXPECT_FALSE(lever.from_env);
  EXPECT_NE(note.find("LATHE_ATTN_DECODE_SPLITK"), std::string::npos) << note;
  EXPECT_NE(note.find("atuo"), std::string::npos) << note;
}

TEST(LeverResolution, UnparseableDeclarationFallsToLegacy) {
  std::string note;
  Lever<SplitkPolicy> lever = resolve_splitk_policy("automatic", std::nullopt, &note);
  EXPECT_EQ(lever.value, SplitkPolicy::legacy());
  EXPECT_FALSE(lever.from_env);
  EXPECT_NE(note.find("automatic"), std::string::npos) << note;
  // ... and a parseable environment value still overrides it.
  lever = resolve_splitk_policy("automatic", "auto", &note);
  EXPECT_EQ(lever.value, SplitkPolicy::automatic());
  EXPECT_TRUE(lever.from_env);
}

TEST(LeverResolution, OnOffAndGemv) {
  std::string note;
  EXPECT_FALSE(resolve_on_off_lever(kEnvAttnDecodeGqaPack, false, std::nullopt, &note).value);
  Lever<bool> pack = resolve_on_off_lever(kEnvAttnDecodeGqaPack, false, "on", &note);
  EXPECT_TRUE(pack.value);
  EXPECT_TRUE(pack.from_env);
  // A typo neither arms nor disarms.
  pack = resolve_on_off_lever(kEnvAttnDecodeGqaPack, true, "of", &note);
  EXPECT_TRUE(pack.value);
  EXPECT_FALSE(pack.from_env);
  EXPECT_NE(note.find(kEnvAttnDecodeGqaPack), std::string::npos);
  pack = resolve_on_off_lever(kEnvAttnDecodeGqaPack, false, "1x", &note);
  EXPECT_FALSE(pack.value);

  Lever<int32_t> gemv = resolve_gemv_max_m_lever(32, "16", &note);
  EXPECT_EQ(gemv.value, 16);
  EXPECT_TRUE(gemv.from_env);
  gemv = resolve_gemv_max_m_lever(32, "64", &note);
  EXPECT_EQ(gemv.value, 32);
  EXPECT_FALSE(gemv.from_env);
  EXPECT_NE(note.find(kEnvFfnGemvMaxM), std::string::npos);
}

TEST(LeverGrammar, SplitSlices) {
  EXPECT_EQ(parse_split_slices("auto"), 0);
  EXPECT_EQ(parse_split_slices(" AUTO "), 0);
  for (const char* off : {"0", "off", "False", " no "}) EXPECT_EQ(parse_split_slices(off), 1) << off;
  EXPECT_EQ(parse_split_slices("1"), 1);
  EXPECT_EQ(parse_split_slices("3"), 3);
  EXPECT_EQ(parse_split_slices("99"), kMaxSplitSlices);  // clamped like a pinned split count
  for (const char* bad : {"", "-1", "3x", "many", "99999999999"}) {
    EXPECT_FALSE(parse_split_slices(bad).has_value()) << bad;
  }
  for (int32_t value = 0; value <= kMaxSplitSlices; ++value) {
    EXPECT_EQ(parse_split_slices(split_slices_label(value)), value == 0 ? 0 : value) << value;
  }
  EXPECT_EQ(split_slices_label(0), "auto");
  EXPECT_EQ(split_slices_label(1), "1");
}

TEST(LeverGrammar, SplitSlicesPerKvDtype) {
  // A dtype not named keeps whole splits; a plain count is both dtypes' cap.
  EXPECT_EQ(parse_split_slices("fp8:2"), SplitSlices(1, 2));
  EXPECT_EQ(parse_split_slices(" FP8 : Auto "), SplitSlices(1, 0));
  EXPECT_EQ(parse_split_slices("bf16:3"), SplitSlices(3, 1));
  EXPECT_EQ(parse_split_slices("bf16:auto, fp8:2"), SplitSlices(0, 2));
  EXPECT_EQ(parse_split_slices("fp8:off,bf16:99"), SplitSlices(kMaxSplitSlices, 1));
  EXPECT_EQ(parse_split_slices("3"), SplitSlices(3, 3));
  for (const char* bad :
       {"fp8:", "fp8:x", "f8:2", "fp8:2,fp8:3", "fp8:2,", ",fp8:2", "fp8:2,auto", "fp8=2", "bf16:1:2"}) {
    EXPECT_FALSE(parse_split_slices(bad).has_value()) << bad;
  }
  EXPECT_EQ(split_slices_label(SplitSlices(1, 2)), "fp8:2");
  EXPECT_EQ(split_slices_label(SplitSlices(0, 2)), "bf16:auto,fp8:2");
  EXPECT_EQ(split_slices_label(SplitSlices(4, 1)), "bf16:4");
  EXPECT_EQ(split_slices_label(SplitSlices(2, 2)), "2");
  for (int32_t bf16 = 0; bf16 <= kMaxSplitSlices; ++bf16) {
    for (int32_t fp8 = 0; fp8 <= kMaxSplitSlices; ++fp8) {
      const SplitSlices caps(bf16, fp8);
      EXPECT_EQ(parse_split_slices(split_slices_label(caps)), caps) << split_slices_label(caps);
    }
  }
  EXPECT_EQ(SplitSlices(1, 2).for_kv(true), 2);
  EXPECT_EQ(SplitSlices(1, 2).for_kv(false), 1);
}

// "auto:N": auto's rule with at most N slices, for a part whose slices pay but not as many as fill
// its SMs; 1 is whole splits and kMaxSplitSlices or more is plain auto. It goes alone or per dtype
// and keeps its spelling through the label.
TEST(LeverGrammar, SplitSlicesAutoAtMost) {
  EXPECT_EQ(parse_split_slices("auto:2"), SplitSlices(-2));
  EXPECT_EQ(parse_split_slices(" Auto : 3 "), SplitSlices(-3));
  EXPECT_EQ(parse_split_slices("auto:1"), SplitSlices(1));
  EXPECT_EQ(parse_split_slices("auto:8"), SplitSlices(0));
  EXPECT_EQ(parse_split_slices("auto:99"), SplitSlices(0));
  EXPECT_EQ(parse_split_slices("fp8:auto:2"), SplitSlices(1, -2));
  EXPECT_EQ(parse_split_slices("bf16:auto:3, fp8:auto"), SplitSlices(-3, 0));
  for (const char* bad : {"auto:", "auto:0", "auto:x", "auto:2:3", "auto:-2", "auto:2,fp8:3",
                          "fp8:auto:", "fp8:auto:0", "fp8:2:auto", "max:2"}) {
    EXPECT_FALSE(parse_split_slices(bad).has_value()) << bad;
  }
  EXPECT_EQ(split_slices_label(SplitSlices(-2)), "auto:2");
  EXPECT_EQ(split_slices_label(SplitSlices(1, -2)), "fp8:auto:2");
  EXPECT_EQ(split_slices_label(SplitSlices(-3, 4)), "bf16:auto:3,fp8:4");
  for (int32_t most = 1; most <= kMaxSplitSlices + 1; ++most) {
    const int32_t cap = auto_slices_at_most(most);
    EXPECT_EQ(cap, most == 1 ? 1 : (most >= kMaxSplitSlices ? 0 : -most)) << most;
    EXPECT_EQ(parse_split_slices("auto:" + std::to_string(most)), SplitSlices(cap)) << most;
  }
  for (int32_t bf16 = -(kMaxSplitSlices - 1); bf16 <= kMaxSplitSlices; ++bf16) {
    for (int32_t fp8 = -(kMaxSplitSlices - 1); fp8 <= kMaxSplitSlices; ++fp8) {
      if (bf16 == -1 || fp8 == -1) continue;  // not a cap: auto at most 1 is 1
      const SplitSlices caps(bf16, fp8);
      EXPECT_EQ(parse_split_slices(split_slices_label(caps)), caps) << split_slices_label(caps);
    }
  }
}

TEST(LeverResolution, SplitSlices) {
  std::string note;
  Lever<SplitSlices> slices = resolve_split_slices_lever("auto", std::nullopt, &note);
  EXPECT_EQ(slices.value, 0);
  EXPECT_FALSE(slices.from_env);
  EXPECT_TRUE(note.empty());
  slices = resolve_split_slices_lever("off", "4", &note);
  EXPECT_EQ(slices.value, 4);
  EXPECT_TRUE(slices.from_env);
  // A typo keeps the declaration and says so.
  slices = resolve_split_slices_lever("auto", "al", &note);
  EXPECT_EQ(slices.value, 0);
  EXPECT_FALSE(slices.from_env);
  EXPECT_NE(note.find(kEnvAttnDecodeSplitSlices), std::string::npos);
  // An unparseable declaration does not slice.
  slices = resolve_split_slices_lever("fast", std::nullopt, &note);
  EXPECT_EQ(slices.value, 1);
  EXPECT_NE(note.find("attn_decode_split_slices"), std::string::npos);
  // Per-dtype caps, declared (the h100 declaration) and from the environment.
  slices = resolve_split_slices_lever("fp8:2", std::nullopt, &note);
  EXPECT_EQ(slices.value, SplitSlices(1, 2));
  EXPECT_TRUE(note.empty());
  slices = resolve_split_slices_lever("fp8:2", "off", &note);
  EXPECT_EQ(slices.value, SplitSlices(1, 1));
  EXPECT_TRUE(slices.from_env);
  slices = resolve_split_slices_lever("fp8:2", "fp8:", &note);
  EXPECT_EQ(slices.value, SplitSlices(1, 2));
  EXPECT_FALSE(slices.from_env);
  EXPECT_NE(note.find("keeping the declared fp8:2"), std::string::npos) << note;
}

TEST(LeverFormat, MarksEnvironmentValues) {
  Levers levers;
  levers.attn_decode_splitk = {SplitkPolicy::pinned_to(6), true};
  levers.attn_decode_gqa_pack = {true, false};
  levers.attn_decode_split_slices = {0, false};
  levers.ffn_batch16 = {false, true};
  levers.ffn_gemv_max_m = {24, false};
  EXPECT_EQ(format_levers(levers),
            "attn_decode_splitk=6 (env) attn_decode_gqa_pack=on attn_decode_split_slices=auto ffn_batch16=off (env) "
            "ffn_gemv_max_m=24");
  levers.attn_decode_split_slices = {3, true};
  EXPECT_NE(format_levers(levers).find("attn_decode_split_slices=3 (env)"), std::string::npos);
  levers.attn_decode_split_slices = {SplitSlices(1, 2), false};
  EXPECT_NE(format_levers(levers).find("attn_decode_split_slices=fp8:2 ffn_batch16"), std::string::npos);
}

}  // namespace
}  // namespace lathe::target
