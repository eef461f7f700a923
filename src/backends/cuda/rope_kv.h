#pragma once
// QK-norm + RoPE + paged KV write, fused: one warp per (token, head), the token's cos/sin pairs
// computed once per CTA. Numerics follow the CPU reference: per-head RMSNorm over head_dim with
// the shared f32 weight (stored, i.e. rounded to the activation type), then rotate-half RoPE at
// the token's position with cos/sin computed in f32 (times attention_scaling; every product and
// sum rounded on its own, no fused multiply-add), stored again; post-RoPE k and v go to the cache
// slot slot_mapping[t] (negative slot: row not cached). FP8 caches store e4m3(x / scale).
#include <cuda_runtime.h>

#include <cstdint>

namespace lathe::cuda {

struct QkNormRopeArgs {
  int64_t tokens = 0;
  const int32_t* positions = nullptr;     // device [tokens]
  const int32_t* slot_mapping = nullptr;  // device [tokens]
  void* q = nullptr;                      // bf16 [tokens, num_heads * head_dim], row stride q_stride
  int64_t q_stride = 0;
  void* k = nullptr;  // bf16 [tokens, num_kv_heads * head_dim]
  int64_t k_stride = 0;
  const void* v = nullptr;  // bf16 [tokens, num_kv_heads * head_dim]
  int64_t v_stride = 0;
  const float* q_norm = nullptr;  // f32 [head_dim] (null: no QK-norm)
  const float* k_norm = nullptr;
  float eps = 1e-6f;
  const float* inv_freq = nullptr;  // f32 [rotary_dim / 2]
  int32_t rotary_dim = 0;
  float attention_scaling = 1.0f;
  int32_t num_heads = 0;
  int32_t num_kv_heads = 0;
  int32_t head_dim = 0;  // <= 512, multiple of 32... any value <= 512 works
  void* cache_k = nullptr;  // [num_blocks, num_kv_heads, block_size, head_dim]
  void* cache_v = nullptr;
  bool cache_fp8 = false;
  float k_scale = 1.0f;
  float v_scale = 1.0f;
  int32_t block_size = 16;
};

void launch_qk_norm_rope_kv_write(const QkNormRopeArgs& args, cudaStream_t stream);

}  // namespace lathe::cuda
