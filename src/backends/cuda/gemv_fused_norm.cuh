#pragma once
// The register-ring GEMV with its input normalised in the kernel (kFusedNorm, GemvNormInput):
// x[r] = round_bf16(rms_norm(x_raw[r]) * norm_weight), the bits launch_rms_norm gives (the same
// pieces, rms_norm_row.cuh), so a fused launch's rows are byte-equal to the norm kernel followed
// by the plain GEMV. x_raw is the residual stream after the previous GEMV added its output into it
// (GemvProblem::y_add), so the pair replaces the add + norm launch between two GEMVs. Each CTA:
//   1. after the chained-launch wait, sums x^2 over every whole row (m block sums, the norm
//      kernel's per-thread order and block tree) and keeps 1 / rms per row in shared memory;
//   2. stages its own K range of x normalised instead of copying it (the same shared-memory
//      layouts: 16-byte rows of the mma.sync tiers; :wg / :wgn 16-byte units with fp8 weights,
//      4-byte words with bf16).
#include <cuda_bf16.h>

#include <cstdint>

#include "backends/cuda/gemv_common.cuh"
#include "backends/cuda/gemv_wgmma.cuh"
#include "backends/cuda/gemv_wgmma_layout.h"
#include "backends/cuda/rms_norm_row.cuh"

namespace lathe::cuda::gemv_detail {

// Step 1: row_inv[r] = 1 / rms(x[r]) for r < m (kMaxM rows at most), visible to the whole CTA on
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
          float v[norm_row::kVecElems];
          norm_row::to_floats(
              norm_row::load_vec(p.x + r * p.x_stride + static_cast<int64_t>(vi) * norm_row::kVecElems), v);
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

// Step 2, the mma.sync layout: the 8 normalised elements of x row r at column col (a multiple of 8).
__device__ __forceinline__ uint4 fused_norm_vec(const Params& p, int r, int64_t col, float inv) {
  float v[norm_row::kVecElems];
  norm_row::to_floats(norm_row::load_vec(p.x + r * p.x_stride + col), v);
  const norm_row::Bf16x8 o = norm_row::normed_vec(v, inv, p.norm_weight, col);
  return *reinterpret_cast<const uint4*>(&o);
}

// Step 2, the :wgn layout: the normalised elements col, col + 1 (col even) of x row r, as one word.
__device__ __forceinline__ uint32_t fused_norm_word(const Params& p, int r, int64_t col, float inv) {
  const __nv_bfloat162 a = *reinterpret_cast<const __nv_bfloat162*>(p.x + r * p.x_stride + col);
  const float2 w = *reinterpret_cast<const float2*>(p.norm_weight + col);
  const __nv_bfloat162 o = norm_row::normed_pair(__low2float(a), __high2float(a), inv, w.x, w.y);
  return *reinterpret_cast<const uint32_t*>(&o);
}

// Step 2 for the warpgroup-MMA layout of kCols columns (gemv_wgmma_layout.h), as wg_stage_x does
// with copies: `count` steps from k k_group, rows [0, m) (m <= kRows <= kCols); fp8 weights take
// natural 16-byte units, bf16 weights 4-byte words in their permuted places.
template <int kCols, int kRows, int kGroupSteps, int kThreads, bool kFp8>
__device__ __forceinline__ void wg_stage_x_fused(uint8_t* buf, const Params& p, int64_t k_group, int count,
                                                 const float* row_inv, int tid) {
  if constexpr (kFp8) {
    wg_for_each_unit<kCols, kRows, kGroupSteps, kThreads, 16>(
        buf, p.m, count, tid, [&](uint8_t* dst, int col, int u) {
          *reinterpret_cast<uint4*>(dst) = fused_norm_vec(p, col, k_group + 8 * u, row_inv[col]);
        });
  } else {
    wg_for_each_unit<kCols, kRows, kGroupSteps, kThreads, 4>(
        buf, p.m, count, tid, [&](uint8_t* dst, int col, int u) {
          *reinterpret_cast<uint32_t*>(dst) = fused_norm_word(p, col, k_group + 2 * u, row_inv[col]);
        });
  }
}

}  // namespace lathe::cuda::gemv_detail
