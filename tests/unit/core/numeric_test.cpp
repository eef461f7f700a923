#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "core/numeric.h"

namespace lathe {
namespace {

// Exact decode of E4M3 "fn" from its definition, in double.
double e4m3_by_definition(uint8_t code) {
  const int sign = (code >> 7) ? -1 : 1;
  const int exponent = (code >> 3) & 0xf;
  const int mantissa = code & 7;
  if (exponent == 0) return sign * std::ldexp(mantissa / 8.0, -6);
  return sign * std::ldexp(1.0 + mantissa / 8.0, exponent - 7);
}

TEST(Fp8, E4M3DecodesEveryCodeAsDefined) {
  for (int code = 0; code < 256; ++code) {
    const float value = fp8_e4m3_to_float(static_cast<uint8_t>(code));
    if ((code & 0x7f) == 0x7f) {
      EXPECT_TRUE(std::isnan(value)) << code;
    } else {
      EXPECT_EQ(static_cast<double>(value), e4m3_by_definition(static_cast<uint8_t>(code))) << code;
    }
  }
  EXPECT_EQ(fp8_e4m3_to_float(0x7e), 448.0f);
  EXPECT_EQ(fp8_e4m3_to_float(0x01), std::ldexp(1.0f, -9));
}

TEST(Fp8, E4M3EncodeRoundTripsEveryFiniteCode) {
  for (int code = 0; code < 256; ++code) {
    if ((code & 0x7f) == 0x7f) continue;
    const float value = fp8_e4m3_to_float(static_cast<uint8_t>(code));
    const uint8_t back = float_to_fp8_e4m3(value);
    if (value == 0.0f) {
      EXPECT_EQ(fp8_e4m3_to_float(back), 0.0f);
    } else {
      EXPECT_EQ(back, code);
    }
  }
}

TEST(Fp8, E4M3EncodeRoundsToNearestEvenAndSaturates) {
  // Between 1.0 (code 0x38) and 1.125 (0x39) the midpoint 1.0625 ties to the even code 0x38.
  EXPECT_EQ(float_to_fp8_e4m3(1.0625f), 0x38);
  EXPECT_EQ(float_to_fp8_e4m3(1.07f), 0x39);
  EXPECT_EQ(float_to_fp8_e4m3(1000.0f), 0x7e);
  EXPECT_EQ(float_to_fp8_e4m3(-1000.0f), 0xfe);
  EXPECT_EQ(float_to_fp8_e4m3(NAN), 0x7f);
}

// The encoder works on the float's bits; this is its definition: the nearest of the 127
// non-negative finite codes by exact (double) distance, ties to the even code, |x| above 448
// saturating, NaN to 0x7f, the sign bit kept (-0 included).
uint8_t e4m3_nearest_by_search(float x) {
  if (std::isnan(x)) return 0x7f;
  const double magnitude = std::fabs(static_cast<double>(x));
  int best = 0;
  for (int code = 1; code <= 0x7e; ++code) {
    const double here = std::fabs(e4m3_by_definition(static_cast<uint8_t>(code)) - magnitude);
    const double there = std::fabs(e4m3_by_definition(static_cast<uint8_t>(best)) - magnitude);
    if (here < there || (here == there && code % 2 == 0)) best = code;
  }
  return static_cast<uint8_t>((std::signbit(x) ? 0x80 : 0) | best);
}

// Every float was checked against the earlier table search once (0 of 2^32 differ; session 57);
// here, the cases where rounding can go wrong: each code, each midpoint between neighbours and the
// floats next to them, the subnormal/normal and saturation edges, infinities, and a sweep of
// bit patterns across the whole float range.
TEST(Fp8, E4M3EncodeMatchesTheNearestCodeSearch) {
  std::vector<float> cases = {0.0f,
                              -0.0f,
                              INFINITY,
                              -INFINITY,
                              448.0f,
                              464.0f,
                              479.9f,
                              1e30f,
                              std::ldexp(1.0f, -6),
                              std::ldexp(1.0f, -10),
                              std::ldexp(1.0f, -149)};
  for (int code = 0; code < 0x7e; ++code) {
    const double lo = e4m3_by_definition(static_cast<uint8_t>(code));
    const double hi = e4m3_by_definition(static_cast<uint8_t>(code + 1));
    for (const float at : {static_cast<float>(lo), static_cast<float>((lo + hi) / 2)}) {
      cases.push_back(at);
      cases.push_back(std::nextafter(at, 0.0f));
      cases.push_back(std::nextafter(at, INFINITY));
    }
  }
  for (uint64_t bits = 0; bits < (uint64_t{1} << 32); bits += 0x10001) {  // ~65k patterns, both signs
    const uint32_t u = static_cast<uint32_t>(bits);
    float f;
    std::memcpy(&f, &u, sizeof f);
    cases.push_back(f);
  }
  const size_t positives = cases.size();
  for (size_t i = 0; i < positives; ++i) cases.push_back(-cases[i]);
  for (const float x : cases) {
    ASSERT_EQ(float_to_fp8_e4m3(x), e4m3_nearest_by_search(x)) << x;
  }
}

TEST(Fp8, E5M2IsTheUpperByteOfHalf) {
  EXPECT_EQ(fp8_e5m2_to_float(0x3c), 1.0f);
  EXPECT_EQ(fp8_e5m2_to_float(0xc0), -2.0f);
  EXPECT_TRUE(std::isinf(fp8_e5m2_to_float(0x7c)));
}

TEST(Bf16, RoundsToNearestEven) {
  EXPECT_EQ(to_bf16(1.0f).bits, 0x3f80);
  // 1 + 2^-8 is exactly halfway between 1 and 1 + 2^-7: ties to even (1.0).
  EXPECT_EQ(to_bf16(1.0f + std::ldexp(1.0f, -8)).bits, 0x3f80);
  EXPECT_EQ(to_bf16(1.0f + 3 * std::ldexp(1.0f, -8)).bits, 0x3f82);
  EXPECT_TRUE(std::isnan(to_float(to_bf16(NAN))));
}

TEST(F16, ConvertsNormalsSubnormalsAndSpecials) {
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    const f16 half{static_cast<uint16_t>(bits)};
    const float value = to_float(half);
    if (std::isnan(value)) continue;
    EXPECT_EQ(to_f16(value).bits, half.bits) << bits;
  }
  EXPECT_EQ(to_float(f16{0x3c00}), 1.0f);
  EXPECT_EQ(to_float(f16{0x0001}), std::ldexp(1.0f, -24));
  EXPECT_EQ(to_f16(65520.0f).bits, 0x7c00);  // rounds to infinity
}

}  // namespace
}  // namespace lathe
