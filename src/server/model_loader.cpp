#include "server/model_loader.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <limits>

#include "core/error.h"
#include "core/log.h"
#include "model/config.h"
#include "model/dummy_weights.h"
#include "model/kv_cache_store.h"
#include "model/qwen3.h"
#include "model/weights.h"
#include "server/model_executor.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/tokenizer_config.h"

namespace lathe::server {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

int32_t checked_int32(int64_t value, const char* what) {
  if (value < 1 || value > std::numeric_limits<int32_t>::max()) fail("{} ({}) is out of range", what, value);
  return static_cast<int32_t>(value);
}

}  // namespace

int32_t resolve_kv_blocks(int32_t requested, int32_t max_num_seqs, int32_t max_model_len, int32_t block_size,
                          size_t bytes_per_block) {
  if (block_size < 1) fail("internal: KV block size must be positive");
  const int64_t per_seq = (static_cast<int64_t>(max_model_len) + block_size - 1) / block_size;
  const int64_t minimum = per_seq + 1;  // one full-length sequence + the scratch block
  if (requested > 0) {
    if (requested < minimum) {
      fail("--num-kv-blocks {}: at least {} blocks are needed (one --max-model-len {} sequence of {}-token blocks, plus "
           "the scratch block)",
           requested, minimum, max_model_len, block_size);
    }
    return requested;
  }
  const int64_t wanted = per_seq * max_num_seqs + 1;
  const int64_t budget = static_cast<int64_t>(kDefaultCpuKvCacheBytes / std::max<size_t>(bytes_per_block, 1));
  const int64_t blocks = std::max(minimum, std::min(wanted, budget));
  return checked_int32(blocks, "the KV block count");
}

std::shared_ptr<Service> load_service(const ServeOptions& options, ops::Backend& backend, DType kv_dtype) {
  const Clock::time_point start = Clock::now();
  if (options.load_format != "auto" && options.load_format != "dummy") {
    fail("--load-format {}: expected auto (the checkpoint's safetensors) or dummy (random weights)", options.load_format);
  }
  model::ModelConfig config = model::load_model_config(options.model);
  const std::string tokenizer_dir = options.tokenizer.empty() ? options.model : options.tokenizer;
  tokenizer::Tokenizer tokenizer = tokenizer::Tokenizer::load(tokenizer_dir);
  const tokenizer::TokenizerConfig tokenizer_config = tokenizer::TokenizerConfig::load(tokenizer_dir);

  const int64_t config_len = config.max_position_embeddings;
  int64_t max_model_len = options.max_model_len > 0 ? options.max_model_len : config_len;
  if (max_model_len <= 0) fail("--max-model-len: config.json has no max_position_embeddings; give --max-model-len");
  if (config_len > 0 && max_model_len > config_len) {
    spdlog::warn("--max-model-len {} is longer than the model's max_position_embeddings {}", max_model_len, config_len);
  }
  const int32_t max_len = checked_int32(max_model_len, "--max-model-len");
  if (options.max_num_seqs < 1) fail("--max-num-seqs must be at least 1 (got {})", options.max_num_seqs);
  if (options.block_size < 1 || options.block_size > ops::kMaxKvBlockSize) {
    fail("--block-size must be in [1, {}] (got {})", ops::kMaxKvBlockSize, options.block_size);
  }
  const int32_t max_batched =
      options.max_num_batched_tokens > 0 ? options.max_num_batched_tokens : std::max(2048, options.max_num_seqs);

  ops::KvCacheShape one_block;
  one_block.num_blocks = 1;
  one_block.block_size = options.block_size;
  one_block.num_kv_heads = static_cast<int32_t>(config.num_key_value_heads);
  one_block.head_dim = static_cast<int32_t>(config.head_dim);
  one_block.dtype = kv_dtype;
  const size_t block_bytes = model::KvCacheStore::bytes_for(config.num_hidden_layers, one_block);
  // A device backend fills --gpu-memory-utilization once the weights are in (the model sizes it);
  // the CPU backend takes resolve_kv_blocks' rule. --num-kv-blocks overrides both.
  const bool size_from_memory = options.num_kv_blocks == 0 && backend.device_memory().has_value();
  const int32_t min_blocks = (max_len + options.block_size - 1) / options.block_size + 1;  // + the scratch block
  const int32_t cpu_blocks =
      size_from_memory ? 0
                       : resolve_kv_blocks(options.num_kv_blocks, options.max_num_seqs, max_len, options.block_size,
                                           block_bytes);

  // EOS: generation_config.json's ids (else config.json's), plus the tokenizer's eos_token.
  std::vector<int32_t> eos = config.eos_token_ids;
  if (tokenizer_config.eos_token) {
    if (std::optional<int32_t> id = tokenizer.token_id(*tokenizer_config.eos_token);
        id && std::find(eos.begin(), eos.end(), *id) == eos.end()) {
      eos.push_back(*id);
    }
  }
  const int32_t vocab = static_cast<int32_t>(config.vocab_size);
  const std::string architecture = config.architecture;
  const size_t num_layers = static_cast<size_t>(config.num_hidden_layers);
  const Clock::time_point weights_start = Clock::now();
  // dummy: deterministic random values in the checkpoint's dtypes (benchmarks of real shapes).
  model::Qwen3Weights weights =
      options.load_format == "dummy" ? model::make_dummy_qwen3_weights(config) : model::load_qwen3_weights(config);
  model::Qwen3Options model_options;
  model_options.max_tokens_per_step = max_batched;
  model_options.max_logits_rows = options.max_num_seqs;
  model_options.num_kv_blocks = cpu_blocks;
  model_options.gpu_memory_utilization = options.gpu_memory_utilization;
  model_options.min_kv_blocks = min_blocks;
  model_options.kv_block_size = options.block_size;
  model_options.kv_dtype = kv_dtype;
  model_options.calculate_kv_scales = options.calculate_kv_scales;
  auto model = std::make_unique<model::Qwen3Model>(backend, std::move(config), std::move(weights), model_options);
  // Decode graphs keep the KV scales of their recording in their launch arguments, so they cannot
  // be recorded before the first request's prefill calibrates them.
  const bool scales_pending = model->kv_scales_pending();
  const size_t weight_bytes = model->weight_bytes();
  const size_t kv_bytes = model->kv_cache().bytes();
  const int32_t num_blocks = model->kv_cache().shape().num_blocks;
  const double weights_seconds = seconds_since(weights_start);
  ExecutorOptions executor_options;
  executor_options.decode_graphs = !options.enforce_eager && !scales_pending;
  if (scales_pending && !options.enforce_eager) {
    spdlog::warn("serve: --calculate-kv-scales calibrates on the first prefill, after start-up: decode graphs are off "
                 "(every decode step runs eagerly)");
  }
  executor_options.max_decode_seqs = options.max_num_seqs;
  executor_options.max_blocks_per_seq = (max_len + options.block_size - 1) / options.block_size;

  engine::EngineConfig engine_config;
  engine_config.scheduler.max_num_seqs = options.max_num_seqs;
  engine_config.scheduler.max_num_batched_tokens = max_batched;
  engine_config.scheduler.max_model_len = max_len;
  engine_config.scheduler.vocab_size = vocab;
  engine_config.num_blocks = num_blocks;
  engine_config.block_size = options.block_size;
  engine_config.eos_token_ids = eos;
  const Clock::time_point capture_start = Clock::now();
  auto executor = std::make_unique<ModelExecutor>(backend, std::move(model), executor_options);
  const double capture_seconds = seconds_since(capture_start);
  auto engine = std::make_unique<engine::Engine>(engine_config, std::move(executor), make_detokenizer_factory(tokenizer));

  ServiceInfo info;
  info.served_model_name = options.served_model_name.empty() ? options.model : options.served_model_name;
  info.model_dir = options.model;
  info.max_model_len = max_len;
  auto service = std::make_shared<Service>(std::move(info), std::move(tokenizer), tokenizer_config, std::move(engine));

  const double mib = 1024.0 * 1024.0;
  spdlog::info("serve: model {} ({}, {} layers, vocab {}, weights {:.1f} MiB) on {} backend", options.model,
               architecture, num_layers, vocab, static_cast<double>(weight_bytes) / mib, backend.name());
  spdlog::info("serve: served-model-name={} max-model-len={} max-num-seqs={} max-num-batched-tokens={} "
               "kv-cache-dtype={} block-size={} eos={}",
               service->info().served_model_name, max_len, options.max_num_seqs, max_batched, dtype_name(kv_dtype),
               options.block_size, fmt::join(eos, ","));
  spdlog::info("serve: KV cache {} blocks ({} usable, {} tokens, {:.1f} MiB; {})", num_blocks, num_blocks - 1,
               static_cast<int64_t>(num_blocks - 1) * options.block_size, static_cast<double>(kv_bytes) / mib,
               options.num_kv_blocks > 0 ? std::string("--num-kv-blocks")
               : size_from_memory
                   ? fmt::format("--gpu-memory-utilization {}", options.gpu_memory_utilization)
                   : fmt::format("max-num-seqs x max-model-len, capped at {} GiB", kDefaultCpuKvCacheBytes >> 30));
  if (!service->prompter().available()) spdlog::warn("serve: chat is unavailable: {}", service->prompter().unavailable_reason());
  // Decode rows keep their bits whatever else is in the batch only within one family of linear
  // arms: a step wider than the backend's boundary (the GEMV tiers' 32 rows on CUDA) takes the
  // GEMM, whose bits differ.
  for (int32_t boundary : backend.decode_arm_boundaries()) {
    if (boundary < options.max_num_seqs) {
      spdlog::warn("serve: decode steps of more than {} sequences run their linears on the GEMM, whose bits differ "
                   "from the GEMV tiers': with --max-num-seqs {} a request's output can depend on how many others "
                   "run beside it; --max-num-seqs {} or LATHE_FFN_DECODE_WIDE=gemv (wide steps run the tiers "
                   "chunk by chunk) keep every decode row on the tiers (batch invariance)",
                   boundary, options.max_num_seqs, boundary);
    }
  }
  spdlog::info("serve: start-up took {:.2f} s (weights and model {:.2f} s, decode graphs {:.2f} s)",
               seconds_since(start), weights_seconds, capture_seconds);
  return service;
}

}  // namespace lathe::server
