// The split-K launcher's occupancy cap (backends/cuda/wave_fill.h), on the host: the wave fill of a
// grid, the CTAs per SM chosen for it, and the shared memory request that enforces a cap under the
// H100's / H200's limits (228 KiB an SM, 1 KiB reserved a CTA, 227 KiB opt-in). The driver's own
// answer for those requests is checked on the GPU (tests/gpu/cuda/wave_fill_test.cpp).
#include <gtest/gtest.h>

#include <cstdint>

#include "backends/cuda/wave_fill.h"

namespace {

using lathe::cuda::shared_memory_for_cap;
using lathe::cuda::SharedMemoryLimits;
using lathe::cuda::wave_fill;
using lathe::cuda::wave_fill_ctas_per_sm;

constexpr int kSms = 132;
constexpr SharedMemoryLimits kHopper{233472, 1024, 232448};

TEST(WaveFill, IsTheShareOfTheSlotsOfEveryWave) {
  EXPECT_DOUBLE_EQ(wave_fill(528, kSms, 4), 1.0);
  EXPECT_DOUBLE_EQ(wave_fill(640, kSms, 4), 640.0 / 1056.0);  // 528 + 112
  EXPECT_DOUBLE_EQ(wave_fill(640, kSms, 3), 640.0 / 792.0);   // 396 + 244
  EXPECT_DOUBLE_EQ(wave_fill(1, kSms, 3), 1.0 / 396.0);
  EXPECT_DOUBLE_EQ(wave_fill(0, kSms, 3), 0.0);
  EXPECT_DOUBLE_EQ(wave_fill(10, 0, 3), 0.0);
}

// The grids the wide serves launch on the head-dim-128 shapes and 24/4/256 (kv heads x splits x
// sequences), at the residency ptxas's registers give the FP8 position-row kernel (4 at head dim
// 128, 5 at 256).
TEST(WaveFill, CapsTheGridsWhoseLastWaveIsNearlyEmpty) {
  EXPECT_EQ(wave_fill_ctas_per_sm(8 * 5 * 16, kSms, 4, 0.1), 3);   // 64/8/128 batch 16: 0.61 -> 0.81
  EXPECT_EQ(wave_fill_ctas_per_sm(8 * 9 * 16, kSms, 4, 0.1), 3);   // 32/8/128 batch 16: 0.73 -> 0.97
  EXPECT_EQ(wave_fill_ctas_per_sm(4 * 11 * 16, kSms, 5, 0.1), 3);  // 24/4/256 batch 16: 0.53 -> 0.89
  EXPECT_EQ(wave_fill_ctas_per_sm(8 * 5 * 64, kSms, 4, 0.1), 4);   // 64/8/128 batch 64: 0.97 already
  // 24/4/256 batch 64: 4 per SM fills 0.89 against 0.85, less than the gain asked.
  EXPECT_EQ(wave_fill_ctas_per_sm(4 * 11 * 64, kSms, 5, 0.1), 5);
  EXPECT_EQ(wave_fill_ctas_per_sm(4 * 11 * 64, kSms, 5, 0.0), 4);
}

// A grid that one wave holds is spread: the fewest CTAs per SM that still hold it in one wave.
TEST(WaveFill, SpreadsAGridThatOneWaveHolds) {
  EXPECT_EQ(wave_fill_ctas_per_sm(4 * 11 * 4, kSms, 5, 0.1), 2);  // 24/4/256 batch 4: 176 CTAs
  EXPECT_EQ(wave_fill_ctas_per_sm(8 * 5 * 4, kSms, 4, 0.1), 2);   // 64/8/128 batch 4: 160
  EXPECT_EQ(wave_fill_ctas_per_sm(8 * 9 * 4, kSms, 4, 0.1), 3);   // 32/8/128 batch 4: 288
  for (const int resident : {2, 3, 4, 5, 8}) {
    for (int64_t ctas = 1; ctas <= int64_t{resident} * kSms; ++ctas) {
      const int k = wave_fill_ctas_per_sm(ctas, kSms, resident, 0.0);
      ASSERT_LE(k, resident);
      ASSERT_GE(int64_t{k} * kSms, ctas) << ctas << " CTAs: still one wave";
      ASSERT_LT(int64_t{k - 1} * kSms, ctas) << ctas << " CTAs: the fewest per SM";
    }
  }
  EXPECT_EQ(wave_fill_ctas_per_sm(1000, kSms, 1, 0.0), 1);
}

// The persistent grid (22, 25: BF16 at head dim 128, 3 CTAs per SM) at the count the launcher asks
// wave_fill_ctas_per_sm for (its units taken as CTAs, BF16's rule: no least gain, the fewer on a
// tie): a unit a CTA spread at batch 4, from batch 12 the count whose rounds of units fill best
// (each CTA running its share of the units), a pinned cap making the grid smaller, and never more
// than max_units_per_cta units a CTA.
TEST(WaveFill, SizesThePersistentGrid) {
  using lathe::cuda::persistent_grid_ctas;
  auto per_sm = [](int64_t units) { return wave_fill_ctas_per_sm(units, kSms, 3, 0.0, true); };
  EXPECT_EQ(per_sm(8 * 5 * 4), 2);  // 64/8/128 batch 4: 160 units
  EXPECT_EQ(persistent_grid_ctas(8 * 5 * 4, kSms, per_sm(8 * 5 * 4), 32), 160);
  EXPECT_EQ(per_sm(8 * 9 * 4), 3);  // 32/8/128 batch 4: 288 units
  EXPECT_EQ(persistent_grid_ctas(8 * 9 * 4, kSms, 3, 32), 288);
  EXPECT_EQ(per_sm(8 * 5 * 16), 2);  // 64/8/128 batch 16: 640 units, 2 rounds of 396 or 3 of 264
  EXPECT_EQ(persistent_grid_ctas(8 * 5 * 16, kSms, 2, 32), 264);
  EXPECT_EQ(per_sm(8 * 5 * 12), 2);  // batch 12: 480 units, 0.61 of 2 rounds of 396, 0.91 of 264
  EXPECT_EQ(per_sm(8 * 9 * 16), 3);  // 32/8/128 batch 16: 1152 units, 0.97 at 3, 0.87 at 2
  EXPECT_EQ(persistent_grid_ctas(8 * 9 * 16, kSms, 3, 32), 396);
  EXPECT_EQ(per_sm(40), 1);
  EXPECT_EQ(persistent_grid_ctas(40, kSms, 1, 32), 40);
  EXPECT_EQ(persistent_grid_ctas(640, kSms, 1, 32), kSms);   // pinned at 1: 132 CTAs of 4-5
  EXPECT_EQ(persistent_grid_ctas(20000, kSms, 1, 32), 625);  // at most 32 units a CTA
  EXPECT_EQ(persistent_grid_ctas(20000, kSms, 3, 32), 625);
  EXPECT_EQ(persistent_grid_ctas(0, kSms, 3, 32), 0);
  EXPECT_EQ(persistent_grid_ctas(100, kSms, 0, 0), 100);
}

// The last round of a persistent grid: the units left after its full rounds.
TEST(WaveFill, PersistentGridLastRound) {
  using lathe::cuda::persistent_grid_last_round;
  EXPECT_EQ(persistent_grid_last_round(576, 264), 48);  // rounds of 264, 264, 48
  EXPECT_EQ(persistent_grid_last_round(528, 264), 264);
  EXPECT_EQ(persistent_grid_last_round(160, 160), 160);
  EXPECT_EQ(persistent_grid_last_round(100, 396), 100);
  EXPECT_EQ(persistent_grid_last_round(0, 264), 0);
  EXPECT_EQ(persistent_grid_last_round(10, 0), 0);
}

// Whether the serve's persistent grid pays for `batch` sequences of a shape with 8 KV heads cut
// into `splits` splits each (units = 8 x splits x batch), sized as the launcher sizes it under
// `auto` with a BF16 cache (residency 3, the fewer CTAs per SM on a tie, at most 32 units a CTA).
bool serve_grid_pays(int splits, int64_t batch) {
  const int64_t units = 8 * splits * batch;
  const int per_sm = wave_fill_ctas_per_sm(units, kSms, 3, 0.0, true);
  return lathe::cuda::persistent_grid_pays(units, lathe::cuda::persistent_grid_ctas(units, kSms, per_sm, 32),
                                           kSms, splits);
}

// The launcher keeps the persistent grid only where a CTA runs several units (else the units fit
// one wave and run per split: the same grid, one unit a CTA), the last round still covers half
// the SMs and a sequence has at most kPersistentGridMaxSplits splits; the grids below are the
// serve's under `auto` (BF16: the fewer CTAs per SM on a tie, residency 3; 8 KV heads, so units =
// 8 x splits x batch).
TEST(WaveFill, PersistentGridPaysOnlyPastOneWaveWithAFullEnoughLastRound) {
  using lathe::cuda::persistent_grid_pays;
  EXPECT_FALSE(serve_grid_pays(5, 4));   // 64/8/128 batch 4: 160 CTAs of one unit
  EXPECT_FALSE(serve_grid_pays(5, 8));   // batch 8: 320 of one
  EXPECT_TRUE(serve_grid_pays(5, 10));   // batch 10: 400 units on 264 CTAs, 136 in the second round
  EXPECT_TRUE(serve_grid_pays(5, 16));   // batch 16: 640 on 264, 112 in the third
  EXPECT_FALSE(serve_grid_pays(7, 10));  // 40/8/128 batch 10: 560 on 264, 32 in the third
  EXPECT_TRUE(serve_grid_pays(7, 16));   // batch 16: 896 on 264, 104 in the fourth
  EXPECT_FALSE(serve_grid_pays(7, 24));  // batch 24: 1344 on 264, 24 in the sixth
  EXPECT_FALSE(persistent_grid_pays(8 * 5 * 4, kSms, kSms, 5));  // pinned at one CTA per SM: 28 last
  EXPECT_TRUE(persistent_grid_pays(8 * 5 * 12, kSms, kSms, 5));  // 480 on 132, 84 in the fourth round
  EXPECT_FALSE(persistent_grid_pays(8 * 5 * 4 + 10, 8 * 5 * 4, kSms, 5));  // a last round of 10
  EXPECT_FALSE(persistent_grid_pays(40, 40, kSms, 5));
  EXPECT_FALSE(persistent_grid_pays(0, 0, kSms, 5));
  // At the boundary: a last round on exactly half the SMs keeps the grid, one CTA fewer does not.
  EXPECT_TRUE(persistent_grid_pays(264 + kSms / 2, 264, kSms, 5));
  EXPECT_FALSE(persistent_grid_pays(264 + kSms / 2 - 1, 264, kSms, 5));
}

// Past kPersistentGridMaxSplits splits a sequence (32/8/128: 9 under `auto`, 16/8/128: 16) every
// grid launches per split, however full its rounds; up to it the round rules above decide.
TEST(WaveFill, PersistentGridPaysOnlyUpToItsSplitCount) {
  using lathe::cuda::kPersistentGridMaxSplits;
  using lathe::cuda::persistent_grid_pays;
  for (int64_t batch : {4, 8, 12, 16, 20, 24, 32, 48, 64}) {
    EXPECT_FALSE(serve_grid_pays(9, batch)) << "32/8/128 batch " << batch;
    EXPECT_FALSE(serve_grid_pays(16, batch)) << "16/8/128 batch " << batch;
  }
  // The same grid (1152 units on 396 CTAs, 360 in the third round) keeps the persistent launch up
  // to the limit and not past it.
  EXPECT_TRUE(persistent_grid_pays(1152, 396, kSms, kPersistentGridMaxSplits));
  EXPECT_FALSE(persistent_grid_pays(1152, 396, kSms, kPersistentGridMaxSplits + 1));
  EXPECT_TRUE(persistent_grid_pays(1152, 396, kSms, 1));
}

// BF16's rule (no least gain, the fewer CTAs per SM on a tie) against FP8's (0.1, the larger) on
// the grids session 57 measured: they differ where the fills tie or gain less than 0.1.
TEST(WaveFill, TakesTheFewerOnATieWhenAsked) {
  EXPECT_EQ(wave_fill_ctas_per_sm(4 * 11 * 16, kSms, 3, 0.1), 3);  // 24/4/256 batch 16: 704, 0.89 both
  EXPECT_EQ(wave_fill_ctas_per_sm(4 * 11 * 16, kSms, 3, 0.0, true), 2);
  EXPECT_EQ(wave_fill_ctas_per_sm(4 * 11 * 64, kSms, 3, 0.1), 3);  // batch 64: 0.89 -> 0.97
  EXPECT_EQ(wave_fill_ctas_per_sm(4 * 11 * 64, kSms, 3, 0.0, true), 2);
  EXPECT_EQ(wave_fill_ctas_per_sm(4 * 11 * 24, kSms, 3, 0.1), 2);  // batch 24: 0.89 -> 1.0 either way
  EXPECT_EQ(wave_fill_ctas_per_sm(4 * 11 * 24, kSms, 3, 0.0, true), 2);
  EXPECT_EQ(wave_fill_ctas_per_sm(8 * 9 * 16, kSms, 4, 0.0, true), 3);  // 1152 at 4 per SM: 0.73, 0.97, 0.87
}

// Over every grid of more than one wave, up to 40: the choice stays in [ceil(resident / 2),
// resident], takes fewer CTAs only for at least the gain asked, fills its waves at least as well
// as any count in that range that makes the gain, and of those that fill as well is the largest
// (the smallest when asked for the fewer on a tie).
TEST(WaveFill, ChoosesWithinHalfTheResidencyAndNeverFillsWorse) {
  for (const bool fewer : {false, true}) {
    for (const double gain : {0.0, 0.1}) {
      for (int resident = 1; resident <= 6; ++resident) {
        for (int64_t ctas = int64_t{resident} * kSms + 1; ctas <= int64_t{40} * kSms; ++ctas) {
          const int k = wave_fill_ctas_per_sm(ctas, kSms, resident, gain, fewer);
          ASSERT_LE(k, resident);
          ASSERT_GE(k, (resident + 1) / 2);
          const double at_resident = wave_fill(ctas, kSms, resident);
          if (k != resident) {
            ASSERT_GE(wave_fill(ctas, kSms, k), at_resident + gain) << ctas << " " << resident;
          }
          for (int other = (resident + 1) / 2; other <= resident; ++other) {
            if (wave_fill(ctas, kSms, other) >= at_resident + gain) {
              ASSERT_LE(wave_fill(ctas, kSms, other), wave_fill(ctas, kSms, k)) << ctas << " " << resident;
              // Of the counts that fill as well, the larger by default, the fewer when asked.
              if (wave_fill(ctas, kSms, other) == wave_fill(ctas, kSms, k)) {
                ASSERT_TRUE(fewer ? k <= other : k >= other) << ctas << " " << resident << " " << other;
              }
            }
          }
        }
      }
    }
  }
}

// The padded request admits `cap` CTAs an SM and not cap + 1, in whole 128-byte units, never less
// than the kernel's own bytes, within the opt-in limit.
TEST(WaveFill, SharedMemoryRequestAdmitsExactlyTheCap) {
  for (const int kernel_bytes : {0, 4096, 38784, 43520, 71680}) {
    for (int cap = 1; cap <= 8; ++cap) {
      const int bytes = shared_memory_for_cap(kernel_bytes, cap, kHopper);
      const int64_t per_cta = int64_t{bytes} + kHopper.reserved_per_cta;
      if (int64_t{cap + 1} * (kernel_bytes + kHopper.reserved_per_cta) > kHopper.per_sm) {
        EXPECT_EQ(bytes, kernel_bytes) << "the kernel alone keeps it at " << cap << " or fewer";
        continue;
      }
      EXPECT_GE(bytes, kernel_bytes);
      EXPECT_EQ(bytes % 128, 0);
      EXPECT_LE(bytes, kHopper.max_per_cta);
      EXPECT_LE(cap * per_cta, kHopper.per_sm) << kernel_bytes << " cap " << cap;
      EXPECT_GT((cap + 1) * per_cta, kHopper.per_sm) << kernel_bytes << " cap " << cap;
    }
  }
}

TEST(WaveFill, SharedMemoryRequestIsTheKernelsWithoutLimitsOrCap) {
  EXPECT_EQ(shared_memory_for_cap(38784, 3, SharedMemoryLimits{}), 38784);
  EXPECT_EQ(shared_memory_for_cap(38784, 0, kHopper), 38784);
}

}  // namespace
