#include "model/qwen3.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>

#include "core/dtype.h"
#include "core/error.h"
#include "core/log.h"
#include "model/kv_sizing.h"

namespace lathe::model {
namespace {

// Scratch activations of one step, each [max_tokens_per_step, cols] in the activation dtype
// (kGathered: [max_logits_rows, H]).
enum Scratch : int {
  kHidden,    // the residual stream h                         [T, H]
  kNormed,    // RMSNorm(h), the input of the next linear      [T, H]
  kQkv,       // q | k | v column slices of one buffer         [T, (nH + 2 nKV) hd]
  kAttn,      // attention output, heads concatenated          [T, nH hd]
  kDelta,     // o_proj / down_proj output added into h        [T, H]
  kGateUp,    // gate | up column slices                       [T, 2 I]
  kMlp,       // silu(gate) * up                               [T, I]
  kGathered,  // final-normed rows whose logits are returned   [R, H]
  kNumScratch,
};

// Allowance for cuBLASLt's workspace, the GEMV/attention/sampler workspaces and recorded graphs.
constexpr size_t kFixedStepBytes = size_t{768} << 20;

}  // namespace

size_t Qwen3Model::step_memory_bytes(const ModelConfig& c, const Qwen3Options& options) {
  const int64_t qkv = (c.num_attention_heads + 2 * c.num_key_value_heads) * c.head_dim;
  const int64_t per_row = 3 * c.hidden_size + qkv + c.num_attention_heads * c.head_dim + 3 * c.intermediate_size;
  const size_t act = 2;  // BF16 activations (the widest a device backend uses is F32: still an estimate)
  const size_t scratch = static_cast<size_t>(options.max_tokens_per_step) * static_cast<size_t>(per_row) * act +
                         static_cast<size_t>(options.max_logits_rows) * static_cast<size_t>(c.hidden_size) * act;
  const size_t logits = static_cast<size_t>(options.max_logits_rows) * static_cast<size_t>(c.vocab_size) * sizeof(float);
  const int64_t widest = std::max({c.vocab_size * c.hidden_size, 2 * c.intermediate_size * c.hidden_size, qkv * c.hidden_size});
  return scratch + logits + static_cast<size_t>(widest) * 2 + kFixedStepBytes;
}

ops::KvCacheShape Qwen3Model::kv_cache_shape() {
  ops::KvCacheShape shape{options_.num_kv_blocks, options_.kv_block_size,
                          static_cast<int32_t>(config_.num_key_value_heads), static_cast<int32_t>(config_.head_dim),
                          options_.kv_dtype};
  const std::optional<ops::DeviceMemory> memory = backend_.device_memory();
  if (options_.num_kv_blocks == 0 && options_.gpu_memory_utilization > 0.0 && memory) {
    ops::KvCacheShape one = shape;
    one.num_blocks = 1;
    KvMemoryBudget budget;
    budget.utilization = options_.gpu_memory_utilization;
    budget.total_bytes = memory->total_bytes;
    budget.free_bytes = memory->free_bytes;
    budget.reserve_bytes = step_memory_bytes(config_, options_);
    options_.num_kv_blocks = kv_blocks_for_budget(budget, KvCacheStore::bytes_for(config_.num_hidden_layers, one),
                                                  std::max(2, options_.min_kv_blocks));
    shape.num_blocks = options_.num_kv_blocks;
  }
  return shape;
}

Qwen3Model::Qwen3Model(ops::Backend& backend, ModelConfig config, Qwen3Weights weights, const Qwen3Options& options)
    : backend_(backend),
      config_(std::move(config)),
      options_(options),
      host_(std::move(weights)),
      device_(upload_qwen3_weights(backend, host_)),
      kv_cache_(backend, config_.num_hidden_layers, kv_cache_shape()) {
  const ModelConfig& c = config_;
  if (c.num_attention_heads <= 0 || c.num_key_value_heads <= 0 || c.num_attention_heads % c.num_key_value_heads != 0) {
    fail("{}: num_attention_heads {} is not a multiple of num_key_value_heads {}", (c.dir / "config.json").string(),
         c.num_attention_heads, c.num_key_value_heads);
  }
  if (static_cast<int64_t>(host_.layers.size()) != c.num_hidden_layers) {
    fail("{}: {} layers loaded, config says {}", c.dir.string(), host_.layers.size(), c.num_hidden_layers);
  }
  if (options.max_tokens_per_step < 1 || options.max_logits_rows < 1) {
    fail("Qwen3 model: max_tokens_per_step ({}) and max_logits_rows ({}) must be at least 1",
         options.max_tokens_per_step, options.max_logits_rows);
  }
  if (options_.num_kv_blocks < 2) fail("Qwen3 model: the KV cache needs at least 2 blocks, got {}", options_.num_kv_blocks);

  const RopeTables tables = compute_rope(c);
  const int64_t rotary_dim = c.rotary_dim();
  if (rotary_dim <= 0 || rotary_dim % 2 != 0 || rotary_dim > c.head_dim ||
      static_cast<int64_t>(tables.inv_freq.size()) != rotary_dim / 2) {
    fail("{}: rotary dim {} (head_dim {} x partial_rotary_factor {}) is not an even number <= head_dim",
         (c.dir / "config.json").string(), rotary_dim, c.head_dim, c.partial_rotary_factor);
  }
  inv_freq_ = DeviceBuffer(backend, tables.inv_freq.size() * sizeof(float), "RoPE tables");
  backend.upload(inv_freq_.data(), tables.inv_freq.data(), tables.inv_freq.size() * sizeof(float));
  rope_.inv_freq = static_cast<const float*>(inv_freq_.data());
  rope_.rotary_dim = static_cast<int32_t>(rotary_dim);
  rope_.attention_scaling = tables.attention_scaling;

  attn_shape_.num_heads = static_cast<int32_t>(c.num_attention_heads);
  attn_shape_.num_kv_heads = static_cast<int32_t>(c.num_key_value_heads);
  attn_shape_.head_dim = static_cast<int32_t>(c.head_dim);
  attn_shape_.scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(c.head_dim)));

  const int64_t q_cols = c.num_attention_heads * c.head_dim;
  const int64_t kv_cols = c.num_key_value_heads * c.head_dim;
  scratch_cols_.assign(kNumScratch, 0);
  scratch_cols_[kHidden] = c.hidden_size;
  scratch_cols_[kNormed] = c.hidden_size;
  scratch_cols_[kQkv] = q_cols + 2 * kv_cols;
  scratch_cols_[kAttn] = q_cols;
  scratch_cols_[kDelta] = c.hidden_size;
  scratch_cols_[kGateUp] = 2 * c.intermediate_size;
  scratch_cols_[kMlp] = c.intermediate_size;
  scratch_cols_[kGathered] = c.hidden_size;
  const size_t elem = dtype_size(backend.activation_dtype());
  for (int i = 0; i < kNumScratch; ++i) {
    const int64_t rows = i == kGathered ? options.max_logits_rows : options.max_tokens_per_step;
    scratch_.emplace_back(backend, static_cast<size_t>(rows * scratch_cols_[static_cast<size_t>(i)]) * elem,
                          "activation scratch");
  }
  init_kv_scales();
  backend.synchronize();
  if (log_once("qwen3.model")) {
    spdlog::info("qwen3: {} layers, hidden {}, heads {}/{} x {}, vocab {}, weights {:.1f} MiB ({}), KV {} "
                 "{} blocks x {} ({:.1f} MiB)",
                 c.num_hidden_layers, c.hidden_size, c.num_attention_heads, c.num_key_value_heads, c.head_dim,
                 c.vocab_size, static_cast<double>(device_.weight_bytes) / (1024.0 * 1024.0),
                 device_.uploaded_bytes > 0 ? "uploaded" : "zero-copy host views", dtype_name(options.kv_dtype),
                 options_.num_kv_blocks, options_.kv_block_size,
                 static_cast<double>(kv_cache_.bytes()) / (1024.0 * 1024.0));
  }
}

ops::Act Qwen3Model::scratch(int buffer, int64_t rows) const {
  ops::Act act;
  act.data = scratch_[static_cast<size_t>(buffer)].data();
  act.dtype = backend_.activation_dtype();
  act.rows = rows;
  act.cols = scratch_cols_[static_cast<size_t>(buffer)];
  act.stride = act.cols;
  return act;
}

StepRows Qwen3Model::plan_step(const ops::ForwardBatch& batch, const ops::Act& logits_out) const {
  if (batch.num_decode_rows < 0 || batch.num_decode_rows > batch.num_tokens() ||
      batch.num_decode_rows > batch.num_seqs()) {
    fail("qwen3 forward: num_decode_rows {} is outside [0, {}]", batch.num_decode_rows,
         std::min(batch.num_tokens(), batch.num_seqs()));
  }
  const int64_t tokens = batch.num_tokens();
  if (tokens < 1 || tokens > options_.max_tokens_per_step) {
    fail("qwen3 forward: step has {} tokens, the model was sized for 1..{}", tokens, options_.max_tokens_per_step);
  }
  for (int64_t t = 0; t < tokens; ++t) {
    const int32_t id = batch.token_ids[static_cast<size_t>(t)];
    if (id < 0 || id >= config_.vocab_size) {
      fail("qwen3 forward: token id {} (row {}) is outside the vocabulary [0, {})", id, t, config_.vocab_size);
    }
  }
  const ops::KvCacheShape& kv = kv_cache_.shape();
  const int64_t num_slots = static_cast<int64_t>(kv.num_blocks) * kv.block_size;
  for (int32_t slot : batch.slot_mapping) {
    if (slot >= num_slots) fail("qwen3 forward: slot {} is outside the KV cache's {} slots", slot, num_slots);
  }
  for (int32_t block : batch.block_tables) {
    if (block < 0 || block >= kv.num_blocks) {
      fail("qwen3 forward: block {} is outside the KV cache's {} blocks", block, kv.num_blocks);
    }
  }
  for (int32_t len : batch.context_lens) {
    if (len < 1 || static_cast<int64_t>(len) > static_cast<int64_t>(batch.max_blocks_per_seq) * kv.block_size) {
      fail("qwen3 forward: context length {} does not fit {} blocks per sequence", len, batch.max_blocks_per_seq);
    }
  }
  const auto rows = static_cast<int64_t>(batch.logits_rows.size());
  if (rows > options_.max_logits_rows) {
    fail("qwen3 forward: {} logits rows, the model was sized for {}", rows, options_.max_logits_rows);
  }
  if (rows > 0 && (logits_out.dtype != DType::kF32 || logits_out.rows != rows ||
                   logits_out.cols != config_.vocab_size || logits_out.stride < logits_out.cols)) {
    fail("qwen3 forward: logits_out must be F32 [{}, {}], got {} [{}, {}]", rows, config_.vocab_size,
         dtype_name(logits_out.dtype), logits_out.rows, logits_out.cols);
  }
  StepRows plan;
  plan.decode_rows = batch.phase == ops::Phase::kDecode ? tokens : batch.num_decode_rows;
  plan.logits_rows = rows;
  // Logits rows of decode rows come first (each decode row is its sequence's logits row).
  while (plan.decode_logits < rows && batch.logits_rows[static_cast<size_t>(plan.decode_logits)] < plan.decode_rows) {
    ++plan.decode_logits;
  }
  return plan;
}

void Qwen3Model::forward(const ops::ForwardBatch& batch, ops::Act logits_out) {
  const StepRows rows = plan_step(batch, logits_out);
  const bool calibrate = kv_scales_pending_ && rows.decode_rows < batch.num_tokens();  // a step with prefill rows
  run_step(backend_.upload_batch(batch), rows, logits_out, calibrate);
}

void Qwen3Model::forward_device(const ops::DeviceBatch& dev, const StepRows& rows, ops::Act logits_out) {
  run_step(dev, rows, logits_out, false);
}

void Qwen3Model::run_step(const ops::DeviceBatch& dev, const StepRows& rows, ops::Act logits_out, bool calibrate) {
  ops::Backend& be = backend_;
  const ModelConfig& c = config_;
  const int64_t tokens = dev.num_tokens;
  const int64_t decode_rows = rows.decode_rows;
  // Linear over the step's rows: decode rows take the decode arms, prefill rows the prefill arms
  // (ARCHITECTURE rule 6: a decode row's bits must not depend on prefill chunks beside it).
  const auto linear = [&be](int64_t decode_count, ops::Act x, const ops::WeightView& weight, ops::Act out) {
    if (decode_count > 0) {
      be.linear(ops::Phase::kDecode, x.slice_rows(0, decode_count), weight, out.slice_rows(0, decode_count));
    }
    if (decode_count < x.rows) {
      const int64_t rest = x.rows - decode_count;
      be.linear(ops::Phase::kPrefill, x.slice_rows(decode_count, rest), weight, out.slice_rows(decode_count, rest));
    }
  };
  const auto eps = static_cast<float>(c.rms_norm_eps);
  const int64_t q_cols = c.num_attention_heads * c.head_dim;
  const int64_t kv_cols = c.num_key_value_heads * c.head_dim;
  const int64_t inter = c.intermediate_size;
  const ops::KvCacheShape& kv_shape = kv_cache_.shape();

  const ops::Act hidden = scratch(kHidden, tokens);  // [T, H]
  const ops::Act normed = scratch(kNormed, tokens);  // [T, H]
  const ops::Act qkv = scratch(kQkv, tokens);        // [T, (nH + 2 nKV) hd]
  const ops::Act q = qkv.slice_cols(0, q_cols);
  const ops::Act k = qkv.slice_cols(q_cols, kv_cols);
  const ops::Act v = qkv.slice_cols(q_cols + kv_cols, kv_cols);
  const ops::Act attn = scratch(kAttn, tokens);      // [T, nH hd]
  const ops::Act delta = scratch(kDelta, tokens);    // [T, H]
  const ops::Act gate_up = scratch(kGateUp, tokens); // [T, 2I]
  const ops::Act gate = gate_up.slice_cols(0, inter);
  const ops::Act up = gate_up.slice_cols(inter, inter);
  const ops::Act mlp = scratch(kMlp, tokens);        // [T, I]

  // delta = x . W; h += delta; normed = norm(h); out = normed . next, as one backend call per
  // phase (decode rows may be fused there) when `next` is one weight stream.
  // silu_out (data not null): next is gate|up, out its scratch, and silu_out = SwiGLU(out).
  // rope (not null, pure decode steps only): next is q | k | v and the call also runs its QK-norm /
  // RoPE / KV write.
  const auto linear_add_norm_linear = [&](ops::Act x, const ops::WeightView& weight, const float* norm_weight,
                                          const ops::WeightView& next, ops::Act out, ops::Act silu_out,
                                          const ops::QkNormRopeStep* rope) {
    const auto rows_of = [](ops::Act a, int64_t first, int64_t count) {
      return a.data == nullptr ? a : a.slice_rows(first, count);
    };
    if (decode_rows > 0) {
      be.linear_add_rms_norm_linear(ops::Phase::kDecode, rows_of(x, 0, decode_rows), weight,
                                    rows_of(hidden, 0, decode_rows), rows_of(delta, 0, decode_rows),
                                    norm_weight, eps, rows_of(normed, 0, decode_rows), next,
                                    rows_of(out, 0, decode_rows), rows_of(silu_out, 0, decode_rows),
                                    decode_rows == tokens ? rope : nullptr);
    }
    if (decode_rows < tokens) {
      const int64_t rest = tokens - decode_rows;
      be.linear_add_rms_norm_linear(
          ops::Phase::kPrefill, rows_of(x, decode_rows, rest), weight, rows_of(hidden, decode_rows, rest),
          rows_of(delta, decode_rows, rest), norm_weight, eps, rows_of(normed, decode_rows, rest), next,
          rows_of(out, decode_rows, rest), rows_of(silu_out, decode_rows, rest), nullptr);
    }
  };

  be.embedding(dev, device_.embed_tokens, hidden);
  for (size_t l = 0; l < device_.layers.size(); ++l) {
    const Qwen3LayerDeviceWeights& w = device_.layers[l];
    const ops::KvCacheLayer& cache = kv_cache_.layer(static_cast<int64_t>(l));
    // Attention block: normed = input_layernorm(h), after the first layer once h += the previous
    // layer's MLP output (its down projection runs here, with this layer's q | k | v).
    const ops::WeightView* prev_down = l == 0 ? nullptr : &device_.layers[l - 1].down_proj;
    // A pure decode step hands the QK-norm / RoPE / KV write to the q | k | v projection's call (a
    // backend may run it in the GEMV's epilogue; the same bits). Mixed steps run it over every
    // token afterwards, as does the FP8 KV calibration step.
    const ops::QkNormRopeStep rope_step{&dev,   w.q_norm,     w.k_norm,  eps,
                                        &rope_, &attn_shape_, &kv_shape, &cache};
    const bool rope_with_qkv = w.qkv_proj.data != nullptr && decode_rows == tokens && !calibrate;
    if (prev_down != nullptr && w.qkv_proj.data != nullptr) {
      // q | k | v, one stream.
      linear_add_norm_linear(mlp, *prev_down, w.input_layernorm, w.qkv_proj, qkv, {},
                             rope_with_qkv ? &rope_step : nullptr);
    } else {
      if (prev_down == nullptr) {
        be.rms_norm(hidden, w.input_layernorm, eps, normed);
      } else {
        linear(decode_rows, mlp, *prev_down, delta);
        be.add_rms_norm(hidden, delta, w.input_layernorm, eps, normed);
      }
      if (rope_with_qkv) {
        be.linear_qk_norm_rope_kv_write(ops::Phase::kDecode, normed, w.qkv_proj, qkv, rope_step);
      } else if (w.qkv_proj.data != nullptr) {
        linear(decode_rows, normed, w.qkv_proj, qkv);
      } else {
        linear(decode_rows, normed, w.q_proj, q);
        linear(decode_rows, normed, w.k_proj, k);
        linear(decode_rows, normed, w.v_proj, v);
      }
    }
    if (!rope_with_qkv) {
      be.qk_norm_rope_kv_write(dev, q, k, v, w.q_norm, w.k_norm, eps, rope_, attn_shape_, kv_shape, cache);
    }
    if (calibrate) calibrate_kv_layer(dev, static_cast<int64_t>(l), k, v);  // sets cache's scales, re-stores k, v
    be.attention(dev, q, attn_shape_, kv_shape, cache, attn);
    // MLP block: h += attn . o; normed = post_attention_layernorm(h); gate | up from normed; mlp =
    // SwiGLU(gate | up). With one gate|up weight stream, one call from the o projection to the SwiGLU.
    if (w.gate_up_proj.data != nullptr) {
      linear_add_norm_linear(attn, w.o_proj, w.post_attention_layernorm, w.gate_up_proj, gate_up, mlp,
                             nullptr);
    } else {
      linear(decode_rows, attn, w.o_proj, delta);
      be.add_rms_norm(hidden, delta, w.post_attention_layernorm, eps, normed);
      linear(decode_rows, normed, w.gate_proj, gate);
      linear(decode_rows, normed, w.up_proj, up);
      be.silu_mul(gate_up, mlp);
    }
  }
  // h += the last layer's MLP output; normed = the final norm.
  linear(decode_rows, mlp, device_.layers.back().down_proj, delta);
  be.add_rms_norm(hidden, delta, device_.final_norm, eps, normed);
  if (rows.logits_rows == 0) return;
  const ops::Act gathered = scratch(kGathered, rows.logits_rows);  // [R, H]
  be.gather_logits_rows(dev, normed, gathered);
  linear(rows.decode_logits, gathered, device_.lm_head, logits_out);  // F32 [R, V]
}

}  // namespace lathe::model
