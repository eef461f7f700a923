// Every rung of the attention plan (ops/attention_plan.h).
#include <gtest/gtest.h>

#include "core/error.h"
#include "ops/attention_plan.h"
#include "ops/splitk_policy.h"

namespace lathe::ops {
namespace {

// `slices`: the attn_decode_split_slices lever (0 = auto, 1 = off).
AttentionConfig config_with(SplitkPolicy policy, bool pack, int32_t sms = 132, int32_t max_seqs = 64,
                            int32_t slices = 1) {
  AttentionConfig config;
  config.levers.attn_decode_splitk = {policy, false};
  config.levers.attn_decode_gqa_pack = {pack, false};
  config.levers.attn_decode_split_slices = {slices, false};
  config.sm_count = sms;
  config.max_decode_seqs = max_seqs;
  return config;
}

KvCacheShape cache_for(const AttentionShape& shape, DType dtype = DType::kBF16) {
  KvCacheShape cache;
  cache.num_blocks = 64;
  cache.block_size = 16;
  cache.num_kv_heads = shape.num_kv_heads;
  cache.head_dim = shape.head_dim;
  cache.dtype = dtype;
  return cache;
}

const AttentionShape k8B{32, 8, 128, 0.088f};
const AttentionShape k27B{24, 4, 256, 0.0625f};

TEST(AttentionPlan, PrefillTakesThePrefillArmWhateverTheLevers) {
  for (bool pack : {false, true}) {
    const AttentionPlan plan = plan_attention(Phase::kPrefill, 3, k8B, cache_for(k8B), config_with(SplitkPolicy::automatic(), pack));
    EXPECT_EQ(plan.arm, AttentionArm::kPrefill);
    EXPECT_EQ(plan.workspace_bytes, 0u);
  }
}

TEST(AttentionPlan, AutoTakesSplitKWithAFixedCount) {
  const AttentionConfig config = config_with(SplitkPolicy::automatic(), true);
  for (int32_t seqs = 1; seqs <= 64; ++seqs) {
    const AttentionPlan plan = plan_attention(Phase::kDecode, seqs, k8B, cache_for(k8B), config);
    EXPECT_EQ(plan.arm, AttentionArm::kDecodeSplitK);
    EXPECT_EQ(plan.num_splits, 9);
    EXPECT_EQ(plan.workspace_bytes, static_cast<size_t>(seqs) * 32 * 9 * 130 * 4);
    EXPECT_LE(plan.workspace_bytes, attention_workspace_bytes(k8B, config));
  }
}

TEST(AttentionPlan, OneSplitTakesTheNonSplitArmAndPacksOnlyWhenArmedAndAdmitted) {
  const KvCacheShape cache = cache_for(k27B);
  AttentionPlan plan = plan_attention(Phase::kDecode, 4, k27B, cache, config_with(SplitkPolicy::pinned_to(1), false));
  EXPECT_EQ(plan.arm, AttentionArm::kDecode);
  EXPECT_EQ(plan.num_splits, 1);
  plan = plan_attention(Phase::kDecode, 4, k27B, cache, config_with(SplitkPolicy::pinned_to(1), true));
  EXPECT_EQ(plan.arm, AttentionArm::kDecodeGqaPacked);
  EXPECT_EQ(plan.gqa_group, 6);
  EXPECT_EQ(plan.workspace_bytes, 0u);
  // Split-K packs too (its tensor-core rows are independent): the whole group of 6 in one CTA at
  // every batch width; unarmed, one head per CTA.
  plan = plan_attention(Phase::kDecode, 4, k27B, cache, config_with(SplitkPolicy::pinned_to(2), true));
  EXPECT_EQ(plan.arm, AttentionArm::kDecodeSplitK);
  EXPECT_EQ(plan.gqa_group, 6);
  plan = plan_attention(Phase::kDecode, 1, k27B, cache, config_with(SplitkPolicy::pinned_to(2), true));
  EXPECT_EQ(plan.gqa_group, 6);
  plan = plan_attention(Phase::kDecode, 64, k27B, cache, config_with(SplitkPolicy::pinned_to(2), true));
  EXPECT_EQ(plan.gqa_group, 6);
  plan = plan_attention(Phase::kDecode, 4, k27B, cache, config_with(SplitkPolicy::pinned_to(2), false));
  EXPECT_EQ(plan.gqa_group, 1);
  // Armed, one split, but a shape the gate refuses: head_dim 64 is not compiled packed.
  const AttentionShape small{16, 4, 64, 0.125f};
  plan = plan_attention(Phase::kDecode, 4, small, cache_for(small), config_with(SplitkPolicy::pinned_to(1), true));
  EXPECT_EQ(plan.arm, AttentionArm::kDecode);
}

TEST(AttentionPlan, LegacyFollowsTheReferenceBatch) {
  // Reference batch 1: the count follows the live batch (the known-bad control).
  const AttentionConfig config = config_with(SplitkPolicy::legacy(), false, 132, 1);
  EXPECT_EQ(plan_attention(Phase::kDecode, 1, k8B, cache_for(k8B), config).num_splits, 4);
  EXPECT_EQ(plan_attention(Phase::kDecode, 2, k8B, cache_for(k8B), config).num_splits, 2);
  EXPECT_EQ(plan_attention(Phase::kDecode, 4, k8B, cache_for(k8B), config).arm, AttentionArm::kDecode);
  for (int32_t seqs = 1; seqs <= 8; ++seqs) {
    EXPECT_LE(plan_attention(Phase::kDecode, seqs, k8B, cache_for(k8B), config).workspace_bytes,
              attention_workspace_bytes(k8B, config));
  }
}

TEST(AttentionPlan, WorkspaceIsZeroWhenNoSplitArmCanBeTaken) {
  EXPECT_EQ(attention_workspace_bytes(k8B, config_with(SplitkPolicy::pinned_to(1), false)), 0u);
  EXPECT_EQ(attention_workspace_bytes(k8B, config_with(SplitkPolicy::legacy(), false, 132, 64)), 0u);
  EXPECT_EQ(attention_workspace_bytes(k8B, config_with(SplitkPolicy::automatic(), false, 132, 16)),
            16u * 32u * 9u * 130u * 4u);
}

// Slices multiply the records per split; the count is the policy's (never the batch's), the same
// packed or not, and the workspace covers every slot ((seq * heads + head) * splits + split) *
// slices + slice the grid can address at every batch width the serve admits.
TEST(AttentionPlan, SlicesAreFixedPerServeAndTheWorkspaceCoversThem) {
  struct Case {
    AttentionShape shape;
    int32_t splits, max_seqs, slices;
  };
  // 132 SMs, auto: 4 KV heads x 11 splits -> floor(132 / 44) = 3 for a single-sequence serve (its
  // geometry holds one CTA per SM); 8 x 5 -> 3, then none at two sequences (80 pairs > 66); 8 x 9 =
  // 72 pairs already cover more than half the SMs: none; a pinned cap (8) at any width.
  const AttentionShape k32B{64, 8, 128, 0.088f};
  for (const Case& c : {Case{k8B, 9, 1, 1}, Case{k27B, 11, 1, 3}, Case{k27B, 11, 2, 1}, Case{k32B, 5, 1, 3},
                        Case{k32B, 5, 2, 1}, Case{k8B, 9, 64, 8}}) {
    for (bool pack : {false, true}) {
      const int32_t lever = c.max_seqs == 64 ? 8 : 0;
      const AttentionConfig config = config_with(SplitkPolicy::automatic(), pack, 132, c.max_seqs, lever);
      const size_t available = attention_workspace_bytes(c.shape, config);
      for (int32_t seqs = 1; seqs <= c.max_seqs; ++seqs) {
        const AttentionPlan plan = plan_attention(Phase::kDecode, seqs, c.shape, cache_for(c.shape), config);
        EXPECT_EQ(plan.num_splits, c.splits);
        EXPECT_EQ(plan.split_slices, c.slices) << seqs;
        const uint64_t last =
            ((static_cast<uint64_t>(seqs - 1) * c.shape.num_heads + c.shape.num_heads - 1) * c.splits + c.splits - 1) *
                c.slices + c.slices - 1;
        EXPECT_LT(last * workspace_record_bytes(c.shape.head_dim), plan.workspace_bytes);
        EXPECT_LE(plan.workspace_bytes, available);
      }
    }
  }
  // A pinned cap, off, and legacy (never sliced).
  EXPECT_EQ(plan_attention(Phase::kDecode, 1, k8B, cache_for(k8B), config_with(SplitkPolicy::automatic(), true, 132, 64, 2))
                .split_slices,
            2);
  EXPECT_EQ(plan_attention(Phase::kDecode, 1, k8B, cache_for(k8B), config_with(SplitkPolicy::automatic(), true, 132, 64, 1))
                .split_slices,
            1);
  EXPECT_EQ(plan_attention(Phase::kDecode, 1, k8B, cache_for(k8B), config_with(SplitkPolicy::legacy(), true, 132, 1, 0))
                .split_slices,
            1);
}

// Per-dtype caps ("fp8:2"): a cache of FP8 codes takes its cap, a BF16 one keeps whole splits, and
// the workspace (sized without the dtype) covers the larger at every width.
TEST(AttentionPlan, SliceCapsFollowTheKvDtype) {
  const AttentionShape k32B{64, 8, 128, 0.088f};
  AttentionConfig config = config_with(SplitkPolicy::automatic(), true, 132, 1);
  config.levers.attn_decode_split_slices = {target::SplitSlices(1, 2), false};
  const AttentionPlan fp8 = plan_attention(Phase::kDecode, 1, k32B, cache_for(k32B, DType::kF8E4M3), config);
  const AttentionPlan bf16 = plan_attention(Phase::kDecode, 1, k32B, cache_for(k32B, DType::kBF16), config);
  EXPECT_EQ(fp8.num_splits, 5);
  EXPECT_EQ(fp8.split_slices, 2);
  EXPECT_EQ(bf16.split_slices, 1);
  EXPECT_EQ(fp8.workspace_bytes, 2 * bf16.workspace_bytes);
  EXPECT_LE(fp8.workspace_bytes, attention_workspace_bytes(k32B, config));
  // The other way round too: the BF16 cap larger (auto: 3 for 8 x 5 pairs on one wave).
  config.levers.attn_decode_split_slices = {target::SplitSlices(0, 1), false};
  const size_t available = attention_workspace_bytes(k32B, config);
  const AttentionPlan bf16_auto =
      plan_attention(Phase::kDecode, 1, k32B, cache_for(k32B, DType::kBF16), config);
  EXPECT_EQ(bf16_auto.split_slices, 3);
  EXPECT_EQ(plan_attention(Phase::kDecode, 1, k32B, cache_for(k32B, DType::kF8E4M3), config).split_slices, 1);
  EXPECT_LE(bf16_auto.workspace_bytes, available);
  // "fp8:auto": auto's rule for FP8 caches, so a single-sequence serve slices and a wider one does
  // not, whatever its batch.
  config.levers.attn_decode_split_slices = {target::SplitSlices(1, 0), false};
  EXPECT_EQ(plan_attention(Phase::kDecode, 1, k32B, cache_for(k32B, DType::kF8E4M3), config).split_slices, 3);
  EXPECT_EQ(plan_attention(Phase::kDecode, 1, k32B, cache_for(k32B, DType::kBF16), config).split_slices, 1);
  // "fp8:auto:2" (the h100 declaration): the same serves slice, two slices at most; the workspace
  // it sizes holds them.
  config.levers.attn_decode_split_slices = {target::SplitSlices(1, -2), false};
  const AttentionPlan fp8_at_most_2 =
      plan_attention(Phase::kDecode, 1, k32B, cache_for(k32B, DType::kF8E4M3), config);
  EXPECT_EQ(fp8_at_most_2.split_slices, 2);
  EXPECT_LE(fp8_at_most_2.workspace_bytes, attention_workspace_bytes(k32B, config));
  EXPECT_EQ(plan_attention(Phase::kDecode, 1, k32B, cache_for(k32B, DType::kBF16), config).split_slices, 1);
  EXPECT_EQ(plan_attention(Phase::kDecode, 1, k8B, cache_for(k8B, DType::kF8E4M3), config).split_slices, 1);
  config.max_decode_seqs = 64;
  for (const target::SplitSlices caps : {target::SplitSlices(1, 0), target::SplitSlices(1, -2)}) {
    config.levers.attn_decode_split_slices = {caps, false};
    for (int32_t seqs : {1, 2, 64})
      EXPECT_EQ(
          plan_attention(Phase::kDecode, seqs, k32B, cache_for(k32B, DType::kF8E4M3), config).split_slices,
          1);
  }
}

TEST(AttentionPlan, UnsupportedShapesAreErrorsNamingThem) {
  const AttentionConfig config = config_with(SplitkPolicy::automatic(), false);
  const AttentionShape odd{32, 8, 96, 0.1f};
  try {
    plan_attention(Phase::kDecode, 1, odd, cache_for(odd), config);
    FAIL() << "head_dim 96 accepted";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("head_dim=96"), std::string::npos) << error.what();
  }
  EXPECT_THROW(plan_attention(Phase::kDecode, 1, k8B, cache_for(k8B, DType::kF32), config), Error);
  const AttentionShape ragged{30, 8, 128, 0.1f};
  EXPECT_THROW(plan_attention(Phase::kPrefill, 1, ragged, cache_for(ragged), config), Error);
  EXPECT_NO_THROW(plan_attention(Phase::kDecode, 1, k8B, cache_for(k8B, DType::kF8E4M3), config));
}

}  // namespace
}  // namespace lathe::ops
