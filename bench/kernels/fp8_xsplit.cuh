#pragma once
// Activations for FP8 tensor-core MMAs (lathe_probe_fp8_mma; the ':wg' GEMV on branch wip/gemv-wgmma): a bf16 value written EXACTLY as the sum of three E5M2
// values, after a power-of-two scale shared by one (token row, 128-k step).
//
// Why it is exact: with the step's largest magnitude scaled to [2^14, 2^15), a scaled value v
// with exponent E has its 8 significant bits at E .. E-7 and is exact in f16 (E >= -17). An f16
// whose low byte is cleared is an E5M2 value (E5M2 is the upper byte of f16), so
//   p1 = v with the low byte cleared          (bits E .. E-2),
//   r1 = v - p1 (exact: the low bits of v),   p2 = r1 with the low byte cleared,
//   r2 = r1 - p2 (exact, at most 2 bits),     p3 = r2 with the low byte cleared (= r2)
// and p1 + p2 + p3 = v for every E >= -9, i.e. for every value within 2^23 of the step's largest
// (E5M2's smallest subnormal is 2^-16). Smaller values lose bits below 2^-16 of the scaled range
// (under 2^-30 of the step's largest magnitude). NaN and infinities stay NaN/infinite in p1.
//
// The scale: e = 14 - exponent(max |x| of the step), clamped to [-112, 126] (so 2^e and 2^-e are
// normal floats); e = 0 when the step holds a NaN or infinity.
#include <cuda_fp16.h>

#include <cstdint>

namespace lathe::cuda::gemv_detail {

// Largest |bf16| bit pattern among 8 values (4 words), as an integer (magnitudes of finite
// non-negative floats order like their bit patterns).
__device__ __forceinline__ uint32_t bf16x8_max_magnitude_bits(const uint4& v) {
  const uint32_t a = __vmaxu2(v.x & 0x7fff7fffu, v.y & 0x7fff7fffu);
  const uint32_t b = __vmaxu2(v.z & 0x7fff7fffu, v.w & 0x7fff7fffu);
  const uint32_t c = __vmaxu2(a, b);
  return max(c & 0xffffu, c >> 16);
}

// The step's scale exponent e from its largest magnitude's bits (see the header).
__device__ __forceinline__ int xsplit_exponent(uint32_t max_bits) {
  if (max_bits >= 0x7f80u) return 0;  // NaN or infinity
  const int e = 141 - static_cast<int>(max_bits >> 7);  // 14 - (biased exponent - 127)
  return min(max(e, -112), 126);
}

__device__ __forceinline__ float pow2f(int e) { return __uint_as_float(static_cast<uint32_t>(127 + e) << 23); }

// One bf16 pair (a word) scaled by 2^e into f16 (exact, see the header).
__device__ __forceinline__ uint32_t bf16x2_scaled_to_f16x2(uint32_t word, float scale) {
  const float lo = __fmul_rn(__uint_as_float(word << 16), scale);
  const float hi = __fmul_rn(__uint_as_float(word & 0xffff0000u), scale);
  const __half2 h = __floats2half2_rn(lo, hi);
  return *reinterpret_cast<const uint32_t*>(&h);
}

__device__ __forceinline__ uint32_t f16x2_minus(uint32_t a, uint32_t b) {
  const __half2 d = __hsub2(*reinterpret_cast<const __half2*>(&a), *reinterpret_cast<const __half2*>(&b));
  return *reinterpret_cast<const uint32_t*>(&d);
}

// 8 bf16 values (k order) -> three pieces of 8 E5M2 codes each (same k order), x * 2^e = sum.
__device__ __forceinline__ void bf16x8_to_e5m2x3(const uint4& v, float scale, uint2 (&piece)[3]) {
  const uint32_t words[4] = {v.x, v.y, v.z, v.w};
  uint32_t p[3][4];
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const uint32_t h = bf16x2_scaled_to_f16x2(words[i], scale);
    p[0][i] = h & 0xff00ff00u;
    const uint32_t r1 = f16x2_minus(h, p[0][i]);
    p[1][i] = r1 & 0xff00ff00u;
    const uint32_t r2 = f16x2_minus(r1, p[1][i]);
    p[2][i] = r2 & 0xff00ff00u;
  }
#pragma unroll
  for (int j = 0; j < 3; ++j) {
    piece[j].x = __byte_perm(p[j][0], p[j][1], 0x7531);  // upper bytes of the four f16 values
    piece[j].y = __byte_perm(p[j][2], p[j][3], 0x7531);
  }
}

// D += A (16x32 E4M3, row) * B (32x8 E5M2, col), fp32 accumulators; fragments as the PTX ISA's
// m16n8k32 8-bit layout (a0/a2: row g, a1/a3: row g + 8; a0/a1 k 4t..4t+3, a2/a3 k 16+4t..;
// b0 k 4t..4t+3, b1 k 16+4t.., column g).
__device__ __forceinline__ void mma_e4m3_e5m2(float (&d)[4], uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3,
                                              uint32_t b0, uint32_t b1) {
  asm(
      "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e5m2.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

// ---- wgmma (sm_90a only; callers guard with __CUDA_ARCH_FEAT_SM90_ALL) ----
// Shared-memory matrix descriptor: start address, leading / stride byte offsets (>> 4, 14 bits
// each) and the layout: 0 no swizzle (K-major core matrices of 8 rows x 16 contiguous bytes;
// lbo = bytes between the two core matrices of a k32 chunk, sbo = bytes between 8-row groups,
// measured by the probe), 1 128-byte swizzle (rows of 128 bytes, 8-row atoms of 1024 bytes:
// sbo = 1024, lbo unused; a k32 chunk starts 32 bytes further).
__device__ __forceinline__ uint64_t wgmma_desc(uint32_t smem_addr, uint32_t lbo, uint32_t sbo, uint32_t layout) {
  return static_cast<uint64_t>((smem_addr & 0x3ffff) >> 4) | (static_cast<uint64_t>((lbo & 0x3ffff) >> 4) << 16) |
         (static_cast<uint64_t>((sbo & 0x3ffff) >> 4) << 32) | (static_cast<uint64_t>(layout) << 62);
}

// D (64 x 24, fp32) = A (64 x 32 E4M3) * B (32 x 24 E5M2) + (accumulate ? D : 0), both from
// shared memory. D: warp w of the warpgroup, lane (g, t): d[j * 4 + i] = row 16w + g (+8 for
// i >= 2), column 8j + 2t + (i & 1).
__device__ __forceinline__ void wgmma_m64n24k32(float (&d)[12], uint64_t a, uint64_t b, int accumulate) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %14, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n24k32.f32.e4m3.e5m2 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11}, "
      "%12, %13, p, 1, 1;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]),
        "+f"(d[9]), "+f"(d[10]), "+f"(d[11])
      : "l"(a), "l"(b), "r"(accumulate));
}

}  // namespace lathe::cuda::gemv_detail
