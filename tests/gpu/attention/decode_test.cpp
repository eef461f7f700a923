// Decode arms against the double reference and split-K against non-split (under both split-K
// geometries a serve may take); the packed kernel byte-identical to the non-split one; the packed
// launcher's shape gate; workspace checks.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "attention_fixture.h"
#include "backends/cuda/paged_attention.h"
#include "core/error.h"
#include "ops/cuda/attention_dispatch.h"
#include "ops/splitk_policy.h"
#include "target/levers.h"

namespace lathe::attn_test {
namespace {

using target::SplitkPolicy;
using Step = std::vector<PagedCase::StepSeq>;

// Decode outputs are BF16-rounded f32 results: ~1.1e-3 rms from the final rounding alone.
constexpr double kDecodeTolerance = 3e-3;
// Issue 5: split-K against the non-split arm.
constexpr double kSplitVsNonSplit = 2e-3;

std::vector<SeqSpec> decode_seqs(std::vector<int32_t> lens) {
  std::vector<SeqSpec> seqs;
  for (int32_t len : lens) seqs.push_back({len, 1});
  return seqs;
}

const char* dtype_label(DType dtype) { return dtype == DType::kBF16 ? "bf16" : "fp8"; }

struct Geometry {
  int32_t heads, kv_heads, head_dim;
};

class DecodeArms : public ::testing::TestWithParam<std::tuple<DType, Geometry>> {};

// The tensor-copy geometries with two stages (paged_attention_splitk_variants.cuh): 13 (what the
// narrow serve geometry, 16, runs on wide grids) and 14 (the wide one); 5 and 6 are their cp.async
// twins.
constexpr int kTensorCopyNarrow = 13, kTensorCopyWide = 14;
constexpr int kCpAsyncNarrow = 5, kCpAsyncWide = 6;
// The wide geometry on a persistent grid: 14's bytes (its CTAs share out the launch's units).
constexpr int kPersistentWide = 22;
// The position-row geometries the serves do not take (23: 21's six warps of 32 positions; 24: the
// wide one per split, which 25, the wide serves', runs on the persistent grid), the single-sequence
// serve geometry of sessions 12-36 (21; its wide one was 22), opt-in since, the opt-in 27 (14
// with an FP8 cache at head dim 128 and 8 query heads a CTA, else 25), and the opt-in 28 (25 with
// FP8 KV on the persistent grid too; 24's bytes).
constexpr int kPositionRowsSix = 23, kPositionRowsWide = 24, kFormerSingle = 21,
              kFp8GroupsOfEightHeadRows = 27, kPersistentPositionRowsAnyKv = 28;

// Runs body(variant) under the split-K variant the process started with (the compiled default, or
// LATHE_ATTN_SPLITK_KERNEL), under each geometry a serve may take (ops/splitk_policy.h:
// decode_splitk_kernel), 14, the cp.async twins 5 and 6, the opt-in position-row geometries 23,
// 24 and 28, and the serve geometries of sessions 12-36 (21, 22), then restores the starting variant.
template <typename Body>
void for_each_serve_geometry(Body body) {
  const int saved = cuda::splitk_kernel_variant();
  std::vector<int> variants = {saved};
  for (const int v :
       {ops::kSplitkKernelSingle, ops::kSplitkKernelNarrow, ops::kSplitkKernelWide, kTensorCopyWide,
        kCpAsyncNarrow, kCpAsyncWide, kPositionRowsSix, kPositionRowsWide, kFormerSingle, kPersistentWide,
        kFp8GroupsOfEightHeadRows, kPersistentPositionRowsAnyKv}) {
    if (v != saved) variants.push_back(v);
  }
  for (const int variant : variants) {
    ASSERT_TRUE(cuda::set_splitk_kernel_variant(variant));
    body(variant);
  }
  cuda::set_splitk_kernel_variant(saved);
}

TEST_P(DecodeArms, EveryArmMatchesTheReference) {
  const auto [dtype, geo] = GetParam();
  PagedCase c(geo.heads, geo.kv_heads, geo.head_dim, dtype, decode_seqs({1, 7, 16, 129, 1000, 3001}), 1234);
  const Step step = c.full_step();
  const std::vector<double> ref = c.reference(step);
  struct Arm {
    const char* name;
    ops::AttentionConfig config;
    ops::AttentionArm expected;
  };
  std::vector<Arm> arms = {
      {"non-split", make_config(SplitkPolicy::pinned_to(1), false), ops::AttentionArm::kDecode},
      {"split-K auto", make_config(SplitkPolicy::automatic(), false), ops::AttentionArm::kDecodeSplitK},
      {"split-K 16", make_config(SplitkPolicy::pinned_to(16), false), ops::AttentionArm::kDecodeSplitK},
      {"split-K 3", make_config(SplitkPolicy::pinned_to(3), false), ops::AttentionArm::kDecodeSplitK},
      {"split-K auto packed", make_config(SplitkPolicy::automatic(), true), ops::AttentionArm::kDecodeSplitK},
  };
  if (ops::gqa_pack_shape_ok(geo.heads, geo.kv_heads, geo.head_dim)) {
    arms.push_back({"packed", make_config(SplitkPolicy::pinned_to(1), true), ops::AttentionArm::kDecodeGqaPacked});
  }
  for_each_serve_geometry([&](int variant) {
    for (const Arm& arm : arms) {
      ASSERT_EQ(ops::plan_attention(ops::Phase::kDecode, 6, c.shape(), c.cache_shape(), arm.config).arm, arm.expected);
      const std::vector<uint16_t> out = c.run(ops::Phase::kDecode, step, arm.config);
      ASSERT_FALSE(any_nan(out)) << arm.name << " variant " << variant;
      EXPECT_LE(rel_rms(out, ref), kDecodeTolerance) << arm.name << " variant " << variant;
    }
  });
}

TEST_P(DecodeArms, SplitKAgreesWithNonSplit) {
  const auto [dtype, geo] = GetParam();
  PagedCase c(geo.heads, geo.kv_heads, geo.head_dim, dtype, decode_seqs({4097, 2500, 640, 9000}), 77);
  const Step step = c.full_step();
  const std::vector<uint16_t> whole = c.run(ops::Phase::kDecode, step, make_config(SplitkPolicy::pinned_to(1), false));
  for_each_serve_geometry([&](int variant) {
    for (uint32_t splits : {2u, 5u, 11u, 16u}) {
      const std::vector<uint16_t> split =
          c.run(ops::Phase::kDecode, step, make_config(SplitkPolicy::pinned_to(splits), false));
      ASSERT_FALSE(any_nan(split));
      EXPECT_LE(rel_rms_bf16(split, whole), kSplitVsNonSplit) << splits << " splits, variant " << variant;
    }
  });
}

// Split-K packing changes only which CTA carries a query (tensor-core rows are independent): the
// bytes must not move, whatever rows_per_cta the batch width selects.
TEST_P(DecodeArms, SplitKPackingIsByteNeutral) {
  const auto [dtype, geo] = GetParam();
  PagedCase c(geo.heads, geo.kv_heads, geo.head_dim, dtype, decode_seqs({3001, 200, 1, 4500, 129, 64, 700, 1025}), 606);
  for (const SplitkPolicy& policy : {SplitkPolicy::automatic(), SplitkPolicy::pinned_to(2), SplitkPolicy::pinned_to(16)}) {
    for (int32_t batch : {1, 3, 8}) {
      Step step = c.full_step();
      step.resize(static_cast<size_t>(batch));
      const std::vector<uint16_t> one_head = c.run(ops::Phase::kDecode, step, make_config(policy, false));
      const std::vector<uint16_t> packed = c.run(ops::Phase::kDecode, step, make_config(policy, true));
      ASSERT_FALSE(any_nan(one_head));
      EXPECT_EQ(one_head, packed) << target::splitk_policy_label(policy) << " batch " << batch << " rows/CTA "
                                  << ops::plan_attention(ops::Phase::kDecode, batch, c.shape(), c.cache_shape(),
                                                         make_config(policy, true)).gqa_group;
    }
  }
}

// A legacy-rule plan of `splits` splits (the rule is not clamped to 16) for one sequence of `len`
// positions: the reduce merges every split, agreeing with the non-split arm like any split count,
// and a second launch gives the same bytes.
void expect_legacy_splits_merge(int32_t num_heads, int32_t len, uint64_t seed, int32_t splits) {
  PagedCase c(num_heads, num_heads == 1 ? 1 : 2, 128, DType::kBF16, decode_seqs({len}), seed);
  const ops::AttentionConfig legacy = make_config(SplitkPolicy::legacy(), false, 132, 1);
  const ops::AttentionPlan plan = ops::plan_attention(ops::Phase::kDecode, 1, c.shape(), c.cache_shape(), legacy);
  ASSERT_EQ(plan.num_splits, splits);
  ASSERT_EQ(plan.split_slices, 1);
  const Step step = c.full_step();
  const std::vector<uint16_t> split = c.run(ops::Phase::kDecode, step, legacy);
  ASSERT_FALSE(any_nan(split));
  const std::vector<uint16_t> whole = c.run(ops::Phase::kDecode, step, make_config(SplitkPolicy::pinned_to(1), false));
  EXPECT_LE(rel_rms_bf16(split, whole), kSplitVsNonSplit);
  EXPECT_LE(rel_rms(split, c.reference(step)), kDecodeTolerance);
  EXPECT_EQ(c.run(ops::Phase::kDecode, step, legacy), split);
}

// 4 query heads on 132 SMs at a reference batch of 1: 33 splits (the reduce's sliced path holds
// at most 16 splits; legacy never slices).
TEST(DecodeLegacy, MoreThanSixteenSplitsMerge) {
  expect_legacy_splits_merge(4, 9000, 4343, 33);
}

// One query head: 132 splits, more records than the reduce stages in shared memory (128), so it
// reads their max and sum in place.
TEST(DecodeLegacy, MoreSplitsThanTheReduceStagesMerge) {
  expect_legacy_splits_merge(1, 20000, 4545, 132);
}

// Split slices (attn_decode_split_slices): sliced output against the reference and against the
// unsliced split arm (rel_rms like split vs non-split); each sequence alone gives its row of the
// batch of 8 byte for byte; auto on a single-sequence serve gives the bytes of the count it
// resolves to.
// Bad values stay where they are: a NaN in one element of one sequence's query changes no byte of
// any other sequence's output, nor of the other heads of that sequence, in any decode arm (every
// row of the MMA tiles, the split records and the reduce is per (sequence, head)). What the
// poisoned head itself shows is not asserted: the split reduce reads an all-NaN record as empty.
TEST_P(DecodeArms, ANanQueryTouchesNoOtherSequenceOrHead) {
  const auto [dtype, geo] = GetParam();
  const std::vector<SeqSpec> seqs = decode_seqs({700, 3001, 129, 5000});
  PagedCase clean(geo.heads, geo.kv_heads, geo.head_dim, dtype, seqs, 4321);
  PagedCase dirty(geo.heads, geo.kv_heads, geo.head_dim, dtype, seqs, 4321);
  constexpr int32_t kSeq = 1, kHead = 0;
  dirty.set_query_element(kSeq, kHead, 3, 0x7fc0);  // BF16 quiet NaN
  const int64_t row = clean.row_elems();
  for (const bool pack : {false, true}) {
    for (const SplitkPolicy& policy : {SplitkPolicy::pinned_to(1), SplitkPolicy::automatic(), SplitkPolicy::pinned_to(16)}) {
      const ops::AttentionConfig config = make_config(policy, pack);
      const std::vector<uint16_t> a = clean.run(ops::Phase::kDecode, clean.full_step(), config);
      const std::vector<uint16_t> b = dirty.run(ops::Phase::kDecode, dirty.full_step(), config);
      const std::string label = target::splitk_policy_label(policy) + (pack ? " packed" : "");
      ASSERT_FALSE(any_nan(a)) << label;
      for (int32_t s = 0; s < static_cast<int32_t>(seqs.size()); ++s) {
        for (int32_t h = 0; h < geo.heads; ++h) {
          if (s == kSeq && h == kHead) continue;
          const int64_t at = s * row + static_cast<int64_t>(h) * geo.head_dim;
          EXPECT_TRUE(std::equal(a.begin() + at, a.begin() + at + geo.head_dim, b.begin() + at))
              << label << ": sequence " << s << " head " << h;
        }
      }
    }
  }
}

TEST_P(DecodeArms, SplitKSlicesAgreeAndStayBatchInvariant) {
  const auto [dtype, geo] = GetParam();
  PagedCase c(geo.heads, geo.kv_heads, geo.head_dim, dtype, decode_seqs({20011, 9000, 4099, 640, 1, 12345, 2600, 7}),
              515);
  const Step step = c.full_step();
  const std::vector<double> ref = c.reference(step);
  for (const bool pack : {false, true}) {
    for (const SplitkPolicy& policy : {SplitkPolicy::automatic(), SplitkPolicy::pinned_to(4)}) {
      for (const int32_t slices : {2, 8}) {
        const ops::AttentionConfig sliced = make_config(policy, pack, 132, 64, slices);
        const std::vector<uint16_t> out = c.run(ops::Phase::kDecode, step, sliced);
        ASSERT_FALSE(any_nan(out));
        const std::vector<uint16_t> whole = c.run(ops::Phase::kDecode, step, make_config(policy, pack, 132, 64, 1));
        const std::string label = target::splitk_policy_label(policy) + (pack ? " packed" : "") + " slices " +
                                  std::to_string(slices);
        EXPECT_LE(rel_rms(out, ref), kDecodeTolerance) << label;
        EXPECT_LE(rel_rms_bf16(out, whole), kSplitVsNonSplit) << label;
        if (slices != 8) continue;
        const size_t row = static_cast<size_t>(c.row_elems());
        for (size_t s = 0; s < step.size(); ++s) {
          const std::vector<uint16_t> alone = c.run(ops::Phase::kDecode, Step{step[s]}, sliced);
          EXPECT_TRUE(std::equal(alone.begin(), alone.begin() + static_cast<std::ptrdiff_t>(row),
                                 out.begin() + static_cast<std::ptrdiff_t>(s * row)))
              << label << " sequence " << s;
        }
      }
      const ops::AttentionConfig single = make_config(policy, pack, 132, 1, 0);
      const int32_t resolved =
          ops::plan_attention(ops::Phase::kDecode, 1, c.shape(), c.cache_shape(), single).split_slices;
      for (const size_t s : {size_t{0}, size_t{5}}) {
        EXPECT_EQ(c.run(ops::Phase::kDecode, Step{step[s]}, single),
                  c.run(ops::Phase::kDecode, Step{step[s]}, make_config(policy, pack, 132, 64, resolved)))
            << target::splitk_policy_label(policy) << (pack ? " packed" : "") << " auto -> " << resolved;
      }
    }
  }
}

// The 4-stage, one-CTA-per-SM geometry (variant 10), the width-dependent choice between it and
// variant 5 (variant 11), and variant 5 with CTAs looping over a split's slices (variant 12, taken
// when one CTA per slice would exceed two CTAs per SM) only change when bytes arrive: their outputs
// must equal variant 5's (make_config slices the splits). Likewise the tensor-copy 15 and 16
// against 13, 17 and the persistent grid (22) against 14, and the persistent grid with positions as
// the MMA rows (25, the wide serves', and 28, the same with FP8 KV too) against 24. The persistent
// grid runs only unsliced launches of at most 8 splits a sequence past one wave
// (backends/cuda/wave_fill.h, persistent_grid_pays), and make_config slices by default, so
// pinned 4 with whole splits is here for it: unpacked at batch 8, 32/8/128 and 32/2/128 give it
// 1024 units.
TEST_P(DecodeArms, SplitKPipelineDepthIsByteNeutral) {
  const auto [dtype, geo] = GetParam();
  PagedCase c(geo.heads, geo.kv_heads, geo.head_dim, dtype, decode_seqs({3001, 200, 1, 4500, 129, 64, 700, 1025}), 909);
  const int saved = cuda::splitk_kernel_variant();
  for (const bool pack : {false, true}) {
    for (const auto& [policy, slices] :
         {std::pair{SplitkPolicy::automatic(), 4}, std::pair{SplitkPolicy::pinned_to(16), 4},
          std::pair{SplitkPolicy::pinned_to(4), 1}}) {
      for (int32_t batch : {1, 3, 8}) {
        Step step = c.full_step();
        step.resize(static_cast<size_t>(batch));
        for (const auto& [base, deeper] :
             {std::pair{5, std::vector<int>{10, 11, 12}},
              std::pair{kTensorCopyNarrow, std::vector<int>{15, 16}},
              std::pair{kTensorCopyWide, std::vector<int>{17, kPersistentWide}},
              std::pair{kPositionRowsWide,
                        std::vector<int>{ops::kSplitkKernelWide, kPersistentPositionRowsAnyKv}}}) {
          ASSERT_TRUE(cuda::set_splitk_kernel_variant(base));
          const std::vector<uint16_t> two_stages =
              c.run(ops::Phase::kDecode, step, make_config(policy, pack, 132, 64, slices));
          ASSERT_FALSE(any_nan(two_stages));
          for (const int variant : deeper) {
            ASSERT_TRUE(cuda::set_splitk_kernel_variant(variant));
            EXPECT_EQ(c.run(ops::Phase::kDecode, step, make_config(policy, pack, 132, 64, slices)),
                      two_stages)
                << "variant " << variant << " against " << base << " " << target::splitk_policy_label(policy)
                << " slices " << slices << (pack ? " packed" : "") << " batch " << batch;
          }
        }
      }
    }
  }
  cuda::set_splitk_kernel_variant(saved);
}

// How many CTAs an SM may hold (cuda::set_splitk_ctas_per_sm: a cap through a padded shared
// memory request, or the wave-fill choice per launch) changes where and beside whom a CTA runs,
// never its bytes: the outputs under every cap and `auto` equal those with as many as fit, for the
// wide serves' geometries (position rows, head rows, and their cp.async twin) per split and on the
// persistent grid (22, 25: BF16 at head dim 128; elsewhere they launch 14 and 24; 28: either KV
// dtype at head dim 128), whose CTA count follows the cap; under `auto` and under pinned 4 with
// whole splits (the persistent grid runs only unsliced launches of at most 8 splits a sequence,
// persistent_grid_pays: 1024 units on 32/8/128 and 32/2/128 unpacked).
TEST_P(DecodeArms, CtasPerSmCapIsByteNeutral) {
  const auto [dtype, geo] = GetParam();
  PagedCase c(geo.heads, geo.kv_heads, geo.head_dim, dtype,
              decode_seqs({3001, 200, 1, 4500, 129, 64, 700, 1025}), 4242);
  const int saved = cuda::splitk_kernel_variant();
  const int saved_cap = cuda::splitk_ctas_per_sm();
  const Step step = c.full_step();
  struct Config {
    bool pack;
    SplitkPolicy policy;
    int32_t slices;
  };
  for (const auto& [pack, policy, slices] :
       {Config{false, SplitkPolicy::automatic(), 4}, Config{true, SplitkPolicy::automatic(), 4},
        Config{false, SplitkPolicy::pinned_to(4), 1}}) {
    const ops::AttentionConfig config = make_config(policy, pack, 132, 64, slices);
    for (const int variant : {kPositionRowsWide, kTensorCopyWide, kCpAsyncWide, kPersistentWide,
                              ops::kSplitkKernelWide, kPersistentPositionRowsAnyKv}) {
      ASSERT_TRUE(cuda::set_splitk_kernel_variant(variant));
      ASSERT_TRUE(cuda::set_splitk_ctas_per_sm(cuda::kSplitkCtasPerSmOff));
      const std::vector<uint16_t> expected = c.run(ops::Phase::kDecode, step, config);
      ASSERT_FALSE(any_nan(expected));
      for (const int cap : {1, 2, 3, cuda::kSplitkCtasPerSmAuto}) {
        ASSERT_TRUE(cuda::set_splitk_ctas_per_sm(cap));
        EXPECT_EQ(c.run(ops::Phase::kDecode, step, config), expected)
            << "variant " << variant << " cap " << cap << (pack ? " packed " : " ")
            << target::splitk_policy_label(policy) << " slices " << slices;
      }
    }
  }
  EXPECT_FALSE(cuda::set_splitk_ctas_per_sm(cuda::kSplitkMaxCtasPerSm + 1));
  EXPECT_FALSE(cuda::set_splitk_ctas_per_sm(cuda::kSplitkCtasPerSmAuto - 1));
  cuda::set_splitk_ctas_per_sm(saved_cap);
  cuda::set_splitk_kernel_variant(saved);
}

// The opt-in 27 runs the head-row 14 with an FP8 cache at head dim 128 and 8 query heads a CTA
// (packed 64/8/128), else the wide serves' 25 (24's bytes): its output bytes are those of the
// geometry it picks, for both cache dtypes, packed or not, on the shape where it switches and on
// one where it does not (32/8/128: 4 query heads a CTA).
TEST(DecodeWideServe, Variant27RunsTheHeadRowGeometryForFp8GroupsOfEight) {
  const int saved = cuda::splitk_kernel_variant();
  for (const Geometry geo : {Geometry{64, 8, 128}, Geometry{32, 8, 128}}) {
    for (const DType dtype : {DType::kBF16, DType::kF8E4M3}) {
      PagedCase c(geo.heads, geo.kv_heads, geo.head_dim, dtype, decode_seqs({3001, 200, 1, 4500, 129, 700}),
                  5454);
      const Step step = c.full_step();
      for (const bool pack : {false, true}) {
        const ops::AttentionConfig config = make_config(SplitkPolicy::automatic(), pack);
        const bool head_rows = dtype == DType::kF8E4M3 && pack && geo.heads == 8 * geo.kv_heads;
        ASSERT_TRUE(cuda::set_splitk_kernel_variant(head_rows ? kTensorCopyWide : kPositionRowsWide));
        const std::vector<uint16_t> expected = c.run(ops::Phase::kDecode, step, config);
        ASSERT_FALSE(any_nan(expected));
        ASSERT_TRUE(cuda::set_splitk_kernel_variant(kFp8GroupsOfEightHeadRows));
        EXPECT_EQ(c.run(ops::Phase::kDecode, step, config), expected)
            << geo.heads << "/" << geo.kv_heads << "/" << geo.head_dim << " " << dtype_label(dtype)
            << (pack ? " packed" : "") << ": expected the bytes of " << (head_rows ? "14" : "24");
      }
    }
  }
  cuda::set_splitk_kernel_variant(saved);
}

// Slots past a sequence's end in its last block hold whatever an earlier sequence left there (here:
// NaN in K and V). No decode arm may let them through: the output must not change by a byte. (The
// cp.async geometries never read them; the tensor-copy ones read whole blocks and zero those V rows.)
TEST_P(DecodeArms, SlotsPastTheEndAreNeverSeen) {
  const auto [dtype, geo] = GetParam();
  const std::vector<SeqSpec> seqs = decode_seqs({1, 7, 129, 1000, 3001, 4500});
  PagedCase clean(geo.heads, geo.kv_heads, geo.head_dim, dtype, seqs, 2718);
  PagedCase dirty(geo.heads, geo.kv_heads, geo.head_dim, dtype, seqs, 2718);
  dirty.poison_slots_past_the_end();
  for_each_serve_geometry([&](int variant) {
    for (const bool pack : {false, true}) {
      for (const SplitkPolicy& policy :
           {SplitkPolicy::pinned_to(1), SplitkPolicy::automatic(), SplitkPolicy::pinned_to(16)}) {
        const ops::AttentionConfig config = make_config(policy, pack);
        const std::vector<uint16_t> a = clean.run(ops::Phase::kDecode, clean.full_step(), config);
        const std::vector<uint16_t> b = dirty.run(ops::Phase::kDecode, dirty.full_step(), config);
        const std::string label =
            target::splitk_policy_label(policy) + (pack ? " packed" : "") + " variant " + std::to_string(variant);
        ASSERT_FALSE(any_nan(a)) << label;
        EXPECT_EQ(a, b) << label;
      }
    }
  });
}

// Copying the first K/V tiles before the chained-launch wait (splitk_early_kv) changes when bytes
// arrive, not which: outputs equal those with the copies after the wait, for variants 5, 6, 10, 13
// and 14.
TEST_P(DecodeArms, SplitKEarlyKvIsByteNeutral) {
  const auto [dtype, geo] = GetParam();
  PagedCase c(geo.heads, geo.kv_heads, geo.head_dim, dtype, decode_seqs({3001, 200, 1, 4500, 129, 64, 700, 1025}), 808);
  const int saved_variant = cuda::splitk_kernel_variant();
  const bool saved_early = cuda::splitk_early_kv();
  for (const int variant : {5, 6, 10, kTensorCopyNarrow, kTensorCopyWide}) {
    ASSERT_TRUE(cuda::set_splitk_kernel_variant(variant));
    for (const SplitkPolicy& policy : {SplitkPolicy::automatic(), SplitkPolicy::pinned_to(16)}) {
      for (int32_t batch : {1, 8}) {
        Step step = c.full_step();
        step.resize(static_cast<size_t>(batch));
        cuda::set_splitk_early_kv(false);
        const std::vector<uint16_t> after_wait = c.run(ops::Phase::kDecode, step, make_config(policy, true));
        cuda::set_splitk_early_kv(true);
        ASSERT_FALSE(any_nan(after_wait));
        EXPECT_EQ(c.run(ops::Phase::kDecode, step, make_config(policy, true)), after_wait)
            << "variant " << variant << " " << target::splitk_policy_label(policy) << " batch " << batch;
      }
    }
  }
  cuda::set_splitk_kernel_variant(saved_variant);
  cuda::set_splitk_early_kv(saved_early);
}

// How the split records are merged (cuda::set_splitk_reduce_mode) never changes a byte: the reduce by
// warps (a warp per head merging in registers) does the per-head CTA reduce's arithmetic in its
// order, and auto (the default) takes either by the batch. For the three serve geometries, the wide one on
// the persistent grid (22, 25's head-row twin; 28, position rows with either KV dtype) and a cluster variant
// (8), packed or not, at batch 1 and 8, unsliced (auto, pinned 16 and 3 splits; pinned 4, which gives the
// persistent grid 1024 units on 32/8/128 and 32/2/128 unpacked at batch 8) and sliced (where the per-head
// CTAs run under either setting).
TEST_P(DecodeArms, SplitReduceIsByteNeutral) {
  const auto [dtype, geo] = GetParam();
  PagedCase c(geo.heads, geo.kv_heads, geo.head_dim, dtype, decode_seqs({3001, 200, 1, 4500, 129, 64, 700, 1025}), 6565);
  const int saved_variant = cuda::splitk_kernel_variant();
  const cuda::SplitReduce saved_reduce = cuda::splitk_reduce_mode();
  constexpr int kClusterOfFour = 8;
  for (const int variant : {ops::kSplitkKernelSingle, ops::kSplitkKernelNarrow, ops::kSplitkKernelWide,
                            kPersistentWide, kPersistentPositionRowsAnyKv, kClusterOfFour}) {
    ASSERT_TRUE(cuda::set_splitk_kernel_variant(variant));
    for (const auto& [policy, slices] :
         {std::pair{SplitkPolicy::automatic(), 1}, std::pair{SplitkPolicy::pinned_to(16), 1},
          std::pair{SplitkPolicy::pinned_to(3), 1}, std::pair{SplitkPolicy::pinned_to(4), 1},
          std::pair{SplitkPolicy::automatic(), 4}}) {
      for (const bool pack : {false, true}) {
        for (int32_t batch : {1, 8}) {
          Step step = c.full_step();
          step.resize(static_cast<size_t>(batch));
          const ops::AttentionConfig config = make_config(policy, pack, 132, 64, slices);
          cuda::set_splitk_reduce_mode(cuda::SplitReduce::kHeadCtas);
          const std::vector<uint16_t> by_heads = c.run(ops::Phase::kDecode, step, config);
          ASSERT_FALSE(any_nan(by_heads));
          for (const cuda::SplitReduce reduce : {cuda::SplitReduce::kWarps, cuda::SplitReduce::kAuto}) {
            cuda::set_splitk_reduce_mode(reduce);
            EXPECT_EQ(c.run(ops::Phase::kDecode, step, config), by_heads)
                << cuda::split_reduce_name(reduce) << " variant " << variant << " "
                << target::splitk_policy_label(policy) << " slices " << slices << (pack ? " packed" : "")
                << " batch " << batch;
          }
        }
      }
    }
  }
  cuda::set_splitk_reduce_mode(saved_reduce);
  cuda::set_splitk_kernel_variant(saved_variant);
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, DecodeArms,
    ::testing::Combine(::testing::Values(DType::kBF16, DType::kF8E4M3),
                       ::testing::Values(Geometry{32, 8, 128}, Geometry{24, 4, 256}, Geometry{16, 2, 64},
                                         Geometry{8, 8, 128}, Geometry{16, 4, 256}, Geometry{32, 2, 128})),
    [](const auto& param_info) {
      const Geometry g = std::get<1>(param_info.param);
      return std::string(dtype_label(std::get<0>(param_info.param))) + "_nq" + std::to_string(g.heads) + "_nkv" +
             std::to_string(g.kv_heads) + "_hd" + std::to_string(g.head_dim);
    });

// The packed kernel does each query's arithmetic exactly as the non-split kernel does: the
// outputs must be equal byte for byte, for every compiled (group, head_dim) and both KV dtypes.
TEST(GqaPacked, ByteIdenticalToTheNonSplitKernel) {
  for (DType dtype : {DType::kBF16, DType::kF8E4M3}) {
    for (int32_t group : ops::kGqaPackGroups) {
      for (int32_t hd : ops::kGqaPackHeadDims) {
        const int32_t kv_heads = 2;
        PagedCase c(kv_heads * group, kv_heads, hd, dtype, decode_seqs({1, 63, 64, 65, 700, 2049, 5003}),
                    1000 + group * 7 + hd);
        const Step step = c.full_step();
        const std::vector<uint16_t> plain = c.run(ops::Phase::kDecode, step, make_config(SplitkPolicy::pinned_to(1), false));
        const std::vector<uint16_t> packed = c.run(ops::Phase::kDecode, step, make_config(SplitkPolicy::pinned_to(1), true));
        ASSERT_FALSE(any_nan(plain));
        EXPECT_EQ(plain, packed) << dtype_label(dtype) << " group " << group << " hd " << hd;
        EXPECT_LE(rel_rms(packed, c.reference(step)), kDecodeTolerance);
      }
    }
  }
}

// The packed launcher itself refuses every shape the gate refuses, and the gate's compiled list
// matches the launcher's.
TEST(GqaPacked, LauncherAgreesWithTheGate) {
  for (int32_t group = 1; group <= 16; ++group) {
    for (int32_t hd : {64, 96, 128, 192, 256, 512}) {
      EXPECT_EQ(cuda::gqa_packed_compiled(group, hd), ops::gqa_pack_shape_ok(4 * group, 4, hd)) << group << " " << hd;
    }
  }
  PagedCase c(25, 4, 256, DType::kBF16, decode_seqs({10}), 5);  // 25 / 4 truncates to 6
  cuda::AttentionRows rows;
  rows.q = c.q_device();
  rows.num_heads = 25;
  rows.num_seqs = 1;
  cuda::PagedKv kv;
  kv.num_kv_heads = 4;
  kv.head_dim = 256;
  EXPECT_EQ(cuda::launch_paged_decode_gqa_packed(rows, kv, nullptr), cudaErrorInvalidValue);
  rows.num_heads = 24;
  kv.head_dim = 64;
  EXPECT_EQ(cuda::launch_paged_decode_gqa_packed(rows, kv, nullptr), cudaErrorInvalidValue);
}

TEST(DecodeDispatch, RefusesAShortWorkspace) {
  PagedCase c(32, 8, 128, DType::kBF16, decode_seqs({100, 200}), 9);
  const ops::DeviceBatch batch = c.upload_step(ops::Phase::kDecode, c.full_step());
  const ops::AttentionConfig config = make_config(SplitkPolicy::automatic(), false);
  const int64_t cols = c.row_elems();
  const ops::Act q{c.q_device(), DType::kBF16, 2, cols, cols};
  const ops::Act out{c.out_device(), DType::kBF16, 2, cols, cols};
  const size_t need = ops::plan_attention(ops::Phase::kDecode, 2, c.shape(), c.cache_shape(), config).workspace_bytes;
  DeviceBuffer small(need - 4);
  EXPECT_THROW(ops::cuda::attention_forward(batch, q, c.shape(), c.cache_shape(), c.layer(), out, small.get(), need - 4,
                                            config, nullptr),
               Error);
  const ops::Act wrong{c.q_device(), DType::kF32, 2, cols, cols};
  DeviceBuffer enough(need);
  EXPECT_THROW(ops::cuda::attention_forward(batch, wrong, c.shape(), c.cache_shape(), c.layer(), out, enough.get(), need,
                                            config, nullptr),
               Error);
}

}  // namespace
}  // namespace lathe::attn_test
