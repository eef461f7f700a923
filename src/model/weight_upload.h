#pragma once
// Qwen3 weights as the forward pass sees them: views into the backend's memory.
//
// The CPU backend's memory is host memory, so on it the views point straight into the mmapped
// checkpoint and the loader's f32 vectors (no copy of any matrix). Any other backend gets one
// allocation per tensor and an upload; the views then point there. Either way the host
// Qwen3Weights must outlive the device views (the model owns both).
//
// On uploading backends the projections that read the same input are stored back to back in one
// allocation, q | k | v and gate | up, when their formats allow it (fusable_rows): the fused view
// then runs them as ONE linear (one weight stream, one launch), and the separate views point into
// it (no second copy). Per-tensor FP8 scales become per-channel vectors in the fused view (the
// same scale on every row of a part, so the same arithmetic per output).
#include <cstddef>
#include <vector>

#include "model/device_buffer.h"
#include "model/weights.h"
#include "ops/backend.h"

namespace lathe::model {

struct Qwen3LayerDeviceWeights {
  ops::WeightView q_proj, k_proj, v_proj, o_proj;
  ops::WeightView gate_proj, up_proj, down_proj;
  // q | k | v rows [nH hd + 2 nKV hd, H] and gate | up rows [2I, H]; data == nullptr when not
  // fused (the CPU backend, or formats that cannot be concatenated).
  ops::WeightView qkv_proj, gate_up_proj;
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

// Whether these weights (same input width, read by one linear) can be stored back to back as
// one weight: same dtype and K, scale kinds equal (per-tensor and per-channel FP8 mix, as
// per-channel), block-128 parts with rows a multiple of 128, biases on all or none. Pure.
bool fusable(const std::vector<const ops::WeightView*>& parts);

}  // namespace lathe::model
