#include "model/weight_upload.h"

#include <functional>
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
    if (auto found = uploaded_.find({src, false}); found != uploaded_.end()) return found->second;
    DeviceBuffer& buffer = out_.buffers.emplace_back(backend_, nbytes, "model weights");
    backend_.upload(buffer.data(), src, nbytes);
    out_.uploaded_bytes += nbytes;
    uploaded_.emplace(Key{src, false}, buffer.data());
    return buffer.data();
  }

  // A linear layer's matrix, in the layout the backend's linear ops read
  // (Backend::upload_linear_weight). Uploaded once per host matrix; an fp8 matrix a linear layer
  // reads may be stored reordered, so one also used as a table (a tied embedding) gets its own copy.
  const void* matrix(const ops::WeightView& view) {
    if (view.data == nullptr || host_) return view.data;
    const Key key{view.data, view.dtype == DType::kF8E4M3};
    if (auto found = uploaded_.find(key); found != uploaded_.end()) return found->second;
    const size_t nbytes = matrix_bytes(view);
    DeviceBuffer& buffer = out_.buffers.emplace_back(backend_, nbytes, "model weights");
    backend_.upload_linear_weight(buffer.data(), view.data, view.dtype, view.rows, view.cols);
    out_.uploaded_bytes += nbytes;
    uploaded_.emplace(key, buffer.data());
    return buffer.data();
  }

  // `owned`: values is a temporary (uploaded now, never shared by host address).
  const float* floats(const std::vector<float>& values, bool owned = false) {
    if (values.empty()) return nullptr;
    if (owned) {
      void* dst = buffer(values.size() * sizeof(float));
      backend_.upload(dst, values.data(), values.size() * sizeof(float));
      out_.uploaded_bytes += values.size() * sizeof(float);
      return static_cast<const float*>(dst);
    }
    return static_cast<const float*>(bytes(values.data(), values.size() * sizeof(float)));
  }

  void* buffer(size_t nbytes) { return out_.buffers.emplace_back(backend_, nbytes, "model weights").data(); }

  // `linear`: the matrix of a linear layer (matrix()); otherwise a table read by rows (bytes()).
  ops::WeightView weight(const HostWeight& host, bool linear = true) {
    ops::WeightView view = host.view;
    view.data = linear ? matrix(host.view) : bytes(host.view.data, matrix_bytes(host.view));
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

  bool uploads() const { return !host_; }

  // Uploads `parts` (fusable()) back to back into one allocation; returns the fused view and
  // points views[i] at part i inside it.
  ops::WeightView fused(const std::vector<const HostWeight*>& parts, const std::vector<ops::WeightView*>& views) {
    const ops::WeightView& first = parts.front()->view;
    const size_t elem = dtype_size(first.dtype);
    const int64_t k = first.cols;
    int64_t rows = 0;
    for (const HostWeight* p : parts) rows += p->view.rows;
    ops::WeightView f = first;
    f.rows = rows;
    const auto row_bytes = static_cast<size_t>(k) * elem;
    void* data = buffer(static_cast<size_t>(rows) * row_bytes);
    const bool block = first.scale_kind == ops::ScaleKind::kBlock128;
    const int64_t kb = (k + 127) / 128;
    std::vector<float> channel_scales, biases;
    float* block_scales = block ? static_cast<float*>(buffer(static_cast<size_t>(rows / 128 * kb) * sizeof(float))) : nullptr;
    int64_t offset = 0;
    for (size_t i = 0; i < parts.size(); ++i) {
      const ops::WeightView& h = parts[i]->view;
      backend_.upload_linear_weight(static_cast<char*>(data) + static_cast<size_t>(offset) * row_bytes, h.data,
                                    h.dtype, h.rows, k);
      out_.uploaded_bytes += static_cast<size_t>(h.rows) * row_bytes;
      if (counted_.insert(h.data).second) out_.weight_bytes += matrix_bytes(h);
      if (block) {
        backend_.upload(block_scales + offset / 128 * kb, h.scale, static_cast<size_t>(h.rows / 128 * kb) * sizeof(float));
      } else if (h.scale_kind == ops::ScaleKind::kPerTensor) {
        channel_scales.insert(channel_scales.end(), static_cast<size_t>(h.rows), h.scale[0]);
      } else if (h.scale_kind == ops::ScaleKind::kPerChannel) {
        channel_scales.insert(channel_scales.end(), h.scale, h.scale + h.rows);
      }
      if (h.bias != nullptr) biases.insert(biases.end(), h.bias, h.bias + h.rows);
      offset += h.rows;
    }
    f.data = data;
    f.scale = block ? block_scales : channel_scales.empty() ? nullptr : floats(channel_scales, true);
    if (!channel_scales.empty()) f.scale_kind = ops::ScaleKind::kPerChannel;
    f.bias = biases.empty() ? nullptr : floats(biases, true);
    offset = 0;
    for (size_t i = 0; i < parts.size(); ++i) {
      ops::WeightView& v = *views[i];
      v = parts[i]->view;
      v.data = static_cast<const char*>(data) + static_cast<size_t>(offset) * row_bytes;
      v.scale_kind = f.scale_kind;
      if (f.scale) v.scale = block ? f.scale + offset / 128 * kb : f.scale + offset;
      if (f.bias) v.bias = f.bias + offset;
      offset += v.rows;
    }
    return f;
  }

 private:
  ops::Backend& backend_;
  Qwen3DeviceWeights& out_;
  bool host_;
  // (host address, stored as an fp8 linear matrix): bytes() and matrix() of a bf16 tied embedding
  // share one upload.
  struct Key {
    const void* src;
    bool fp8_linear;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& key) const {
      return std::hash<const void*>()(key.src) ^ static_cast<size_t>(key.fp8_linear);
    }
  };
  std::unordered_map<Key, void*, KeyHash> uploaded_;
  std::unordered_set<const void*> counted_;
};

}  // namespace

bool fusable(const std::vector<const ops::WeightView*>& parts) {
  if (parts.empty()) return false;
  const ops::WeightView& first = *parts.front();
  const auto channel_like = [](ops::ScaleKind kind) {
    return kind == ops::ScaleKind::kPerTensor || kind == ops::ScaleKind::kPerChannel;
  };
  for (const ops::WeightView* p : parts) {
    if (p->data == nullptr || p->dtype != first.dtype || p->cols != first.cols || p->rows <= 0) return false;
    if ((p->bias != nullptr) != (first.bias != nullptr)) return false;
    if (p->scale_kind != first.scale_kind && !(channel_like(p->scale_kind) && channel_like(first.scale_kind))) return false;
    if (p->scale_kind != ops::ScaleKind::kNone && p->scale == nullptr) return false;
    if (p->scale_kind == ops::ScaleKind::kBlock128 && p->rows % 128 != 0) return false;
  }
  return true;
}

Qwen3DeviceWeights upload_qwen3_weights(ops::Backend& backend, const Qwen3Weights& weights) {
  Qwen3DeviceWeights out;
  Uploader up(backend, out);
  out.embed_tokens = up.weight(weights.embed_tokens, /*linear=*/false);
  out.lm_head = up.weight(weights.lm_head);
  out.final_norm = up.floats(weights.final_norm);
  out.layers.reserve(weights.layers.size());
  for (const Qwen3LayerWeights& layer : weights.layers) {
    Qwen3LayerDeviceWeights& dev = out.layers.emplace_back();
    if (up.uploads() && fusable({&layer.q_proj.view, &layer.k_proj.view, &layer.v_proj.view})) {
      dev.qkv_proj = up.fused({&layer.q_proj, &layer.k_proj, &layer.v_proj}, {&dev.q_proj, &dev.k_proj, &dev.v_proj});
    } else {
      dev.q_proj = up.weight(layer.q_proj);
      dev.k_proj = up.weight(layer.k_proj);
      dev.v_proj = up.weight(layer.v_proj);
    }
    dev.o_proj = up.weight(layer.o_proj);
    if (up.uploads() && fusable({&layer.gate_proj.view, &layer.up_proj.view})) {
      dev.gate_up_proj = up.fused({&layer.gate_proj, &layer.up_proj}, {&dev.gate_proj, &dev.up_proj});
    } else {
      dev.gate_proj = up.weight(layer.gate_proj);
      dev.up_proj = up.weight(layer.up_proj);
    }
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
