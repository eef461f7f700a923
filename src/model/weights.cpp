// Qwen3 dense weights as views over the mmapped checkpoint (spec sections 2 and 5).
#include "model/weights.h"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <optional>
#include <string_view>
#include <span>

#include "core/error.h"
#include "io/safetensors.h"

namespace lathe::model {
namespace {

constexpr int64_t kBlock = 128;  // FP8 block size (checked in config.cpp for the config side)

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

std::string shape_text(const std::vector<int64_t>& shape) { return fmt::format("[{}]", fmt::join(shape, ", ")); }

// Stored types lathe accepts: matrices (linear weights), and float vectors / scales / embeddings.
constexpr std::array<DType, 4> kMatrixTypes = {DType::kBF16, DType::kF16, DType::kF32, DType::kF8E4M3};
constexpr std::array<DType, 3> kFloatTypes = {DType::kBF16, DType::kF16, DType::kF32};

bool one_of(DType dtype, std::span<const DType> allowed) {
  for (DType candidate : allowed) {
    if (candidate == dtype) return true;
  }
  return false;
}

std::string dtype_list(std::span<const DType> allowed) {
  std::string out;
  for (DType dtype : allowed) out += (out.empty() ? "" : ", ") + std::string(dtype_name(dtype));
  return out;
}

// Validates names, shapes and dtypes against the config and builds the views.
class Loader {
 public:
  explicit Loader(const io::Checkpoint& checkpoint) : checkpoint_(checkpoint) {}

  // A linear weight `<prefix>.weight` [rows, cols]; FP8 by the loader rule; `.bias` [rows] when
  // `with_bias`. Embeddings pass allow_fp8 = false.
  HostWeight linear(const std::string& prefix, int64_t rows, int64_t cols, bool with_bias, bool allow_fp8 = true) {
    const std::string name = prefix + ".weight";
    const io::TensorInfo& weight = require(name, {rows, cols});
    if (allow_fp8) {
      check_dtype(weight, kMatrixTypes);
    } else {
      check_dtype(weight, kFloatTypes);
    }

    HostWeight out;
    out.view.data = weight.data;
    out.view.dtype = weight.dtype;
    out.view.rows = rows;
    out.view.cols = cols;

    const io::TensorInfo* scale_inv = checkpoint_.find(prefix + ".weight_scale_inv");
    const io::TensorInfo* scale = checkpoint_.find(prefix + ".weight_scale");
    if (weight.dtype == DType::kF8E4M3) {
      if (scale_inv != nullptr && scale != nullptr) {
        fail("{}: F8_E4M3 weight '{}' has both '{}' and '{}'; expected one scale", weight.file.string(), name,
             scale_inv->name, scale->name);
      }
      if (scale_inv == nullptr && scale == nullptr) {
        fail("{}: F8_E4M3 weight '{}' has no scale tensor (expected '{}.weight_scale_inv' or '{}.weight_scale')",
             weight.file.string(), name, prefix, prefix);
      }
      const io::TensorInfo& s = scale_inv != nullptr ? *scale_inv : *scale;
      check_dtype(s, kFloatTypes);
      out.view.scale_kind = scale_kind(s, rows, cols, /*block_only=*/scale_inv != nullptr);
      out.scale_storage = io::read_f32(s);
      out.view.scale = out.scale_storage.data();
    } else if (scale_inv != nullptr || scale != nullptr) {
      const io::TensorInfo& s = scale_inv != nullptr ? *scale_inv : *scale;
      fail("{}: tensor '{}' is a scale but weight '{}' is {}, not F8_E4M3", s.file.string(), s.name, name,
           dtype_name(weight.dtype));
    }

    if (with_bias) {
      out.bias_storage = vector(prefix + ".bias", rows);
      out.view.bias = out.bias_storage.data();
    }
    return out;
  }

  // The layer's optional KV scales (see weights.h for the accepted names); `layer` ends in '.'.
  std::optional<KvScales> kv_scales(const std::string& layer, std::string& form_out) {
    struct Form {
      const char* k;
      const char* v;
    };
    static constexpr std::array<Form, 5> kForms = {{
        {"self_attn.k_scale", "self_attn.v_scale"},
        {"self_attn.attn.k_scale", "self_attn.attn.v_scale"},
        {"self_attn.k_proj.k_scale", "self_attn.v_proj.v_scale"},
        {"self_attn.k_proj.output_scale", "self_attn.v_proj.output_scale"},
        {"self_attn.kv_scale", "self_attn.kv_scale"},
    }};
    const Form* found = nullptr;
    for (const Form& form : kForms) {
      const io::TensorInfo* k = checkpoint_.find(layer + form.k);
      const io::TensorInfo* v = checkpoint_.find(layer + form.v);
      if (k == nullptr && v == nullptr) continue;
      if (k == nullptr || v == nullptr) {
        const io::TensorInfo& present = k != nullptr ? *k : *v;
        fail("{}: KV scale tensor '{}' has no partner '{}'", present.file.string(), present.name,
             layer + (k != nullptr ? form.v : form.k));
      }
      if (found != nullptr) {
        fail("{}: layer has KV scales under two names, '{}' and '{}'; expected one", k->file.string(),
             layer + found->k, k->name);
      }
      found = &form;
    }
    if (found == nullptr) return std::nullopt;
    form_out = found->k == std::string_view(found->v) ? found->k : fmt::format("{} / {}", found->k, found->v);
    return KvScales{kv_scale_value(checkpoint_.tensor(layer + found->k)),
                    kv_scale_value(checkpoint_.tensor(layer + found->v))};
  }

  // A 1-D float tensor [size] converted to f32 (norm weights, biases).
  std::vector<float> vector(const std::string& name, int64_t size) {
    const io::TensorInfo& tensor = require(name, {size});
    check_dtype(tensor, kFloatTypes);
    return io::read_f32(tensor);
  }

 private:
  const io::TensorInfo& require(const std::string& name, const std::vector<int64_t>& shape) {
    const io::TensorInfo& tensor = checkpoint_.tensor(name);  // names the tensor and directory
    if (tensor.shape != shape) {
      fail("{}: tensor '{}' has shape {}, expected {}", tensor.file.string(), name, tensor.shape_string(),
           shape_text(shape));
    }
    return tensor;
  }

  static void check_dtype(const io::TensorInfo& tensor, std::span<const DType> allowed) {
    if (!one_of(tensor.dtype, allowed)) {
      fail("{}: tensor '{}' has dtype {}, expected {}", tensor.file.string(), tensor.name, dtype_name(tensor.dtype),
           dtype_list(allowed));
    }
  }

  // A per-tensor KV scale: scalar ([] or [1]) float, finite and > 0.
  static float kv_scale_value(const io::TensorInfo& tensor) {
    check_dtype(tensor, kFloatTypes);
    if (!tensor.shape.empty() && tensor.shape != std::vector<int64_t>{1}) {
      fail("{}: KV scale tensor '{}' has shape {}, expected [] or [1] (one per-tensor scale)", tensor.file.string(),
           tensor.name, tensor.shape_string());
    }
    const float value = io::read_f32(tensor).at(0);
    if (!std::isfinite(value) || value <= 0.0f) {
      fail("{}: KV scale tensor '{}' is {}, expected a finite value > 0", tensor.file.string(), tensor.name, value);
    }
    return value;
  }

  // The scale's kind from its shape (spec section 5). Qwen's weight_scale_inv is always block;
  // compressed-tensors' weight_scale is per-tensor ([] or [1]), per-channel ([N] or [N, 1]) or block.
  static ops::ScaleKind scale_kind(const io::TensorInfo& s, int64_t rows, int64_t cols, bool block_only) {
    const std::vector<int64_t> block = {ceil_div(rows, kBlock), ceil_div(cols, kBlock)};
    if (s.shape == block) return ops::ScaleKind::kBlock128;
    if (!block_only) {
      if (s.shape.empty() || s.shape == std::vector<int64_t>{1}) return ops::ScaleKind::kPerTensor;
      if (s.shape == std::vector<int64_t>{rows} || s.shape == std::vector<int64_t>{rows, 1}) {
        return ops::ScaleKind::kPerChannel;
      }
      fail("{}: scale tensor '{}' has shape {}, expected [] or [1] (per-tensor), [{}] or [{}, 1] (per-channel), or {} "
           "(128x128 blocks)",
           s.file.string(), s.name, s.shape_string(), rows, rows, shape_text(block));
    }
    fail("{}: scale tensor '{}' has shape {}, expected {} (128x128 blocks of a [{}, {}] weight)", s.file.string(),
         s.name, s.shape_string(), shape_text(block), rows, cols);
  }

  const io::Checkpoint& checkpoint_;
};

}  // namespace

Qwen3Weights load_qwen3_weights(const ModelConfig& config) {
  auto checkpoint = std::make_shared<io::Checkpoint>(io::Checkpoint::open(config.dir));
  Loader loader(*checkpoint);
  const std::string& p = config.weight_prefix;
  const int64_t hidden = config.hidden_size;
  const int64_t q_rows = config.num_attention_heads * config.head_dim;
  const int64_t kv_rows = config.num_key_value_heads * config.head_dim;
  const int64_t inter = config.intermediate_size;
  const bool bias = config.attention_bias;

  Qwen3Weights weights;
  weights.embed_tokens = loader.linear(p + "embed_tokens", config.vocab_size, hidden, false, /*allow_fp8=*/false);
  if (config.tie_word_embeddings) {
    // Tied: HF ignores a stored lm_head.weight and uses the embedding; so does lathe.
    weights.lm_head.view = weights.embed_tokens.view;
  } else {
    weights.lm_head = loader.linear("lm_head", config.vocab_size, hidden, false);
  }
  weights.final_norm = loader.vector(p + "norm.weight", hidden);

  weights.layers.reserve(static_cast<size_t>(config.num_hidden_layers));
  for (int64_t i = 0; i < config.num_hidden_layers; ++i) {
    const std::string layer = fmt::format("{}layers.{}.", p, i);
    Qwen3LayerWeights& w = weights.layers.emplace_back();
    w.q_proj = loader.linear(layer + "self_attn.q_proj", q_rows, hidden, bias);
    w.k_proj = loader.linear(layer + "self_attn.k_proj", kv_rows, hidden, bias);
    w.v_proj = loader.linear(layer + "self_attn.v_proj", kv_rows, hidden, bias);
    w.o_proj = loader.linear(layer + "self_attn.o_proj", hidden, q_rows, bias);
    w.gate_proj = loader.linear(layer + "mlp.gate_proj", inter, hidden, false);
    w.up_proj = loader.linear(layer + "mlp.up_proj", inter, hidden, false);
    w.down_proj = loader.linear(layer + "mlp.down_proj", hidden, inter, false);
    w.input_layernorm = loader.vector(layer + "input_layernorm.weight", hidden);
    w.post_attention_layernorm = loader.vector(layer + "post_attention_layernorm.weight", hidden);
    w.q_norm = loader.vector(layer + "self_attn.q_norm.weight", config.head_dim);
    w.k_norm = loader.vector(layer + "self_attn.k_norm.weight", config.head_dim);
    std::string form;
    w.kv_scales = loader.kv_scales(layer, form);
    if (i == 0) weights.kv_scales_form = form;
    if (w.kv_scales.has_value() != weights.layers.front().kv_scales.has_value()) {
      fail("{}: layer {} {} KV scales but layer 0 {}; a checkpoint gives every layer's or none", config.dir.string(),
           i, w.kv_scales ? "has" : "has no", w.kv_scales ? "has none" : "has them");
    }
  }
  weights.storage = checkpoint;  // the views point into its mmapped files
  return weights;
}

}  // namespace lathe::model
