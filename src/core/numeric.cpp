#include "core/numeric.h"

#include <array>
#include <cmath>
#include <cstring>

namespace lathe {

float to_float(f16 value) {
  const uint32_t sign = (value.bits & 0x8000u) << 16;
  const uint32_t exponent = (value.bits >> 10) & 0x1fu;
  const uint32_t mantissa = value.bits & 0x3ffu;
  if (exponent == 0) {
    // Zero or subnormal: mantissa * 2^-24.
    const float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -magnitude : magnitude;
  }
  if (exponent == 0x1f) return bits_to_float(sign | 0x7f800000u | (mantissa << 13));
  return bits_to_float(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}

f16 to_f16(float value) {
  const uint32_t bits = float_to_bits(value);
  const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  const uint32_t abs_bits = bits & 0x7fffffffu;
  if (abs_bits > 0x7f800000u) return f16{static_cast<uint16_t>(sign | 0x7e00u)};
  if (abs_bits >= 0x477ff000u) return f16{static_cast<uint16_t>(sign | 0x7c00u)};  // rounds to inf
  if (abs_bits < 0x38800000u) {
    // Result is subnormal (or zero) in half: quantum 2^-24, round half to even via rint.
    const float scaled = std::fabs(value) * 16777216.0f;  // exact: a power-of-two scale
    return f16{static_cast<uint16_t>(sign | static_cast<uint16_t>(std::nearbyint(scaled)))};
  }
  uint32_t rounded = abs_bits + 0xfffu + ((abs_bits >> 13) & 1u);
  const uint32_t exponent = (rounded >> 23) - 112u;
  return f16{static_cast<uint16_t>(sign | (exponent << 10) | ((rounded >> 13) & 0x3ffu))};
}

float fp8_e4m3_to_float(uint8_t code) {
  const bool negative = code & 0x80u;
  const int exponent = (code >> 3) & 0xf;
  const int mantissa = code & 0x7;
  float magnitude;
  if (exponent == 0xf && mantissa == 0x7) return std::nanf("");
  if (exponent == 0) {
    magnitude = std::ldexp(static_cast<float>(mantissa), -9);  // subnormal: m/8 * 2^-6
  } else {
    magnitude = std::ldexp(1.0f + static_cast<float>(mantissa) / 8.0f, exponent - 7);
  }
  return negative ? -magnitude : magnitude;
}

float fp8_e5m2_to_float(uint8_t code) {
  // E5M2 is the upper byte of an IEEE half.
  return to_float(f16{static_cast<uint16_t>(code << 8)});
}

uint8_t float_to_fp8_e4m3(float value) {
  // On the float's bits: E4M3 keeps 3 of the 23 mantissa bits (bias 7 against 127), with subnormals
  // of 2^-9 below 2^-6, where the codes 0..8 are |x| / 2^-9 rounded (code 8 is 2^-6, the first
  // normal). Bit-identical to a nearest-code search over the decode table, ties to the even code
  // (checked over every float: tests/unit/core/numeric_test.cpp samples it).
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  const uint8_t sign = static_cast<uint8_t>((bits >> 24) & 0x80);
  const uint32_t magnitude = bits & 0x7fffffffu;
  if (magnitude > 0x7f800000u) return 0x7f;          // NaN (either sign)
  if (magnitude >= 0x43e00000u) return sign | 0x7e;  // >= 448, infinities included: saturate
  if (magnitude < 0x3c800000u) {                     // below 2^-6: multiples of 2^-9
    float scaled;
    std::memcpy(&scaled, &magnitude, sizeof scaled);
    // Exact (a power-of-two scale of a value far from overflow), then rounded to nearest even.
    return sign | static_cast<uint8_t>(std::nearbyint(std::ldexp(scaled, 9)));
  }
  // Normal: round the low 20 mantissa bits away to nearest, ties to even (a carry moves the
  // exponent up, which is the next code), then rebias the exponent from 127 to 7.
  const uint32_t rounded = (magnitude + 0x7ffffu + ((magnitude >> 20) & 1u)) >> 20;
  return sign | static_cast<uint8_t>(rounded - ((127u - 7u) << 3));
}

namespace {

template <float (*Decode)(uint8_t)>
std::array<float, 256> build_table() {
  std::array<float, 256> table{};
  for (int code = 0; code < 256; ++code) table[code] = Decode(static_cast<uint8_t>(code));
  return table;
}

}  // namespace

const float* fp8_e4m3_table() {
  static const std::array<float, 256> table = build_table<fp8_e4m3_to_float>();
  return table.data();
}

const float* fp8_e5m2_table() {
  static const std::array<float, 256> table = build_table<fp8_e5m2_to_float>();
  return table.data();
}

}  // namespace lathe
