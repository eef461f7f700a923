#include <cuda_bf16.h>
#include <cuda_fp8.h>

#include <algorithm>
#include <cstdint>

#include "backends/cuda/check.h"
#include "backends/cuda/fp8_weight_layout.h"
#include "backends/cuda/quant.h"

namespace lathe::cuda {
namespace {

constexpr float kE4m3Max = 448.0f;

__device__ __forceinline__ uint8_t to_e4m3(float v) {
  return static_cast<uint8_t>(__nv_cvt_float_to_fp8(v, __NV_SATFINITE, __NV_E4M3));
}

// One warp per (token, 128-k group): 4 values per lane.
__global__ void quantize_block128_kernel(const __nv_bfloat16* x, int64_t x_stride, int64_t m, int64_t k, uint8_t* q,
                                         float* scales, int64_t pitch, bool m_major) {
  const int64_t groups = (k + 127) / 128;
  const int64_t warp_id = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
  const int lane = threadIdx.x & 31;
  if (warp_id >= m * groups) return;
  const int64_t t = warp_id / groups;
  const int64_t g = warp_id % groups;
  float v[4];
  float amax = 0.0f;
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const int64_t col = g * 128 + i * 32 + lane;
    v[i] = col < k ? __bfloat162float(x[t * x_stride + col]) : 0.0f;
    amax = fmaxf(amax, fabsf(v[i]));
  }
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, off));
  const float s = amax > 0.0f ? __fdiv_rn(amax, kE4m3Max) : 1.0f;
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const int64_t col = g * 128 + i * 32 + lane;
    if (col < k) q[t * k + fp8_stored_column(col, k)] = to_e4m3(__fdiv_rn(v[i], s));
  }
  if (lane == 0) scales[m_major ? g * pitch + t : t * pitch + g] = s;
}

// The same for 16-byte aligned rows with k % 8 == 0: half a warp per (token, 128-k group), each
// lane holding 8 consecutive values from one 16-byte load (the kernel above issues a 2-byte load
// per value and one load round per warp; on a prefill chunk it moved a few hundred MB a layer at
// well under the read ceiling). The group's amax is a maximum, exact in any order, so the scale
// and every quantized byte equal the scalar kernel's.
__global__ void quantize_block128_vec_kernel(const __nv_bfloat16* x, int64_t x_stride, int64_t m, int64_t k,
                                             uint8_t* q, float* scales, int64_t pitch, bool m_major) {
  const int64_t groups = (k + 127) / 128;
  const int64_t item = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) >> 4;
  const int sub = threadIdx.x & 15;
  // Every lane reaches the shuffles; lanes past the last group work on zeros and store nothing.
  const bool active = item < m * groups;
  const int64_t t = active ? item / groups : 0;
  const int64_t g = active ? item % groups : 0;
  const int64_t col = g * 128 + sub * 8;
  const bool in_row = active && col < k;
  float v[8] = {};
  if (in_row) {
    const uint4 raw = *reinterpret_cast<const uint4*>(x + t * x_stride + col);
    const __nv_bfloat162* pairs = reinterpret_cast<const __nv_bfloat162*>(&raw);
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      v[2 * i] = __low2float(pairs[i]);
      v[2 * i + 1] = __high2float(pairs[i]);
    }
  }
  float amax = 0.0f;
#pragma unroll
  for (int i = 0; i < 8; ++i) amax = fmaxf(amax, fabsf(v[i]));
#pragma unroll
  for (int off = 8; off > 0; off >>= 1) amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, off));
  const float s = amax > 0.0f ? __fdiv_rn(amax, kE4m3Max) : 1.0f;
  if (in_row) {
    uint8_t bytes[8];
#pragma unroll
    for (int i = 0; i < 8; ++i) bytes[i] = to_e4m3(__fdiv_rn(v[i], s));
    if (!fp8_rows_permuted(k)) {
      *reinterpret_cast<uint2*>(q + t * k + col) = *reinterpret_cast<const uint2*>(bytes);
    } else {  // natural k 8a .. 8a + 7 of a block are 4 pairs 16 bytes apart in the stored order
      uint8_t* block = q + t * k + (col - col % kFp8PermuteBlock);
      const int first = fp8_stored_of_natural(static_cast<int>(col % kFp8PermuteBlock));
#pragma unroll
      for (int pair = 0; pair < 4; ++pair) {
        *reinterpret_cast<uint16_t*>(block + first + 16 * pair) =
            static_cast<uint16_t>(bytes[2 * pair] | (bytes[2 * pair + 1] << 8));
      }
    }
  }
  if (active && sub == 0) scales[m_major ? g * pitch + t : t * pitch + g] = s;
}

// One CTA of 256 threads per token.
__global__ void quantize_token_kernel(const __nv_bfloat16* x, int64_t x_stride, int64_t k, uint8_t* q, float* scales) {
  __shared__ float warp_max[8];
  const int64_t t = blockIdx.x;
  const __nv_bfloat16* row = x + t * x_stride;
  float amax = 0.0f;
  for (int64_t col = threadIdx.x; col < k; col += blockDim.x) amax = fmaxf(amax, fabsf(__bfloat162float(row[col])));
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, off));
  if ((threadIdx.x & 31) == 0) warp_max[threadIdx.x >> 5] = amax;
  __syncthreads();
  amax = 0.0f;
  for (int i = 0; i < 8; ++i) amax = fmaxf(amax, warp_max[i]);
  const float s = amax > 0.0f ? __fdiv_rn(amax, kE4m3Max) : 1.0f;
  for (int64_t col = threadIdx.x; col < k; col += blockDim.x)
    q[t * k + fp8_stored_column(col, k)] = to_e4m3(__fdiv_rn(__bfloat162float(row[col]), s));
  if (threadIdx.x == 0) scales[t] = s;
}

__global__ void dequantize_kernel(const uint8_t* w, int64_t n, int64_t k, int scale_kind, const float* scale,
                                  __nv_bfloat16* out) {
  const int64_t total = n * k;
  const int64_t kb = (k + 127) / 128;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t r = i / k;
    const int64_t c = fp8_natural_column(i % k, k);  // w is in the stored order (fp8_weight_layout.h)
    __nv_fp8_e4m3 code;
    code.__x = w[i];
    float v = static_cast<float>(code);
    if (scale_kind == 1) v *= scale[0];
    if (scale_kind == 2) v *= scale[r];
    if (scale_kind == 3) v *= scale[(r / 128) * kb + c / 128];
    out[r * k + c] = __float2bfloat16_rn(v);
  }
}

// One thread per stored 16-byte quarter of a 64-k block: its 16 bytes gathered from the natural row.
__global__ void permute_fp8_kernel(const uint8_t* src, uint8_t* dst, int64_t quarters) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= quarters) return;
  const uint8_t* block = src + (i >> 2) * kFp8PermuteBlock;
  const int first = static_cast<int>(i & 3) * 16;
  uint8_t out[16];
#pragma unroll
  for (int s = 0; s < 16; ++s) out[s] = block[fp8_natural_of_stored(first + s)];
  *reinterpret_cast<uint4*>(dst + i * 16) = *reinterpret_cast<const uint4*>(out);
}

__global__ void relayout_kernel(const float* src, int64_t nb, int64_t kb, float* dst, int64_t pitch, bool transposed) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= nb * kb) return;
  const int64_t r = i / kb;
  const int64_t c = i % kb;
  dst[transposed ? c * pitch + r : r * pitch + c] = src[i];
}

__global__ void broadcast_kernel(const float* value, float* dst, int64_t count) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < count) dst[i] = *value;
}

unsigned blocks_for(int64_t items, int per_block) { return static_cast<unsigned>((items + per_block - 1) / per_block); }

}  // namespace

void quantize_act_block128(const void* x_bf16, int64_t x_stride, int64_t m, int64_t k, uint8_t* q, float* scales,
                           int64_t scale_pitch, bool m_major, cudaStream_t stream) {
  if (m <= 0) return;
  const int64_t groups = m * ((k + 127) / 128);
  const auto address = [](const void* p) { return reinterpret_cast<uintptr_t>(p); };
  if (k % 8 == 0 && x_stride % 8 == 0 && address(x_bf16) % 16 == 0 && address(q) % 8 == 0) {
    quantize_block128_vec_kernel<<<blocks_for(groups * 16, 256), 256, 0, stream>>>(
        static_cast<const __nv_bfloat16*>(x_bf16), x_stride, m, k, q, scales, scale_pitch, m_major);
    LATHE_CUDA_CHECK_LAUNCH();
    return;
  }
  quantize_block128_kernel<<<blocks_for(groups * 32, 256), 256, 0, stream>>>(
      static_cast<const __nv_bfloat16*>(x_bf16), x_stride, m, k, q, scales, scale_pitch, m_major);
  LATHE_CUDA_CHECK_LAUNCH();
}

void quantize_act_per_token(const void* x_bf16, int64_t x_stride, int64_t m, int64_t k, uint8_t* q, float* scales,
                            cudaStream_t stream) {
  if (m <= 0) return;
  quantize_token_kernel<<<static_cast<unsigned>(m), 256, 0, stream>>>(static_cast<const __nv_bfloat16*>(x_bf16), x_stride,
                                                                     k, q, scales);
  LATHE_CUDA_CHECK_LAUNCH();
}

void dequantize_fp8_weight(const uint8_t* w, int64_t n, int64_t k, int scale_kind, const float* scale, void* out_bf16,
                           cudaStream_t stream) {
  const int64_t total = n * k;
  const unsigned grid = static_cast<unsigned>(std::min<int64_t>(blocks_for(total, 256), 132 * 16));
  dequantize_kernel<<<grid, 256, 0, stream>>>(w, n, k, scale_kind, scale, static_cast<__nv_bfloat16*>(out_bf16));
  LATHE_CUDA_CHECK_LAUNCH();
}

void permute_fp8_rows_on_device(const uint8_t* src, uint8_t* dst, int64_t rows, int64_t k, cudaStream_t stream) {
  const int64_t total = rows * k;
  if (total <= 0) return;
  if (!fp8_rows_permuted(k)) {
    LATHE_CUDA_CHECK(cudaMemcpyAsync(dst, src, static_cast<size_t>(total), cudaMemcpyDeviceToDevice, stream));
    return;
  }
  const int64_t quarters = total / 16;
  permute_fp8_kernel<<<blocks_for(quarters, 256), 256, 0, stream>>>(src, dst, quarters);
  LATHE_CUDA_CHECK_LAUNCH();
}

void relayout_block_scales(const float* src, int64_t n, int64_t k, float* dst, int64_t pitch, bool transposed,
                           cudaStream_t stream) {
  const int64_t nb = (n + 127) / 128, kb = (k + 127) / 128;
  relayout_kernel<<<blocks_for(nb * kb, 256), 256, 0, stream>>>(src, nb, kb, dst, pitch, transposed);
  LATHE_CUDA_CHECK_LAUNCH();
}

void broadcast_f32(const float* value, float* dst, int64_t count, cudaStream_t stream) {
  if (count <= 0) return;
  broadcast_kernel<<<blocks_for(count, 256), 256, 0, stream>>>(value, dst, count);
  LATHE_CUDA_CHECK_LAUNCH();
}

}  // namespace lathe::cuda
