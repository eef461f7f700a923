#pragma once
// The Qwen3 dense model (spec section 2) over the backend-neutral op API.
//
// Owns the host weights (mmapped views), their backend-side views, the paged KV cache of every
// layer and the scratch activations of one step (allocated once for `max_tokens_per_step`
// rows; forward() never allocates). forward() runs one step of any mix of prefill chunks and
// decode rows planned by the caller (ops/batch.h) and writes the logits of the batch's
// logits_rows.
#include <cstdint>
#include <vector>

#include "model/config.h"
#include "model/device_buffer.h"
#include "model/kv_cache_store.h"
#include "model/weight_upload.h"
#include "model/weights.h"
#include "ops/backend.h"

namespace lathe::model {

struct Qwen3Options {
  int32_t max_tokens_per_step = 0;  // scratch rows: the widest step forward() accepts (>= 1)
  int32_t max_logits_rows = 0;      // the most logits rows one step may return (>= 1)
  int32_t num_kv_blocks = 0;        // KV cache blocks, including the scratch block 0 (>= 2)
  // With num_kv_blocks == 0 on a backend with device memory: as many blocks as
  // gpu_memory_utilization leaves once the weights are uploaded (model/kv_sizing.h), at least
  // min_kv_blocks.
  double gpu_memory_utilization = 0.0;
  int32_t min_kv_blocks = 2;
  int32_t kv_block_size = 16;       // token slots per block
  DType kv_dtype = DType::kF32;     // F32, BF16, F16 or F8_E4M3 (scales: see qwen3_kv_scales.cpp)
  // FP8 KV without checkpoint scales: calibrate each layer's k/v scale on the first forward()
  // with prefill rows (--calculate-kv-scales). Otherwise FP8 scales are the checkpoint's, or 1.0.
  bool calculate_kv_scales = false;
};

// The host facts of one step that the forward needs beside the device-resident arrays.
struct StepRows {
  int64_t decode_rows = 0;    // rows [0, decode_rows) run their linears as decode
  int64_t logits_rows = 0;    // rows whose logits the step writes (batch.logits_rows.size())
  int64_t decode_logits = 0;  // the first logits rows that are decode rows (decode arms too)
};

class Qwen3Model {
 public:
  // Validates the geometry (GQA divisibility, rotary dim), uploads the weights, allocates the
  // KV cache and the scratch. Throws lathe::Error naming what is wrong or does not fit.
  Qwen3Model(ops::Backend& backend, ModelConfig config, Qwen3Weights weights, const Qwen3Options& options);

  // One step. logits_out: F32 [batch.logits_rows.size(), vocab] in the backend's memory (any
  // row stride >= vocab); left untouched when the step returns no rows. Asynchronous on
  // backends that are (read the logits after a download or synchronize()).
  void forward(const ops::ForwardBatch& batch, ops::Act logits_out);

  // forward() in two halves, for callers that keep the step's arrays in their own device buffer
  // (the decode graphs): plan_step validates a host batch against the model and logits_out
  // (throws lathe::Error) and returns its StepRows; forward_device runs the step over arrays
  // already in backend memory and only launches ops (no host reads of device data, no
  // allocation, no synchronization), so a backend can record it into a graph.
  StepRows plan_step(const ops::ForwardBatch& batch, const ops::Act& logits_out) const;
  void forward_device(const ops::DeviceBatch& dev, const StepRows& rows, ops::Act logits_out);

  const ModelConfig& config() const { return config_; }
  const Qwen3Options& options() const { return options_; }
  ops::Backend& backend() const { return backend_; }
  const KvCacheStore& kv_cache() const { return kv_cache_; }
  int64_t vocab_size() const { return config_.vocab_size; }
  // Device memory one step still needs beyond weights and KV cache: the scratch activations,
  // logits_rows F32 logits, the largest weight matrix dequantized to BF16 (FP8 prefill), and a
  // fixed allowance for library workspaces and graphs. An estimate for KV sizing.
  static size_t step_memory_bytes(const ModelConfig& config, const Qwen3Options& options);
  // Bytes of the weight matrices as stored (what a decode step streams).
  size_t weight_bytes() const { return device_.weight_bytes; }
  // True while FP8 KV scales wait for --calculate-kv-scales' calibration, which the next
  // forward() with prefill rows performs (forward_device never does). Graphs recorded before
  // then keep the old scales in their launch arguments: record them once this is false.
  bool kv_scales_pending() const { return kv_scales_pending_; }

 private:
  ops::Act scratch(int buffer, int64_t rows) const;
  // The KV-cache geometry; sizes num_kv_blocks from device memory when options_ asks for it.
  ops::KvCacheShape kv_cache_shape();
  // forward_device's body; `calibrate` runs the KV-scale calibration hook in every layer.
  void run_step(const ops::DeviceBatch& dev, const StepRows& rows, ops::Act logits_out, bool calibrate);
  // FP8 KV scales (qwen3_kv_scales.cpp): installs the checkpoint's or arms the calibration, and
  // calibrates one layer from the step's post-RoPE k and v, re-storing those rows.
  void init_kv_scales();
  void calibrate_kv_layer(const ops::DeviceBatch& dev, int64_t layer, const ops::Act& k, const ops::Act& v);

  ops::Backend& backend_;
  ModelConfig config_;
  Qwen3Options options_;
  Qwen3Weights host_;          // mmapped storage and f32 vectors the views point into
  Qwen3DeviceWeights device_;  // what the ops read
  KvCacheStore kv_cache_;
  DeviceBuffer inv_freq_;      // f32 [rotary_dim / 2]
  ops::RopeParams rope_;
  ops::AttentionShape attn_shape_;
  std::vector<DeviceBuffer> scratch_;  // indexed by the Scratch enum in qwen3.cpp
  std::vector<int64_t> scratch_cols_;
  bool kv_scales_pending_ = false;
  DeviceBuffer kv_amax_;  // f32 [num_layers, 2]: the calibration step's amax of k and v
};

}  // namespace lathe::model
