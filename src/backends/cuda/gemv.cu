// The decode GEMV tiers (see gemv.h for the contract and the bit-identity argument): the
// launcher and the register-ring kernel (with kBalanced, the ringbal variant). The per-shape
// choice between them (gemv_auto_variant), the K splits and the variant names are in
// gemv_policy.cpp; the bulk-copy stream variants in gemv_stream.cu.
//
// Register-ring work decomposition. A CTA of 8 warps owns 128 consecutive weight rows (16 per warp) and one
// K split of gemv_chunk_steps(n, k) steps of 128 k. Per 128-k step a thread (g = lane / 4,
// c = lane % 4) loads, with 16-byte loads, bytes [c*16, c*16+16) of both 64-k halves of its two
// rows g and g + 8 (fp8: 4 loads; bf16: 8 loads), keeping `kStages` steps of loads in flight in
// a register ring. The 16 k it holds per half and row are fed to four m16n8k16 MMAs under a K
// permutation (MMA q takes physical k = c*16 + 4q .. 4q+3 as logical {2c, 2c+1, 2c+8, 2c+9}),
// and the activations x (bf16, staged in shared memory 512 k at a time with cp.async, double
// buffered) are read with the same permutation, so the dot products are exact sums over the
// right pairs. The permutation is the same in every tier.
#include <cuda_bf16.h>

#include <algorithm>

#include "backends/cuda/chained_launch.cuh"
#include "backends/cuda/check.h"
#include "backends/cuda/gemv.h"
#include "backends/cuda/gemv_common.cuh"
#include "backends/cuda/gemv_fused_norm.cuh"
#include "backends/cuda/gemv_policy.h"
#include "backends/cuda/gemv_stream.cuh"
#include "backends/cuda/gemv_wgmma.cuh"
#include "backends/cuda/rms_norm_row.cuh"
#include "backends/cuda/silu_mul.cuh"

namespace lathe::cuda {
namespace {

using namespace gemv_detail;

constexpr int kWarps = 8;
constexpr int kThreads = kWarps * 32;
static_assert(kWarps * 16 == kRowsPerCta, "a warp owns 16 rows of the CTA's block");
// Steps of x staged per shared-memory buffer (a CTA-wide barrier pair per group): 4 by default;
// `:g16` (kWideGroupSteps, what `auto` picks) stages 16 (fewer barriers) in the tiers of at most
// 4 rows, where 16 steps of x still fit two CTAs per SM. The staging depth changes no row's arithmetic.
constexpr int kDefaultGroupSteps = 4;
// Steps of x per buffer in tiers 1 and 4 under ":wgn": 8 columns x 8 steps is 16 KB a buffer
// (32 KB of the 48 KB a CTA may declare statically).
constexpr int kWgNarrowGroupSteps = 8;
constexpr int x_pitch(int group_steps) { return group_steps * kStepK * 2 + 16; }  // +16: no bank conflicts

// kSilu (GemvProblem::silu_inter, the SwiGLU epilogue): row block `blk` is 64 gate rows [blk * 64,
// blk * 64 + 64) in warps 0-3 and the same 64 up rows, silu_inter further on, in warps 4-7, so
// one CTA sums both halves of each of its 64 outputs. Local row lr (0..127) of the block is weight
// row silu_row(p, blk, lr); otherwise the block is rows [blk * 128, blk * 128 + 128).
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

__device__ __forceinline__ void cp_async16(void* smem, const void* gmem) {
  const unsigned addr = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(addr), "l"(gmem));
}

// kBalanced: a persistent grid of CTA unit ranges (gemv_common.cuh, flush_segment) instead of
// one CTA per (row block, K split).
// Two CTAs (16 warps) per SM up to 16 loads (256 bytes) in flight per thread: fp8 s2..s4, bf16
// s1..s2 (the compiler then has 128 registers a thread).
// kMinCtas: CTAs per SM the registers are budgeted for (launch bounds); it changes no arithmetic.
// kWgmma (":wg" in the 16-row tier, ":wgn" in tiers 1 and 4): each 16-k chunk as one warpgroup MMA
// (n16 or n8) with x from shared memory (gemv_wgmma.cuh) instead of mma.sync per warp and column
// group; the same sums, bit for bit.
// kFusedNorm (tiers 1 and 4, GemvNormInput): x is normalised here (RMS norm, gemv_fused_norm.cuh)
// with the norm kernel's bits.
// kSilu (one CTA per row block only): rows as block_row says, and y = SwiGLU of the gate and up
// values, each rounded to bf16 first as the gate|up output would be (silu_mul.cuh: the silu_mul
// kernel's bits).
template <int kMaxM, bool kFp8, int kStages, bool kBitTrick, bool kBalanced,
          int kGroupSteps = kDefaultGroupSteps, int kMinCtas = ((kStages * (kFp8 ? 4 : 8) <= 16) ? 2 : 1),
          bool kWgmma = false, bool kFusedNorm = false, bool kSilu = false>
__global__ void __launch_bounds__(kThreads, kMinCtas) gemv_kernel(Params p) {
  constexpr int kColGroups = kMaxM > 8 ? 2 : 1;  // n8 column groups of the MMA
  constexpr int kWgCols = kColGroups * 8;        // columns of the warpgroup MMA's B (n16 or n8)
  constexpr int kLoads = kFp8 ? 4 : 8;           // 16-byte loads per thread per step
  constexpr int kElem = kFp8 ? 1 : 2;            // bytes per weight element
  static_assert(kGroupSteps % kStages == 0, "ring slot t % kStages must equal step % kStages");
  constexpr int kXPitch = x_pitch(kGroupSteps);
  // Tiers 1 and 4, every tier at three CTAs per SM and every warpgroup-MMA tier compute each step
  // straight from its ring slot and refill the slot afterwards (see "The register ring" below); the
  // 16-row mma.sync tier at two CTAs per SM copies the slot out and refills it first.
  constexpr bool kRefillAfter = kMaxM <= 4 || kMinCtas == 3 || kWgmma;
  constexpr int kXBufferBytes = kWgmma ? kGroupSteps * kWgStepBytes<kWgCols> : kMaxM * kXPitch;
  __shared__ __align__(128) uint8_t xs[2][kXBufferBytes];
  __shared__ int last_arrival;
  // kFusedNorm: 1 / rms of each row, the block sums' scratch.
  __shared__ float row_inv[kFusedNorm ? kMaxM : 1];
  __shared__ float norm_partial[kFusedNorm ? kMaxM : 1][kThreads / 32];
  static_assert(!kFusedNorm || kMaxM <= 4, "the fused norm is built for tiers 1 and 4");
  static_assert(!kSilu || !kBalanced, "the SwiGLU epilogue is built for one CTA per row block");
  static_assert(!kSilu || kMaxM * kRowsPerCta * sizeof(float) <= 2 * kXBufferBytes,
                "the SwiGLU epilogue stages its values in the x buffers");

  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  const int g = lane >> 2;
  const int c = lane & 3;
  const int ksteps = p.k / kStepK;
  const int m = p.m;
  if constexpr (kWgmma) {
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
          wg_stage_x_fused<kWgCols, kMaxM, kGroupSteps, kThreads>(xs[buf], p, k0, count, row_inv,
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
      if constexpr (kWgmma) {  // word by word into the wgmma B layout (gemv_wgmma.cuh)
        wg_stage_x<kWgCols, kWgCols, kGroupSteps, kThreads>(
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
    asm volatile("cp.async.commit_group;");
    for (int grp = 0; grp < groups; ++grp) {
      if (grp + 1 < groups) stage_x(grp + 1, (grp + 1) & 1);
      asm volatile("cp.async.commit_group;");
      asm volatile("cp.async.wait_group 1;");
      if constexpr (kWgmma) {
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
        fence_shared_for_wgmma();
#endif
      }
      __syncthreads();
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
#pragma unroll
              for (int cg = 0; cg < kColGroups; ++cg) {
                const int col = cg * 8 + g;
                if (col < m) {
                  const uint8_t* src = xb + col * kXPitch + (t * kStepK + h * 64 + c * 16) * 2;
                  xv[cg][0] = *reinterpret_cast<const uint4*>(src);
                  xv[cg][1] = *reinterpret_cast<const uint4*>(src + 16);
                } else {
                  xv[cg][0] = make_uint4(0, 0, 0, 0);
                  xv[cg][1] = make_uint4(0, 0, 0, 0);
                }
              }
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
  const int n_base = blockIdx.x * kRowsPerCta + warp * 16;
  {
    const int s_begin = blockIdx.y * p.chunk_steps;
    const int nsteps = min(s_begin + p.chunk_steps, ksteps) - s_begin;
    if (p.early_steps >= 0) prime(blockIdx.x, s_begin, nsteps, p.early_steps);
    if constexpr (kSilu) {
      chained_kernel_wait();
      if (!p.release_after_loop) chained_kernel_release();
    } else {
      chained_kernel_begin();
    }
    if (p.early_steps < 0) prime(blockIdx.x, s_begin, nsteps, 0);
    if constexpr (kFusedNorm) fused_norm_rows<kMaxM, kThreads>(p, row_inv, norm_partial);
    run_segment(blockIdx.x, s_begin, nsteps, acc);
    if constexpr (kSilu) {
      if (p.release_after_loop) chained_kernel_release();
    }
  }

  // kSilu: each output's two values (rounded to bf16 as a stored gate|up output) wait in the x
  // buffers, free after the last step, as [column][local row], until silu_finish pairs them.
  float* const silu_vals = reinterpret_cast<float*>(&xs[0][0]);
  auto silu_stash = [&](int lr, int col, float sum) {
    const float v = output_value(p, block_row<kSilu>(p, blockIdx.x, lr), sum);
    silu_vals[col * kRowsPerCta + lr] = __bfloat162float(__float2bfloat16_rn(v));
  };
  auto silu_finish = [&]() {
    __syncthreads();
    auto* const y = static_cast<__nv_bfloat16*>(p.y);
    for (int i = threadIdx.x; i < kSiluOutputs * m; i += kThreads) {
      const int r = i % kSiluOutputs;
      const int col = i / kSiluOutputs;
      const float gate = silu_vals[col * kRowsPerCta + r];
      const float up = silu_vals[col * kRowsPerCta + kSiluOutputs + r];
      y[static_cast<int64_t>(col) * p.y_stride + blockIdx.x * kSiluOutputs + r] =
          __float2bfloat16_rn(silu_mul_value(gate, up));
    }
  };
  // Where the fp32 sum of the split sum's row `row` (of the grid's 128-row blocks), column col goes.
  auto finish_output = [&](int row, int col, float sum) {
    if constexpr (kSilu) {
      silu_stash(row - static_cast<int>(blockIdx.x) * kRowsPerCta, col, sum);
    } else {
      store_output(p, row, col, sum);
    }
  };

  // acc[cg][i]: row n_base + g + (i >= 2 ? 8 : 0), column cg * 8 + 2c + (i & 1).
  if (p.ksplit == 1) {
    if constexpr (kSilu) {
#pragma unroll
      for (int cg = 0; cg < kColGroups; ++cg) {
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          const int col = cg * 8 + 2 * c + (i & 1);
          if (col < m) silu_stash(warp * 16 + g + (i >= 2 ? 8 : 0), col, acc[cg][i]);
        }
      }
      silu_finish();
    } else {
#pragma unroll
      for (int cg = 0; cg < kColGroups; ++cg) {
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          const int row = n_base + g + (i >= 2 ? 8 : 0);
          const int col = cg * 8 + 2 * c + (i & 1);
          if (row < p.n && col < m) store_output(p, row, col, acc[cg][i]);
        }
      }
    }
    return;
  }

  float* part = p.partials + static_cast<int64_t>(blockIdx.y) * 16 * p.n;
#pragma unroll
  for (int cg = 0; cg < kColGroups; ++cg) {
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int row = n_base + g + (i >= 2 ? 8 : 0);
      const int col = cg * 8 + 2 * c + (i & 1);
      if (row < p.n && col < m) __stcg(part + static_cast<int64_t>(col) * p.n + row, acc[cg][i]);
    }
  }
  __syncthreads();
  if (threadIdx.x == 0) last_arrival = arrive_acq_rel(p.counters + blockIdx.x) == p.ksplit - 1;
  __syncthreads();
  if (!last_arrival) return;
  // The last CTA of this row block sums the splits in index order. Tiers 4 and 16 take quads of
  // rows with their loads batched (sum_partials_in_order) where n keeps the quads aligned: the
  // 16-row tier two quads of four splits in flight per thread (two quads of eight spill at three
  // CTAs per SM), tier 4 one quad of eight splits. Measured in context on the H200 (session 17,
  // docs/PERFORMANCE.md): 7-17% off the split shapes at m = 16; the 1-row tier was 3-4% slower on
  // the Qwen3-8B shapes that way, so it keeps one output per thread (128 threads). The adds and
  // their order are the same in every form, so the bytes are.
  const int row_first = blockIdx.x * kRowsPerCta;
  if (kMaxM > 1 && p.n % 4 == 0) {
    const float* block_partials = p.partials + row_first;
    constexpr int kSumBatch = kColGroups == 2 ? 4 : 8;
    sum_partials_in_order<kThreads, kColGroups * 8, kColGroups, kSumBatch>(
        p, row_first, p.ksplit, p.n,
        [&](int j) { return block_partials + static_cast<int64_t>(j) * 16 * p.n; },
        [&](int row, int col, float sum) { finish_output(row, col, sum); });
    if constexpr (kSilu) silu_finish();
    if (threadIdx.x == 0) p.counters[blockIdx.x] = 0;
    return;
  }
  for (int i = threadIdx.x; i < kRowsPerCta * m; i += kThreads) {
    const int row = row_first + (i % kRowsPerCta);
    const int col = i / kRowsPerCta;
    if (row >= p.n) continue;
    const int64_t idx = static_cast<int64_t>(col) * p.n + row;
    float sum = __ldcg(p.partials + idx);
    for (int j = 1; j < p.ksplit; ++j)
      sum = __fadd_rn(sum, __ldcg(p.partials + static_cast<int64_t>(j) * 16 * p.n + idx));
    finish_output(row, col, sum);
  }
  if constexpr (kSilu) silu_finish();
  if (threadIdx.x == 0) p.counters[blockIdx.x] = 0;
}

// A register-ring launch, resolved from the variant (gemv_launch).
struct RingConfig {
  bool fp8 = false;
  int stages = 0;
  bool bit_trick = false;
  int group_steps = 0;
  int ctas_per_sm = 0;
  bool wgmma = false;         // the 16-row tier's warpgroup MMA (":wg")
  bool wgmma_narrow = false;  // tiers 1 and 4 as warpgroup MMAs (":wgn")
};

// Launch configurations of the register ring (ring_config_supported says which exist):
//   two CTAs per SM: fp8 s2, s4, s2:bits; bf16 s1, s2;
//   three CTAs per SM (":b3", every tier, 80 registers): fp8 s2, bf16 s1;
//   ":wg" (the 16-row tier's warpgroup MMA) and ":wgn" (tiers 1 and 4): each of those but s2:bits.
template <int kMaxM, bool kBalanced, int kGroupSteps, int kMinCtas, bool kWg = false, bool kFused = false,
          bool kSilu = false>
void launch_ring(const Params& params, dim3 grid, const RingConfig& cfg, cudaStream_t stream) {
  const dim3 block(kThreads);
  if (cfg.fp8) {
    if (cfg.bit_trick) {
      // launch_tier never asks for bits with :g16 or :wg, gemv_launch never with a fused input or SwiGLU
      if constexpr (kGroupSteps == kDefaultGroupSteps && kMinCtas == 2 && !kWg && !kFused && !kSilu)
        launch_chained(gemv_kernel<kMaxM, true, 2, true, kBalanced, kGroupSteps, kMinCtas>, grid, block, 0,
                       stream, params);
    } else if (cfg.stages == 4) {
      if constexpr (kMinCtas == 2 && !kSilu)
        launch_chained(
            gemv_kernel<kMaxM, true, 4, false, kBalanced, kGroupSteps, kMinCtas, kWg, kFused, kSilu>, grid,
            block, 0, stream, params);
    } else {
      launch_chained(gemv_kernel<kMaxM, true, 2, false, kBalanced, kGroupSteps, kMinCtas, kWg, kFused, kSilu>,
                     grid, block, 0, stream, params);
    }
  } else {
    if (cfg.stages >= 2) {  // bf16: s2 (16 loads of 16 bytes) is the deepest ring at two CTAs per SM
      if constexpr (kMinCtas == 2 && !kSilu)
        launch_chained(
            gemv_kernel<kMaxM, false, 2, false, kBalanced, kGroupSteps, kMinCtas, kWg, kFused, kSilu>, grid,
            block, 0, stream, params);
    } else {
      launch_chained(
          gemv_kernel<kMaxM, false, 1, false, kBalanced, kGroupSteps, kMinCtas, kWg, kFused, kSilu>, grid,
          block, 0, stream, params);
    }
  }
}

// Whether launch_ring has the configuration (it skips the others silently, so gemv_launch asks first).
bool ring_config_supported(const RingConfig& cfg) {
  if ((cfg.wgmma || cfg.wgmma_narrow) && cfg.bit_trick) return false;
  if (cfg.ctas_per_sm == 3) return !cfg.bit_trick && cfg.stages == (cfg.fp8 ? 2 : 1);
  if (cfg.fp8) return cfg.bit_trick ? cfg.stages == 2 : (cfg.stages == 2 || cfg.stages == 4);
  return cfg.stages == 1 || cfg.stages == 2;
}

// `group_steps` 16 applies to the non-balanced ring of tiers 1 and 4 without the bit trick or
// ":wgn" (which stages kWgNarrowGroupSteps); every other launch stages 4 steps (rows are the same
// bytes either way). `ctas_per_sm` 3 cuts the register budget of every tier to 80 (same grid, same
// bytes).
template <int kMaxM, bool kBalanced, bool kFused = false, bool kSilu = false>
void launch_tier(const Params& params, dim3 grid, const RingConfig& cfg, cudaStream_t stream) {
  [[maybe_unused]] const bool three = cfg.ctas_per_sm == 3;
  if constexpr (kMaxM <= 4) {
    if (cfg.wgmma_narrow) {
      three ? launch_ring<kMaxM, kBalanced, kWgNarrowGroupSteps, 3, true, kFused, kSilu>(params, grid, cfg,
                                                                                         stream)
            : launch_ring<kMaxM, kBalanced, kWgNarrowGroupSteps, 2, true, kFused, kSilu>(params, grid, cfg,
                                                                                         stream);
      return;
    }
  }
  if constexpr (kMaxM <= 4 && !kBalanced) {
    if (cfg.group_steps == kWideGroupSteps && !cfg.bit_trick) {
      three
          ? launch_ring<kMaxM, kBalanced, kWideGroupSteps, 3, false, kFused, kSilu>(params, grid, cfg, stream)
          : launch_ring<kMaxM, kBalanced, kWideGroupSteps, 2, false, kFused, kSilu>(params, grid, cfg,
                                                                                    stream);
      return;
    }
  }
  if constexpr (kMaxM == 16) {
    if (cfg.wgmma) {
      three ? launch_ring<kMaxM, kBalanced, kDefaultGroupSteps, 3, true, kFused, kSilu>(params, grid, cfg,
                                                                                        stream)
            : launch_ring<kMaxM, kBalanced, kDefaultGroupSteps, 2, true, kFused, kSilu>(params, grid, cfg,
                                                                                        stream);
      return;
    }
  }
  if constexpr (!kSilu || kMaxM == 16) {  // tiers 1 and 4 build the SwiGLU epilogue with :g16 or :wgn only
    if (three) {
      launch_ring<kMaxM, kBalanced, kDefaultGroupSteps, 3, false, kFused, kSilu>(params, grid, cfg, stream);
      return;
    }
    launch_ring<kMaxM, kBalanced, kDefaultGroupSteps, 2, false, kFused, kSilu>(params, grid, cfg, stream);
  }
}

// Whether launch_tier builds the SwiGLU epilogue for this (effective) configuration: the ring
// depths `auto` takes (fp8 s2, bf16 s1) and, in tiers 1 and 4, the x staging it takes there
// (:g16 or :wgn). Other configurations would only add kernels nobody runs (each is a copy of
// every tier); gemv_launch refuses them, and the backend then runs the GEMV and silu_mul.
bool silu_built(int tier, const RingConfig& cfg) {
  if (cfg.bit_trick || cfg.stages != (cfg.fp8 ? 2 : 1)) return false;
  return tier == 16 || cfg.wgmma_narrow || cfg.group_steps == kWideGroupSteps;
}

// launch_tier for a run-time grid form, input and output (the fused norm exists for tiers 1 and
// 4, the SwiGLU epilogue for one CTA per row block).
template <int kMaxM>
void launch_tier_of(bool balanced, bool fused, bool silu, const Params& params, dim3 grid,
                    const RingConfig& cfg, cudaStream_t stream) {
  if (silu) {
    if constexpr (kMaxM <= 4) {
      if (fused) {
        launch_tier<kMaxM, false, true, true>(params, grid, cfg, stream);
        return;
      }
    }
    launch_tier<kMaxM, false, false, true>(params, grid, cfg, stream);
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

__global__ void decode_codes_kernel(uint16_t* out_cvt, uint16_t* out_bits) {
  const uint32_t code = threadIdx.x;  // 256 threads; lanes 0..3 of a word hold code, code, code, code
  const uint32_t codes = code * 0x01010101u;
  uint32_t lo, hi, blo, bhi;
  fp8x4_to_bf16x4(codes, lo, hi);
  fp8x4_to_bf16x4_bits(codes, blo, bhi);
  // All four lanes must agree (checks lane placement of both halves, too).
  const bool same = (lo & 0xffffu) == (lo >> 16) && (lo == hi);
  const bool same_bits = (blo & 0xffffu) == (blo >> 16) && (blo == bhi);
  out_cvt[code] = same ? static_cast<uint16_t>(lo & 0xffffu) : 0xdeadu;
  out_bits[code] = same_bits ? static_cast<uint16_t>(blo & 0xffffu) : 0xdeadu;
}

}  // namespace

int64_t gemv_stream_cta_steps(int64_t n, int64_t k) {
  return stream_cta_units(n, k, kStreamCtas);
}

namespace {

// The stream kernel needs sm_90 (bulk copies, mbarrier transaction counts); older devices take
// the register-ring kernel. Read once per process (one device type per process).
bool device_has_bulk_copy() {
  static const bool has = [] {
    int device = 0, major = 0;
    if (cudaGetDevice(&device) != cudaSuccess) return false;
    if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess)
      return false;
    return major >= 9;
  }();
  return has;
}

// Whether ":wg" can run here: an sm_90 device (wgmma is Hopper's; later architectures dropped it)
// and a build with sm_90a code (LATHE_BUILT_SM90A, src/backends/cuda/CMakeLists.txt), which the
// runtime picks for that device. Read once per process.
bool device_has_wgmma() {
#if defined(LATHE_BUILT_SM90A)
  static const bool has = [] {
    int device = 0, major = 0, minor = 0;
    if (cudaGetDevice(&device) != cudaSuccess) return false;
    if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess ||
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) != cudaSuccess)
      return false;
    return major == 9 && minor == 0;
  }();
  return has;
#else
  return false;
#endif
}

// Resolves kDefault (gemv_default_variant, per shape) and the hardware fallback (no bulk copies
// below sm_90).
GemvVariant resolve(const GemvVariant& variant, bool fp8, int64_t n, int64_t k) {
  GemvVariant v = gemv_resolve_variant(variant, fp8, n, k);
  if (v.kernel == GemvKernel::kStream && !device_has_bulk_copy()) {
    const int early = v.early_weights;
    v = GemvVariant{0, false, GemvKernel::kRegisterRing};
    v.early_weights = early;
  }
  return v;
}

// The register ring's requested K split: v.ksplit, else (v.ctas > 0) as many splits per 128-row
// block as fit the whole grid into v.ctas CTAs (one wave at ctas = 2 per SM), else 0 (the rule).
int ring_split_request(const GemvVariant& v, int64_t n) {
  if (v.ksplit > 0) return v.ksplit;
  if (v.ctas <= 0) return 0;
  const int64_t blocks = (n + kRowsPerCta - 1) / kRowsPerCta;
  return static_cast<int>(std::clamp<int64_t>(v.ctas / blocks, 1, 1 << 16));
}

int balanced_ctas(const GemvVariant& v) {
  if (v.ctas > 0) return v.ctas;
  if (v.kernel == GemvKernel::kStream) return v.tma && v.ctas_per_sm >= 2 ? v.ctas_per_sm * kStreamCtas : kStreamCtas;
  return v.ctas_per_sm == 3 ? 3 * kRingWaveSms : kRingBalancedCtas;
}

bool aligned16(const void* ptr) {
  return reinterpret_cast<uintptr_t>(ptr) % 16 == 0;
}

// The fused norm's own requirements (GemvNormInput), after the shape's and x's.
std::string norm_input_reason(int tier, const GemvProblem& p) {
  if (tier != 1 && tier != 4) return "the fused norm is built for tiers 1 and 4";
  if (p.k > norm_row::kNormThreads * norm_row::kVecElems * norm_row::kMaxVecs)
    return "fused norm: k above 8192";
  if (!aligned16(p.norm.weight)) return "fused norm: the norm weight must be 16-byte aligned";
  return {};
}

// The kernels a fused norm runs on: the register ring and its balanced grid, without the bit trick.
std::string norm_variant_reason(const GemvVariant& resolved) {
  if (resolved.kernel == GemvKernel::kStream) return "the fused norm runs on the register-ring kernels only";
  if (resolved.bit_trick) return "the fused norm is not built with ':bits'";
  return {};
}

std::string workspace_reason(const GemvProblem& p, const GemvWorkspace& ws, const GemvVariant& variant) {
  const GemvVariant v = resolve(variant, p.weight == GemvWeight::kFp8E4M3, p.n, p.k);
  if (p.norm.weight != nullptr) {
    if (std::string why = norm_variant_reason(v); !why.empty()) return why;
  }
  if (v.kernel == GemvKernel::kStream || v.kernel == GemvKernel::kRingBalanced) {
    const int ctas = balanced_ctas(v);
    if (stream_partial_floats(ctas) > ws.partial_floats || ctas > ws.counter_count)
      return "balanced-grid workspace too small";
    return {};
  }
  const int ksplit = gemv_ring_ksplit(p.n, p.k, ring_split_request(v, p.n));
  if (ksplit > 1) {
    const int64_t blocks = (p.n + kRowsPerCta - 1) / kRowsPerCta;
    if (static_cast<size_t>(ksplit) * 16 * static_cast<size_t>(p.n) > ws.partial_floats ||
        blocks > ws.counter_count)
      return "split-K workspace too small";
  }
  return {};
}

std::string problem_reason(int tier, const GemvProblem& p) {
  if (tier != 1 && tier != 4 && tier != 16) return "tier must be 1, 4 or 16";
  if (p.m < 1 || p.m > tier) return "row count outside the tier";
  if (p.n < 1 || p.k < kStepK || p.k % kStepK != 0) return "k must be a positive multiple of 128";
  if (p.n > (int64_t{1} << 30) || p.k > (int64_t{1} << 30)) return "shape too large";
  if (reinterpret_cast<uintptr_t>(p.w) % 16 != 0 || reinterpret_cast<uintptr_t>(p.x) % 16 != 0)
    return "weights and activations must be 16-byte aligned";
  if (p.x_stride % 8 != 0 || p.x_stride < p.k)
    return "activation row stride must be a multiple of 8 and >= k";
  if (p.y_add && p.y_f32) return "y_add takes a bf16 output";
  if (p.norm.weight != nullptr) {
    if (std::string why = norm_input_reason(tier, p); !why.empty()) return why;
  }
  if (p.silu_inter != 0) {
    if (p.silu_inter < 0 || p.silu_inter % 64 != 0 || p.n != 2 * p.silu_inter)
      return "SwiGLU epilogue: n must be 2 * silu_inter with silu_inter a positive multiple of 64";
    if (p.y_f32 || p.y_add) return "SwiGLU epilogue: y is a plain bf16 output";
  }
  if (p.y_stride < (p.silu_inter != 0 ? p.silu_inter : p.n)) return "output row stride must cover a row of y";
  if (p.weight == GemvWeight::kBf16 && p.scale_kind != GemvScale::kNone) return "bf16 weights take no scale";
  if (p.scale_kind != GemvScale::kNone && p.scale == nullptr) return "missing scale";
  return {};
}

// The register-ring launch of a resolved variant. Defaults measured on the H200
// (docs/PERFORMANCE.md): the smallest rings, which keep registers under 128 so two CTAs (16
// warps) share an SM, beat deeper rings at one CTA per SM (fp8 gate_up m=1: 64% vs 48% of the
// read ceiling; bf16: 80% vs 61%).
RingConfig ring_config(const GemvVariant& v, bool fp8) {
  RingConfig cfg;
  cfg.fp8 = fp8;
  cfg.stages = v.stages != 0 ? v.stages : (fp8 ? 2 : 1);
  cfg.bit_trick = v.bit_trick;
  cfg.group_steps = v.group_steps;
  cfg.ctas_per_sm = v.ctas_per_sm;
  cfg.wgmma = v.wgmma;
  cfg.wgmma_narrow = v.wgmma_narrow;
  return cfg;
}

// The register-ring configuration a launch of `resolved` runs here: without wgmma on this device,
// ":wg" and ":wgn" run the same sums by mma.sync (the same bytes).
RingConfig effective_ring_config(const GemvVariant& resolved, bool fp8) {
  RingConfig cfg = ring_config(resolved, fp8);
  if (!device_has_wgmma()) cfg.wgmma = cfg.wgmma_narrow = false;
  return cfg;
}

// Why `tier` cannot run p's SwiGLU epilogue (p.silu_inter > 0) under `variant`; empty when it can.
std::string silu_reason(int tier, const GemvProblem& p, const GemvVariant& variant) {
  const bool fp8 = p.weight == GemvWeight::kFp8E4M3;
  const GemvVariant v = resolve(variant, fp8, p.n, p.k);
  if (v.kernel != GemvKernel::kRegisterRing)
    return "the SwiGLU epilogue runs on the register ring with one CTA per row block only";
  if (!silu_built(tier, effective_ring_config(v, fp8)))
    return "the SwiGLU epilogue is built for the ring depth auto takes (fp8 s2, bf16 s1, no ':bits') and, in "
           "tiers 1 and 4, for ':g16' or ':wgn' only";
  return {};
}

std::string unbuilt_ring_message(const GemvVariant& requested, const GemvVariant& resolved, bool fp8) {
  return "gemv variant '" + gemv_variant_name(requested) + "' (" + gemv_variant_name(resolved) +
         ") is not a built register-ring configuration for " + (fp8 ? "fp8" : "bf16") + " weights";
}

}  // namespace

std::string gemv_variant_unsupported_reason(bool fp8, int64_t n, int64_t k, const GemvVariant& variant) {
  const GemvVariant v = resolve(variant, fp8, n, k);
  if ((variant.wgmma || variant.wgmma_narrow) &&
      (variant.kernel == GemvKernel::kStream || v.kernel == GemvKernel::kStream))
    return "':wg' and ':wgn' are options of the register-ring kernels";
  if (v.kernel == GemvKernel::kStream) return {};
  return ring_config_supported(ring_config(v, fp8)) ? std::string() : unbuilt_ring_message(variant, v, fp8);
}

std::string gemv_unsupported_reason(int tier, const GemvProblem& p, const GemvWorkspace& ws) {
  std::string why = problem_reason(tier, p);
  if (why.empty()) why = workspace_reason(p, ws, GemvVariant{});
  if (why.empty() && p.silu_inter != 0) why = silu_reason(tier, p, GemvVariant{});
  return why;
}

void gemv_launch(int tier, const GemvProblem& problem, const GemvWorkspace& workspace, cudaStream_t stream,
                 const GemvVariant& variant) {
  std::string why = problem_reason(tier, problem);
  if (why.empty()) why = workspace_reason(problem, workspace, variant);
  if (why.empty() && problem.silu_inter != 0) why = silu_reason(tier, problem, variant);
  if (!why.empty()) {
    throw_error("gemv tier " + std::to_string(tier) + " cannot run n=" + std::to_string(problem.n) +
                " k=" + std::to_string(problem.k) + " m=" + std::to_string(problem.m) + ": " + why);
  }
  Params params{};
  params.w = static_cast<const uint8_t*>(problem.w);
  params.scale = problem.scale;
  params.bias = problem.bias;
  params.x = static_cast<const __nv_bfloat16*>(problem.x);
  params.y = problem.y;
  params.partials = workspace.partials;
  params.counters = workspace.counters;
  params.x_stride = problem.x_stride;
  params.y_stride = problem.y_stride;
  params.n = static_cast<int>(problem.n);
  params.k = static_cast<int>(problem.k);
  params.m = problem.m;
  params.scale_kind = static_cast<int>(problem.scale_kind);
  params.y_f32 = problem.y_f32 ? 1 : 0;
  params.y_add = problem.y_add ? 1 : 0;
  const bool fused = problem.norm.weight != nullptr;
  const bool silu = problem.silu_inter > 0;
  params.silu_inter = static_cast<int>(problem.silu_inter);
  // The 1-row tier's SwiGLU epilogue lets the next kernel (the down projection) launch only after
  // its main loop: released at the start, that GEMV's CTAs took the slots of the finishing
  // gate|up CTAs and the Qwen3-8B-FP8 batch-1 step was 0.9-2.3% longer than with the silu_mul
  // kernel between them; released after the loop, 1.3% shorter. Tiers 4 and 16 gained more with
  // the release at the start (batch 4: 2.4 against 1.3% shorter; docs/PERFORMANCE.md, "Session 26").
  params.release_after_loop = silu && tier == 1 ? 1 : 0;
  params.norm_weight = problem.norm.weight;
  params.norm_eps = problem.norm.eps;
  const bool fp8 = problem.weight == GemvWeight::kFp8E4M3;
  const GemvVariant v = resolve(variant, fp8, problem.n, problem.k);
  if (v.kernel == GemvKernel::kStream) {
    const int stages = v.stages > 0 ? v.stages : stream_default_stages(tier, fp8);
    launch_stream(tier, params, fp8, stages, balanced_ctas(v), v.row_bytes == 512 ? 512 : 256, v.tma, v.ctas_per_sm,
                  stream);
    return;
  }
  if (!ring_config_supported(ring_config(v, fp8))) throw_error(unbuilt_ring_message(variant, v, fp8));
  const RingConfig cfg = effective_ring_config(v, fp8);
  const bool balanced = v.kernel == GemvKernel::kRingBalanced;
  // Early weight reads in every tier. On the H200 they took 1.4% off the Qwen3-8B-FP8 step at
  // batch 1 and 1.1% at batch 4. In the 16-row tier they first cost the Qwen3-32B-FP8 batch-16 step
  // 9% (never understood); since that tier's split-K sum batches its loads (session 17) they take
  // 1.3% (8B-FP8), 3.7% (32B-FP8) and 1.0% (8B BF16) off the batch-16 step, docs/PERFORMANCE.md.
  params.early_steps = v.early_weights != kGemvEarlyInherit         ? v.early_weights
                       : problem.early_weights != kGemvEarlyInherit ? problem.early_weights
                                                                    : gemv_early_weights();
  dim3 grid;
  if (balanced) {
    const int ctas = balanced_ctas(v);
    params.ksteps = params.k / kStepK;
    params.total_units = ((params.n + kRowsPerCta - 1) / kRowsPerCta) * params.ksteps;
    params.cta_units = stream_cta_units(problem.n, problem.k, ctas);
    grid = dim3(static_cast<unsigned>(stream_grid(problem.n, problem.k, ctas)));
  } else {
    const int want = ring_split_request(v, problem.n);
    params.ksplit = gemv_ring_ksplit(problem.n, problem.k, want);
    params.chunk_steps = gemv_ring_chunk_steps(problem.n, problem.k, want);
    grid = dim3(static_cast<unsigned>((problem.n + kRowsPerCta - 1) / kRowsPerCta),
                static_cast<unsigned>(params.ksplit));
  }
  switch (tier) {
    case 1:
      launch_tier_of<1>(balanced, fused, silu, params, grid, cfg, stream);
      break;
    case 4:
      launch_tier_of<4>(balanced, fused, silu, params, grid, cfg, stream);
      break;
    default:
      launch_tier_of<16>(balanced, false, silu, params, grid, cfg, stream);
      break;
  }
}

void fp8_decode_all_codes(uint16_t* out_cvt, uint16_t* out_bits, cudaStream_t stream) {
  decode_codes_kernel<<<1, 256, 0, stream>>>(out_cvt, out_bits);
  LATHE_CUDA_CHECK_LAUNCH();
}

}  // namespace lathe::cuda
