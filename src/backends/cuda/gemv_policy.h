#pragma once
// Host-side geometry shared by the decode GEMV launcher (gemv.cu) and its per-shape policy
// (gemv_policy.cpp: K splits, the `auto` choice, variant names). Internal to backends/cuda.
#include <cstdint>

#include "backends/cuda/gemv.h"

namespace lathe::cuda::gemv_detail {

inline constexpr int kRowsPerCta = 128;  // weight rows per register-ring CTA (8 warps x 16)
inline constexpr int kStepK = 128;       // k per step
inline constexpr int kWideGroupSteps = 16;  // steps of x per shared-memory buffer under ":g16"
inline constexpr int kTargetCtas = 132;     // gemv_ksplit's target grid (one CTA per SM)
inline constexpr int kRingBalancedCtas = 264;  // two 8-warp CTAs per SM of an H100/H200
inline constexpr int kRingWaveSms = 132;  // SMs of an H100/H200 (a constant: grids are functions of the shape)

// gemv_auto_variant takes the three-CTA wave (396 slots, "b3") over the two-CTA one when its
// K split fills the wave by at least this much more (Qwen3-8B gate|up: 192 of 264 slots against
// 384 of 396; session 15, docs/PERFORMANCE.md).
inline constexpr double kThreeCtaFillGain = 0.15;

// gemv_auto_variant's rule for a wave of `wave` resident CTAs (264: the default; 396: "auto:b3").
GemvVariant auto_variant_for_wave(bool fp8, int64_t n, int64_t k, int wave);

// Which bytes a GemvNextWeight hint requests (gemv_prefetch_plan): for each CTA of the next
// weight's default launch and each row of its 128-row block, the first `head_steps` steps of the
// segment that CTA reads (fewer where the segment is shorter). Segment of CTA i: register ring
// (grid blocks x splits, i = split * blocks + block) steps [split * cta_steps, + cta_steps) of
// block i % blocks; balanced grid, units [i * cta_steps, + cta_steps) of the flattened (block,
// step) space, of which the head of its first block is taken. ctas == 0: nothing to request.
struct GemvPrefetchPlan {
  int ctas = 0;
  int blocks = 0;
  int64_t ksteps = 0;
  int64_t cta_steps = 0;
  int head_steps = 0;
  bool balanced = false;
  int64_t step_bytes = 0;  // bytes of one row's 128-k step (fp8 128, bf16 256)
};

// The plan for a weight [n, k] of that dtype under a budget of `budget_bytes` (head_steps is the
// most that keeps the requested bytes within it; 0, and ctas = 0, when not even one step each fits
// or the shape is not one the GEMV runs). A pure function of its arguments.
GemvPrefetchPlan gemv_prefetch_plan(bool fp8, int64_t n, int64_t k, int64_t budget_bytes);

#if defined(__CUDACC__)
#define LATHE_GEMV_HOST_DEVICE __host__ __device__
#else
#define LATHE_GEMV_HOST_DEVICE
#endif

// The bytes of pair `i` of the plan (i < ctas * 128: next CTA i / 128, row i % 128 of its block),
// as an offset into the weight (row-major, row_bytes a row) and a length; length 0 where that row
// does not exist. The kernel (gemv_common.cuh, prefetch_next_heads) and the tests call this one
// function.
struct PrefetchRange {
  int64_t offset = 0;
  int64_t bytes = 0;
};
LATHE_GEMV_HOST_DEVICE inline PrefetchRange gemv_prefetch_range(const GemvPrefetchPlan& plan, int i, int64_t n,
                                                                int64_t row_bytes) {
  // 32-bit index arithmetic (units of a weight the GEMV runs stay far below 2^31), 64-bit bytes.
  const int cta = i / kRowsPerCta;
  const int ksteps = static_cast<int>(plan.ksteps);
  const int cta_steps = static_cast<int>(plan.cta_steps);
  int block = 0, first_step = 0, len = 0;
  if (plan.balanced) {
    const int first = cta * cta_steps;
    block = first / ksteps;
    first_step = first - block * ksteps;
    len = ksteps - first_step;
    if (plan.blocks * ksteps - first < len) len = plan.blocks * ksteps - first;
  } else {
    block = cta % plan.blocks;
    first_step = (cta / plan.blocks) * cta_steps;
    len = ksteps - first_step;
  }
  if (cta_steps < len) len = cta_steps;
  if (plan.head_steps < len) len = plan.head_steps;
  const int64_t row = static_cast<int64_t>(block) * kRowsPerCta + i % kRowsPerCta;
  if (row >= n || len <= 0) return {};
  return {row * row_bytes + static_cast<int64_t>(first_step) * plan.step_bytes, len * plan.step_bytes};
}

// Bytes the plan requests in all (for tests and logs).
int64_t gemv_prefetch_plan_bytes(const GemvPrefetchPlan& plan, int64_t n);

}  // namespace lathe::cuda::gemv_detail
