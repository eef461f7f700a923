// The register ring's 32-row tier (gemv_ring_launch.cuh): this translation unit instantiates its kernels.
#include "backends/cuda/gemv_ring_launch.cuh"

namespace lathe::cuda::gemv_detail {

namespace {

// One 32-row kernel: the register ring (kBalanced: on the byte-balanced grid), kTier32GroupSteps
// steps of x a buffer, no fused norm.
template <bool kFp8, int kStages, bool kBalanced, int kMinCtas, int kEpi>
void launch_tier32_kernel(bool wg, const Params& params, dim3 grid, cudaStream_t stream) {
  const dim3 block(kThreads);
  if (wg) {
    launch_chained(
        gemv_kernel<32, kFp8, kStages, false, kBalanced, kTier32GroupSteps, kMinCtas, true, false, kEpi>,
        grid, block, 0, stream, params);
  } else {
    launch_chained(
        gemv_kernel<32, kFp8, kStages, false, kBalanced, kTier32GroupSteps, kMinCtas, false, false, kEpi>,
        grid, block, 0, stream, params);
  }
}

}  // namespace

// The 32-row tier (one weight pass for 17..32 rows): the register ring with one CTA per (row
// block, K split), plain or with the SwiGLU epilogue, or on the balanced grid, plain
// (tier_variant_reason and epilogue_built admit nothing else), at the variant's CTAs per SM and
// wgmma choice. Ring depth, whatever the variant names (auto takes fp8 s4 on long K chunks,
// e.g. Qwen3-32B down): fp8 s2 and bf16 s1 at two CTAs per SM (no spills, 114-128 registers), s1
// for both at three: with fp8 s2 the 16 accumulators and 16 step
// sums of 32 columns do not fit 80 registers, and ptxas spilled 108 (mma.sync) and 432 (wgmma)
// bytes, reloading the accumulators in every step (CUDA 13.0, SASS read with nvdisasm); fp8 s1
// spills nothing with mma.sync and 56 bytes, outside the main loop, with wgmma. The depth changes
// no arithmetic (the same bytes).
void launch_ring_tier32(bool balanced, bool silu, const Params& params, dim3 grid, const RingConfig& cfg,
                        cudaStream_t stream) {
  const bool three = cfg.ctas_per_sm == 3;
  auto launch = [&]<bool kBalanced, int kEpi>() {
    if (cfg.fp8) {
      three ? launch_tier32_kernel<true, 1, kBalanced, 3, kEpi>(cfg.wgmma, params, grid, stream)
            : launch_tier32_kernel<true, 2, kBalanced, 2, kEpi>(cfg.wgmma, params, grid, stream);
    } else {
      three ? launch_tier32_kernel<false, 1, kBalanced, 3, kEpi>(cfg.wgmma, params, grid, stream)
            : launch_tier32_kernel<false, 1, kBalanced, 2, kEpi>(cfg.wgmma, params, grid, stream);
    }
  };
  if (balanced) {
    launch.template operator()<true, kEpiNone>();
  } else {
    silu ? launch.template operator()<false, kEpiSilu>() : launch.template operator()<false, kEpiNone>();
  }
}

}  // namespace lathe::cuda::gemv_detail
