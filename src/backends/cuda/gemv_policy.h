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

// The least weight bytes per K split of a 128-row block that gemv_auto_variant's split keeps: 6
// steps of fp8 (64 KB splits lost on Qwen3-8B o and down), 3 of bf16 (Qwen3-8B o at 8 splits of
// 128 KB: 7% faster at 1 and 4 rows than 5 of 224 KB; session 31, docs/PERFORMANCE.md).
inline constexpr int64_t kMinSplitBytes = 6 * kStepK * kRowsPerCta;

// gemv_auto_variant takes the three-CTA wave (396 slots, "b3") over the two-CTA one when its
// K split fills the wave by at least this much more (Qwen3-8B gate|up: 192 of 264 slots against
// 384 of 396; session 15, docs/PERFORMANCE.md).
inline constexpr double kThreeCtaFillGain = 0.15;

// bf16 weights of at least this many 128-row blocks (131072 rows: vocabulary projections, no
// Qwen3 decoder-layer weight comes near) take the stream kernel with tensor copies, two CTAs per SM
// ("stream:b2:tma"): session 39 measured it faster than ringbal on the Qwen3-8B/32B lm_head at
// m = 1 and 16. Of the decoder-layer shapes it was slower on all but Qwen3-32B gate|up (bf16
// 51200x5120: 4% faster at m = 1, 3% at m = 16 in isolation, one round), whose ring carries the
// fused norm and SwiGLU epilogue the stream kernel lacks; that shape stays on the ring until the
// decode step says otherwise.
inline constexpr int64_t kStreamTmaMinBlocks = 1024;

// gemv_auto_variant's rule for a wave of `wave` resident CTAs (264: the default; 396: "auto:b3").
GemvVariant auto_variant_for_wave(bool fp8, int64_t n, int64_t k, int wave);

// A register-ring launch resolved from a variant: the fields the launchers (gemv_ring_launch.cuh)
// instantiate.
struct RingConfig {
  bool fp8 = false;
  int stages = 0;
  bool bit_trick = false;
  int group_steps = 0;
  int ctas_per_sm = 0;
  bool wgmma = false;         // the 16- and 32-row tiers' warpgroup MMA (":wg")
  bool wgmma_narrow = false;  // tiers 1 and 4 as warpgroup MMAs (":wgn")
  bool x_tensor = false;      // the 16-row tier's ":wg" x by tensor copies (":xt")
};

// The configuration of a resolved register-ring variant. Its default ring depths (fp8 2, bf16 1)
// were measured on the H200 (docs/PERFORMANCE.md): the smallest rings keep registers under 128, so
// two CTAs (16 warps) share an SM, and beat deeper rings at one CTA per SM (fp8 gate_up m = 1: 64%
// against 48% of the read ceiling; bf16: 80% against 61%).
// fused_norm: the launch normalises x itself (GemvNormInput), where ":wgnu" keeps tiers 1 and 4 on
// mma.sync (GemvVariant::wgmma_narrow_copied_x_only).
RingConfig ring_config(const GemvVariant& v, bool fp8, bool fused_norm = false);

// Whether the register ring's launchers (gemv_ring_launch.cuh) build the configuration: two CTAs
// per SM: fp8 s2, s4, s2:bits; bf16 s1, s2; three CTAs per SM (":b3", every tier, 80 registers):
// fp8 s2, bf16 s1; ":wg" and ":wgn": each of those but s2:bits; ":xt": fp8 with ":wg".
// gemv_launch asks it first (the launchers throw on the others).
bool ring_config_supported(const RingConfig& cfg);

// Whether the launchers (gemv_ring_launch.cuh) build the SwiGLU (rope false) or QK-norm/RoPE (rope
// true) epilogue of `tier` in configuration `cfg` (as it runs: ':wg' and ':wgn' cleared on a device
// without warpgroup MMAs).
// Built: the ring depths `auto` takes (fp8 s2, bf16 s1) without ':bits'; in tiers 1 and 4 the x
// staging `auto` takes there (':g16' or ':wgn'); QK-norm/RoPE only at two CTAs per SM, and in the
// 16-row tier only with mma.sync (no ':wg'; 32 rows have no QK-norm/RoPE form). Any other
// configuration would only add kernels nobody runs (each is a copy of every tier); gemv_launch
// refuses them, and the backend then runs the GEMV and the separate kernel.
bool epilogue_built(int tier, const RingConfig& cfg, bool rope);

}  // namespace lathe::cuda::gemv_detail
