#pragma once
// Scalar number formats of checkpoints and activations, with exact host-side conversions.
// These are the reference decodes: every device conversion is tested bit-equal against them.
#include <cstdint>
#include <cstring>

namespace lathe {

// bfloat16 stored as its 16 raw bits (the upper half of an IEEE float32).
struct bf16 {
  uint16_t bits = 0;
};
static_assert(sizeof(bf16) == 2);

// IEEE binary16 stored as raw bits.
struct f16 {
  uint16_t bits = 0;
};
static_assert(sizeof(f16) == 2);

inline float bits_to_float(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

inline uint32_t float_to_bits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

inline float to_float(bf16 value) { return bits_to_float(static_cast<uint32_t>(value.bits) << 16); }

// Round to nearest even; NaN stays a quiet NaN.
inline bf16 to_bf16(float value) {
  uint32_t bits = float_to_bits(value);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return bf16{static_cast<uint16_t>((bits >> 16) | 0x40u)};
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return bf16{static_cast<uint16_t>(bits >> 16)};
}

// bf16(x) as a float: the rounding HF applies when a model runs in bfloat16.
inline float round_bf16(float value) { return to_float(to_bf16(value)); }

float to_float(f16 value);
f16 to_f16(float value);

// FP8 E4M3 "fn" (bias 7, no infinities, S.1111.111 is NaN, max 448) and E5M2 (IEEE-like).
float fp8_e4m3_to_float(uint8_t code);
float fp8_e5m2_to_float(uint8_t code);
// Round to nearest even, saturating to +-448; NaN maps to the NaN code 0x7f.
uint8_t float_to_fp8_e4m3(float value);

// Decode tables for all 256 codes (fast paths in the CPU reference use them).
const float* fp8_e4m3_table();
const float* fp8_e5m2_table();

}  // namespace lathe
