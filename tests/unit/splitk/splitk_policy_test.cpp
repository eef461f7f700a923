// Properties of the split-K policy module (ops/splitk_policy.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "ops/splitk_policy.h"

namespace lathe::ops {
namespace {

const SplitkPolicy kAuto = SplitkPolicy::automatic();
const SplitkPolicy kLegacy = SplitkPolicy::legacy();

// The defect the policy fixes, with the numbers of the H100 receipt: 24 q heads and a reference
// batch of 16 put the old rule at one split for every batch size, so a batch-1 step launched
// 24 CTAs on 132 SMs.
TEST(SplitkPolicy, LegacyRuleStarvesTheH100AtBatchOne) {
  const uint32_t sms = 132, heads = 24, max_batch = 16;
  const uint32_t splits = decode_num_splits(kLegacy, sms, heads, legacy_reference_seqs(1, max_batch));
  EXPECT_EQ(splits, 1u);
  EXPECT_EQ(heads * splits * 1u, 24u);  // grid (heads, splits, sequences) at batch 1
  for (uint32_t batch = 1; batch <= max_batch; ++batch) {
    EXPECT_EQ(decode_num_splits(kLegacy, sms, heads, legacy_reference_seqs(batch, max_batch)), 1u) << batch;
  }
  // The receipt's arithmetic: 9.93 MB of KV in 231.51 us is ~42.9 GB/s, ~1.28% of 3350 GB/s.
  const double gbs = 9.93e6 / 231.51e-6 / 1e9;
  EXPECT_NEAR(gbs, 42.9, 0.05);
  EXPECT_NEAR(100.0 * gbs / 3350.0, 1.28, 0.01);
}

TEST(SplitkPolicy, AutoFillsTwoWavesAtBatchOne) {
  EXPECT_EQ(auto_splits(132, 24), 11u);  // ceil(264 / 24)
  EXPECT_EQ(24u * auto_splits(132, 24), 264u);
  EXPECT_EQ(auto_splits(132, 32), 9u);   // ceil(264 / 32) = 8.25 -> 9
  EXPECT_EQ(auto_splits(132, 64), 5u);   // ceil(264 / 64) = 4.125 -> 5
  EXPECT_EQ(auto_splits(148, 24), 13u);  // the widest declared part stays under the ceiling
  EXPECT_EQ(auto_splits(48, 24), 4u);
  EXPECT_EQ(auto_splits(108, 64), 4u);
  for (uint32_t sms : {1u, 48u, 108u, 132u, 148u, 4096u}) {
    for (uint32_t heads = 1; heads <= 256; ++heads) {
      const uint32_t n = auto_splits(sms, heads);
      ASSERT_GE(n, 1u);
      ASSERT_LE(n, kMaxDecodeSplits);
      // Unclamped, n is the smallest count reaching two waves.
      if (n > 1 && n < kMaxDecodeSplits) {
        EXPECT_GE(heads * n, kSplitkTargetWaves * sms);
        EXPECT_LT(heads * (n - 1), kSplitkTargetWaves * sms);
      }
    }
  }
  // Few heads on a big part clamp to the ceiling; many heads to one split.
  EXPECT_EQ(auto_splits(132, 1), kMaxDecodeSplits);
  EXPECT_EQ(auto_splits(132, 264), 1u);
  EXPECT_EQ(auto_splits(132, 1000), 1u);
  // Zero arguments are treated as one.
  EXPECT_EQ(auto_splits(0, 0), 2u);
}

// The determinism invariant: auto and pinned read configuration only, so a sequence's split
// count (and with it its merge tree and output bytes) is the same alone or beside 63 others.
TEST(SplitkPolicy, AutoAndPinnedDoNotMoveWithTheCoBatchedCount) {
  for (const SplitkPolicy& policy : {kAuto, SplitkPolicy::pinned_to(1), SplitkPolicy::pinned_to(7),
                                     SplitkPolicy::pinned_to(16)}) {
    for (uint32_t heads : {8u, 24u, 32u, 64u}) {
      std::set<uint32_t> seen;
      for (uint32_t max_batch : {1u, 4u, 16u, 64u, 256u}) {
        for (uint32_t batch = 1; batch <= 64; ++batch) {
          seen.insert(decode_num_splits(policy, 132, heads, legacy_reference_seqs(batch, max_batch)));
        }
      }
      EXPECT_EQ(seen.size(), 1u) << target::splitk_policy_label(policy) << " heads " << heads;
    }
  }
}

// The known-bad control: with a small reference batch the legacy count follows the batch.
TEST(SplitkPolicy, LegacyMovesWithTheBatchWhenTheReferenceIsSmall) {
  std::set<uint32_t> seen;
  for (uint32_t batch = 1; batch <= 8; ++batch) seen.insert(decode_num_splits(kLegacy, 132, 8, legacy_reference_seqs(batch, 1)));
  EXPECT_GT(seen.size(), 1u);
  EXPECT_EQ(legacy_splits(132, 8, 1), 16u);
  EXPECT_EQ(legacy_splits(132, 8, 2), 8u);
  EXPECT_EQ(legacy_splits(132, 8, 17), 1u);
  // On a 48-SM part with 24 heads the rule gives 2 splits only at a reference of 1.
  EXPECT_EQ(legacy_splits(48, 24, 1), 2u);
  for (uint32_t ref = 2; ref <= 64; ++ref) EXPECT_EQ(legacy_splits(48, 24, ref), 1u);
  EXPECT_EQ(legacy_reference_seqs(3, 16), 16u);
  EXPECT_EQ(legacy_reference_seqs(20, 16), 20u);
  EXPECT_EQ(legacy_reference_seqs(0, 0), 1u);
}

TEST(SplitkPolicy, PinnedClamps) {
  EXPECT_EQ(decode_num_splits(SplitkPolicy::pinned_to(0), 132, 24, 1), 1u);
  EXPECT_EQ(decode_num_splits(SplitkPolicy::pinned_to(5), 132, 24, 1), 5u);
  EXPECT_EQ(decode_num_splits(SplitkPolicy::pinned_to(99), 132, 24, 1), kMaxDecodeSplits);
  // A hand-built out-of-range pinned value is clamped at use too.
  SplitkPolicy raw{SplitkPolicy::Kind::kPinned, 0};
  EXPECT_EQ(decode_num_splits(raw, 132, 24, 1), 1u);
  raw.pinned = 40;
  EXPECT_EQ(decode_num_splits(raw, 132, 24, 1), kMaxDecodeSplits);
}

// The workspace covers every slot the split kernel can address: record
// ((seq * heads) + head) * splits + split for seq < batch, for every batch up to max_rows.
TEST(SplitkPolicy, WorkspaceCoversEverySlotTheGridAddresses) {
  std::vector<SplitkPolicy> policies = {kAuto, kLegacy};
  for (uint32_t n = 1; n <= kMaxDecodeSplits; ++n) policies.push_back(SplitkPolicy::pinned_to(n));
  for (const SplitkPolicy& policy : policies) {
    for (uint32_t sms : {48u, 108u, 132u, 148u}) {
      for (uint32_t heads : {1u, 4u, 8u, 24u, 32u, 64u}) {
        for (uint32_t max_rows : {1u, 2u, 16u, 64u, 256u}) {
          const uint64_t slots = workspace_slots(policy, sms, heads, max_rows, legacy_reference_seqs(1, max_rows));
          for (uint32_t batch = 1; batch <= max_rows; ++batch) {
            const uint32_t splits = decode_num_splits(policy, sms, heads, legacy_reference_seqs(batch, max_rows));
            if (splits <= 1) continue;  // the non-split arm uses no workspace
            const uint64_t last = (static_cast<uint64_t>(batch - 1) * heads + (heads - 1)) * splits + (splits - 1);
            ASSERT_LT(last, slots) << target::splitk_policy_label(policy) << " sms " << sms << " heads " << heads
                                   << " max_rows " << max_rows << " batch " << batch;
          }
        }
      }
    }
  }
}

TEST(SplitkPolicy, WorkspaceSizing) {
  // auto at 24 heads on 132 SMs: 11 splits, so 16 rows need 16 * 24 * 11 records.
  EXPECT_EQ(workspace_slots(kAuto, 132, 24, 16, 16), 16u * 24u * 11u);
  EXPECT_EQ(workspace_slots(SplitkPolicy::pinned_to(4), 132, 24, 16, 16), 16u * 24u * 4u);
  EXPECT_EQ(workspace_slots(kLegacy, 132, 24, 16, 16), 132u);
  EXPECT_EQ(workspace_record_bytes(128), 130u * 4u);
  EXPECT_EQ(workspace_record_bytes(256), 258u * 4u);
}

// Auto slices fill the geometry's CTA slots once (one CTA per SM for a single-sequence serve, two
// otherwise) where the serve's widest decode batch leaves more than half the SMs idle, counting KV
// heads (packing armed or not); they depend on configuration only (no batch argument); a pinned
// cap clamps and ignores the widest batch; legacy and one split never slice.
TEST(SplitSlices, AutoFillsTheGeometrysSlotsWhereTheWidestBatchLeavesHalfTheSmsIdle) {
  EXPECT_EQ(split_slice_waves(0), 1u);
  EXPECT_EQ(split_slice_waves(1), 1u);
  EXPECT_EQ(split_slice_waves(2), 2u);
  EXPECT_EQ(split_slice_waves(64), 2u);
  EXPECT_EQ(decode_split_slices(0, kAuto, 132, 4, 11, 1), 3u);  // 24/4/256: 44 pairs, one per SM
  EXPECT_EQ(decode_split_slices(0, kAuto, 132, 8, 5, 1), 3u);   // Qwen3-32B-like 64/8/128: 40 pairs
  EXPECT_EQ(decode_split_slices(0, kAuto, 132, 8, 5, 2), 1u);   // 80 pairs cover more than half
  EXPECT_EQ(decode_split_slices(0, kAuto, 132, 8, 9, 1), 1u);   // Qwen3-8B-like: 72 pairs
  EXPECT_EQ(decode_split_slices(0, kAuto, 132, 2, 11, 2), 6u);  // 44 pairs at the widest batch
  EXPECT_EQ(decode_split_slices(0, kAuto, 132, 1, 33, 2), 4u);  // 66 pairs: exactly half
  EXPECT_EQ(decode_split_slices(0, kAuto, 132, 8, 9, 64), 1u);  // a batched serve never slices
  EXPECT_EQ(decode_split_slices(0, kAuto, 132, 32, 9, 1), 1u);  // already two waves
  EXPECT_EQ(decode_split_slices(0, kAuto, 148, 1, 16, 1), kMaxSplitSlices);
  EXPECT_EQ(decode_split_slices(0, SplitkPolicy::pinned_to(4), 132, 8, 4, 1), 4u);
  EXPECT_EQ(decode_split_slices(0, SplitkPolicy::pinned_to(4), 132, 4, 4, 2), 8u);
  EXPECT_EQ(decode_split_slices(0, kAuto, 132, 8, 1, 1), 1u);
  EXPECT_EQ(decode_split_slices(0, kLegacy, 132, 8, 9, 1), 1u);
  EXPECT_EQ(decode_split_slices(3, kAuto, 132, 8, 9, 64), 3u);
  EXPECT_EQ(decode_split_slices(5, kAuto, 132, 32, 9, 1), 5u);
  EXPECT_EQ(decode_split_slices(50, kAuto, 132, 8, 9, 1), kMaxSplitSlices);
  EXPECT_EQ(decode_split_slices(1, kAuto, 132, 8, 9, 1), 1u);
}

// "auto:N" (a negative lever) slices where auto does, never more than N; where auto keeps whole
// splits it does too (a wide serve, 72 pairs, legacy, one split).
TEST(SplitSlices, AutoAtMostNSlicesWhereAutoDoesAndNoMore) {
  EXPECT_EQ(decode_split_slices(-2, kAuto, 132, 4, 11, 1), 2u);  // 24/4/256: auto gives 3
  EXPECT_EQ(decode_split_slices(-2, kAuto, 132, 8, 5, 1), 2u);   // 64/8/128: auto gives 3
  EXPECT_EQ(decode_split_slices(-3, kAuto, 132, 8, 5, 1), 3u);
  EXPECT_EQ(decode_split_slices(-7, kAuto, 132, 8, 5, 1), 3u);   // auto's own count is lower
  EXPECT_EQ(decode_split_slices(-4, kAuto, 132, 2, 11, 2), 4u);  // auto gives 6
  EXPECT_EQ(decode_split_slices(-7, kAuto, 148, 1, 16, 1), 7u);
  EXPECT_EQ(decode_split_slices(-2, kAuto, 132, 8, 9, 1), 1u);  // 72 pairs
  EXPECT_EQ(decode_split_slices(-2, kAuto, 132, 8, 5, 2), 1u);  // 80 pairs
  EXPECT_EQ(decode_split_slices(-2, kAuto, 132, 8, 1, 1), 1u);
  EXPECT_EQ(decode_split_slices(-2, kLegacy, 132, 8, 5, 1), 1u);
  EXPECT_EQ(decode_split_slices(-2, SplitkPolicy::pinned_to(4), 132, 8, 4, 1), 2u);
}

// The split-K kernel geometry is a function of the serve's widest decode batch alone: single (26)
// for one sequence, narrow (16) up to kSplitkNarrowMaxSeqs sequences, wide (25) beyond, and it
// never moves with anything else.
TEST(SplitkKernel, NarrowOnlyForServesThatNeverBatchWide) {
  EXPECT_EQ(kSplitkKernelSingle, 26);
  EXPECT_EQ(kSplitkKernelNarrow, 16);
  EXPECT_EQ(kSplitkKernelWide, 25);
  EXPECT_EQ(decode_splitk_kernel(0), kSplitkKernelSingle);
  EXPECT_EQ(decode_splitk_kernel(1), kSplitkKernelSingle);
  EXPECT_EQ(decode_splitk_kernel(2), kSplitkKernelNarrow);
  EXPECT_EQ(decode_splitk_kernel(kSplitkNarrowMaxSeqs), kSplitkKernelNarrow);
  EXPECT_EQ(decode_splitk_kernel(kSplitkNarrowMaxSeqs + 1), kSplitkKernelWide);
  for (uint32_t seqs : {4u, 16u, 32u, 64u, 256u, 1u << 20}) EXPECT_EQ(decode_splitk_kernel(seqs), kSplitkKernelWide);
}

// The packed kernel's shape gate admits exactly its compiled (group, head_dim) pairs, and tests
// the ratio by multiplication.
TEST(GqaPackGate, AdmitsExactlyTheCompiledShapes) {
  const std::set<int32_t> groups(std::begin(kGqaPackGroups), std::end(kGqaPackGroups));
  const std::set<int32_t> dims(std::begin(kGqaPackHeadDims), std::end(kGqaPackHeadDims));
  EXPECT_EQ(groups, (std::set<int32_t>{2, 4, 6, 8}));
  EXPECT_EQ(dims, (std::set<int32_t>{128, 256}));
  for (int32_t hd : {32, 64, 96, 128, 192, 256, 512}) {
    for (int32_t nkv = 0; nkv <= 16; ++nkv) {
      for (int32_t nq = 0; nq <= 130; ++nq) {
        const bool expected = nkv > 0 && nq % nkv == 0 && groups.count(nq / nkv) && dims.count(hd);
        ASSERT_EQ(gqa_pack_shape_ok(nq, nkv, hd), expected) << nq << "/" << nkv << " hd " << hd;
      }
    }
  }
  EXPECT_TRUE(gqa_pack_shape_ok(24, 4, 256));
  EXPECT_TRUE(gqa_pack_shape_ok(32, 8, 128));
  EXPECT_TRUE(gqa_pack_shape_ok(64, 8, 128));
  EXPECT_FALSE(gqa_pack_shape_ok(25, 4, 256));  // 25 / 4 truncates to 6
  EXPECT_FALSE(gqa_pack_shape_ok(24, 4, 64));
  EXPECT_FALSE(gqa_pack_shape_ok(24, 0, 256));
  EXPECT_FALSE(gqa_pack_shape_ok(8, 8, 128));   // MHA: nothing to pack
  EXPECT_FALSE(gqa_pack_shape_ok(-24, -4, 256));
  EXPECT_EQ(gqa_pack_ctas(4, 16), 64u);
  EXPECT_EQ(gqa_pack_ctas(8, 0), 0u);
}

// Split-K packing: the whole group in one CTA up to one m16 tile (16 heads), wider groups in
// even parts of at most 16; never a part without a head.
TEST(GqaPackGate, SplitKRowsPerCta) {
  EXPECT_EQ(splitk_rows_per_cta(4), 4);    // 32/8: one CTA per (kv head, split, sequence)
  EXPECT_EQ(splitk_rows_per_cta(6), 6);    // 24/4
  EXPECT_EQ(splitk_rows_per_cta(8), 8);    // 64/8
  EXPECT_EQ(splitk_rows_per_cta(1), 1);    // MHA
  EXPECT_EQ(splitk_rows_per_cta(16), 16);  // exactly one m16 tile
  EXPECT_EQ(splitk_rows_per_cta(17), 9);   // two parts of 9 and 8
  EXPECT_EQ(splitk_rows_per_cta(32), 16);  // MQA 32: two full tiles
  EXPECT_EQ(splitk_rows_per_cta(0), 1);    // degenerate input: never 0 rows
  for (int32_t group = 1; group <= 64; ++group) {
    const int32_t rows = splitk_rows_per_cta(group);
    const int32_t parts = (group + rows - 1) / rows;
    ASSERT_GE(rows, 1);
    ASSERT_LE(rows, 16);
    ASSERT_EQ(parts, (group + 15) / 16) << group;  // the fewest m16 tiles that hold the group
    ASSERT_GT(group - (parts - 1) * rows, 0) << group;  // the last part carries a head
  }
}

}  // namespace
}  // namespace lathe::ops
