#include "app/bench_floor.h"

#include <unordered_set>

#include "ops/tensor.h"

namespace lathe::app {
namespace {

// Matrix bytes as stored plus scale and bias floats; a storage already counted (tied lm_head)
// adds nothing.
double matrix_bytes(const ops::WeightView& w, std::unordered_set<const void*>& seen) {
  if (w.data == nullptr || !seen.insert(w.data).second) return 0.0;
  double bytes = static_cast<double>(w.rows) * static_cast<double>(w.cols) * static_cast<double>(dtype_size(w.dtype));
  bytes += static_cast<double>(ops::scale_count(w.scale_kind, w.rows, w.cols)) * sizeof(float);
  if (w.bias != nullptr) bytes += static_cast<double>(w.rows) * sizeof(float);
  return bytes;
}

double vector_bytes(const std::vector<float>& v) { return static_cast<double>(v.size() * sizeof(float)); }

}  // namespace

StepWeightBytes step_weight_bytes(const model::Qwen3Weights& weights) {
  StepWeightBytes out;
  std::unordered_set<const void*> seen;
  for (const model::Qwen3LayerWeights& l : weights.layers) {
    for (const model::HostWeight* w : {&l.q_proj, &l.k_proj, &l.v_proj, &l.o_proj, &l.gate_proj, &l.up_proj,
                                       &l.down_proj}) {
      out.fixed += matrix_bytes(w->view, seen);
    }
    out.fixed += vector_bytes(l.input_layernorm) + vector_bytes(l.post_attention_layernorm) + vector_bytes(l.q_norm) +
                 vector_bytes(l.k_norm);
  }
  out.fixed += vector_bytes(weights.final_norm);
  out.fixed += matrix_bytes(weights.lm_head.view, seen);  // the whole table, tied or not
  const ops::WeightView& e = weights.embed_tokens.view;
  out.embedding_row = static_cast<double>(e.cols) * static_cast<double>(dtype_size(e.dtype));
  return out;
}

double decode_kv_bytes(const model::ModelConfig& config, int64_t batch, int64_t context_len, DType kv_dtype) {
  return 2.0 * static_cast<double>(config.num_hidden_layers) * static_cast<double>(batch) *
         static_cast<double>(context_len) * static_cast<double>(config.num_key_value_heads) *
         static_cast<double>(config.head_dim) * static_cast<double>(dtype_size(kv_dtype));
}

double prefill_flops(const model::ModelConfig& c, int64_t batch, int64_t input_len) {
  const double hidden = static_cast<double>(c.hidden_size), inter = static_cast<double>(c.intermediate_size);
  const double q_width = static_cast<double>(c.num_attention_heads * c.head_dim);
  const double kv_width = static_cast<double>(c.num_key_value_heads * c.head_dim);
  const double layers = static_cast<double>(c.num_hidden_layers);
  const double tokens = static_cast<double>(batch) * static_cast<double>(input_len);
  // n x k of q, k, v, o, then gate, up, down.
  const double layer_weights = hidden * (q_width + 2.0 * kv_width) + q_width * hidden + 3.0 * hidden * inter;
  const double linear = 2.0 * layer_weights * layers * tokens;
  const double lm_head = 2.0 * static_cast<double>(c.vocab_size) * hidden * static_cast<double>(batch);
  const double len = static_cast<double>(input_len);
  const double attention =
      2.0 * 2.0 * q_width * (len * (len + 1.0) / 2.0) * layers * static_cast<double>(batch);
  return linear + lm_head + attention;
}

}  // namespace lathe::app
