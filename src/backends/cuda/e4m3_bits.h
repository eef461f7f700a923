#pragma once
// One E4M3 code -> the bits of the same value in f16, by integer arithmetic on the fields (no
// FP8 instruction): the conversion the CUDA kernels use below sm_89 (fp8_convert.cuh), and a pure
// function, so the host tests it against core/numeric.h for all 256 codes
// (tests/unit/cuda_host/e4m3_bits_test.cpp).
//
// E4M3: sign, 4-bit exponent (bias 7), 3-bit mantissa, no infinities, S.1111.111 is NaN. f16:
// sign, 5-bit exponent (bias 15), 10-bit mantissa. Every E4M3 value is an f16 value: normals keep
// their mantissa (shifted up by 7) with the exponent rebased by +8; subnormals m * 2^-9 (m = 1..7)
// are f16 normals: with p the top set bit of m, exponent p - 9 (biased p + 6) and mantissa
// m * 2^(10 - p) less its leading one. NaN codes give the f16 NaN 0x7fff with the code's sign.
#include <cstdint>

#if defined(__CUDACC__)
#define LATHE_E4M3_FN __host__ __device__ __forceinline__
#else
#define LATHE_E4M3_FN inline
#endif

namespace lathe::cuda {

LATHE_E4M3_FN uint32_t e4m3_to_f16_bits(uint32_t code) {
  const uint32_t sign = (code & 0x80u) << 8, e = (code >> 3) & 0xfu, m = code & 0x7u;
  if ((code & 0x7fu) == 0x7fu) return sign | 0x7fffu;
  if (e != 0) return sign | ((e + 8u) << 10) | (m << 7);
  if (m == 0) return sign;  // +-0
  const uint32_t p = m >= 4 ? 2u : (m >= 2 ? 1u : 0u);
  return sign | ((p + 6u) << 10) | ((m << (10u - p)) & 0x3ffu);
}

}  // namespace lathe::cuda

#undef LATHE_E4M3_FN
