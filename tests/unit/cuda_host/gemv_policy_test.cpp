// The decode GEMV's host-side policy (backends/cuda/gemv_policy.cpp, gemv.h), no GPU needed: the
// K segmentation of both kernels is a pure function of the shape that covers every unit exactly
// once; the default's per-shape choice (gemv_auto_variant) is a pure function of the shape, with
// its measured expectations; variant names round-trip and bad names throw. (Moved out of
// gpu_cuda_gemv_test in session 15 so that CI, which has no GPU, runs them.)
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "backends/cuda/gemv.h"
#include "core/error.h"

namespace lathe {
namespace {

TEST(GemvPolicy, SplitDependsOnlyOnShape) {
  EXPECT_EQ(cuda::gemv_ksplit(151936, 4096), 1);
  EXPECT_GT(cuda::gemv_ksplit(4096, 12288), 1);
  EXPECT_GT(cuda::gemv_ksplit(384, 1024), 1);
  EXPECT_EQ(cuda::gemv_ksplit(17000, 256), 1);
  for (int64_t n : {200, 384, 1024, 4096, 5120}) {
    for (int64_t k : {256, 1024, 4096, 12288, 17408, 25600}) {
      const int split = cuda::gemv_ksplit(n, k), chunk = cuda::gemv_chunk_steps(n, k);
      EXPECT_GE(split * chunk, k / 128);
      EXPECT_LT((split - 1) * chunk, k / 128) << "every split non-empty";
      EXPECT_LE(static_cast<size_t>(split) * 16 * n, split > 1 ? cuda::kGemvWorkspaceFloats : SIZE_MAX);
      EXPECT_LE(static_cast<size_t>(split) * 16 * ((n + 127) / 128 * 128),
                split > 1 ? cuda::kGemvSplitSlots : SIZE_MAX);
    }
  }
}

TEST(GemvPolicy, StreamSegmentsDependOnlyOnShape) {
  // Every unit (128-row block x 128-k step) is covered by exactly one CTA range of
  // gemv_stream_cta_steps units; ranges never exceed 132 CTAs (the workspace's counters/slots).
  for (int64_t n : {1, 200, 1024, 4096, 5120, 24576, 151936, 248320}) {
    for (int64_t k : {128, 256, 640, 4096, 5120, 12288, 25600}) {
      const int64_t per = cuda::gemv_stream_cta_steps(n, k);
      const int64_t total = ((n + 127) / 128) * (k / 128);
      const int64_t ctas = (total + per - 1) / per;
      EXPECT_GE(per, 1);
      EXPECT_LE(ctas, 132) << n << "x" << k;
      EXPECT_GE(ctas * per, total);
      EXPECT_LT((ctas - 1) * per, total) << "every CTA non-empty";
      EXPECT_EQ(per, cuda::gemv_stream_cta_steps(n, k));
    }
  }
  EXPECT_LE(size_t{264} * 2 * 128 * 16, cuda::kGemvWorkspaceFloats);
  EXPECT_LE(264, cuda::kGemvCounterCount);
  // The balanced ring at three CTAs per SM (396), its 32-row tier's slots of 32 columns.
  EXPECT_LE(size_t{396} * 2 * 128 * 32, cuda::kGemvPartialFloats);
  EXPECT_LE(396, cuda::kGemvCounterCount);
}

TEST(GemvPolicy, RingSplitIsClampedAndCoversEveryStep) {
  // A forced K split (GemvVariant::ksplit) is clamped to chunks of >= 2 steps and to the
  // workspace, every split is non-empty, and 0 keeps gemv_ksplit's rule.
  for (int64_t n : {200, 1024, 4096, 6144, 24576, 51200, 151936}) {
    for (int64_t k : {256, 1024, 4096, 5120, 12288, 25600}) {
      EXPECT_EQ(cuda::gemv_ring_ksplit(n, k, 0), cuda::gemv_ksplit(n, k));
      EXPECT_EQ(cuda::gemv_ring_chunk_steps(n, k, 0), cuda::gemv_chunk_steps(n, k));
      const int64_t ksteps = k / 128;
      for (int want : {1, 2, 3, 4, 6, 8, 16, 64}) {
        const int split = cuda::gemv_ring_ksplit(n, k, want), chunk = cuda::gemv_ring_chunk_steps(n, k, want);
        EXPECT_GE(split, 1);
        EXPECT_LE(split, want);
        EXPECT_GE(chunk, 2) << n << "x" << k << " want " << want;
        EXPECT_GE(split * chunk, ksteps);
        EXPECT_LT((split - 1) * chunk, ksteps) << "every split non-empty";
        if (split > 1) {
          EXPECT_LE(static_cast<size_t>(split) * 16 * n, cuda::kGemvWorkspaceFloats);
          EXPECT_LE(static_cast<size_t>(split) * 32 * n, cuda::kGemvPartialFloats)
              << "the 32-row tier's partials fit under the split every tier takes";
          EXPECT_LE(static_cast<size_t>(split) * 16 * ((n + 127) / 128 * 128), cuda::kGemvSplitSlots)
              << "the ring's split slots cover whole 128-row blocks";
          EXPECT_LE((n + 127) / 128, cuda::kGemvCounterCount);
        }
      }
    }
  }
  EXPECT_EQ(cuda::gemv_ring_ksplit(4096, 4096, 8), 8);
  EXPECT_EQ(cuda::gemv_ring_chunk_steps(4096, 4096, 8), 4);
  EXPECT_EQ(cuda::gemv_ring_ksplit(151936, 4096, 4), 1) << "more row blocks than counters";
}

TEST(GemvPolicy, OddRowCountsAreNeverSplit) {
  // Tier 4 sums the split slots in row pairs; with an odd n the pair that straddles n would wait
  // for a slot no split writes, so the ring never splits K there (and the launcher refuses to).
  for (int64_t n : {1, 75, 203, 4095, 6143}) {
    for (int64_t k : {256, 2048, 4096, 12288}) {
      EXPECT_EQ(cuda::gemv_ksplit(n, k), 1) << n << "x" << k;
      EXPECT_EQ(cuda::gemv_chunk_steps(n, k), k / 128);
      for (int want : {0, 2, 4, 8, 16}) {
        EXPECT_EQ(cuda::gemv_ring_ksplit(n, k, want), 1) << n << "x" << k << " want " << want;
        EXPECT_EQ(cuda::gemv_ring_chunk_steps(n, k, want), k / 128);
      }
    }
  }
  EXPECT_GT(cuda::gemv_ring_ksplit(204, 2048, 0), 1) << "the even neighbour still splits";
}

TEST(GemvPolicy, AutoChoiceIsAPureFunctionOfTheShape) {
  // Measured on the H200 (2026-11-30, bench/results/gemv_sweep_2026-11-30.txt): K splits that
  // fill one wave of 264 CTAs won on every split shape of the Qwen3 8B/32B decode layer except
  // 4096x4096 (4 steps per split lost 18% at m = 16; the >= 6-step floor keeps its 5 splits);
  // session 31: the floor is in bytes (96 KB), so bf16 4096x4096 takes 8 splits of 4 steps;
  // ringbal won on 51200x5120 (400 row blocks) at every m; s4 on fp8 24576x4096 at m <= 4.
  // Session 15: where a wave of three CTAs per SM is filled by >= 15 points more than the two-CTA
  // wave (24576x4096: 384 of 396 slots against 192 of 264), that wave (b3) won at m <= 4.
  // Session 16: fp8 weights on the balanced grid take it at three CTAs per SM (ringbal:b3), in
  // context 2.4% faster at m <= 4 on 51200x5120 and 1.7-2.5% on 34816x5120; bf16 ones do not.
  // Sessions 23-24: fp8 weights on the three-CTA register ring take the warpgroup MMA in every tier
  // (:wg, :wgn); the two-CTA ring and the balanced grid keep mma.sync. Session 45 (fp8 weights
  // stored K-permuted): fp8 weights on the two-CTA ring take it in the 16- and 32-row tiers (:wg).
  // Session 48: there in tiers 1 and 4 too (:wgn), and on the fp8 balanced grid in the 16- and
  // 32-row tiers (:wg). Session 49: the fp8 balanced grid's 16-row tier stages x by tensor copies
  // (:xt), and its decoder-layer shapes run at two CTAs per SM again (vocabulary projections at three).
  // Session 50: on the two-CTA ring every K split sums its share of the rows in the 16- and 32-row
  // tiers (:sa), both dtypes.
  // Session 39: bf16 weights of >= 1024 row blocks (the lm_head) take the stream kernel with
  // tensor copies at two CTAs per SM; fp8 ones stay on ringbal:b3 (the stream was slower).
  struct Want {
    int64_t n, k;
    bool fp8;
    const char* name;
  };
  for (const Want& w : std::vector<Want>{{6144, 4096, true, "ring:k5:g16:wg:wgn:sa"},
                                         {4096, 4096, true, "ring:k5:g16:wg:wgn:sa"},
                                         {4096, 4096, false, "ring:k8:g16:sa"},
                                         {24576, 4096, true, "ring:k2:g16:b3:wg:wgn"},
                                         {24576, 4096, false, "ring:k2:g16:b3"},
                                         {12288, 5120, true, "ring:k4:g16:b3:wg:wgn"},
                                         {4096, 12288, true, "ring:k8:g16:wg:wgn:sa"},
                                         {10240, 5120, false, "ring:k3:g16:sa"},
                                         {5120, 8192, true, "ring:k6:g16:wg:wgn:sa"},
                                         {51200, 5120, true, "ringbal:wg:wgnu:xt"},
                                         {34816, 5120, true, "ringbal:wg:wgnu:xt"},
                                         {51200, 5120, false, "ringbal"},
                                         {5120, 25600, true, "ring:s4:k6:g16:wg:wgn:sa"},
                                         {1024, 4096, true, "ring:k8:g16:wg:wgn:sa"},
                                         {151936, 4096, true, "ringbal:b3:wg:xt"},
                                         {151936, 4096, false, "stream:b2:tma"},
                                         {151936, 5120, false, "stream:b2:tma"},
                                         {130945, 4096, false, "stream:b2:tma"},
                                         {130944, 4096, false, "ringbal"}}) {
    EXPECT_EQ(cuda::gemv_variant_name(cuda::gemv_auto_variant(w.fp8, w.n, w.k)), w.name) << w.n << "x" << w.k;
    EXPECT_EQ(cuda::gemv_variant_name(cuda::gemv_default_variant(w.fp8, w.n, w.k)), w.name)
        << "the default is auto";
  }
  for (int64_t n : {1, 200, 1024, 4096, 24576, 33792, 33793, 151936}) {
    for (int64_t k : {128, 256, 4096, 25600}) {
      for (const bool fp8 : {true, false}) {
        const cuda::GemvVariant v = cuda::gemv_auto_variant(fp8, n, k);
        EXPECT_EQ(cuda::gemv_variant_name(v), cuda::gemv_variant_name(cuda::gemv_auto_variant(fp8, n, k)));
        const int64_t blocks = (n + 127) / 128;
        const bool stream = !fp8 && blocks >= 1024;
        EXPECT_EQ(v.kernel == cuda::GemvKernel::kStream, stream) << n << "x" << k;
        EXPECT_EQ(v.tma && v.ctas_per_sm == 2, stream) << n << "x" << k;
        EXPECT_EQ(v.kernel == cuda::GemvKernel::kRingBalanced, blocks > 264 && !stream) << n;
        if (v.kernel == cuda::GemvKernel::kRingBalanced) {
          EXPECT_EQ(v.ctas_per_sm, fp8 && blocks >= 1024 ? 3 : 0)
              << n << "x" << k << ": fp8 vocabulary projections at three CTAs per SM, the rest at two";
          EXPECT_EQ(v.x_tensor, fp8) << n << "x" << k;
        }
        EXPECT_EQ(v.wgmma, fp8) << n << "x" << k << ": every fp8 choice, ring or balanced grid";
        const bool balanced_two = v.kernel == cuda::GemvKernel::kRingBalanced && v.ctas_per_sm != 3;
        EXPECT_EQ(v.wgmma_narrow, fp8 && (v.kernel == cuda::GemvKernel::kRegisterRing || balanced_two))
            << n << "x" << k;
        EXPECT_EQ(v.wgmma_narrow_copied_x_only, fp8 && balanced_two)
            << n << "x" << k << ": the fused-norm launches of the two-CTA balanced grid keep mma.sync";
        EXPECT_EQ(v.split_sum_all, v.kernel == cuda::GemvKernel::kRegisterRing && v.ctas_per_sm != 3)
            << n << "x" << k << ": the two-CTA ring only";
        if (v.kernel == cuda::GemvKernel::kRegisterRing) {
          EXPECT_GE(cuda::gemv_ring_ksplit(n, k, v.ksplit), cuda::gemv_ksplit(n, k));
          const int64_t wave = v.ctas_per_sm == 3 ? 396 : 264;
          EXPECT_LE(cuda::gemv_ring_ksplit(n, k, v.ksplit) * ((n + 127) / 128),
                    std::max<int64_t>(wave, cuda::gemv_ksplit(n, k) * ((n + 127) / 128)));
        }
      }
    }
  }
}

TEST(GemvPolicy, VariantNamesRoundTrip) {
  for (const char* name : {"default",
                           "stream",
                           "ring",
                           "ringbal:c264",
                           "stream:s2:c256",
                           "stream:s2:r512",
                           "ring:s2:bits",
                           "stream:tma",
                           "ring:s4:k8",
                           "ring:k3",
                           "auto",
                           "ring:g16",
                           "auto:g16",
                           "auto:g4",
                           "ring:s4:k2:g16",
                           "auto:b3",
                           "ringbal:c396:b3",
                           "ring:s2:k4:g16:b3",
                           "auto:s4",
                           "auto:eoff",
                           "ringbal:b3:e0",
                           "ring:k4:e64",
                           "auto:wg",
                           "ringbal:b3:wg",
                           "ring:s2:k4:b3:wg:e0",
                           "auto:wgn",
                           "ring:k2:g16:b3:wg:wgn:e8",
                           "ringbal:b3:wg:xt",
                           "ring:k5:g16:wg:wgn:sa",
                           "ringbal:wg:wgnu:xt",
                           "auto:wgnu"}) {
    EXPECT_EQ(cuda::gemv_variant_name(cuda::gemv_variant_from_name(name)), name);
  }
  EXPECT_THROW(cuda::gemv_variant_from_name("fast"), Error);
  EXPECT_THROW(cuda::gemv_variant_from_name("stream:x2"), Error);
  EXPECT_THROW(cuda::gemv_variant_from_name("ring:k99999999999"), Error);
  EXPECT_THROW(cuda::gemv_variant_from_name("ring:g8"), Error);
  EXPECT_THROW(cuda::gemv_variant_from_name("ring:b4"), Error);
  EXPECT_THROW(cuda::gemv_variant_from_name("ring:e65"), Error) << "beyond kGemvEarlyWeightsMax";
  EXPECT_THROW(cuda::gemv_variant_from_name("ring:e-1"), Error);
  EXPECT_THROW(cuda::gemv_variant_from_name("ring:e"), Error);
  EXPECT_EQ(cuda::gemv_variant_from_name("auto").early_weights, cuda::kGemvEarlyInherit);
  EXPECT_EQ(cuda::gemv_variant_from_name("auto:eoff").early_weights, -1);
  EXPECT_EQ(cuda::gemv_variant_from_name("ring:e3").early_weights, 3);
  // A K split named with auto pins it where the choice is the register ring (session 50 found
  // "auto:k3" silently equal to "auto"), and means nothing on the balanced grid.
  EXPECT_EQ(cuda::gemv_variant_name(
                cuda::gemv_resolve_variant(cuda::gemv_variant_from_name("auto:k3"), true, 4096, 4096)),
            "ring:k3:g16:wg:wgn:sa");
  EXPECT_EQ(cuda::gemv_resolve_variant(cuda::gemv_variant_from_name("auto:k3"), true, 51200, 5120).ksplit, 0);
  EXPECT_FALSE(cuda::gemv_variant_from_name("auto").wgmma);
  EXPECT_TRUE(cuda::gemv_variant_from_name("auto:b3:wg").wgmma);
  EXPECT_TRUE(cuda::gemv_resolve_variant(cuda::gemv_variant_from_name("auto:wg"), true, 24576, 4096).wgmma)
      << "auto keeps the warpgroup MMA request";
  EXPECT_FALSE(cuda::gemv_variant_from_name("auto:wg").wgmma_narrow) << ":wg is the 16-row tier only";
  EXPECT_FALSE(cuda::gemv_variant_from_name("auto:wgn").wgmma) << ":wgn is tiers 1 and 4 only";
  EXPECT_TRUE(cuda::gemv_variant_from_name("auto:wgnu").wgmma_narrow_copied_x_only);
  EXPECT_FALSE(cuda::gemv_variant_from_name("auto:wgn").wgmma_narrow_copied_x_only);
  // A request's ":wgn" / ":wgnu" replaces auto's choice between them (51200x5120: auto takes ":wgnu").
  EXPECT_EQ(cuda::gemv_variant_name(
                cuda::gemv_resolve_variant(cuda::gemv_variant_from_name("auto:wgn"), true, 51200, 5120)),
            "ringbal:wg:wgn:xt");
  EXPECT_EQ(cuda::gemv_variant_name(
                cuda::gemv_resolve_variant(cuda::gemv_variant_from_name("auto"), true, 51200, 5120)),
            "ringbal:wg:wgnu:xt");
  EXPECT_EQ(cuda::gemv_variant_name(
                cuda::gemv_resolve_variant(cuda::gemv_variant_from_name("auto:wgnu"), true, 24576, 4096)),
            "ring:k2:g16:b3:wg:wgnu");
  // ":xt" (x by tensor copies) is the 16-row tier's :wg staging of fp8 x: auto keeps the request,
  // which needs :wg and fp8 weights (bf16 x goes word by word into permuted places).
  EXPECT_TRUE(cuda::gemv_resolve_variant(cuda::gemv_variant_from_name("auto:xt"), true, 4096, 4096).x_tensor);
  EXPECT_FALSE(cuda::gemv_auto_variant(true, 4096, 4096).x_tensor) << "the two-CTA ring keeps cp.async";
  EXPECT_TRUE(cuda::gemv_auto_variant(true, 51200, 5120).x_tensor) << "the fp8 balanced grid takes it";
  EXPECT_FALSE(cuda::gemv_auto_variant(false, 51200, 5120).x_tensor) << "bf16 weights cannot";
  EXPECT_EQ(cuda::gemv_variant_unsupported_reason(true, 4096, 4096, cuda::gemv_variant_from_name("auto:xt")),
            "");
  EXPECT_EQ(cuda::gemv_variant_unsupported_reason(true, 51200, 5120, cuda::gemv_variant_from_name("auto:xt")),
            "");
  EXPECT_NE(cuda::gemv_variant_unsupported_reason(false, 4096, 4096, cuda::gemv_variant_from_name("auto:xt")),
            "");
  EXPECT_NE(cuda::gemv_variant_unsupported_reason(true, 4096, 4096, cuda::gemv_variant_from_name("ring:xt")),
            "")
      << "without :wg";
  EXPECT_NE(
      cuda::gemv_variant_unsupported_reason(true, 4096, 4096, cuda::gemv_variant_from_name("stream:xt")), "");
  // ":sa" (every K split sums a share of its rows): a request keeps it on every shape auto resolves.
  EXPECT_TRUE(
      cuda::gemv_resolve_variant(cuda::gemv_variant_from_name("auto:sa"), true, 4096, 4096).split_sum_all);
  EXPECT_TRUE(
      cuda::gemv_resolve_variant(cuda::gemv_variant_from_name("auto:sa"), true, 24576, 4096).split_sum_all)
      << "kept on the three-CTA ring's choice, whose launch ignores it";
  EXPECT_FALSE(cuda::gemv_auto_variant(true, 24576, 4096).split_sum_all) << "the three-CTA ring";
  EXPECT_TRUE(cuda::gemv_auto_variant(false, 4096, 4096).split_sum_all) << "the two-CTA ring, bf16 too";
  EXPECT_TRUE(
      cuda::gemv_resolve_variant(cuda::gemv_variant_from_name("auto:wgn"), true, 4096, 4096).wgmma_narrow)
      << "auto keeps the narrow request on a shape whose own choice lacks it";
  // By itself auto takes ":wg" for fp8 weights on the register ring and the balanced grid, ":wgn"
  // on the register ring (Qwen3-8B gate|up at three CTAs per SM, the rest at two) and ":wgnu" on
  // the two-CTA balanced grid (Qwen3-32B gate|up; not the three-CTA vocabulary projections).
  const cuda::GemvVariant gate_up = cuda::gemv_auto_variant(true, 24576, 4096);
  EXPECT_EQ(gate_up.ctas_per_sm, 3);
  EXPECT_TRUE(gate_up.wgmma);
  EXPECT_TRUE(gate_up.wgmma_narrow);
  EXPECT_FALSE(cuda::gemv_auto_variant(false, 24576, 4096).wgmma);
  EXPECT_FALSE(cuda::gemv_auto_variant(false, 24576, 4096).wgmma_narrow);
  EXPECT_TRUE(cuda::gemv_auto_variant(true, 4096, 4096).wgmma) << "the two-CTA ring's 16- and 32-row tiers";
  EXPECT_TRUE(cuda::gemv_auto_variant(true, 4096, 4096).wgmma_narrow) << "and its tiers 1 and 4";
  EXPECT_FALSE(cuda::gemv_auto_variant(false, 4096, 4096).wgmma) << "bf16 weights keep mma.sync";
  EXPECT_TRUE(cuda::gemv_auto_variant(true, 51200, 5120).wgmma) << "the balanced grid's 16- and 32-row tiers";
  EXPECT_TRUE(cuda::gemv_auto_variant(true, 51200, 5120).wgmma_narrow)
      << "its tiers 1 and 4 where x is copied";
  EXPECT_TRUE(cuda::gemv_auto_variant(true, 51200, 5120).wgmma_narrow_copied_x_only);
  EXPECT_FALSE(cuda::gemv_auto_variant(true, 151936, 4096).wgmma_narrow) << "three CTAs per SM keep mma.sync";
  EXPECT_TRUE(cuda::gemv_resolve_variant(cuda::GemvVariant{}, true, 24576, 4096).wgmma_narrow);
}

TEST(GemvPolicy, ShapeOverridesParseAndReplaceOnlyTheirShape) {
  std::string why;
  const auto parsed =
      cuda::parse_gemv_shape_variants(" FP8/4096x4096 = ring:k8:s4:g16, bf16/6144x4096=auto:s2,", &why);
  ASSERT_TRUE(parsed.has_value()) << why;
  ASSERT_EQ(parsed->size(), 2u);
  EXPECT_TRUE((*parsed)[0].fp8);
  EXPECT_EQ((*parsed)[0].n, 4096);
  EXPECT_EQ((*parsed)[0].k, 4096);
  EXPECT_EQ(cuda::gemv_variant_name((*parsed)[0].variant), "ring:s4:k8:g16");
  EXPECT_FALSE((*parsed)[1].fp8);
  EXPECT_EQ(cuda::gemv_variant_name((*parsed)[1].variant), "auto:s2");

  // Malformed, repeated, "default", and variants that are not built for the dtype are refused
  // with a reason (bf16 has no four-step ring; three CTAs per SM build only fp8 s2).
  for (const char* blank : {"", "  "}) {
    const auto none = cuda::parse_gemv_shape_variants(blank, &why);
    ASSERT_TRUE(none.has_value()) << "blank is no override";
    EXPECT_TRUE(none->empty());
  }
  for (const char* bad :
       {",", "fp8", "fp8/4096x4096", "fp4/4096x4096=ring", "fp8/0x4096=ring", "fp8/4096x-1=ring",
        "fp8/4096*4096=ring", "fp8/4096x4096=fast", "fp8/4096x4096=default",
        "fp8/4096x4096=ring,fp8/4096x4096=auto", "bf16/4096x4096=ring:s4", "fp8/4096x4096=ring:s4:b3",
        "fp8/4096x4096=stream:wg", "fp8/4096x4096=ring:bits:wg", "fp8/4096x4096=stream:wgn",
        "fp8/4096x4096=ring:bits:wgn", "fp8/4096x4096=ring,,bf16/1x128=ring"}) {
    why.clear();
    EXPECT_FALSE(cuda::parse_gemv_shape_variants(bad, &why).has_value()) << bad;
    EXPECT_FALSE(why.empty()) << bad;
  }

  const cuda::GemvVariant before = cuda::gemv_default_variant(true, 4096, 4096);
  cuda::set_gemv_shape_variants(*parsed);
  EXPECT_EQ(cuda::gemv_variant_name(cuda::gemv_default_variant(true, 4096, 4096)), "ring:s4:k8:g16");
  EXPECT_EQ(cuda::gemv_variant_name(cuda::gemv_default_variant(false, 4096, 4096)),
            cuda::gemv_variant_name(cuda::gemv_auto_variant(false, 4096, 4096)))
      << "an fp8 override leaves the bf16 weight of the same shape alone";
  EXPECT_EQ(cuda::gemv_variant_name(cuda::gemv_default_variant(true, 6144, 4096)),
            cuda::gemv_variant_name(cuda::gemv_auto_variant(true, 6144, 4096)));
  EXPECT_EQ(cuda::gemv_shape_variants().size(), 2u);
  cuda::set_gemv_shape_variants({});

  // A default request resolves through the override, and an "auto" override's own fields qualify
  // the auto choice (they were once dropped: the request's fields, all zero, were read instead).
  const auto qualified =
      cuda::parse_gemv_shape_variants("fp8/4096x4096=auto:eoff,bf16/6144x4096=auto:g4:e5", &why);
  ASSERT_TRUE(qualified.has_value()) << why;
  cuda::set_gemv_shape_variants(*qualified);
  const cuda::GemvVariant off = cuda::gemv_resolve_variant(cuda::GemvVariant{}, true, 4096, 4096);
  const cuda::GemvVariant automatic = cuda::gemv_auto_variant(true, 4096, 4096);
  EXPECT_EQ(off.early_weights, -1);
  EXPECT_EQ(off.kernel, automatic.kernel);
  EXPECT_EQ(off.ksplit, automatic.ksplit);
  EXPECT_EQ(off.stages, automatic.stages);
  const cuda::GemvVariant g4 = cuda::gemv_resolve_variant(cuda::GemvVariant{}, false, 6144, 4096);
  EXPECT_EQ(g4.group_steps, 4);
  EXPECT_EQ(g4.early_weights, 5);
  EXPECT_EQ(cuda::gemv_resolve_variant(cuda::GemvVariant{}, false, 4096, 4096).early_weights,
            cuda::kGemvEarlyInherit)
      << "shapes without an override inherit the process-wide value";
  cuda::set_gemv_shape_variants({});
  EXPECT_EQ(cuda::gemv_resolve_variant(cuda::GemvVariant{}, true, 4096, 4096).early_weights,
            cuda::kGemvEarlyInherit);
  EXPECT_EQ(cuda::gemv_variant_name(cuda::gemv_default_variant(true, 4096, 4096)),
            cuda::gemv_variant_name(before));
}

// The decode step fuses the QK-norm/RoPE/KV write into the q|k|v GEMV in tiers 1 and 4 (steps of
// at most 4 rows, LATHE_QKV_FUSED_ROPE's default) and the SwiGLU into the gate|up GEMV in every
// tier; where gemv_launch refuses an epilogue the backend silently runs the separate kernel. So
// `auto` must keep the epilogues built on the dense Qwen3 shapes, on Hopper (warpgroup MMAs) and
// elsewhere: session 45 made `auto` take ':wg' and lost the QK-norm/RoPE epilogue of tiers 1 and 4
// on the H100 only (gpu_cuda_gemv_test 194/206), which no host test could see.
TEST(GemvPolicy, AutoKeepsTheFusedEpiloguesOfTheQwen3Shapes) {
  struct Model {
    const char* name;
    int64_t hidden, inter, heads, kv_heads;  // head_dim 128
  };
  const std::vector<Model> models = {{"Qwen3-0.6B", 1024, 3072, 16, 8}, {"Qwen3-1.7B", 2048, 6144, 16, 8},
                                     {"Qwen3-4B", 2560, 9728, 32, 8},   {"Qwen3-8B", 4096, 12288, 32, 8},
                                     {"Qwen3-14B", 5120, 17408, 40, 8}, {"Qwen3-32B", 5120, 25600, 64, 8}};
  for (const Model& model : models) {
    for (const bool fp8 : {true, false}) {
      for (const bool wgmma : {true, false}) {
        const std::string where = std::string(model.name) + (fp8 ? " fp8" : " bf16") +
                                  (wgmma ? " with" : " without") + " warpgroup MMAs";
        const int64_t qkv_rows = (model.heads + 2 * model.kv_heads) * 128;
        const cuda::GemvVariant qkv = cuda::gemv_resolve_variant({}, fp8, qkv_rows, model.hidden);
        for (const int tier : {1, 4}) {
          EXPECT_EQ(cuda::gemv_epilogue_unbuilt_reason(tier, fp8, qkv, true, wgmma), "")
              << where << ", q|k|v tier " << tier;
        }
        // The SwiGLU epilogue is built for one CTA per row block: the gate|up shapes of more than
        // 264 row blocks (Qwen3-14B, Qwen3-32B) run on the balanced grid and keep silu_mul.
        const int64_t gate_up_rows = 2 * model.inter;
        const cuda::GemvVariant gate_up = cuda::gemv_resolve_variant({}, fp8, gate_up_rows, model.hidden);
        const bool one_cta_per_block = gate_up.kernel == cuda::GemvKernel::kRegisterRing;
        EXPECT_EQ(one_cta_per_block, gate_up_rows / 128 <= 264) << where;
        for (const int tier : {1, 4, 16, 32}) {
          EXPECT_EQ(cuda::gemv_epilogue_unbuilt_reason(tier, fp8, gate_up, false, wgmma).empty(),
                    one_cta_per_block)
              << where << ", gate|up tier " << tier;
        }
      }
    }
  }
}

// The epilogues' configurations, one by one: what gemv_launch refuses is what the launchers do not
// instantiate (gemv_policy.h, epilogue_built), and a refusal names the variant it was asked for.
TEST(GemvPolicy, EpiloguesAreRefusedOutsideTheirBuiltConfigurations) {
  auto reason = [](int tier, bool fp8, const char* variant, bool rope, bool wgmma) {
    return cuda::gemv_epilogue_unbuilt_reason(
        tier, fp8, cuda::gemv_resolve_variant(cuda::gemv_variant_from_name(variant), fp8, 6144, 4096), rope,
        wgmma);
  };
  // QK-norm/RoPE: the 16-row tier's ':wg' refuses it on Hopper and runs mma.sync (and it) elsewhere.
  EXPECT_NE(reason(16, true, "ring:k5:g16:wg", true, true), "");
  EXPECT_EQ(reason(16, true, "ring:k5:g16:wg", true, false), "");
  EXPECT_EQ(reason(16, true, "ring:k5:g16", true, true), "");
  // ... tiers 1 and 4 take it with ':wgn' on Hopper (mma.sync with ':g16' elsewhere) and refuse it
  // at three CTAs per SM, with ':bits', another ring depth and their 4-step x buffers.
  EXPECT_EQ(reason(1, true, "ring:k5:g16:wgn", true, true), "");
  EXPECT_EQ(reason(4, true, "ring:k5:wgn", true, true), "");
  EXPECT_EQ(reason(1, true, "ring:k5:g16:wgn", true, false), "");
  EXPECT_NE(reason(1, true, "ring:k5:wgn", true, false), "") << "mma.sync with 4-step x buffers";
  EXPECT_NE(reason(4, true, "ring:k5:g16:b3:wgn", true, true), "");
  EXPECT_NE(reason(4, true, "ring:k5:g16:b3", true, false), "");
  EXPECT_NE(reason(1, true, "ring:k5:bits", true, false), "");
  EXPECT_NE(reason(1, true, "ring:k5:g16:s4", true, false), "");
  EXPECT_NE(reason(4, true, "ring:k5", true, false), "");
  EXPECT_NE(reason(32, true, "ring:k5:g16", true, false), "");
  // SwiGLU: ':wgn' stands for ':g16' in tiers 1 and 4; the 32-row tier takes every depth but ':bits'.
  EXPECT_EQ(reason(1, false, "ring:k5:wgn", false, true), "");
  EXPECT_NE(reason(1, false, "ring:k5:wgn", false, false), "");
  EXPECT_EQ(reason(32, true, "ring:k5:s4", false, true), "");
  EXPECT_NE(reason(32, true, "ring:k5:bits", false, true), "");
  EXPECT_NE(reason(16, false, "ring:k5:s2", false, true), "");
  // ':wgnu' runs a launch that normalises x itself on mma.sync, so there the epilogues need ':g16'.
  auto fused_reason = [](int tier, const char* variant, bool rope) {
    return cuda::gemv_epilogue_unbuilt_reason(
        tier, true, cuda::gemv_resolve_variant(cuda::gemv_variant_from_name(variant), true, 6144, 4096), rope,
        true, true);
  };
  EXPECT_EQ(fused_reason(1, "ring:k5:wgn", false), "");
  EXPECT_NE(fused_reason(1, "ring:k5:wgnu", false), "") << "fused: mma.sync with 4-step x buffers";
  EXPECT_EQ(reason(1, true, "ring:k5:wgnu", false, true), "") << "x copied: the n8 warpgroup MMA";
  EXPECT_EQ(fused_reason(1, "ring:k5:g16:wgnu", false), "");
  EXPECT_EQ(fused_reason(4, "ring:k5:g16:wgnu", true), "");
  EXPECT_NE(fused_reason(4, "ring:k5:wgnu", true), "");
  // The balanced grid and the stream kernel have neither.
  const std::string balanced = reason(1, true, "ringbal", false, true);
  EXPECT_NE(balanced.find("one CTA per row block"), std::string::npos) << balanced;
  EXPECT_NE(balanced.find("ringbal"), std::string::npos) << balanced;
  EXPECT_NE(reason(1, false, "stream", true, false), "");
  const std::string wide = reason(16, true, "ring:k5:g16:wg", true, true);
  EXPECT_NE(wide.find("ring:k5:g16:wg"), std::string::npos) << wide;
}

}  // namespace
}  // namespace lathe
