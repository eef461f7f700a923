#pragma once
// How the CUDA backend stores FP8 weight matrices: rows whose length k is a multiple of 64 are
// reordered inside every 64-k block, so that the 16 bytes a GEMV thread loads hold exactly the
// natural k its MMA fragments take. Every consumer of fp8 weights on the device follows this
// layout: the decode GEMV (gemv_common.cuh), the prefill's activation quantizers, which write x in
// the same order so cuBLASLt sums the same products, and the BF16 dequantisation, which undoes it.
//
// In a 64-k block, stored byte s = 16c + 4q + 2j + e holds natural k 16q + 8j + 2c + e
// (c, q in 0..3; j, e in 0..1). The GEMV thread of quarter c loads stored bytes [16c, 16c + 16);
// its word q (stored 4q .. 4q + 3) is MMA q's A fragment: bytes 0-1 the fragment's k 2c, 2c + 1,
// bytes 2-3 its k 2c + 8, 2c + 9, where MMA q covers natural k 16q .. 16q + 15 of the block. So the
// activations of MMA q are 16 consecutive natural k: x is staged in natural order (16-byte copies
// into the warpgroup-MMA layout, ldmatrix fragments in the mma.sync tiers). 128-k scale blocks
// contain whole 64-k blocks, so scales are untouched. Rows with k % 64 != 0 stay in natural order
// (no GEMV takes them: it needs k % 128 == 0).
#include <cstdint>
#include <cstring>
#include <vector>

#if defined(__CUDACC__)
#define LATHE_FP8_LAYOUT_FN __host__ __device__ constexpr
#else
#define LATHE_FP8_LAYOUT_FN constexpr
#endif

namespace lathe::cuda {

inline constexpr int kFp8PermuteBlock = 64;

// Whether fp8 rows of length k are stored permuted.
LATHE_FP8_LAYOUT_FN bool fp8_rows_permuted(int64_t k) { return k % kFp8PermuteBlock == 0; }

// Natural k (0..63 in a block) of stored byte s (0..63).
LATHE_FP8_LAYOUT_FN int fp8_natural_of_stored(int s) {
  const int c = s >> 4, q = (s >> 2) & 3, j = (s >> 1) & 1, e = s & 1;
  return 16 * q + 8 * j + 2 * c + e;
}

// Stored byte (0..63 in a block) of natural k (0..63): the inverse of fp8_natural_of_stored.
LATHE_FP8_LAYOUT_FN int fp8_stored_of_natural(int k) {
  const int q = k >> 4, j = (k >> 3) & 1, c = (k >> 1) & 3, e = k & 1;
  return 16 * c + 4 * q + 2 * j + e;
}

// Position in a stored row of length k of natural column col.
LATHE_FP8_LAYOUT_FN int64_t fp8_stored_column(int64_t col, int64_t k) {
  if (!fp8_rows_permuted(k)) return col;
  return col - col % kFp8PermuteBlock + fp8_stored_of_natural(static_cast<int>(col % kFp8PermuteBlock));
}

// Natural column of the byte at position `stored` of a stored row of length k (the inverse).
LATHE_FP8_LAYOUT_FN int64_t fp8_natural_column(int64_t stored, int64_t k) {
  if (!fp8_rows_permuted(k)) return stored;
  return stored - stored % kFp8PermuteBlock + fp8_natural_of_stored(static_cast<int>(stored % kFp8PermuteBlock));
}

// dst = src ([rows, k] fp8 codes, row-major, natural order) in the stored layout. dst != src.
inline void permute_fp8_rows(const uint8_t* src, uint8_t* dst, int64_t rows, int64_t k) {
  const int64_t total = rows * k;
  if (!fp8_rows_permuted(k)) {
    std::memcpy(dst, src, static_cast<size_t>(total));
    return;
  }
  for (int64_t b = 0; b < total; b += kFp8PermuteBlock) {
    for (int s = 0; s < kFp8PermuteBlock; ++s) dst[b + s] = src[b + fp8_natural_of_stored(s)];
  }
}

// The same, returning a new vector (tests and benchmarks).
inline std::vector<uint8_t> permuted_fp8_rows(const std::vector<uint8_t>& natural, int64_t rows, int64_t k) {
  std::vector<uint8_t> out(natural.size());
  permute_fp8_rows(natural.data(), out.data(), rows, k);
  return out;
}

}  // namespace lathe::cuda
