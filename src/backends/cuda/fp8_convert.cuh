#pragma once
// Device-side FP8 E4M3 -> BF16 conversions used by the decode GEMV. Both are exact: every E4M3
// value (max 448, smallest subnormal 2^-9) is representable in f16, f32 and bf16.
//
// fp8x2_to_bf16x2 (the production path): one packed `cvt.rn.f16x2.e4m3x2` (sm_89+), two exact
// f16 -> f32 widenings, and one byte permute that keeps the upper halves of the two floats
// (truncation is exact because the value is already a bf16 value). NaN codes (S.1111.111) stay
// NaN. tests/gpu/cuda proves it bit-equal to core/numeric.h's fp8_e4m3_to_float for all 256
// codes.
//
// fp8x4_to_bf16x4_bits (a benchmark variant): integer shifts place the E4M3 fields into bf16
// fields, then one bf16x2 multiply by 2^120 re-biases the exponent (subnormals included). It is
// NOT NaN-preserving (0x7f decodes to 480), so it is never the default.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "backends/cuda/e4m3_bits.h"

namespace lathe::cuda {

// Two E4M3 codes (bits 0..7 and 8..15) -> their f16 values (bits 0..15 and 16..31), exactly.
// sm_89+: the packed cvt. Older parts (an sm_80 build; not run here): e4m3_bits.h's integer field
// arithmetic, host-tested for all 256 codes.
__device__ __forceinline__ uint32_t e4m3x2_to_f16x2(uint32_t two_codes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 890
  return e4m3_to_f16_bits(two_codes & 0xffu) | (e4m3_to_f16_bits((two_codes >> 8) & 0xffu) << 16);
#else
  uint32_t halves;
  const unsigned short packed = static_cast<unsigned short>(two_codes & 0xffffu);
  asm("cvt.rn.f16x2.e4m3x2 %0, %1;" : "=r"(halves) : "h"(packed));
  return halves;
#endif
}

__device__ __forceinline__ uint32_t fp8x2_to_bf16x2(uint32_t two_codes) {
  const uint32_t halves = e4m3x2_to_f16x2(two_codes);
  float lo, hi;
  asm("cvt.f32.f16 %0, %1;" : "=f"(lo) : "h"(static_cast<unsigned short>(halves & 0xffffu)));
  asm("cvt.f32.f16 %0, %1;" : "=f"(hi) : "h"(static_cast<unsigned short>(halves >> 16)));
  return __byte_perm(__float_as_uint(lo), __float_as_uint(hi), 0x7632);
}

// Four codes (bytes 0..3 of `codes`) -> bf16x2 {byte0, byte1} in `lo` and {byte2, byte3} in `hi`.
__device__ __forceinline__ void fp8x4_to_bf16x4(uint32_t codes, uint32_t& lo, uint32_t& hi) {
  lo = fp8x2_to_bf16x2(codes);
  hi = fp8x2_to_bf16x2(codes >> 16);
}

__device__ __forceinline__ void fp8x4_to_bf16x4_bits(uint32_t codes, uint32_t& lo, uint32_t& hi) {
  const uint32_t p = __byte_perm(codes, 0u, 0x3120);  // bytes {0, 2, 1, 3}
  uint32_t l = ((p << 4) & 0x07f007f0u) | ((p << 8) & 0x80008000u);
  uint32_t h = ((p >> 4) & 0x07f007f0u) | (p & 0x80008000u);
  const __nv_bfloat162 bias = __halves2bfloat162(__ushort_as_bfloat16(0x7b80), __ushort_as_bfloat16(0x7b80));
  __nv_bfloat162 lv = __hmul2(*reinterpret_cast<__nv_bfloat162*>(&l), bias);
  __nv_bfloat162 hv = __hmul2(*reinterpret_cast<__nv_bfloat162*>(&h), bias);
  lo = *reinterpret_cast<uint32_t*>(&lv);
  hi = *reinterpret_cast<uint32_t*>(&hv);
}

}  // namespace lathe::cuda
