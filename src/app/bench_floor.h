#pragma once
// The decode step's floor (ARCHITECTURE "Performance method"): the least time one decode step can
// take on a memory-bound device is the bytes it must read divided by the device's read ceiling:
//
//   floor = (weight bytes read per step + KV bytes read) / read ceiling
//
// Weight bytes per step: every decoder matrix as stored (FP8 codes or BF16) with its scales and
// biases, the norm vectors, and lm_head in full (a tied lm_head is the embedding table, read in
// full); of the embedding only the rows of the step's tokens. KV bytes: every sequence's cached K
// and V, all layers, at the step's context length (the new token included). Activations and
// writes are not counted: at decode widths they are a rounding error next to the weights.
#include <cstdint>

#include "core/dtype.h"
#include "model/config.h"
#include "model/weights.h"

namespace lathe::app {

// What a decode step reads from the weights, from the host weights about to be uploaded.
struct StepWeightBytes {
  double fixed = 0.0;          // read once per step whatever the batch
  double embedding_row = 0.0;  // bytes of one embedding row (read once per sequence)

  double at_batch(int64_t batch) const { return fixed + static_cast<double>(batch) * embedding_row; }
};

StepWeightBytes step_weight_bytes(const model::Qwen3Weights& weights);

// Bytes of K and V one decode step reads for `batch` sequences of `context_len` cached tokens.
double decode_kv_bytes(const model::ModelConfig& config, int64_t batch, int64_t context_len, DType kv_dtype);

// The arithmetic of prefilling `batch` prompts of `input_len` tokens (a multiply-add counts as 2
// FLOPs): every decoder linear over every prompt token (2 n k a token: q, k, v, o, gate, up,
// down), lm_head over one row a sequence (the first sampled token), and causal attention, q.k and
// p.v over the L (L + 1) / 2 visible (query, key) pairs of every query head of every sequence.
// Norms, RoPE and SwiGLU are not counted (a rounding error beside the products).
double prefill_flops(const model::ModelConfig& config, int64_t batch, int64_t input_len);

}  // namespace lathe::app
