// FP8 KV-cache scales of the Qwen3 model (ops/kv_cache.h: value = fp8 * scale).
//
// Sources, in order: the checkpoint's per-layer scales (model/weights.h lists the names); else,
// with Qwen3Options::calculate_kv_scales, a calibration on the first forward() step that has
// prefill rows; else 1.0. BF16/F16/F32 caches ignore all of them.
//
// Calibration, per layer l of that step: qk_norm_rope_kv_write leaves the post-RoPE k (and v)
// rows in the scratch and stores them with the current scale 1.0; the backend's kv_amax takes
// max |k| and max |v| over all of the step's rows; the host reads the two values (one
// synchronization per layer, once per model), sets scale = max(amax, kMinKvAmax) / 448, and
// kv_write re-stores the step's rows with it, so every cached row, the first ones included, is
// stored with the calibrated scale before attention reads it. Later layers see the attention
// output of calibrated earlier layers. Scales are then frozen; later tokens beyond the first
// step's range saturate at +-448 * scale. Max is exact and order-independent, so the scales do
// not depend on threads or scheduling.
#include <algorithm>
#include <cmath>
#include <limits>

#include "core/log.h"
#include "model/qwen3.h"

namespace lathe::model {

void Qwen3Model::init_kv_scales() {
  const bool fp8 = options_.kv_dtype == DType::kF8E4M3;
  const bool from_checkpoint = !host_.layers.empty() && host_.layers.front().kv_scales.has_value();
  if (!fp8) {
    if ((from_checkpoint || options_.calculate_kv_scales) && log_once("qwen3.kv_scales.unused")) {
      spdlog::info("kv scales: the {} KV cache stores values unscaled; {} ignored",
                   dtype_name(options_.kv_dtype),
                   from_checkpoint ? "the checkpoint's KV scales are" : "--calculate-kv-scales is");
    }
    return;
  }
  if (from_checkpoint) {
    float k_lo = std::numeric_limits<float>::max(), k_hi = 0.0f, v_lo = k_lo, v_hi = 0.0f;
    for (size_t l = 0; l < host_.layers.size(); ++l) {
      const KvScales& s = *host_.layers[l].kv_scales;
      kv_cache_.set_scales(static_cast<int64_t>(l), s.k, s.v);
      k_lo = std::min(k_lo, s.k), k_hi = std::max(k_hi, s.k), v_lo = std::min(v_lo, s.v),
      v_hi = std::max(v_hi, s.v);
    }
    if (log_once("qwen3.kv_scales.checkpoint")) {
      spdlog::info(
          "kv scales: from the checkpoint ({}): k_scale [{:.4g}, {:.4g}], v_scale [{:.4g}, {:.4g}] over {} "
          "layers{}",
          host_.kv_scales_form, k_lo, k_hi, v_lo, v_hi, host_.layers.size(),
          options_.calculate_kv_scales ? "; --calculate-kv-scales not needed" : "");
    }
    return;
  }
  if (!options_.calculate_kv_scales) {
    if (log_once("qwen3.kv_scales.unit")) {
      spdlog::info(
          "kv scales: the checkpoint has none; FP8 KV uses k_scale = v_scale = 1.0 (--calculate-kv-scales "
          "calibrates them on the first prefill)");
    }
    return;
  }
  kv_amax_ = DeviceBuffer(backend_, static_cast<size_t>(kv_cache_.num_layers()) * 2 * sizeof(float),
                          "the KV-scale calibration");
  kv_scales_pending_ = true;
}

void Qwen3Model::calibrate_kv_layer(const ops::DeviceBatch& dev, int64_t layer, const ops::Act& k,
                                    const ops::Act& v) {
  float* amax = static_cast<float*>(kv_amax_.data()) + 2 * layer;
  backend_.kv_amax(k, v, amax);
  float host[2] = {0.0f, 0.0f};
  backend_.download(host, amax, sizeof(host));  // waits for this layer's ops so far
  if (!std::isfinite(host[0]) || !std::isfinite(host[1])) {
    spdlog::warn(
        "kv scales: layer {} has non-finite K/V activations in the calibration step (amax {} / {}); its "
        "non-finite amax keeps scale 1.0",
        layer, host[0], host[1]);
  }
  kv_cache_.set_scales(layer, fp8_kv_scale_for_amax(host[0]), fp8_kv_scale_for_amax(host[1]));
  backend_.kv_write(dev, k, v, kv_cache_.shape(), kv_cache_.layer(layer));
  if (layer + 1 < kv_cache_.num_layers()) return;

  kv_scales_pending_ = false;
  float k_lo = std::numeric_limits<float>::max(), k_hi = 0.0f, v_lo = k_lo, v_hi = 0.0f;
  for (int64_t l = 0; l < kv_cache_.num_layers(); ++l) {
    const ops::KvCacheLayer& c = kv_cache_.layer(l);
    k_lo = std::min(k_lo, c.k_scale), k_hi = std::max(k_hi, c.k_scale);
    v_lo = std::min(v_lo, c.v_scale), v_hi = std::max(v_hi, c.v_scale);
  }
  spdlog::info(
      "kv scales: calibrated on the first prefill step ({} tokens): k_scale [{:.4g}, {:.4g}], v_scale "
      "[{:.4g}, {:.4g}] over {} layers (amax / 448), now frozen",
      dev.num_tokens, k_lo, k_hi, v_lo, v_hi, kv_cache_.num_layers());
}

}  // namespace lathe::model
