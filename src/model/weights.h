#pragma once
// A checkpoint's weights as views over the mmapped safetensors files (no copies of large
// tensors). Matrices keep their stored type: BF16 stays BF16, FP8 stays FP8 with its scales
// (converted to f32, the only conversion made at load). Small vectors (norm weights, biases)
// are converted to f32.
//
// Loader rule (spec section 5): a linear is FP8 iff its weight is F8_E4M3 and a scale tensor
// exists beside it (`<prefix>.weight_scale_inv` for Qwen block FP8, `<prefix>.weight_scale` for
// compressed-tensors); the scale's shape decides its kind (per-tensor, per-channel, block128).
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "model/config.h"
#include "ops/tensor.h"

namespace lathe::model {

// One linear weight: a view whose pointers stay valid while the owning Qwen3Weights lives.
struct HostWeight {
  ops::WeightView view;
  std::vector<float> scale_storage;  // backs view.scale
  std::vector<float> bias_storage;   // backs view.bias
};

// Per-tensor FP8 KV-cache scales of one layer: value = fp8 * scale (ops/kv_cache.h).
struct KvScales {
  float k = 1.0f;
  float v = 1.0f;
};

struct Qwen3LayerWeights {
  HostWeight q_proj, k_proj, v_proj, o_proj;
  HostWeight gate_proj, up_proj, down_proj;
  std::vector<float> input_layernorm;           // [H]
  std::vector<float> post_attention_layernorm;  // [H]
  std::vector<float> q_norm;                    // [hd]
  std::vector<float> k_norm;                    // [hd]
  std::optional<KvScales> kv_scales;            // from the checkpoint, when it stores them
};

struct Qwen3Weights {
  HostWeight embed_tokens;  // [V, H]
  HostWeight lm_head;       // [V, H]; the embedding view again when tied
  std::vector<float> final_norm;
  std::vector<Qwen3LayerWeights> layers;
  std::shared_ptr<const void> storage;  // keeps the mmapped files alive
  // The naming the checkpoint's KV scales used (layer 0's, e.g. "self_attn.k_scale /
  // self_attn.v_scale"); empty without scales.
  std::string kv_scales_form;
};

// Loads and validates every tensor the config implies (names, shapes, dtypes); errors name the
// file and the tensor.
//
// Optional FP8 KV-cache scales, per layer under `<prefix>layers.N.self_attn.`, one of:
//   k_scale / v_scale                    (compressed-tensors kv_cache_scheme, llm-compressor)
//   attn.k_scale / attn.v_scale          (the attention module's own names)
//   k_proj.k_scale / v_proj.v_scale      (ModelOpt)
//   k_proj.output_scale / v_proj.output_scale  (older FP8 exports: the projections' output scale)
//   kv_scale                             (deprecated: one scale for both K and V)
// Each is a scalar ([] or [1]) F32, BF16 or F16 tensor, finite and > 0. A layer with two forms,
// a K scale without its V scale (or the reverse), a malformed tensor, or scales on some layers
// but not all are errors naming the file and the tensor.
Qwen3Weights load_qwen3_weights(const ModelConfig& config);

}  // namespace lathe::model
