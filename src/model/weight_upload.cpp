#include "model/weight_upload.h"

#include <unordered_map>
#include <unordered_set>

#include "core/dtype.h"

namespace lathe::model {
namespace {

size_t matrix_bytes(const ops::WeightView& view) {
  return static_cast<size_t>(view.rows) * static_cast<size_t>(view.cols) * dtype_size(view.dtype);
}

// Maps host pointers to backend pointers, uploading each distinct host range once (a tied
// lm_head shares the embedding's upload).
class Uploader {
 public:
  Uploader(ops::Backend& backend, Qwen3DeviceWeights& out)
      : backend_(backend), out_(out), host_(backend.kind() == ops::DeviceKind::kCpu) {}

  const void* bytes(const void* src, size_t nbytes) {
    if (src == nullptr || host_) return src;
    if (auto found = uploaded_.find(src); found != uploaded_.end()) return found->second;
    DeviceBuffer& buffer = out_.buffers.emplace_back(backend_, nbytes, "model weights");
    backend_.upload(buffer.data(), src, nbytes);
    out_.uploaded_bytes += nbytes;
    uploaded_.emplace(src, buffer.data());
    return buffer.data();
  }

  const float* floats(const std::vector<float>& values) {
    if (values.empty()) return nullptr;
    return static_cast<const float*>(bytes(values.data(), values.size() * sizeof(float)));
  }

  ops::WeightView weight(const HostWeight& host) {
    ops::WeightView view = host.view;
    view.data = bytes(host.view.data, matrix_bytes(host.view));
    if (host.view.scale != nullptr) {
      const auto count = ops::scale_count(host.view.scale_kind, host.view.rows, host.view.cols);
      view.scale = static_cast<const float*>(bytes(host.view.scale, static_cast<size_t>(count) * sizeof(float)));
    }
    if (host.view.bias != nullptr) {
      view.bias = static_cast<const float*>(bytes(host.view.bias, static_cast<size_t>(host.view.rows) * sizeof(float)));
    }
    if (counted_.insert(host.view.data).second) out_.weight_bytes += matrix_bytes(host.view);
    return view;
  }

 private:
  ops::Backend& backend_;
  Qwen3DeviceWeights& out_;
  bool host_;
  std::unordered_map<const void*, void*> uploaded_;
  std::unordered_set<const void*> counted_;
};

}  // namespace

Qwen3DeviceWeights upload_qwen3_weights(ops::Backend& backend, const Qwen3Weights& weights) {
  Qwen3DeviceWeights out;
  Uploader up(backend, out);
  out.embed_tokens = up.weight(weights.embed_tokens);
  out.lm_head = up.weight(weights.lm_head);
  out.final_norm = up.floats(weights.final_norm);
  out.layers.reserve(weights.layers.size());
  for (const Qwen3LayerWeights& layer : weights.layers) {
    Qwen3LayerDeviceWeights& dev = out.layers.emplace_back();
    dev.q_proj = up.weight(layer.q_proj);
    dev.k_proj = up.weight(layer.k_proj);
    dev.v_proj = up.weight(layer.v_proj);
    dev.o_proj = up.weight(layer.o_proj);
    dev.gate_proj = up.weight(layer.gate_proj);
    dev.up_proj = up.weight(layer.up_proj);
    dev.down_proj = up.weight(layer.down_proj);
    dev.input_layernorm = up.floats(layer.input_layernorm);
    dev.post_attention_layernorm = up.floats(layer.post_attention_layernorm);
    dev.q_norm = up.floats(layer.q_norm);
    dev.k_norm = up.floats(layer.k_norm);
  }
  backend.synchronize();
  return out;
}

}  // namespace lathe::model
