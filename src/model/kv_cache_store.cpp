#include "model/kv_cache_store.h"

#include "core/dtype.h"
#include "core/error.h"

namespace lathe::model {

size_t KvCacheStore::bytes_for(int64_t num_layers, const ops::KvCacheShape& shape) {
  return static_cast<size_t>(num_layers) * 2 * static_cast<size_t>(shape.elements_per_layer()) *
         dtype_size(shape.dtype);
}

KvCacheStore::KvCacheStore(ops::Backend& backend, int64_t num_layers, const ops::KvCacheShape& shape)
    : shape_(shape) {
  switch (shape.dtype) {
    case DType::kF32:
    case DType::kBF16:
    case DType::kF16:
    case DType::kF8E4M3:
      break;
    default:
      fail("KV cache dtype {} is not supported (F32, BF16, F16 or F8_E4M3)", dtype_name(shape.dtype));
  }
  if (num_layers <= 0 || shape.num_blocks <= 0 || shape.block_size <= 0 || shape.num_kv_heads <= 0 ||
      shape.head_dim <= 0) {
    fail("KV cache shape is invalid: {} layers, {} blocks of {} slots, {} kv heads of dim {}", num_layers,
         shape.num_blocks, shape.block_size, shape.num_kv_heads, shape.head_dim);
  }
  const size_t layer_bytes = static_cast<size_t>(shape.elements_per_layer()) * dtype_size(shape.dtype);
  buffers_.reserve(static_cast<size_t>(num_layers) * 2);
  layers_.reserve(static_cast<size_t>(num_layers));
  for (int64_t l = 0; l < num_layers; ++l) {
    DeviceBuffer& k = buffers_.emplace_back(backend, layer_bytes, "the KV cache");
    DeviceBuffer& v = buffers_.emplace_back(backend, layer_bytes, "the KV cache");
    backend.fill_zero(k.data(), layer_bytes);
    backend.fill_zero(v.data(), layer_bytes);
    ops::KvCacheLayer layer;
    layer.k = k.data();
    layer.v = v.data();
    layer.k_scale = 1.0f;
    layer.v_scale = 1.0f;
    layers_.push_back(layer);
  }
}

}  // namespace lathe::model
