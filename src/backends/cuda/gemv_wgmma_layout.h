#pragma once
// The shared-memory layout of the GEMV's warpgroup-MMA operand B (":wg" in the 16-row tier, ":wgn"
// in tiers 1 and 4; gemv_wgmma.cuh): plain constexpr arithmetic, so the host unit test
// (tests/unit/cuda_host/gemv_wgmma_layout_test.cpp) checks it against wgmma's documented reading.
//
// B has kCols columns: 32 (wgmma n32, the 32-row tier), 16 (n16, the 16-row tier) or 8 (n8, tiers 1
// and 4). A step of 128 k is 8 chunks (half h, MMA q of that half) of kCols * 32 bytes each; chunk
// (h, q) of step t at byte (t * 8 + h * 4 + q) * chunk bytes. Inside a chunk, K-major core matrices
// of 8 columns x 16 bytes without swizzle: column group j (columns 8j..8j+7) and logical k half kh (logical k
// 8kh..8kh+7) at byte j * 256 + kh * 128, column 8j + r at + r * 16, logical k pair (2p, 2p + 1)
// at + 4p. The GEMV's K permutation (gemv_common.cuh) gives logical k 2p + e of MMA q the physical
// k h * 64 + p * 16 + 4q + 2kh + e, so each 4-byte word of x lands by itself (cp.async of 4 bytes).

#if defined(__CUDACC__)
#define LATHE_WG_LAYOUT_FN __host__ __device__ constexpr
#else
#define LATHE_WG_LAYOUT_FN constexpr
#endif

namespace lathe::cuda::gemv_detail {

template <int kCols>
inline constexpr int kWgChunkBytes = kCols * 32;  // one 16-k chunk of B
template <int kCols>
inline constexpr int kWgStepBytes = 8 * kWgChunkBytes<kCols>;  // one 128-k step

// Byte offset in a :wg / :wgn x buffer of kCols columns of the 4-byte word holding physical k
// (2u, 2u + 1) of column col, where u indexes words from the buffer's first step (u = t * 64 +
// word of the step).
template <int kCols>
LATHE_WG_LAYOUT_FN int wg_x_offset(int u, int col) {
  static_assert(kCols == 8 || kCols == 16 || kCols == 32, "wgmma n8, n16 or n32");
  const int t = u >> 6;
  const int v = u & 63;         // word in the step: physical k 2v
  const int h = v >> 5;         // 64-k half
  const int p = (v >> 3) & 3;   // 16-k block of the half = the logical k pair
  const int hh = (v >> 2) & 1;  // which 8 k of the block
  const int w = v & 3;          // word among those 8 k
  const int q = 2 * hh + (w >> 1);
  const int kh = w & 1;
  return t * kWgStepBytes<kCols> + (h * 4 + q) * kWgChunkBytes<kCols> + (col >> 3) * 256 + kh * 128 +
         (col & 7) * 16 + p * 4;
}

// Column of 16-byte row i of a :wg / :wgn buffer (the rows a launch zeroes past m): a chunk holds
// 2 * kCols such rows, 16 per column group (its two logical k halves of 8 columns each).
template <int kCols>
LATHE_WG_LAYOUT_FN int wg_row_column(int i) {
  return ((i % (2 * kCols)) >> 4) * 8 + (i & 7);
}

}  // namespace lathe::cuda::gemv_detail
