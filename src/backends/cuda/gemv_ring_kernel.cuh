#pragma once
// The register-ring decode GEMV kernel (gemv_ring_launch.cuh launches it; with kBalanced, the
// ringbal variant).
//
// Register-ring work decomposition. A CTA of 8 warps owns 128 consecutive weight rows (16 per warp) and one
// K split of gemv_chunk_steps(n, k) steps of 128 k. Per 128-k step a thread (g = lane / 4,
// c = lane % 4) loads, with 16-byte loads, bytes [c*16, c*16+16) of both 64-k halves of its two
// rows g and g + 8 (fp8: 4 loads; bf16: 8 loads), keeping `kStages` steps of loads in flight in
// a register ring. The 16 k it holds per half and row are fed to four m16n8k16 MMAs (fp8 weights
// in their stored order, fp8_weight_layout.h, bf16 under a K permutation: gemv_common.cuh), and
// the activations x (bf16, staged in shared memory 512 k at a time with cp.async, double buffered)
// are read to match, so the dot products are exact sums over the right pairs. The assignment of k
// to MMAs is the same in every tier.
#include <cuda_bf16.h>

#include <cstdint>

#include "backends/cuda/bulk_copy.cuh"
#include "backends/cuda/chained_launch.cuh"
#include "backends/cuda/gemv.h"
#include "backends/cuda/gemv_common.cuh"
#include "backends/cuda/gemv_fused_norm.cuh"
#include "backends/cuda/gemv_policy.h"
#include "backends/cuda/gemv_wgmma.cuh"
#include "backends/cuda/rms_norm_row.cuh"
#include "backends/cuda/rope_kv.cuh"
#include "backends/cuda/silu_mul.cuh"

namespace lathe::cuda::gemv_detail {

constexpr int kWarps = 8;
constexpr int kThreads = kWarps * 32;
static_assert(kWarps * 16 == kRowsPerCta, "a warp owns 16 rows of the CTA's block");
// Steps of x staged per shared-memory buffer (a CTA-wide barrier pair per group): 4 by default;
// `:g16` (kWideGroupSteps, what `auto` picks) stages 16 (fewer barriers) in the tiers of at most
// 4 rows, where 16 steps of x still fit two CTAs per SM. The staging depth changes no row's arithmetic.
constexpr int kDefaultGroupSteps = 4;
// The 32-row tier stages 2 steps a buffer (32 rows x 2 steps: 17 KB of bf16 x, 16 KB in the wgmma
// layout; two buffers stay under the 48 KB of static shared memory a CTA may declare).
constexpr int kTier32GroupSteps = 2;
// Steps of x per buffer in tiers 1 and 4 under ":wgn": 8 columns x 8 steps is 16 KB a buffer
// (32 KB of the 48 KB a CTA may declare statically).
constexpr int kWgNarrowGroupSteps = 8;
constexpr int x_pitch(int group_steps) { return group_steps * kStepK * 2 + 16; }  // +16: no bank conflicts

// The epilogues a register-ring row block may end with (one CTA per row block; the CTA that holds
// the block's sums runs it): none, the SwiGLU of gate|up (GemvProblem::silu_inter), or the
// QK-norm + RoPE + KV write of a q|k|v head (GemvProblem::rope).
constexpr int kEpiNone = 0, kEpiSilu = 1, kEpiRope = 2;

// kSilu (GemvProblem::silu_inter, the SwiGLU epilogue): row block `blk` is 64 gate rows [blk * 64,
// blk * 64 + 64) in warps 0-3 and the same 64 up rows, silu_inter further on, in warps 4-7, so
// one CTA sums both halves of each of its 64 outputs. Local row lr (0..127) of the block is weight
// row block_row<true>(p, blk, lr); otherwise the block is rows [blk * 128, blk * 128 + 128).
constexpr int kSiluOutputs = kRowsPerCta / 2;  // outputs per row block under kSilu
template <bool kSilu>
__device__ __forceinline__ int block_row(const Params& p, int blk, int lr) {
  if constexpr (kSilu) return (lr < kSiluOutputs ? 0 : p.silu_inter - kSiluOutputs) + blk * kSiluOutputs + lr;
  return blk * kRowsPerCta + lr;
}

__device__ __forceinline__ uint4 load_streaming(const uint8_t* ptr) {
  uint4 v;
  asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(ptr));
  return v;
}

// kBalanced: a persistent grid of CTA unit ranges (gemv_common.cuh, flush_segment) instead of
// one CTA per (row block, K split).
// Two CTAs (16 warps) per SM up to 16 loads (256 bytes) in flight per thread: fp8 s2..s4, bf16
// s1..s2 (the compiler then has 128 registers a thread).
// kMinCtas: CTAs per SM the registers are budgeted for (launch bounds); it changes no arithmetic.
// kWgmma (":wg" in the 16- and 32-row tiers, ":wgn" in tiers 1 and 4): each 16-k chunk as one
// warpgroup MMA (n16 / n32 or n8) with x from shared memory (gemv_wgmma.cuh) instead of mma.sync per
// warp and column group; the same sums, bit for bit.
// kMaxM 32 (the 32-row tier, one weight pass for 17..32 rows; gemv_ring_tier32.cu builds it on both
// grids of the register ring, without the fused norm) stages kTier32GroupSteps steps of x a buffer; on the
// balanced grid its segment partials take 32-column slots (gemv_common.cuh, slot_floats).
// kFusedNorm (tiers 1 and 4, GemvNormInput): x is normalised here (RMS norm, gemv_fused_norm.cuh)
// with the norm kernel's bits.
// kEpilogue (one CTA per row block only): kEpiSilu: rows as block_row says, and y = SwiGLU of the
// gate and up values, each rounded to bf16 first as the gate|up output would be (silu_mul.cuh: the
// silu_mul kernel's bits); kEpiRope: the block is one head of q|k|v, whose bf16 values go through
// the rope kernel's per-head step (rope_kv.cuh: its bits).
// kXTensor (":xt", the 16-row warpgroup-MMA tier of fp8 weights): thread 0 stages each group of x
// with tensor copies of p.x_map (one per 64-k half, the map's 128-byte swizzle writing exactly the
// B layout, rows past m as zeros) that complete on the buffer's mbarrier; the other threads issue
// no staging at all, and the wait is on the barrier's phase instead of cp.async groups and a CTA
// barrier. The same bytes land in the same places.
template <int kMaxM, bool kFp8, int kStages, bool kBitTrick, bool kBalanced,
          int kGroupSteps = kDefaultGroupSteps, int kMinCtas = ((kStages * (kFp8 ? 4 : 8) <= 16) ? 2 : 1),
          bool kWgmma = false, bool kFusedNorm = false, int kEpilogue = kEpiNone, bool kXTensor = false>
__global__ void __launch_bounds__(kThreads, kMinCtas) gemv_kernel(const __grid_constant__ Params p) {
  constexpr bool kSilu = kEpilogue == kEpiSilu;
  constexpr bool kRope = kEpilogue == kEpiRope;
  constexpr bool kStash = kSilu || kRope;        // the block's values wait in shared memory for the epilogue
  constexpr int kColGroups = (kMaxM + 7) / 8;    // n8 column groups of the MMA: 1 (tiers 1, 4), 2, 4
  constexpr int kWgCols = kColGroups * 8;        // columns of the warpgroup MMA's B (n8, n16 or n32)
  // The 16- and 32-row tiers' split-K partials: kPartialCols token rows per split (their stride).
  constexpr int kPartialCols = kColGroups * 8;
  constexpr int kLoads = kFp8 ? 4 : 8;           // 16-byte loads per thread per step
  constexpr int kElem = kFp8 ? 1 : 2;            // bytes per weight element
  static_assert(kGroupSteps % kStages == 0, "ring slot t % kStages must equal step % kStages");
  constexpr int kXPitch = x_pitch(kGroupSteps);
  // Tiers 1 and 4, the 32-row tier, every tier at three CTAs per SM and every warpgroup-MMA tier
  // compute each step straight from its ring slot and refill the slot afterwards (see "The register
  // ring" below); the 16-row mma.sync tier at two CTAs per SM copies the slot out and refills it first.
  constexpr bool kRefillAfter = kMaxM <= 4 || kMaxM > 16 || kMinCtas == 3 || kWgmma;
  constexpr int kXBufferBytes = kWgmma ? kGroupSteps * kWgStepBytes<kWgCols> : kMaxM * kXPitch;
  // The warpgroup-MMA layout's swizzle atoms need 1024-byte alignment (gemv_wgmma_layout.h).
  __shared__ __align__(kWgmma ? kWgAtomBytes : 128) uint8_t xs[2][kXBufferBytes];
  static_assert(!kWgmma || kXBufferBytes % kWgAtomBytes == 0, "whole swizzle atoms a buffer");
  __shared__ int last_arrival;
  // kFusedNorm: 1 / rms of each row, the block sums' scratch.
  __shared__ float row_inv[kFusedNorm ? kMaxM : 1];
  __shared__ float norm_partial[kFusedNorm ? kMaxM : 1][kThreads / 32];
  static_assert(!kFusedNorm || kMaxM <= 4, "the fused norm is built for tiers 1 and 4");
  static_assert(!kStash || !kBalanced, "the epilogues are built for one CTA per row block");
  static_assert(!kStash || kMaxM * kRowsPerCta * sizeof(float) <= 2 * kXBufferBytes,
                "the epilogues stage their values in the x buffers");
  static_assert(!kXTensor || (kWgmma && kFp8 && !kFusedNorm && kMaxM == 16),
                "tensor-copy x is built for the 16-row warpgroup-MMA tier of fp8 weights");
  // kXTensor: buffer b's copies complete on x_ready[b]; bit b of x_parity is the parity of its
  // next phase (one phase per group staged into it, across the balanced grid's segments too).
  __shared__ uint64_t x_ready[kXTensor ? 2 : 1];
  int x_parity = 0;

  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  const int g = lane >> 2;
  const int c = lane & 3;
  const int ksteps = p.k / kStepK;
  const int m = p.m;
  if constexpr (kXTensor) {
    if (threadIdx.x == 0) {
      bulk::mbar_init(&x_ready[0], 1);
      bulk::mbar_init(&x_ready[1], 1);
      bulk::mbar_init_fence();
    }
    __syncthreads();
  } else if constexpr (kWgmma) {
    // The wgmma reads all kWgCols columns of B: zero those past m once (stage_x never writes them).
    if (m < kWgCols) {
      for (int i = threadIdx.x; i < 2 * kXBufferBytes / 16; i += kThreads) {
        if (wg_row_column<kWgCols>(i) >= m)
          *reinterpret_cast<uint4*>(&xs[0][0] + i * 16) = make_uint4(0, 0, 0, 0);
      }
    }
  }
  const bool block_scale = p.scale_kind == static_cast<int>(GemvScale::kBlock128);

  // This thread's weight bytes of segment (blk, s_begin): rows g and g + 8 of the warp's 16,
  // at k offset c * 16 of the segment's first step.
  struct Rows {
    const uint8_t* w0;
    const uint8_t* w1;
  };
  auto segment_rows = [&](int blk, int s_begin) {
    const int n_base = block_row<kSilu>(p, blk, warp * 16);
    const int64_t row_bytes = static_cast<int64_t>(p.k) * kElem;
    const int64_t k_offset = static_cast<int64_t>(s_begin) * kStepK * kElem + c * 16 * kElem;
    return Rows{p.w + min(n_base + g, p.n - 1) * row_bytes + k_offset,
                p.w + min(n_base + g + 8, p.n - 1) * row_bytes + k_offset};
  };
  // Loads step s (< nsteps) of the segment. Order: [half][row] (fp8) or [half][row][2] (bf16).
  auto load_step = [&](uint4(&dst)[kLoads], const Rows& r, int s, int nsteps) {
    if (s < nsteps) {
      const int64_t off = static_cast<int64_t>(s) * kStepK * kElem;
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        if constexpr (kFp8) {
          dst[h * 2 + 0] = load_streaming(r.w0 + off + h * 64);
          dst[h * 2 + 1] = load_streaming(r.w1 + off + h * 64);
        } else {
          dst[h * 4 + 0] = load_streaming(r.w0 + off + h * 128);
          dst[h * 4 + 1] = load_streaming(r.w0 + off + h * 128 + 16);
          dst[h * 4 + 2] = load_streaming(r.w1 + off + h * 128);
          dst[h * 4 + 3] = load_streaming(r.w1 + off + h * 128 + 16);
        }
      }
    }
  };
  // The register ring: kStages slots holding steps s .. s + kStages - 1 of the segment.
  // With kRefillAfter a step computes straight from its slot and then refills it with step
  // s + kStages, so kStages - 1 steps are in flight while a step computes and no slot is copied.
  // The 16-row tier at two CTAs per SM copies its slot out and refills it before computing; as compiled
  // (CUDA 13.0, sm_90a) ptxas issues that refill into spare registers and moves the data into the
  // slot right after the step's MMAs, so each step waits for its own refill (Nsight Compute,
  // session 15: 48% of the stall samples at m = 1 on those moves), yet that form measured faster
  // at m = 16 than the refill-after one (docs/PERFORMANCE.md, "Session 15";
  // bench/kernels/ldg_use_distance.py reads how far ahead the loads are from the SASS).
  uint4 ring[kStages][kLoads];
  // Fills the ring with the segment's first kStages steps and asks L2 for the `extra` steps after
  // them (one 128-byte line of a row per prefetch; lane l takes row l % 16 of the warp's rows).
  auto prime = [&](int blk, int s_begin, int nsteps, int extra) {
    const Rows r = segment_rows(blk, s_begin);
#pragma unroll
    for (int u = 0; u < kStages; ++u) load_step(ring[u], r, u, nsteps);
    if (extra > 0) {
      const int row = min(block_row<kSilu>(p, blk, warp * 16 + (lane & 15)), p.n - 1);
      const uint8_t* base = p.w + row * (static_cast<int64_t>(p.k) * kElem) + static_cast<int64_t>(s_begin) * kStepK * kElem;
      const int last = min(nsteps, kStages + extra);
      for (int line = (lane >> 4) + kStages * kElem; line < last * kElem; line += 2)
        asm volatile("prefetch.global.L2::evict_normal [%0];" ::"l"(base + static_cast<int64_t>(line) * kStepK));
    }
  };

  // Sums steps [s_begin, s_begin + nsteps) of row block `blk` into acc; the ring must hold the
  // segment's first steps (prime).
  auto run_segment = [&](int blk, int s_begin, int nsteps, float(&acc)[kColGroups][4]) {
    const Rows rows = segment_rows(blk, s_begin);
    // This warp's 128x128 scale row (under kSilu its rows' own block, gate or up).
    const int scale_block = kSilu ? block_row<kSilu>(p, blk, warp * 16) / kRowsPerCta : blk;

    // Stages x[0..m) for steps [grp * G, grp * G + G) of this split into buffer `buf` (G = kGroupSteps).
    auto stage_x = [&](int grp, int buf) {
      const int first = grp * kGroupSteps;
      const int count = min(kGroupSteps, nsteps - first);
      if constexpr (kFusedNorm) {  // normalised on the way (gemv_fused_norm.cuh)
        const int64_t k0 = static_cast<int64_t>(s_begin + first) * kStepK;
        if constexpr (kWgmma) {
          wg_stage_x_fused<kWgCols, kMaxM, kGroupSteps, kThreads, kFp8>(xs[buf], p, k0, count, row_inv,
                                                                  threadIdx.x);
        } else {
          const int chunks_per_row = count * (kStepK / 8);
          for (int i = threadIdx.x; i < m * chunks_per_row; i += kThreads) {
            const int r = i / chunks_per_row;
            const int ch = i - r * chunks_per_row;
            *reinterpret_cast<uint4*>(&xs[buf][r * kXPitch + ch * 16]) =
                fused_norm_vec(p, r, k0 + ch * 8, row_inv[r]);
          }
        }
        return;
      }
      if constexpr (kXTensor) {  // one tensor copy per 64-k half: kWgHalfBytes each, zeros past m
        if (threadIdx.x == 0) {
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
          // Orders this CTA's earlier generic-proxy accesses of the buffer before the copies' writes.
          fence_shared_for_wgmma();
#endif
          bulk::mbar_expect_tx(&x_ready[buf], 2 * count * kWgHalfBytes<kWgCols>);
          const int k0 = (s_begin + first) * kStepK;
          for (int h = 0; h < 2 * count; ++h)
            bulk::tensor_copy_2d(xs[buf] + h * kWgHalfBytes<kWgCols>, &p.x_map, k0 + h * 64, 0,
                                 &x_ready[buf]);
        }
        return;
      }
      if constexpr (kWgmma) {  // into the wgmma B layout (gemv_wgmma.cuh)
        wg_stage_x<kWgCols, kWgCols, kGroupSteps, kThreads, kFp8>(
            xs[buf], p.x + static_cast<int64_t>(s_begin + first) * kStepK, p.x_stride, m, count, threadIdx.x);
        return;
      }
      const int chunks_per_row = count * (kStepK * 2 / 16);
      const int total = m * chunks_per_row;
      const int64_t k0 = static_cast<int64_t>(s_begin + first) * kStepK;
      for (int i = threadIdx.x; i < total; i += kThreads) {
        const int r = i / chunks_per_row;
        const int ch = i - r * chunks_per_row;
        cp_async16(&xs[buf][r * kXPitch + ch * 16], p.x + r * p.x_stride + k0 + ch * 8);
      }
    };

    const int groups = (nsteps + kGroupSteps - 1) / kGroupSteps;
    stage_x(0, 0);
    if constexpr (!kXTensor) asm volatile("cp.async.commit_group;");
    for (int grp = 0; grp < groups; ++grp) {
      // Buffer (grp + 1) & 1 is free: every thread passed the barrier that ends group grp - 1.
      if (grp + 1 < groups) stage_x(grp + 1, (grp + 1) & 1);
      if constexpr (kXTensor) {
        const int buf = grp & 1;
        bulk::mbar_wait(&x_ready[buf], (x_parity >> buf) & 1);
        x_parity ^= 1 << buf;
      } else {
        asm volatile("cp.async.commit_group;");
        asm volatile("cp.async.wait_group 1;");
        if constexpr (kWgmma) {
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
          fence_shared_for_wgmma();
#endif
        }
        __syncthreads();
      }
      const uint8_t* xb = xs[grp & 1];
#pragma unroll
      for (int t = 0; t < kGroupSteps; ++t) {
        const int s = grp * kGroupSteps + t;
        if (s < nsteps) {
          uint4 cur[kLoads];
          if constexpr (!kRefillAfter) {
#pragma unroll
            for (int i = 0; i < kLoads; ++i) cur[i] = ring[t % kStages][i];
            load_step(ring[t % kStages], rows, s + kStages, nsteps);
          }

          float part[kColGroups][4];
#pragma unroll
          for (int cg = 0; cg < kColGroups; ++cg)
            part[cg][0] = part[cg][1] = part[cg][2] = part[cg][3] = 0.0f;
          // This thread's weight vectors of each 64-k half: its ring slot, or the copy taken before
          // the refill.
          const uint4* const w_half[2] = {kRefillAfter ? &ring[t % kStages][0] : &cur[0],
                                          kRefillAfter ? &ring[t % kStages][kLoads / 2] : &cur[kLoads / 2]};
          if constexpr (kWgmma) {
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
            wg_step<kWgCols, kFp8, kBitTrick>(part, w_half, xb + t * kWgStepBytes<kWgCols>);
#else
            __trap();  // unreachable: gemv_launch runs :wg only where device_has_wgmma()
#endif
          } else {
#pragma unroll
            for (int h = 0; h < 2; ++h) {
              uint4 xv[kColGroups][2];
              load_x_half<kColGroups, kFp8>(xv, xb + (t * kStepK + h * 64) * 2, kXPitch, m);
              gemv_half<kColGroups, kFp8, kBitTrick>(part, w_half[h], xv);
            }
          }
          if constexpr (kRefillAfter) load_step(ring[t % kStages], rows, s + kStages, nsteps);
          const float sc =
              block_scale ? __ldg(p.scale + static_cast<int64_t>(scale_block) * ksteps + s_begin + s) : 1.0f;
          accumulate_step<kColGroups>(acc, part, sc);
        }
      }
      __syncthreads();
    }
  };

  float acc[kColGroups][4];
#pragma unroll
  for (int cg = 0; cg < kColGroups; ++cg) acc[cg][0] = acc[cg][1] = acc[cg][2] = acc[cg][3] = 0.0f;

  // The weights are written only when the model loads, so their first steps may be requested
  // before the wait for the previous kernel (p.early_steps >= 0, chained launches): they stream
  // in while that kernel finishes. x, the workspace and the counters are touched only after it.
  if constexpr (kBalanced) {
    const int64_t begin = static_cast<int64_t>(blockIdx.x) * p.cta_units;
    const int64_t end = min(begin + p.cta_units, p.total_units);
    auto segment_at = [&](int64_t f, int& blk, int& s0, int& cnt) {
      blk = static_cast<int>(f / ksteps);
      s0 = static_cast<int>(f - static_cast<int64_t>(blk) * ksteps);
      cnt = static_cast<int>(min(static_cast<int64_t>(ksteps - s0), end - f));
    };
    int blk = 0, s0 = 0, cnt = 0;
    const bool has_work = begin < end;
    if (has_work) segment_at(begin, blk, s0, cnt);
    if (has_work && p.early_steps >= 0) prime(blk, s0, cnt, p.early_steps);
    chained_kernel_begin();
    if (has_work && p.early_steps < 0) prime(blk, s0, cnt, 0);
    if constexpr (kFusedNorm) fused_norm_rows<kMaxM, kThreads>(p, row_inv, norm_partial);
    for (int64_t f = begin; f < end;) {
      segment_at(f, blk, s0, cnt);
      if (f != begin) prime(blk, s0, cnt, 0);
      run_segment(blk, s0, cnt, acc);
      flush_segment<kColGroups, kThreads>(p, acc, blk, begin, end, warp, lane, &last_arrival);
#pragma unroll
      for (int cg = 0; cg < kColGroups; ++cg) acc[cg][0] = acc[cg][1] = acc[cg][2] = acc[cg][3] = 0.0f;
      f += cnt;
    }
    return;
  }
  {
    const int s_begin = blockIdx.y * p.chunk_steps;
    const int nsteps = min(s_begin + p.chunk_steps, ksteps) - s_begin;
    if (p.early_steps >= 0) prime(blockIdx.x, s_begin, nsteps, p.early_steps);
    if constexpr (kStash) {
      chained_kernel_wait();
      if (!p.release_after_loop) chained_kernel_release();
    } else {
      chained_kernel_begin();
    }
    if (p.early_steps < 0) prime(blockIdx.x, s_begin, nsteps, 0);
    if constexpr (kFusedNorm) fused_norm_rows<kMaxM, kThreads>(p, row_inv, norm_partial);
    run_segment(blockIdx.x, s_begin, nsteps, acc);
    if constexpr (kStash) {
      if (p.release_after_loop) chained_kernel_release();
    }
  }

  // kStash: the block's values (rounded to bf16 as a stored output) wait in the x buffers, free
  // after the last step, as [column][local row], until epilogue_finish uses them.
  float* const stash_vals = reinterpret_cast<float*>(&xs[0][0]);
  auto stash = [&](int lr, int col, float sum) {
    const float v = output_value(p, block_row<kSilu>(p, blockIdx.x, lr), sum);
    stash_vals[col * kRowsPerCta + lr] = __bfloat162float(__float2bfloat16_rn(v));
  };
  auto epilogue_finish = [&]() {
    __syncthreads();
    auto* const y = static_cast<__nv_bfloat16*>(p.y);
    if constexpr (kSilu) {  // pairs each output's gate and up values
      for (int i = threadIdx.x; i < kSiluOutputs * m; i += kThreads) {
        const int r = i % kSiluOutputs;
        const int col = i / kSiluOutputs;
        const float gate = stash_vals[col * kRowsPerCta + r];
        const float up = stash_vals[col * kRowsPerCta + kSiluOutputs + r];
        y[static_cast<int64_t>(col) * p.y_stride + blockIdx.x * kSiluOutputs + r] =
            __float2bfloat16_rn(silu_mul_value(gate, up));
      }
    } else {  // kRope: a warp per column runs the head's QK-norm / RoPE / KV write on its values
      for (int col = warp; col < m; col += kWarps) {
        qk_norm_rope_head<kRowsPerCta>(p.rope, col, static_cast<int>(blockIdx.x), lane,
                                       stash_vals + col * kRowsPerCta,
                                       y + static_cast<int64_t>(col) * p.y_stride + blockIdx.x * kRowsPerCta);
      }
    }
  };
  // Where the fp32 sum of the split sum's row `row` (of the grid's 128-row blocks), column col goes.
  auto finish_output = [&](int row, int col, float sum) {
    if constexpr (kStash) {
      stash(row - static_cast<int>(blockIdx.x) * kRowsPerCta, col, sum);
    } else {
      store_output(p, row, col, sum);
    }
  };

  // Calls f(local row, weight row, column, sum) for each of this thread's sums with a column < m:
  // acc[cg][i] is local row warp * 16 + g + (i >= 2 ? 8 : 0) of the block, column cg * 8 + 2c + (i & 1).
  const int row_first = blockIdx.x * kRowsPerCta;
  auto for_each_sum = [&](auto f) {
#pragma unroll
    for (int cg = 0; cg < kColGroups; ++cg) {
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const int lr = warp * 16 + g + (i >= 2 ? 8 : 0);
        const int col = cg * 8 + 2 * c + (i & 1);
        if (col < m) f(lr, row_first + lr, col, acc[cg][i]);
      }
    }
  };
  if (p.ksplit == 1) {
    if constexpr (kStash) {
      for_each_sum([&](int lr, int, int col, float sum) { stash(lr, col, sum); });
      epilogue_finish();
    } else {
      for_each_sum([&](int, int row, int col, float sum) {
        if (row < p.n) store_output(p, row, col, sum);
      });
    }
    return;
  }

  if constexpr (kMaxM > 4) {
    // The 16- and 32-row tiers: every split writes its partials, arrives on the block's counter, and the
    // last to arrive sums the splits in index order, taking quads of rows with their loads batched
    // where n keeps the quads aligned (two quads of four splits in flight per thread; two quads of
    // eight spill at three CTAs per SM): 7-17% off the split shapes at m = 16 against one output
    // per thread (session 17, docs/PERFORMANCE.md). The split slots below made it slower at 16
    // rows, as 64-bit words (session 29) and as 32-bit ones with half the bytes (session 30).
    float* part = p.partials + static_cast<int64_t>(blockIdx.y) * kPartialCols * p.n;
    for_each_sum([&](int, int row, int col, float sum) {
      if (row < p.n) __stcg(part + static_cast<int64_t>(col) * p.n + row, sum);
    });
    __syncthreads();
    if constexpr (!kStash && kMinCtas == 2) {  // gemv_launch takes it at two CTAs per SM only
      if (p.split_sum_all) {
        // Each split sums its own share over all splits in index order (the adds of the path
        // below, spread over the block's CTAs), the last to arrive also any share left to it.
        __shared__ uint32_t shares;
        if (threadIdx.x == 0) shares = arrive_for_shares(p, blockIdx.x, blockIdx.y);
        __syncthreads();
        if (threadIdx.x == 0) depart(p, blockIdx.x);
        const auto store = [&](int row, int col, float sum) { store_output(p, row, col, sum); };
        const int split = static_cast<int>(blockIdx.y);
        const uint32_t own = 1u << split;
        if (shares == own) {  // its own share: quads [split * 32 / ksplit, (split + 1) * 32 / ksplit)
          sum_partial_shares<kThreads, kPartialCols>(p, row_first, split * 32 / p.ksplit, (split + 1) * 32 / p.ksplit,
                                                     own, store);
        } else if (shares != 0) {  // the last to arrive, with shares left to it: one pass over them all
          sum_partial_shares<kThreads, kPartialCols>(p, row_first, 0, 32, shares, store);
        }
        return;
      }
    }
    if (threadIdx.x == 0) last_arrival = arrive_acq_rel(p.counters + blockIdx.x) == p.ksplit - 1;
    __syncthreads();
    if (!last_arrival) return;
    if (p.n % 4 == 0) {
      const float* block_partials = p.partials + row_first;
      // Two quads in flight at 16 and 32 rows (four at 32 would hold 64 registers of loads).
      sum_partials_in_order<kThreads, kPartialCols, (kColGroups < 2 ? kColGroups : 2), 4>(
          p, row_first, p.ksplit, p.n,
          [&](int j) { return block_partials + static_cast<int64_t>(j) * kPartialCols * p.n; },
          [&](int row, int col, float sum) { finish_output(row, col, sum); });
    } else {
      for (int i = threadIdx.x; i < kRowsPerCta * m; i += kThreads) {
        const int row = row_first + (i % kRowsPerCta);
        const int col = i / kRowsPerCta;
        if (row >= p.n) continue;
        const int64_t idx = static_cast<int64_t>(col) * p.n + row;
        float sum = __ldcg(p.partials + idx);
        for (int j = 1; j < p.ksplit; ++j)
          sum = __fadd_rn(sum, __ldcg(p.partials + static_cast<int64_t>(j) * kPartialCols * p.n + idx));
        finish_output(row, col, sum);
      }
    }
    if constexpr (kStash) epilogue_finish();
    if (threadIdx.x == 0) p.counters[blockIdx.x] = 0;
    return;
  }

  // Tiers 1 and 4: the split slots (gemv_common.cuh). Every split but the last puts its partials
  // in its slots and is done; the block's last split, last in launch order (it waits only on CTAs
  // dispatched before it: CUDA does not promise that order, the hardware keeps it, and the grids
  // `auto` picks fit one wave), keeps its own partials in shared memory and sums the splits in
  // index order as their slots fill: no CTA barrier, fence or atomic between the last partial and
  // the sum. Measured on the H200 (docs/PERFORMANCE.md, "Session 29").
  if (static_cast<int>(blockIdx.y) != p.ksplit - 1) {
    for_each_sum([&](int lr, int row, int col, float sum) {
      if (row < p.n)
        put_slot(p.split_slots + split_slot_index(blockIdx.y, gridDim.x, blockIdx.x, col, lr), sum);
    });
    return;
  }
  // The own partials as [column][local row], after the epilogue's stash in the free x buffers.
  float* const own = stash_vals + (kStash ? kMaxM * kRowsPerCta : 0);
  static_assert((kStash ? 2 : 1) * kMaxM * kRowsPerCta * sizeof(float) <= 2 * kXBufferBytes,
                "the own partials (and the stash) fit the x buffers");
  for_each_sum([&](int lr, int, int col, float sum) { own[col * kRowsPerCta + lr] = sum; });
  __syncthreads();
  // Tier 1: one row a thread (128 threads); tier 4: row pairs (one 16-byte read a slot pair).
  constexpr int kSumRows = kMaxM > 1 ? 2 : 1;
  sum_split_slots<kThreads, kSumRows, 1, 8>(
      m, min(kRowsPerCta, p.n - row_first), p.ksplit, own,
      [&](int j) { return p.split_slots + split_slot_index(j, gridDim.x, blockIdx.x, 0, 0); },
      [&](int lr, int col, float sum) { finish_output(row_first + lr, col, sum); });
  if constexpr (kStash) epilogue_finish();
}

}  // namespace lathe::cuda::gemv_detail
