#pragma once
// Qwen3 weights as the forward pass sees them: views into the backend's memory.
//
// The CPU backend's memory is host memory, so on it the views point straight into the mmapped
// checkpoint and the loader's f32 vectors (no copy of any matrix). Any other backend gets one
// allocation per tensor and an upload; the views then point there. Either way the host
// Qwen3Weights must outlive the device views (the model owns both).
#include <cstddef>
#include <vector>

#include "model/device_buffer.h"
#include "model/weights.h"
#include "ops/backend.h"

namespace lathe::model {

struct Qwen3LayerDeviceWeights {
  ops::WeightView q_proj, k_proj, v_proj, o_proj;
  ops::WeightView gate_proj, up_proj, down_proj;
  const float* input_layernorm = nullptr;           // f32 [H]
  const float* post_attention_layernorm = nullptr;  // f32 [H]
  const float* q_norm = nullptr;                    // f32 [hd]
  const float* k_norm = nullptr;                    // f32 [hd]
};

struct Qwen3DeviceWeights {
  ops::WeightView embed_tokens;  // [V, H]
  ops::WeightView lm_head;       // [V, H] (same storage as embed_tokens when tied)
  const float* final_norm = nullptr;
  std::vector<Qwen3LayerDeviceWeights> layers;
  std::vector<DeviceBuffer> buffers;  // owned uploads (empty on the CPU backend)
  size_t uploaded_bytes = 0;          // bytes copied to the backend
  size_t weight_bytes = 0;            // bytes of every matrix as stored (tied lm_head counted once)
};

Qwen3DeviceWeights upload_qwen3_weights(ops::Backend& backend, const Qwen3Weights& weights);

}  // namespace lathe::model
