#pragma once
// `--load-format dummy`: the weights of a Qwen3 checkpoint built from its config alone, filled
// with deterministic random values in the checkpoint's own dtypes, so real SHAPES can be served
// and measured without downloading real weights (vLLM's --load-format dummy does the same).
//
// What is generated (the tensors load_qwen3_weights would read, same names and shapes):
//  - matrices (q/k/v/o, gate/up/down, embed_tokens, lm_head unless tied): BF16, values uniform
//    with standard deviation `matrix_std` (0.02: with RMSNorm in front of every linear this keeps
//    activations O(1) through any number of layers);
//  - when the config has a quantization_config, the decoder linears (q/k/v/o, gate/up/down) not
//    named by its ignore list are F8_E4M3 with f32 scales in the layout the config implies
//    (Qwen block FP8: 128x128 blocks; compressed-tensors: channel / tensor / block). FP8 codes
//    span the full e4m3 range (uniform in [-448, 448] before rounding, never NaN) and every
//    scale is (matrix_std * sqrt(3) / 448) * u, u uniform in [0.75, 1.25], so the dequantized
//    values have about the same spread as the BF16 ones. Embeddings and lm_head stay BF16, as
//    in Qwen's FP8 checkpoints;
//  - norm weights: 1 + uniform noise of std `norm_std`, biases (attention_bias): uniform with
//    std `matrix_std`; both handed over as f32 holding bf16-representable values (what the
//    loader makes of a BF16 checkpoint vector).
//
// Determinism: every value is a pure function of (seed, tensor name, element index): a
// counter-based hash, so values depend neither on the order tensors are generated in, nor on the
// thread count, nor on which API (visitor or whole model) produced them.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "model/config.h"
#include "model/weight_upload.h"
#include "model/weights.h"
#include "ops/backend.h"
#include "ops/tensor.h"

namespace lathe::model {

struct DummyOptions {
  uint64_t seed = 0;
  float matrix_std = 0.02f;  // standard deviation of matrix (and bias) values, dequantized
  float norm_std = 0.02f;    // norm weights: 1 + noise of this standard deviation
};

// One tensor the config implies.
struct DummyTensorSpec {
  enum class Role { kMatrix, kNorm, kBias };
  std::string name;             // checkpoint name, e.g. "model.layers.0.self_attn.q_proj.weight"
  Role role = Role::kMatrix;
  int64_t rows = 0;             // matrices: [rows, cols]; vectors: [rows] (cols = 1)
  int64_t cols = 1;
  DType dtype = DType::kBF16;   // matrices: BF16 or F8_E4M3; vectors: F32
  ops::ScaleKind scale_kind = ops::ScaleKind::kNone;  // F8_E4M3 matrices: the scale layout

  int64_t elements() const { return rows * cols; }
  size_t bytes() const { return static_cast<size_t>(elements()) * dtype_size(dtype); }
  // f32 scale values that come with the tensor (0 unless FP8).
  int64_t scale_count() const { return ops::scale_count(scale_kind, rows, cols); }
};

// Every tensor of the model in load order (embed_tokens, lm_head unless tied, final norm, then
// per layer q/k/v/o (+ biases), gate/up/down, the four norms). Throws lathe::Error naming the
// config field when a dimension is not positive.
std::vector<DummyTensorSpec> dummy_tensor_specs(const ModelConfig& config);

// Bytes of every matrix as stored plus its scales (tied lm_head counted once): what the whole
// model occupies in weights, not what one decode step reads.
size_t dummy_matrix_bytes(const ModelConfig& config);

// Fills one tensor: `data` holds spec.bytes() bytes, `scale` spec.scale_count() floats (may be
// null when 0). Runs on core/parallel.h's workers.
void fill_dummy_tensor(const DummyTensorSpec& spec, const DummyOptions& options, void* data, float* scale);

// A generated tensor as a visitor sees it. The pointers are valid only during the callback.
struct DummyTensor {
  const DummyTensorSpec& spec;
  const void* data;              // spec.bytes() bytes (f32 values for vectors)
  std::span<const float> scale;  // spec.scale_count() values (empty unless FP8)
};

// Generates the tensors one at a time in spec order, calling `visit` for each and freeing it
// afterwards, so peak host memory is one tensor (a caller uploads each one and lets it go).
void for_each_dummy_tensor(const ModelConfig& config, const DummyOptions& options,
                           const std::function<void(const DummyTensor&)>& visit);

// The whole model in host memory (owned buffers kept alive by the result's `storage`), with the
// same values for_each_dummy_tensor produces. Host memory: dummy_matrix_bytes(config) plus small
// vectors; prefer the visitor for models that do not fit twice in memory.
Qwen3Weights make_dummy_qwen3_weights(const ModelConfig& config, const DummyOptions& options = {});

// The model's weights generated straight into `backend`'s memory, one tensor at a time (peak
// host memory: the largest tensor, not the model): the same values
// as upload_qwen3_weights(backend, make_dummy_qwen3_weights(config, options)) would hold, each
// tensor in its own DeviceBuffer, norms / biases / scales as f32. weight_bytes follows
// upload_qwen3_weights' definition (matrices as stored, tied lm_head once). For a model built
// from device weights (a Qwen3Model constructor taking Qwen3DeviceWeights does not exist yet).
Qwen3DeviceWeights upload_dummy_qwen3_weights(ops::Backend& backend, const ModelConfig& config,
                                              const DummyOptions& options = {});

}  // namespace lathe::model
