#pragma once
// `lathe serve` settings, and loading a checkpoint into a ready Service: config, tokenizer,
// weights, the Qwen3 model on the given backend, the ModelExecutor and the Engine.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "core/dtype.h"
#include "ops/backend.h"
#include "ops/kv_cache.h"
#include "server/service.h"

namespace lathe::server {

struct ServeOptions {
  std::string model;                   // the MODEL argument (a checkpoint directory)
  std::string host = "127.0.0.1";
  int port = 8000;
  std::string device = "auto";
  int32_t max_num_seqs = 256;
  int32_t max_model_len = 0;           // 0: the config's max_position_embeddings
  int32_t max_num_batched_tokens = 0;  // 0: max(2048, max_num_seqs)
  std::string kv_cache_dtype = "auto";
  double gpu_memory_utilization = 0.9;  // device backends: the KV cache fills this share of memory
  bool enforce_eager = false;          // no decode graphs (--enforce-eager)
  bool calculate_kv_scales = false;    // FP8 KV: calibrate scales on the first prefill (--calculate-kv-scales)
  std::string api_key;
  std::string served_model_name;       // empty: MODEL as given (vLLM's default)
  std::string load_format = "auto";  // auto: the checkpoint's safetensors; dummy: random weights (model/dummy_weights.h)
  std::string tokenizer;              // --tokenizer DIR (tokenizer.json, tokenizer_config.json); empty: the model dir
  int32_t num_kv_blocks = 0;           // 0: sized automatically (CPU: resolve_kv_blocks; device: memory)
  size_t max_body_bytes = size_t{16} << 20;
  int32_t block_size = ops::kDefaultKvBlockSize;  // --block-size
};

// Bytes of KV-cache memory the CPU backend gets by default when --num-kv-blocks is not given.
inline constexpr size_t kDefaultCpuKvCacheBytes = size_t{4} << 30;

// KV blocks for the CPU backend (block 0, the scratch block, included): --num-kv-blocks when
// given; otherwise enough for max_num_seqs sequences of max_model_len tokens, capped at
// kDefaultCpuKvCacheBytes of cache, and never less than one max_model_len sequence plus the
// scratch block (the scheduler's requirement; preemption handles the rest).
int32_t resolve_kv_blocks(int32_t requested, int32_t max_num_seqs, int32_t max_model_len, int32_t block_size,
                          size_t bytes_per_block);

// Loads `options.model` onto `backend` (which must outlive the service) and starts the engine.
// Logs the resolved settings and the load time. Throws lathe::Error naming the file or flag.
std::shared_ptr<Service> load_service(const ServeOptions& options, ops::Backend& backend, DType kv_dtype);

}  // namespace lathe::server
