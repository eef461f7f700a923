#pragma once
// The register ring's launchers (gemv.cu's gemv_launch calls them): the templates that pick one
// gemv_kernel instantiation (gemv_ring_kernel.cuh) from a run-time configuration, and one entry
// per tier. Each tier's kernels are instantiated in its own translation unit
// (gemv_ring_tier1.cu, _tier4.cu, _tier16.cu, _tier32.cu), so a build compiles them in parallel.
#include <cuda_runtime.h>

#include "backends/cuda/chained_launch.cuh"
#include "backends/cuda/check.h"
#include "backends/cuda/gemv_common.cuh"
#include "backends/cuda/gemv_policy.h"
#include "backends/cuda/gemv_ring_kernel.cuh"

namespace lathe::cuda::gemv_detail {

// One tier's register-ring launch of a checked problem (gemv_launch has refused what is not
// built: ring_config_supported, epilogue_built). `fused`: GemvNormInput (tiers 1 and 4);
// `epilogue`: kEpiNone, kEpiSilu or kEpiRope; cfg as it runs on this device.
void launch_ring_tier1(bool balanced, bool fused, int epilogue, const Params& params, dim3 grid,
                       const RingConfig& cfg, cudaStream_t stream);
void launch_ring_tier4(bool balanced, bool fused, int epilogue, const Params& params, dim3 grid,
                       const RingConfig& cfg, cudaStream_t stream);
void launch_ring_tier16(bool balanced, int epilogue, const Params& params, dim3 grid, const RingConfig& cfg,
                        cudaStream_t stream);
// The 32-row tier: no fused norm; the SwiGLU epilogue (silu) on one CTA per row block only.
void launch_ring_tier32(bool balanced, bool silu, const Params& params, dim3 grid, const RingConfig& cfg,
                        cudaStream_t stream);

// A launcher reached with a configuration it does not instantiate: gemv_launch's checks
// (ring_config_supported, epilogue_built, norm_variant_reason) admit none, so this is a bug; it
// throws rather than leave y unwritten.
[[noreturn]] inline void unbuilt_ring_launch() {
  throw_error("gemv: a register-ring configuration that is not built reached its launcher");
}

// Launches the register-ring kernel of tiers 1, 4 and 16 for a run-time configuration of the
// built ones (ring_config_supported, gemv_policy.h, lists them); the 32-row tier has its own
// launcher (gemv_ring_tier32.cu).
// kXt: the 16-row tier's x by tensor copies (":xt", fp8 with ":wg" only).
template <int kMaxM, bool kBalanced, int kGroupSteps, int kMinCtas, bool kWg = false, bool kFused = false,
          int kEpi = kEpiNone, bool kXt = false>
void launch_ring(const Params& params, dim3 grid, const RingConfig& cfg, cudaStream_t stream) {
  const dim3 block(kThreads);
  if (cfg.fp8) {
    if (cfg.bit_trick) {
      // launch_tier never asks for bits with :g16 or :wg, gemv_launch never with a fused input or SwiGLU
      if constexpr (kGroupSteps == kDefaultGroupSteps && kMinCtas == 2 && !kWg && !kFused &&
                    kEpi == kEpiNone && !kXt)
        launch_chained(gemv_kernel<kMaxM, true, 2, true, kBalanced, kGroupSteps, kMinCtas>, grid, block, 0,
                       stream, params);
      else
        unbuilt_ring_launch();
    } else if (cfg.stages == 4) {
      if constexpr (kMinCtas == 2 && kEpi == kEpiNone)
        launch_chained(
            gemv_kernel<kMaxM, true, 4, false, kBalanced, kGroupSteps, kMinCtas, kWg, kFused, kEpi, kXt>,
            grid, block, 0, stream, params);
      else
        unbuilt_ring_launch();
    } else {
      launch_chained(
          gemv_kernel<kMaxM, true, 2, false, kBalanced, kGroupSteps, kMinCtas, kWg, kFused, kEpi, kXt>, grid,
          block, 0, stream, params);
    }
  } else if constexpr (kXt) {
    unbuilt_ring_launch();  // ring_config_supported admits ":xt" for fp8 weights only
  } else {
    if (cfg.stages >= 2) {  // bf16: s2 (16 loads of 16 bytes) is the deepest ring at two CTAs per SM
      if constexpr (kMinCtas == 2 && kEpi == kEpiNone)
        launch_chained(
            gemv_kernel<kMaxM, false, 2, false, kBalanced, kGroupSteps, kMinCtas, kWg, kFused, kEpi>, grid,
            block, 0, stream, params);
      else
        unbuilt_ring_launch();
    } else {
      launch_chained(gemv_kernel<kMaxM, false, 1, false, kBalanced, kGroupSteps, kMinCtas, kWg, kFused, kEpi>,
                     grid, block, 0, stream, params);
    }
  }
}

// `group_steps` 16 applies to the non-balanced ring of tiers 1 and 4 without the bit trick or
// ":wgn" (which stages kWgNarrowGroupSteps); every other launch stages 4 steps (rows are the same
// bytes either way). `ctas_per_sm` 3 cuts the register budget of every tier to 80 (same grid, same
// bytes).
template <int kMaxM, bool kBalanced, bool kFused = false, int kEpi = kEpiNone>
void launch_tier(const Params& params, dim3 grid, const RingConfig& cfg, cudaStream_t stream) {
  [[maybe_unused]] const bool three = cfg.ctas_per_sm == 3;
  if constexpr (kMaxM <= 4) {
    if (cfg.wgmma_narrow) {
      three ? launch_ring<kMaxM, kBalanced, kWgNarrowGroupSteps, 3, true, kFused, kEpi>(params, grid, cfg,
                                                                                        stream)
            : launch_ring<kMaxM, kBalanced, kWgNarrowGroupSteps, 2, true, kFused, kEpi>(params, grid, cfg,
                                                                                        stream);
      return;
    }
  }
  if constexpr (kMaxM <= 4 && !kBalanced) {
    if (cfg.group_steps == kWideGroupSteps && !cfg.bit_trick) {
      three
          ? launch_ring<kMaxM, kBalanced, kWideGroupSteps, 3, false, kFused, kEpi>(params, grid, cfg, stream)
          : launch_ring<kMaxM, kBalanced, kWideGroupSteps, 2, false, kFused, kEpi>(params, grid, cfg, stream);
      return;
    }
  }
  if constexpr (kMaxM == 16) {
    if (cfg.wgmma && cfg.x_tensor) {
      three ? launch_ring<kMaxM, kBalanced, kDefaultGroupSteps, 3, true, kFused, kEpi, true>(params, grid,
                                                                                             cfg, stream)
            : launch_ring<kMaxM, kBalanced, kDefaultGroupSteps, 2, true, kFused, kEpi, true>(params, grid,
                                                                                             cfg, stream);
      return;
    }
    if (cfg.wgmma) {
      three ? launch_ring<kMaxM, kBalanced, kDefaultGroupSteps, 3, true, kFused, kEpi>(params, grid, cfg,
                                                                                       stream)
            : launch_ring<kMaxM, kBalanced, kDefaultGroupSteps, 2, true, kFused, kEpi>(params, grid, cfg,
                                                                                       stream);
      return;
    }
  }
  if constexpr (kEpi == kEpiNone ||
                kMaxM == 16) {  // tiers 1 and 4 build the epilogues with :g16 or :wgn only
    if (three) {
      launch_ring<kMaxM, kBalanced, kDefaultGroupSteps, 3, false, kFused, kEpi>(params, grid, cfg, stream);
      return;
    }
    launch_ring<kMaxM, kBalanced, kDefaultGroupSteps, 2, false, kFused, kEpi>(params, grid, cfg, stream);
  } else {
    unbuilt_ring_launch();
  }
}

// An epilogue's launch_tier (one CTA per row block), with or without the fused norm (tiers 1, 4).
// The QK-norm/RoPE epilogue exists only on the two-CTA ring (epilogue_built): in tiers 1 and 4
// with ':g16' (mma.sync) or ':wgn', in the 16-row tier with mma.sync, which keeps its kernels to
// eighteen.
template <int kMaxM, int kEpi>
void launch_epilogue_tier(bool fused, const Params& params, dim3 grid, const RingConfig& cfg,
                          cudaStream_t stream) {
  if constexpr (kEpi == kEpiRope) {
    constexpr int kSteps = kMaxM <= 4 ? kWideGroupSteps : kDefaultGroupSteps;
    if constexpr (kMaxM <= 4) {
      if (cfg.wgmma_narrow) {
        fused
            ? launch_ring<kMaxM, false, kWgNarrowGroupSteps, 2, true, true, kEpi>(params, grid, cfg, stream)
            : launch_ring<kMaxM, false, kWgNarrowGroupSteps, 2, true, false, kEpi>(params, grid, cfg, stream);
        return;
      }
      if (fused) {
        launch_ring<kMaxM, false, kSteps, 2, false, true, kEpi>(params, grid, cfg, stream);
        return;
      }
    }
    launch_ring<kMaxM, false, kSteps, 2, false, false, kEpi>(params, grid, cfg, stream);
  } else {  // (an else, not a return: launch_tier would instantiate every QK-norm/RoPE form)
    if constexpr (kMaxM <= 4) {
      if (fused) {
        launch_tier<kMaxM, false, true, kEpi>(params, grid, cfg, stream);
        return;
      }
    }
    launch_tier<kMaxM, false, false, kEpi>(params, grid, cfg, stream);
  }
}

// launch_tier for a run-time grid form, input and output (the fused norm exists for tiers 1 and
// 4, the epilogues for one CTA per row block).
template <int kMaxM>
void launch_tier_of(bool balanced, bool fused, int epilogue, const Params& params, dim3 grid,
                    const RingConfig& cfg, cudaStream_t stream) {
  if (epilogue == kEpiSilu) {
    launch_epilogue_tier<kMaxM, kEpiSilu>(fused, params, grid, cfg, stream);
    return;
  }
  if (epilogue == kEpiRope) {
    launch_epilogue_tier<kMaxM, kEpiRope>(fused, params, grid, cfg, stream);
    return;
  }
  if constexpr (kMaxM <= 4) {
    if (fused) {
      balanced ? launch_tier<kMaxM, true, true>(params, grid, cfg, stream)
               : launch_tier<kMaxM, false, true>(params, grid, cfg, stream);
      return;
    }
  }
  balanced ? launch_tier<kMaxM, true>(params, grid, cfg, stream)
           : launch_tier<kMaxM, false>(params, grid, cfg, stream);
}

}  // namespace lathe::cuda::gemv_detail
