// One test per rung of the linear dispatch ladder (ops/linear_dispatch.h).
#include "ops/linear_dispatch.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <utility>

namespace lathe::ops {
namespace {

constexpr LinearKernels kAll{true, true, true, true};
const LinearLevers kDefault{};

LinearArm arm(Phase phase, int64_t m, LinearWeightKind kind = LinearWeightKind::kFp8Block128,
              const LinearKernels& avail = kAll, const LinearLevers& levers = kDefault) {
  return choose_linear_arm(phase, m, kind, avail, levers).arm;
}

TEST(LinearDispatch, DecodeSingleRowTakesGemv) {
  EXPECT_EQ(arm(Phase::kDecode, 1), LinearArm::kGemv);
  EXPECT_EQ(arm(Phase::kDecode, 1, LinearWeightKind::kBf16), LinearArm::kGemv);
}

TEST(LinearDispatch, DecodeTwoToFourRowsTakeBatch4) {
  for (int64_t m = 2; m <= 4; ++m) EXPECT_EQ(arm(Phase::kDecode, m), LinearArm::kGemvBatch4) << m;
}

TEST(LinearDispatch, DecodeFiveToSixteenRowsTakeBatch16) {
  for (int64_t m = 5; m <= 16; ++m) EXPECT_EQ(arm(Phase::kDecode, m), LinearArm::kGemvBatch16) << m;
}

TEST(LinearDispatch, DecodeSeventeenToThirtyTwoRowsTakeTwoHalves) {
  for (int64_t m = 17; m <= 32; ++m) {
    const LinearRoute r = choose_linear_arm(Phase::kDecode, m, LinearWeightKind::kFp8Block128, kAll, kDefault);
    EXPECT_EQ(r.arm, LinearArm::kGemvBatch16Halves) << m;
    EXPECT_EQ(r.first_half, (m + 1) / 2) << m;
    EXPECT_LE(r.first_half, 16);
    EXPECT_LE(m - r.first_half, 16);
    EXPECT_GE(r.first_half, m - r.first_half) << "the first half is the wider one";
  }
}

// LATHE_FFN_BATCH32 (on by default): 17..32 rows in one 32-row launch, but only where the
// weight's kernel builds that tier; everything else on the ladder stays where it was.
TEST(LinearDispatch, Batch32LeverTakesOneLaunchWhereTheWeightHasTheTier) {
  LinearLevers on;
  on.batch32 = true;
  LinearLevers off;
  off.batch32 = false;
  LinearKernels with32 = kAll;
  with32.gemv_batch32 = true;
  for (int64_t m = 17; m <= 32; ++m) {
    EXPECT_EQ(arm(Phase::kDecode, m, LinearWeightKind::kFp8Block128, with32, on), LinearArm::kGemvBatch32)
        << m;
    EXPECT_EQ(arm(Phase::kDecode, m, LinearWeightKind::kBf16, with32, on), LinearArm::kGemvBatch32) << m;
    // Lever on, tier not built for this weight: the two halves.
    EXPECT_EQ(arm(Phase::kDecode, m, LinearWeightKind::kFp8Block128, kAll, on), LinearArm::kGemvBatch16Halves)
        << m;
    // Tier built, lever at its default (on): the one launch; turned off: the two halves.
    EXPECT_EQ(arm(Phase::kDecode, m, LinearWeightKind::kFp8Block128, with32, kDefault),
              LinearArm::kGemvBatch32)
        << m;
    EXPECT_EQ(arm(Phase::kDecode, m, LinearWeightKind::kFp8Block128, with32, off),
              LinearArm::kGemvBatch16Halves)
        << m;
    EXPECT_EQ(arm(Phase::kPrefill, m, LinearWeightKind::kFp8Block128, with32, on), LinearArm::kGemmFp8Block)
        << m;
  }
  EXPECT_EQ(arm(Phase::kDecode, 1, LinearWeightKind::kFp8Block128, with32, on), LinearArm::kGemv);
  EXPECT_EQ(arm(Phase::kDecode, 4, LinearWeightKind::kFp8Block128, with32, on), LinearArm::kGemvBatch4);
  EXPECT_EQ(arm(Phase::kDecode, 16, LinearWeightKind::kFp8Block128, with32, on), LinearArm::kGemvBatch16);
  EXPECT_EQ(arm(Phase::kDecode, 33, LinearWeightKind::kFp8Block128, with32, on), LinearArm::kGemmFp8Block);
  // batch16 off turns the whole 5..32 tier off, the 32-row launch with it.
  LinearLevers no16 = on;
  no16.batch16 = false;
  EXPECT_EQ(arm(Phase::kDecode, 24, LinearWeightKind::kFp8Block128, with32, no16), LinearArm::kGemmFp8Block);
  // The GEMV boundary still bounds it.
  LinearLevers max24 = on;
  max24.gemv_max_m = 24;
  EXPECT_EQ(arm(Phase::kDecode, 24, LinearWeightKind::kFp8Block128, with32, max24), LinearArm::kGemvBatch32);
  EXPECT_EQ(arm(Phase::kDecode, 25, LinearWeightKind::kFp8Block128, with32, max24), LinearArm::kGemmFp8Block);
}

TEST(LinearDispatch, DecodeBeyondThirtyTwoTakesGemm) {
  EXPECT_EQ(arm(Phase::kDecode, 33), LinearArm::kGemmFp8Block);
  EXPECT_EQ(arm(Phase::kDecode, 256, LinearWeightKind::kBf16), LinearArm::kGemmBf16);
}

TEST(LinearDispatch, PrefillAlwaysTakesGemmWhateverItsRowCount) {
  // The 25-row tail of a chunked prefill must not take the decode GEMV (the seed's TTFT cliff).
  for (int64_t m : {1, 4, 5, 16, 25, 32, 33, 4096}) {
    EXPECT_EQ(arm(Phase::kPrefill, m), LinearArm::kGemmFp8Block) << m;
    EXPECT_EQ(arm(Phase::kPrefill, m, LinearWeightKind::kBf16), LinearArm::kGemmBf16) << m;
  }
}

TEST(LinearDispatch, Batch16LeverOffSendsFiveToThirtyTwoToGemm) {
  LinearLevers off;
  off.batch16 = false;
  EXPECT_EQ(arm(Phase::kDecode, 1, LinearWeightKind::kFp8Block128, kAll, off), LinearArm::kGemv);
  EXPECT_EQ(arm(Phase::kDecode, 4, LinearWeightKind::kFp8Block128, kAll, off), LinearArm::kGemvBatch4);
  EXPECT_EQ(arm(Phase::kDecode, 5, LinearWeightKind::kFp8Block128, kAll, off), LinearArm::kGemmFp8Block);
  EXPECT_EQ(arm(Phase::kDecode, 17, LinearWeightKind::kFp8Block128, kAll, off), LinearArm::kGemmFp8Block);
}

TEST(LinearDispatch, GemvMaxMLeverMovesTheBoundary) {
  LinearLevers four;
  four.gemv_max_m = 4;
  EXPECT_EQ(arm(Phase::kDecode, 4, LinearWeightKind::kBf16, kAll, four), LinearArm::kGemvBatch4);
  EXPECT_EQ(arm(Phase::kDecode, 5, LinearWeightKind::kBf16, kAll, four), LinearArm::kGemmBf16);
  LinearLevers zero;
  zero.gemv_max_m = 0;
  EXPECT_EQ(arm(Phase::kDecode, 1, LinearWeightKind::kBf16, kAll, zero), LinearArm::kGemmBf16);
  LinearLevers huge;
  huge.gemv_max_m = 1000;  // clamped to 32
  EXPECT_EQ(arm(Phase::kDecode, 33, LinearWeightKind::kBf16, kAll, huge), LinearArm::kGemmBf16);
}

// decode_gemv_widest is the last row count that takes a tier: exactly where the arm family flips.
TEST(LinearDispatch, WidestGemvRowCountIsWhereTheLadderLeavesTheTiers) {
  for (const bool batch16 : {true, false}) {
    for (int max_m = 0; max_m <= 40; ++max_m) {
      LinearLevers levers;
      levers.batch16 = batch16;
      levers.gemv_max_m = max_m;
      const int64_t widest = decode_gemv_widest(levers);
      for (int64_t m = 1; m <= 40; ++m) {
        const bool tier = arm(Phase::kDecode, m, LinearWeightKind::kBf16, kAll, levers) != LinearArm::kGemmBf16;
        EXPECT_EQ(tier, m <= widest) << "batch16 " << batch16 << " gemv_max_m " << max_m << " m " << m;
      }
    }
  }
}

// LATHE_FFN_DECODE_WIDE=gemv: decode rows beyond the tiers run the tiers over chunks of the
// widest tier width instead of the GEMM; prefill and narrow decode are unchanged.
TEST(LinearDispatch, DecodeWideGemvRunsChunksOfTheWidestTier) {
  LinearLevers wide;
  wide.decode_wide_gemv = true;
  for (int64_t m = 1; m <= 32; ++m) EXPECT_EQ(arm(Phase::kDecode, m, LinearWeightKind::kFp8Block128, kAll, wide),
                                              arm(Phase::kDecode, m)) << m;
  for (const int64_t m : {33, 64, 100, 256}) {
    const LinearRoute r = choose_linear_arm(Phase::kDecode, m, LinearWeightKind::kBf16, kAll, wide);
    EXPECT_EQ(r.arm, LinearArm::kGemvChunks) << m;
    EXPECT_EQ(r.chunk_rows, 32) << m;
  }
  EXPECT_EQ(arm(Phase::kPrefill, 64, LinearWeightKind::kBf16, kAll, wide), LinearArm::kGemmBf16);
  wide.gemv_max_m = 12;
  EXPECT_EQ(choose_linear_arm(Phase::kDecode, 13, LinearWeightKind::kBf16, kAll, wide).chunk_rows, 12);
  wide.batch16 = false;  // tiers end at 4 rows
  EXPECT_EQ(choose_linear_arm(Phase::kDecode, 5, LinearWeightKind::kBf16, kAll, wide).chunk_rows, 4);
  const LinearKernels no_gemv{false, true, true, true};
  EXPECT_EQ(arm(Phase::kDecode, 64, LinearWeightKind::kBf16, no_gemv, wide), LinearArm::kGemmBf16);
}

TEST(LinearDispatch, GemmArmFollowsWeightKindAndAvailability) {
  EXPECT_EQ(arm(Phase::kPrefill, 64, LinearWeightKind::kFp8PerChannel), LinearArm::kGemmFp8Channel);
  EXPECT_EQ(arm(Phase::kPrefill, 64, LinearWeightKind::kFp8PerTensor), LinearArm::kGemmFp8Channel);
  LinearKernels no_fp8 = kAll;
  no_fp8.gemm_fp8_block = false;
  no_fp8.gemm_fp8_channel = false;
  EXPECT_EQ(arm(Phase::kPrefill, 64, LinearWeightKind::kFp8Block128, no_fp8), LinearArm::kDequantGemm);
  EXPECT_EQ(arm(Phase::kPrefill, 64, LinearWeightKind::kFp8PerChannel, no_fp8), LinearArm::kDequantGemm);
  EXPECT_EQ(arm(Phase::kPrefill, 64, LinearWeightKind::kOther), LinearArm::kDequantGemm);
}

TEST(LinearDispatch, NoGemvKernelMeansGemmAtDecode) {
  LinearKernels no_gemv = kAll;
  no_gemv.gemv = false;
  EXPECT_EQ(arm(Phase::kDecode, 1, LinearWeightKind::kBf16, no_gemv), LinearArm::kGemmBf16);
  EXPECT_EQ(arm(Phase::kDecode, 1, LinearWeightKind::kOther), LinearArm::kDequantGemm);
}

TEST(LinearDispatch, WeightKindFromDtypeAndScale) {
  EXPECT_EQ(linear_weight_kind(DType::kBF16, ScaleKind::kNone), LinearWeightKind::kBf16);
  EXPECT_EQ(linear_weight_kind(DType::kF8E4M3, ScaleKind::kBlock128), LinearWeightKind::kFp8Block128);
  EXPECT_EQ(linear_weight_kind(DType::kF8E4M3, ScaleKind::kPerChannel), LinearWeightKind::kFp8PerChannel);
  EXPECT_EQ(linear_weight_kind(DType::kF8E4M3, ScaleKind::kPerTensor), LinearWeightKind::kFp8PerTensor);
  EXPECT_EQ(linear_weight_kind(DType::kF8E4M3, ScaleKind::kNone), LinearWeightKind::kOther);
  EXPECT_EQ(linear_weight_kind(DType::kF16, ScaleKind::kNone), LinearWeightKind::kOther);
}

// An on | off (or 1 | 0) lever: `fallback` when unset, each spelling read and reported as from the
// environment in the levers line, anything else warned about and ignored.
void expect_on_off_lever(const char* env, const std::string& label, bool fallback,
                         bool LinearLevers::*field) {
  std::string warnings;
  EXPECT_EQ(linear_levers_from_env(&warnings).*field, fallback) << env;
  EXPECT_NE(describe_levers(linear_levers_from_env()).find(label + "=" + (fallback ? "on" : "off")),
            std::string::npos)
      << env;
  for (const auto& [text, on] : {std::pair{"off", false}, {"0", false}, {"on", true}, {"1", true}}) {
    setenv(env, text, 1);
    const LinearLevers l = linear_levers_from_env(&warnings);
    EXPECT_EQ(l.*field, on) << env << "=" << text;
    EXPECT_NE(describe_levers(l).find(label + "=" + (on ? "on" : "off") + " (env)"), std::string::npos)
        << env;
  }
  EXPECT_TRUE(warnings.empty()) << env;
  for (const char* bad : {"yes", "OFF!", "ON!", ""}) {
    warnings.clear();
    setenv(env, bad, 1);
    EXPECT_EQ(linear_levers_from_env(&warnings).*field, fallback) << env << "=" << bad;
    EXPECT_NE(warnings.find(env), std::string::npos) << env << "=" << bad;
  }
  unsetenv(env);
}

TEST(LinearDispatch, LeversFromEnvironment) {
  setenv("LATHE_FFN_BATCH16", "0", 1);
  setenv("LATHE_FFN_GEMV_MAX_M", "8", 1);
  std::string warnings;
  LinearLevers l = linear_levers_from_env(&warnings);
  EXPECT_FALSE(l.batch16);
  EXPECT_EQ(l.gemv_max_m, 8);
  EXPECT_TRUE(warnings.empty());
  EXPECT_NE(describe_levers(l).find("(env)"), std::string::npos);
  // Unparseable values keep the defaults and say so.
  setenv("LATHE_FFN_BATCH16", "maybe", 1);
  setenv("LATHE_FFN_GEMV_MAX_M", "64", 1);
  l = linear_levers_from_env(&warnings);
  EXPECT_TRUE(l.batch16);
  EXPECT_EQ(l.gemv_max_m, 32);
  EXPECT_NE(warnings.find("LATHE_FFN_BATCH16"), std::string::npos);
  EXPECT_NE(warnings.find("LATHE_FFN_GEMV_MAX_M"), std::string::npos);
  unsetenv("LATHE_FFN_BATCH16");
  unsetenv("LATHE_FFN_GEMV_MAX_M");
  // LATHE_FFN_DECODE_WIDE: gemv arms the chunked tiers, gemm keeps the default, a typo warns.
  warnings.clear();
  setenv("LATHE_FFN_DECODE_WIDE", "gemv", 1);
  l = linear_levers_from_env(&warnings);
  EXPECT_TRUE(l.decode_wide_gemv);
  EXPECT_NE(describe_levers(l).find("ffn_decode_wide=gemv (env)"), std::string::npos);
  setenv("LATHE_FFN_DECODE_WIDE", "gemm", 1);
  EXPECT_FALSE(linear_levers_from_env(&warnings).decode_wide_gemv);
  EXPECT_TRUE(warnings.empty());
  setenv("LATHE_FFN_DECODE_WIDE", "GEMV!", 1);
  EXPECT_FALSE(linear_levers_from_env(&warnings).decode_wide_gemv);
  EXPECT_NE(warnings.find("LATHE_FFN_DECODE_WIDE"), std::string::npos);
  unsetenv("LATHE_FFN_DECODE_WIDE");
  // LATHE_FFN_FUSED_NORM: the widths the fused tiers exist for, anything else warns and keeps 1.
  warnings.clear();
  EXPECT_EQ(linear_levers_from_env(&warnings).fused_norm_rows, 1);
  EXPECT_NE(describe_levers(linear_levers_from_env()).find("ffn_fused_norm=1"), std::string::npos);
  for (const char* ok : {"0", "1", "4"}) {
    setenv("LATHE_FFN_FUSED_NORM", ok, 1);
    l = linear_levers_from_env(&warnings);
    EXPECT_EQ(l.fused_norm_rows, ok[0] - '0');
    EXPECT_NE(describe_levers(l).find(std::string("ffn_fused_norm=") + ok + " (env)"), std::string::npos);
  }
  EXPECT_TRUE(warnings.empty());
  for (const char* bad : {"2", "16", "on", ""}) {
    warnings.clear();
    setenv("LATHE_FFN_FUSED_NORM", bad, 1);
    EXPECT_EQ(linear_levers_from_env(&warnings).fused_norm_rows, 1) << bad;
    EXPECT_NE(warnings.find("LATHE_FFN_FUSED_NORM"), std::string::npos) << bad;
  }
  unsetenv("LATHE_FFN_FUSED_NORM");
  expect_on_off_lever("LATHE_FFN_FUSED_SILU", "ffn_fused_silu", true, &LinearLevers::fused_silu);
  expect_on_off_lever("LATHE_FFN_BATCH32", "ffn_batch32", true, &LinearLevers::batch32);
  // LATHE_QKV_FUSED_ROPE: off or 0..32 (the widest fused step); anything else warns and keeps 4.
  warnings.clear();
  EXPECT_EQ(linear_levers_from_env(&warnings).fused_rope_rows, 4);
  EXPECT_NE(describe_levers(linear_levers_from_env()).find("qkv_fused_rope=4"), std::string::npos);
  for (const auto& [text, rows] : {std::pair{"off", 0}, {"0", 0}, {"1", 1}, {"16", 16}, {"32", 32}}) {
    setenv("LATHE_QKV_FUSED_ROPE", text, 1);
    l = linear_levers_from_env(&warnings);
    EXPECT_EQ(l.fused_rope_rows, rows) << text;
    EXPECT_NE(describe_levers(l).find("qkv_fused_rope=" + std::to_string(rows) + " (env)"),
              std::string::npos);
  }
  EXPECT_TRUE(warnings.empty());
  for (const char* bad : {"on", "33", "-1", "4x", ""}) {
    warnings.clear();
    setenv("LATHE_QKV_FUSED_ROPE", bad, 1);
    EXPECT_EQ(linear_levers_from_env(&warnings).fused_rope_rows, 4) << bad;
    EXPECT_NE(warnings.find("LATHE_QKV_FUSED_ROPE"), std::string::npos) << bad;
  }
  unsetenv("LATHE_QKV_FUSED_ROPE");
  // LATHE_GEMM_PREFILL_PIN_M: an integer in 1..65536; anything else warns and keeps 1024.
  warnings.clear();
  EXPECT_EQ(linear_levers_from_env(&warnings).gemm_prefill_pin_m, 1024);
  EXPECT_NE(describe_levers(linear_levers_from_env()).find("gemm_prefill_pin_m=1024"), std::string::npos);
  for (const auto& [text, rows] : {std::pair{"1", 1}, {"256", 256}, {"65536", 65536}}) {
    setenv("LATHE_GEMM_PREFILL_PIN_M", text, 1);
    l = linear_levers_from_env(&warnings);
    EXPECT_EQ(l.gemm_prefill_pin_m, rows) << text;
    EXPECT_NE(describe_levers(l).find("gemm_prefill_pin_m=" + std::to_string(rows) + " (env)"),
              std::string::npos);
  }
  EXPECT_TRUE(warnings.empty());
  for (const char* bad : {"0", "-4", "65537", "2k", "", "99999999999999999999"}) {
    warnings.clear();
    setenv("LATHE_GEMM_PREFILL_PIN_M", bad, 1);
    EXPECT_EQ(linear_levers_from_env(&warnings).gemm_prefill_pin_m, 1024) << bad;
    EXPECT_NE(warnings.find("LATHE_GEMM_PREFILL_PIN_M"), std::string::npos) << bad;
  }
  unsetenv("LATHE_GEMM_PREFILL_PIN_M");
}

TEST(LinearDispatch, RouteLineNamesPhaseArmAndLevers) {
  const LinearRoute r = choose_linear_arm(Phase::kDecode, 20, LinearWeightKind::kFp8Block128, kAll, kDefault);
  const std::string line = describe_route(Phase::kDecode, 20, LinearWeightKind::kFp8Block128, r, kDefault);
  EXPECT_NE(line.find("decode"), std::string::npos);
  EXPECT_NE(line.find("gemv_batch16 x2 halves"), std::string::npos);
  EXPECT_NE(line.find("ffn_batch16=on"), std::string::npos);
  EXPECT_NE(line.find("ffn_batch32=on"), std::string::npos);
  LinearLevers on;
  on.batch32 = true;
  LinearKernels with32 = kAll;
  with32.gemv_batch32 = true;
  const LinearRoute one = choose_linear_arm(Phase::kDecode, 20, LinearWeightKind::kFp8Block128, with32, on);
  const std::string one_line = describe_route(Phase::kDecode, 20, LinearWeightKind::kFp8Block128, one, on);
  EXPECT_NE(one_line.find("-> gemv_batch32 (one weight pass"), std::string::npos) << one_line;
}

}  // namespace
}  // namespace lathe::ops
