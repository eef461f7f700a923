#pragma once
// The paged KV cache layout shared by every backend.
//
// Per layer, K and V are each [num_blocks, num_kv_heads, block_size, head_dim] in `dtype`
// (F32 on the CPU reference by default, BF16 on CUDA, or F8_E4M3 with a per-tensor scale:
// stored = fp8(x / scale), read = fp8 * scale). One block of one head is block_size * head_dim
// contiguous elements, which is what a decode CTA per (head, sequence) streams through.
//
// FP8 scales (one per layer for K, one for V): value = fp8 * scale and stored_fp8 = e4m3(value /
// scale), rounded to nearest even and saturated to +-448 * scale. This is the meaning of the
// checkpoint tensors `self_attn.k_scale` / `v_scale` (and the other accepted names, see
// model/weights.h) and of --calculate-kv-scales' calibrated value amax / 448. Caches of other
// dtypes ignore the scales.
#include <cstdint>

#include "core/dtype.h"

namespace lathe::ops {

// Token slots per block where the user does not say (--block-size of serve, generate, logits and
// bench latency). 64: the CUDA prefill attention copies whole 64-position K/V tiles in one tensor
// copy each when the block size is a multiple of 64 (16 copies a tile at 16), 1.1-1.4x the kernel's
// speed; decode steps measured within 1.4% (docs/PERFORMANCE.md, session 36).
inline constexpr int32_t kDefaultKvBlockSize = 64;
// The largest --block-size the commands accept.
inline constexpr int32_t kMaxKvBlockSize = 1024;

struct KvCacheShape {
  int32_t num_blocks = 0;
  int32_t block_size = 16;
  int32_t num_kv_heads = 0;
  int32_t head_dim = 0;
  DType dtype = DType::kF32;

  int64_t elements_per_layer() const {
    return static_cast<int64_t>(num_blocks) * num_kv_heads * block_size * head_dim;
  }
  // Element offset of (block, head, slot-in-block, 0).
  int64_t offset(int64_t block, int64_t head, int64_t slot) const {
    return ((block * num_kv_heads + head) * block_size + slot) * head_dim;
  }
};

struct KvCacheLayer {
  void* k = nullptr;
  void* v = nullptr;
  float k_scale = 1.0f;  // used when dtype is F8_E4M3: value = fp8 * k_scale (> 0, finite)
  float v_scale = 1.0f;
};

}  // namespace lathe::ops
