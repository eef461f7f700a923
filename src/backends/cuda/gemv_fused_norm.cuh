#pragma once
// The register-ring GEMV with its input normalised in the kernel (kFusedNorm, GemvNormInput):
// x[r] = rms_norm(h[r]) * norm_weight with h[r] = round_bf16(residual[r] + delta[r]), the bits
// launch_add_rms_norm gives (the same pieces, rms_norm_row.cuh), so a fused launch's rows are
// byte-equal to the norm kernel followed by the plain GEMV. Each CTA:
//   1. after the chained-launch wait, sums h^2 over every whole row (m block sums, the norm
//      kernel's per-thread order and block tree) and keeps 1 / rms per row in shared memory;
//   2. stages its own K range of x from residual and delta instead of copying x (the same
//      shared-memory layouts: 16-byte rows of the mma.sync tiers, 4-byte words of :wgn);
//   3. once it has read them for the last time, arrives on norm_arrivals; the last CTA of the grid
//      writes h back to residual (no CTA reads it after that) and re-arms the counter.
// That replaces a norm launch per layer site: one kernel fewer in the chain.
#include <cuda_bf16.h>

#include <cstdint>

#include "backends/cuda/gemv_common.cuh"
#include "backends/cuda/gemv_wgmma_layout.h"
#include "backends/cuda/rms_norm_row.cuh"

namespace lathe::cuda::gemv_detail {

// Step 1: row_inv[r] = 1 / rms(h[r]) for r < m (kMaxM rows at most), visible to the whole CTA on
// return. partial: shared scratch for the block sums.
template <int kMaxM, int kThreads>
__device__ __forceinline__ void fused_norm_rows(const Params& p, float* row_inv,
                                                float (*partial)[norm_row::kNormThreads / 32]) {
  static_assert(kThreads == norm_row::kNormThreads, "the norm kernel's block tree");
  const int vecs = p.k / norm_row::kVecElems;
  float ss[kMaxM];
#pragma unroll
  for (int r = 0; r < kMaxM; ++r) {
    ss[r] = 0.0f;
    if (r < p.m) {
#pragma unroll
      for (int j = 0; j < norm_row::kMaxVecs; ++j) {
        const int vi = threadIdx.x + j * kThreads;
        if (vi < vecs) {
          const int64_t col = static_cast<int64_t>(vi) * norm_row::kVecElems;
          float v[norm_row::kVecElems];
          norm_row::to_floats(
              norm_row::add_rounded(norm_row::load_vec(p.residual + r * p.residual_stride + col),
                                    norm_row::load_vec(p.delta + r * p.delta_stride + col)),
              v);
          ss[r] = norm_row::add_squares(v, ss[r]);
        }
      }
    }
  }
  norm_row::block_sums<kMaxM>(ss, partial);
  if (threadIdx.x == 0) {
#pragma unroll
    for (int r = 0; r < kMaxM; ++r) row_inv[r] = norm_row::inv_rms(ss[r], p.k, p.norm_eps);
  }
  __syncthreads();
}

// Step 2, the mma.sync layout: the 8 elements of x row r at column col (a multiple of 8).
__device__ __forceinline__ uint4 fused_norm_vec(const Params& p, int r, int64_t col, float inv) {
  float v[norm_row::kVecElems];
  norm_row::to_floats(norm_row::add_rounded(norm_row::load_vec(p.residual + r * p.residual_stride + col),
                                            norm_row::load_vec(p.delta + r * p.delta_stride + col)),
                      v);
  const norm_row::Bf16x8 o = norm_row::normed_vec(v, inv, p.norm_weight, col);
  return *reinterpret_cast<const uint4*>(&o);
}

// Step 2, the :wgn layout: the elements col, col + 1 (col even) of x row r, as one word.
__device__ __forceinline__ uint32_t fused_norm_word(const Params& p, int r, int64_t col, float inv) {
  const __nv_bfloat162 a = *reinterpret_cast<const __nv_bfloat162*>(p.residual + r * p.residual_stride + col);
  const __nv_bfloat162 d = *reinterpret_cast<const __nv_bfloat162*>(p.delta + r * p.delta_stride + col);
  const __nv_bfloat162 h =
      __floats2bfloat162_rn(__low2float(a) + __low2float(d), __high2float(a) + __high2float(d));
  const float2 w = *reinterpret_cast<const float2*>(p.norm_weight + col);
  const __nv_bfloat162 o = norm_row::normed_pair(__low2float(h), __high2float(h), inv, w.x, w.y);
  return *reinterpret_cast<const uint32_t*>(&o);
}

// Step 2 for the warpgroup-MMA layout of kCols columns (gemv_wgmma_layout.h), as wg_stage_x does
// with copies: `count` steps from physical k k_group, rows [0, m) (m <= kRows <= kCols).
template <int kCols, int kRows, int kGroupSteps, int kThreads>
__device__ __forceinline__ void wg_stage_x_fused(uint8_t* buf, const Params& p, int64_t k_group, int count,
                                                 const float* row_inv, int tid) {
  constexpr int kWords = kGroupSteps * 64;
  static_assert(kWords % kThreads == 0, "whole words of each column per thread");
#pragma unroll
  for (int i = 0; i < kWords / kThreads; ++i) {
    const int u = tid + i * kThreads;
    if ((u >> 6) >= count) return;
    uint8_t* dst = buf + wg_x_offset<kCols>(u, 0);
#pragma unroll
    for (int col = 0; col < kRows; ++col) {
      if (col < p.m) {
        *reinterpret_cast<uint32_t*>(dst + (col >> 3) * 256 + (col & 7) * 16) =
            fused_norm_word(p, col, k_group + 2 * u, row_inv[col]);
      }
    }
  }
}

// Step 3: every CTA calls this after its last read of residual and delta.
template <int kThreads>
__device__ __forceinline__ void fused_norm_arrive(const Params& p, int* last_flag) {
  __syncthreads();
  if (threadIdx.x == 0)
    *last_flag = arrive_acq_rel(p.norm_arrivals) == static_cast<int>(gridDim.x * gridDim.y) - 1;
  __syncthreads();
  if (!*last_flag) return;
  const int vecs = p.k / norm_row::kVecElems;
  for (int r = 0; r < p.m; ++r) {
    for (int vi = threadIdx.x; vi < vecs; vi += kThreads) {
      const int64_t col = static_cast<int64_t>(vi) * norm_row::kVecElems;
      __nv_bfloat16* res = p.residual + r * p.residual_stride + col;
      norm_row::store_vec(res, norm_row::add_rounded(norm_row::load_vec(res),
                                                     norm_row::load_vec(p.delta + r * p.delta_stride + col)));
    }
  }
  if (threadIdx.x == 0) *p.norm_arrivals = 0;  // re-armed for the next launch (graph replays too)
}

}  // namespace lathe::cuda::gemv_detail
