#pragma once
// Device helpers shared by the paged attention kernels: 8-element KV row fragments (16 bytes of
// BF16 or 8 bytes of FP8 E4M3) widened exactly to f32, BF16 query loads, and warp reductions
// whose order is fixed (the kernels' determinism rests on every reduction having one order).
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "backends/cuda/fp8_convert.cuh"
#include "backends/cuda/paged_attention.h"

namespace lathe::cuda::attn {

inline constexpr float kLog2e = 1.4426950408889634f;
inline constexpr int kFragElems = 8;  // KV elements one thread loads per row fragment

// Storage types: BF16 rows are read as uint4 (8 x bf16), FP8 rows as uint2 (8 x e4m3).
struct Bf16Kv {
  using Frag = uint4;
  static constexpr KvDType kDType = KvDType::kBF16;
  static constexpr int kBytes = 2;
};
struct Fp8Kv {
  using Frag = uint2;
  static constexpr KvDType kDType = KvDType::kFP8E4M3;
  static constexpr int kBytes = 1;
};

__device__ __forceinline__ float bf16_lo(uint32_t pair) { return __uint_as_float(pair << 16); }
__device__ __forceinline__ float bf16_hi(uint32_t pair) { return __uint_as_float(pair & 0xffff0000u); }

__device__ __forceinline__ void widen(const uint4& frag, float (&out)[kFragElems]) {
  out[0] = bf16_lo(frag.x);
  out[1] = bf16_hi(frag.x);
  out[2] = bf16_lo(frag.y);
  out[3] = bf16_hi(frag.y);
  out[4] = bf16_lo(frag.z);
  out[5] = bf16_hi(frag.z);
  out[6] = bf16_lo(frag.w);
  out[7] = bf16_hi(frag.w);
}

// Two E4M3 codes (low 16 bits) -> two f32, exactly: e4m3 -> f16 is exact (fp8_convert.cuh), f16
// -> f32 is exact. NaN codes stay NaN.
__device__ __forceinline__ void fp8x2_to_f32(uint32_t codes, float& lo, float& hi) {
  const uint32_t halves = e4m3x2_to_f16x2(codes);
  lo = __half2float(__ushort_as_half(static_cast<unsigned short>(halves & 0xffffu)));
  hi = __half2float(__ushort_as_half(static_cast<unsigned short>(halves >> 16)));
}

__device__ __forceinline__ void widen(const uint2& frag, float (&out)[kFragElems]) {
  fp8x2_to_f32(frag.x, out[0], out[1]);
  fp8x2_to_f32(frag.x >> 16, out[2], out[3]);
  fp8x2_to_f32(frag.y, out[4], out[5]);
  fp8x2_to_f32(frag.y >> 16, out[6], out[7]);
}

__device__ __forceinline__ void zero(uint4& frag) { frag = make_uint4(0, 0, 0, 0); }
__device__ __forceinline__ void zero(uint2& frag) { frag = make_uint2(0, 0); }

template <typename Frag>
__device__ __forceinline__ Frag load_frag(const void* base, int64_t elem_offset, int bytes_per_elem) {
  return __ldg(reinterpret_cast<const Frag*>(static_cast<const uint8_t*>(base) + elem_offset * bytes_per_elem));
}

// 8 BF16 query elements -> f32, each multiplied by `mul` (one rounding, the same for every arm).
__device__ __forceinline__ void load_query(const __nv_bfloat16* q, float mul, float (&out)[kFragElems]) {
  const uint4 raw = __ldg(reinterpret_cast<const uint4*>(q));
  widen(raw, out);
#pragma unroll
  for (int e = 0; e < kFragElems; ++e) out[e] = __fmul_rn(out[e], mul);
}

// Sum over the `width` lanes of an aligned lane group (butterfly; every lane gets the same value
// computed in the same order).
template <int kWidth>
__device__ __forceinline__ float group_sum(float value) {
#pragma unroll
  for (int offset = kWidth / 2; offset > 0; offset /= 2) value = __fadd_rn(value, __shfl_xor_sync(0xffffffffu, value, offset));
  return value;
}

__device__ __forceinline__ float warp_max(float value) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) value = fmaxf(value, __shfl_xor_sync(0xffffffffu, value, offset));
  return value;
}

// Element offset of (block, kv head, slot) in one layer's K or V.
__device__ __forceinline__ int64_t kv_offset(int32_t block, int32_t kv_head, int32_t slot, int32_t num_kv_heads,
                                             int32_t block_size, int32_t head_dim) {
  return ((static_cast<int64_t>(block) * num_kv_heads + kv_head) * block_size + slot) * head_dim;
}

}  // namespace lathe::cuda::attn
