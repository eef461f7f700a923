// e4m3_to_f16_bits (backends/cuda/e4m3_bits.h), the E4M3 conversion of the CUDA kernels below
// sm_89: for every one of the 256 codes, the f16 it returns decodes to exactly the value
// core/numeric.h's reference decoder gives (NaN for NaN codes, signed zeros kept).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

#include "backends/cuda/e4m3_bits.h"
#include "core/numeric.h"

namespace {

// An f16 bit pattern as a double (independent of any half-precision library).
double f16_value(uint32_t bits) {
  const int sign = (bits >> 15) & 1, exponent = (bits >> 10) & 0x1f;
  const int mantissa = bits & 0x3ff;
  double magnitude;
  if (exponent == 0x1f) {
    magnitude = mantissa != 0 ? NAN : INFINITY;
  } else if (exponent == 0) {
    magnitude = std::ldexp(mantissa, -24);
  } else {
    magnitude = std::ldexp(1024 + mantissa, exponent - 25);
  }
  return sign ? -magnitude : magnitude;
}

TEST(E4m3Bits, EveryCodeDecodesToTheReferenceValue) {
  for (uint32_t code = 0; code < 256; ++code) {
    const uint32_t bits = lathe::cuda::e4m3_to_f16_bits(code);
    ASSERT_LT(bits, 0x10000u) << code;
    const double got = f16_value(bits);
    const float want = lathe::fp8_e4m3_to_float(static_cast<uint8_t>(code));
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got)) << "code " << code;
    } else {
      EXPECT_EQ(got, static_cast<double>(want)) << "code " << code;
      EXPECT_EQ(std::signbit(got), std::signbit(want)) << "code " << code;
    }
  }
}

TEST(E4m3Bits, NamedValues) {
  EXPECT_EQ(lathe::cuda::e4m3_to_f16_bits(0x00), 0x0000u);  // +0
  EXPECT_EQ(lathe::cuda::e4m3_to_f16_bits(0x80), 0x8000u);  // -0
  EXPECT_EQ(lathe::cuda::e4m3_to_f16_bits(0x01), 0x1800u);  // 2^-9, the smallest subnormal
  EXPECT_EQ(lathe::cuda::e4m3_to_f16_bits(0x38), 0x3c00u);  // 1.0
  EXPECT_EQ(lathe::cuda::e4m3_to_f16_bits(0x7e), 0x5f00u);  // 448, the largest finite
  EXPECT_EQ(lathe::cuda::e4m3_to_f16_bits(0xfe), 0xdf00u);  // -448
}

}  // namespace
