// Every rung of the attention plan (ops/attention_plan.h).
#include <gtest/gtest.h>

#include "core/error.h"
#include "ops/attention_plan.h"
#include "ops/splitk_policy.h"

namespace lathe::ops {
namespace {

AttentionConfig config_with(SplitkPolicy policy, bool pack, int32_t sms = 132, int32_t max_seqs = 64) {
  AttentionConfig config;
  config.levers.attn_decode_splitk = {policy, false};
  config.levers.attn_decode_gqa_pack = {pack, false};
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
