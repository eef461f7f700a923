#include "model/kv_cache_store.h"

#include <algorithm>
#include <cmath>

#include "core/dtype.h"
#include "core/error.h"

namespace lathe::model {

float fp8_kv_scale_for_amax(float amax) {
  if (!std::isfinite(amax)) return 1.0f;
  return std::max(amax, kMinKvAmax) / kFp8E4M3Max;
}

size_t KvCacheStore::bytes_for(int64_t num_layers, const ops::KvCacheShape& shape) {
  return static_cast<size_t>(num_layers) * 2 * static_cast<size_t>(shape.elements_per_layer()) *
         dtype_size(shape.dtype);
}

KvCacheStore::KvCacheStore(ops::Backend& backend, int64_t num_layers, const ops::KvCacheShape& shape)
    : backend_(&backend), shape_(shape) {
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
  const std::vector<float> ones(static_cast<size_t>(num_layers) * 2, 1.0f);
  scales_ = DeviceBuffer(backend, ones.size() * sizeof(float), "the KV cache scales");
  backend.upload(scales_.data(), ones.data(), ones.size() * sizeof(float));
}

void KvCacheStore::set_scales(int64_t index, float k_scale, float v_scale) {
  if (index < 0 || index >= num_layers()) fail("KV cache: layer {} is outside [0, {})", index, num_layers());
  if (!std::isfinite(k_scale) || !std::isfinite(v_scale) || k_scale <= 0.0f || v_scale <= 0.0f) {
    fail("KV cache layer {}: FP8 scales must be finite and > 0 (k_scale {}, v_scale {})", index, k_scale, v_scale);
  }
  ops::KvCacheLayer& layer = layers_[static_cast<size_t>(index)];
  layer.k_scale = k_scale;
  layer.v_scale = v_scale;
  const float pair[2] = {k_scale, v_scale};
  backend_->upload(static_cast<float*>(scales_.data()) + 2 * index, pair, sizeof(pair));
}

}  // namespace lathe::model
