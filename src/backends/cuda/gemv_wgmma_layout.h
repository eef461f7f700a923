#pragma once
// The shared-memory layout of the GEMV's warpgroup-MMA operand B (":wg" in the 16- and 32-row
// tiers, ":wgn" in tiers 1 and 4; gemv_wgmma.cuh): plain constexpr arithmetic, so the host unit test
// (tests/unit/cuda_host/gemv_wgmma_layout_test.cpp) checks it against wgmma's documented reading.
//
// B has kCols columns: 32 (wgmma n32, the 32-row tier), 16 (n16, the 16-row tier) or 8 (n8, tiers 1
// and 4). K-major with the 128-byte swizzle: a 64-k half of a step is kCols / 8 atoms of 1024
// bytes (8 columns x 64 logical k each), atom (step t, half h, column group j) at byte
// ((t * 2 + h) * kCols / 8 + j) * 1024; inside an atom column 8j + r is the 128-byte row r, whose
// 16-byte unit U (logical k 8U .. 8U + 7 of the half, MMA q holding units 2q and 2q + 1) sits at
// unit U ^ r. With fp8 weights (stored order of fp8_weight_layout.h) logical k is natural k, so
// natural 16-byte unit U of a half's x goes to unit U ^ r whole (wg_x_unit_offset). With bf16
// weights the GEMV's K permutation (gemv_common.cuh) gives logical k 2p + e + 8kh of MMA q the
// physical k h * 64 + p * 16 + 4q + 2kh + e, so physical word v (k 2v, 2v + 1) of a half lands in
// unit v % 8, word (v / 8) % 4: each 4-byte word of x goes by itself (cp.async of 4 bytes), and
// the 32 consecutive words of one column a warp stages fall in 32 different banks (without the
// swizzle they shared 4 banks: 8-way conflicts on every staging store).

#if defined(__CUDACC__)
#define LATHE_WG_LAYOUT_FN __host__ __device__ constexpr
#else
#define LATHE_WG_LAYOUT_FN constexpr
#endif

namespace lathe::cuda::gemv_detail {

inline constexpr int kWgAtomBytes = 1024;  // one 128-byte-swizzle atom: 8 columns x 64 k
template <int kCols>
inline constexpr int kWgHalfBytes = kCols / 8 * kWgAtomBytes;  // one 64-k half of a step
template <int kCols>
inline constexpr int kWgStepBytes = 2 * kWgHalfBytes<kCols>;  // one 128-k step

// Byte offset in a :wg / :wgn x buffer of kCols columns of the 4-byte word holding physical k
// (2u, 2u + 1) of column col, where u indexes words from the buffer's first step (u = t * 64 +
// word of the step).
template <int kCols>
LATHE_WG_LAYOUT_FN int wg_x_offset(int u, int col) {
  static_assert(kCols == 8 || kCols == 16 || kCols == 32, "wgmma n8, n16 or n32");
  const int t = u >> 6;
  const int v = u & 63;  // word in the step: physical k 2v
  const int h = v >> 5;  // 64-k half
  const int r = col & 7;
  return t * kWgStepBytes<kCols> + h * kWgHalfBytes<kCols> + (col >> 3) * kWgAtomBytes + r * 128 +
         (((v & 7) ^ r) * 16) + ((v >> 3) & 3) * 4;
}

// Byte offset in a :wg / :wgn x buffer of kCols columns of natural 16-byte unit u (k 8u .. 8u + 7
// from the buffer's first step; fp8 weights) of column col.
template <int kCols>
LATHE_WG_LAYOUT_FN int wg_x_unit_offset(int u, int col) {
  static_assert(kCols == 8 || kCols == 16 || kCols == 32, "wgmma n8, n16 or n32");
  const int t = u >> 4;
  const int v = u & 15;  // unit in the step
  const int r = col & 7;
  return t * kWgStepBytes<kCols> + (v >> 3) * kWgHalfBytes<kCols> + (col >> 3) * kWgAtomBytes + r * 128 +
         (((v & 7) ^ r) * 16);
}

// Column of 16-byte row i of a :wg / :wgn buffer (the rows a launch zeroes past m): atom i / 64
// holds column group (i / 64) % (kCols / 8), its 128-byte row (i / 8) % 8 one column.
template <int kCols>
LATHE_WG_LAYOUT_FN int wg_row_column(int i) {
  return ((i >> 6) % (kCols / 8)) * 8 + ((i >> 3) & 7);
}

// Byte offset of MMA q's chunk (16 logical k) of half h in a step, where its descriptor starts:
// the units 2q, 2q + 1 of the half's rows (wgmma applies the swizzle to the address bits).
template <int kCols>
LATHE_WG_LAYOUT_FN int wg_chunk_offset(int h, int q) {
  return h * kWgHalfBytes<kCols> + q * 32;
}

}  // namespace lathe::cuda::gemv_detail
