#pragma once
// FP8 KV-scale calibration kernels (--calculate-kv-scales): the amax of a step's post-RoPE K and
// V rows, and a plain paged-cache write of rows that are already normed and rotated (to re-store
// the step's rows once their scales are known). Both follow the CPU reference
// (backends/cpu/attention.cpp: abs_max, kv_write) bit for bit.
#include <cuda_runtime.h>

#include <cstdint>

namespace lathe::cuda {

// amax[0] = max |k[t, c]|, amax[1] = max |v[t, c]| for t < rows, c < cols; k and v bf16 with
// row strides in elements; amax f32 [2] in device memory. Each block reduces the bit patterns
// of its magnitudes (sign cleared, compared as unsigned: ordered like the values, NaN above
// +inf) and publishes them with one integer atomicMax per output: max is order-independent, so
// the result does not depend on scheduling. Zeroes amax first (rows == 0: amax = {0, 0}).
void launch_kv_amax(const void* k, int64_t k_stride, const void* v, int64_t v_stride, int64_t rows,
                    int64_t cols, float* amax, cudaStream_t stream);

struct KvWriteArgs {
  int64_t tokens = 0;
  const int32_t* slot_mapping = nullptr;  // device [tokens]; a negative slot skips the row
  const void* k = nullptr;                // bf16 [tokens, num_kv_heads * head_dim], row stride k_stride
  int64_t k_stride = 0;
  const void* v = nullptr;
  int64_t v_stride = 0;
  int32_t num_kv_heads = 0;
  int32_t head_dim = 0;
  int32_t block_size = 16;
  void* cache_k = nullptr;  // [num_blocks, num_kv_heads, block_size, head_dim]
  void* cache_v = nullptr;
  bool cache_fp8 = false;  // F8_E4M3 (e4m3(x / scale), saturating) else BF16 (x)
  float k_scale = 1.0f;
  float v_scale = 1.0f;
};

// cache[slot_mapping[t]] <- k[t], v[t] per KV head, stored exactly as qk_norm_rope_kv_write
// stores them.
void launch_kv_write(const KvWriteArgs& args, cudaStream_t stream);

}  // namespace lathe::cuda
