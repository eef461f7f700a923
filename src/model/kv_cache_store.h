#pragma once
// The paged KV cache of one model: per layer, a K and a V buffer in the backend's memory, laid
// out per ops/kv_cache.h ([num_blocks, num_kv_heads, block_size, head_dim] each). Allocated
// once, zero-filled (so block 0, the scratch block, and never-written slots hold finite values).
#include <cstddef>
#include <cstdint>
#include <vector>

#include "model/device_buffer.h"
#include "ops/backend.h"
#include "ops/kv_cache.h"

namespace lathe::model {

class KvCacheStore {
 public:
  // shape.dtype must be F32, BF16, F16 or F8_E4M3 (FP8 uses k_scale = v_scale = 1.0 for now).
  KvCacheStore(ops::Backend& backend, int64_t num_layers, const ops::KvCacheShape& shape);

  const ops::KvCacheShape& shape() const { return shape_; }
  const ops::KvCacheLayer& layer(int64_t index) const { return layers_.at(static_cast<size_t>(index)); }
  int64_t num_layers() const { return static_cast<int64_t>(layers_.size()); }
  // Bytes of all layers' K and V.
  size_t bytes() const { return bytes_for(num_layers(), shape_); }

  static size_t bytes_for(int64_t num_layers, const ops::KvCacheShape& shape);

 private:
  ops::KvCacheShape shape_;
  std::vector<DeviceBuffer> buffers_;  // 2 per layer: K, V
  std::vector<ops::KvCacheLayer> layers_;
};

}  // namespace lathe::model
