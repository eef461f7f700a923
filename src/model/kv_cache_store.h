#pragma once
// The paged KV cache of one model: per layer, a K and a V buffer in the backend's memory, laid
// out per ops/kv_cache.h ([num_blocks, num_kv_heads, block_size, head_dim] each). Allocated
// once, zero-filled (so block 0, the scratch block, and never-written slots hold finite values).
//
// FP8 scales: every layer starts at k_scale = v_scale = 1.0; set_scales installs a checkpoint's
// or a calibrated pair (value = fp8 * scale). The floats in layer(i) are what the ops read; a
// copy of all of them also lives in backend memory (device_scales) for kernels that read scales
// from memory instead of from their launch arguments.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "model/device_buffer.h"
#include "ops/backend.h"
#include "ops/kv_cache.h"

namespace lathe::model {

// The largest finite FP8 E4M3 magnitude.
inline constexpr float kFp8E4M3Max = 448.0f;
// The amax floor of a calibrated scale, so an all-zero first step cannot yield a zero scale.
inline constexpr float kMinKvAmax = 1e-4f;

// The per-tensor scale that maps `amax` onto the FP8 range: max(amax, kMinKvAmax) / 448.
// A non-finite amax (NaN or inf in the activations) gives 1.0, the uncalibrated scale.
float fp8_kv_scale_for_amax(float amax);

class KvCacheStore {
 public:
  // shape.dtype must be F32, BF16, F16 or F8_E4M3.
  KvCacheStore(ops::Backend& backend, int64_t num_layers, const ops::KvCacheShape& shape);

  const ops::KvCacheShape& shape() const { return shape_; }
  const ops::KvCacheLayer& layer(int64_t index) const { return layers_.at(static_cast<size_t>(index)); }
  int64_t num_layers() const { return static_cast<int64_t>(layers_.size()); }
  // Bytes of all layers' K and V.
  size_t bytes() const { return bytes_for(num_layers(), shape_); }

  // Sets layer `index`'s FP8 scales (value = fp8 * scale) in layer(index) and device_scales.
  // Both must be finite and > 0 (else lathe::Error). Rows already cached keep the codes they
  // were stored with: set scales before the layer's first write. Caches of other dtypes keep
  // the values but never read them.
  void set_scales(int64_t index, float k_scale, float v_scale);
  // Backend memory, f32 [num_layers, 2]: {k_scale, v_scale} of every layer, equal to the floats
  // in layer(i).
  const float* device_scales() const { return static_cast<const float*>(scales_.data()); }

  static size_t bytes_for(int64_t num_layers, const ops::KvCacheShape& shape);

 private:
  ops::Backend* backend_;
  ops::KvCacheShape shape_;
  std::vector<DeviceBuffer> buffers_;  // 2 per layer: K, V
  std::vector<ops::KvCacheLayer> layers_;
  DeviceBuffer scales_;                // f32 [num_layers, 2]
};

}  // namespace lathe::model
