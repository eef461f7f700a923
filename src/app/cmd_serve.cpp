// `lathe serve MODEL [flags]`: the OpenAI-compatible HTTP server (server/serve.h). Flags follow
// vLLM's names (docs: ARCHITECTURE.md, CLI contract; README "Serving").
#include <memory>
#include <string>

#include "app/backend_factory.h"
#include "app/commands.h"
#include "app/model_runner.h"
#include "core/error.h"
#include "server/serve.h"

namespace lathe::app {
namespace {

const Registration kServe{"serve", "Serve a model over an OpenAI-compatible HTTP API", [](CLI::App& cmd) {
  auto options = std::make_shared<server::ServeOptions>();
  auto max_body = std::make_shared<int64_t>(static_cast<int64_t>(options->max_body_bytes));
  cmd.add_option("model", options->model, "Checkpoint directory (config.json, safetensors, tokenizer.json)")->required();
  cmd.add_option("--host", options->host, "Address to bind")->capture_default_str();
  cmd.add_option("--port", options->port, "Port to bind (0: any free port)")->capture_default_str()->check(CLI::Range(0, 65535));
  cmd.add_option("--device", options->device, "auto | cpu | cuda")->capture_default_str();
  cmd.add_option("--max-num-seqs", options->max_num_seqs, "Sequences running at once at most")
      ->capture_default_str()->check(CLI::PositiveNumber);
  cmd.add_option("--max-model-len", options->max_model_len, "Prompt + generated tokens at most (default: the model's)")
      ->check(CLI::PositiveNumber);
  cmd.add_option("--max-num-batched-tokens", options->max_num_batched_tokens,
                 "Token rows per engine step at most (chunked prefill; default max(2048, max-num-seqs))")
      ->check(CLI::PositiveNumber);
  cmd.add_option("--kv-cache-dtype", options->kv_cache_dtype, "auto | bf16 | fp8 (auto: f32 on CPU, bf16 on CUDA)")
      ->capture_default_str();
  cmd.add_option("--gpu-memory-utilization", options->gpu_memory_utilization,
                 "Fraction of GPU memory for weights and KV cache (CUDA)")
      ->capture_default_str()->check(CLI::Range(0.0, 1.0));
  cmd.add_flag("--enforce-eager", options->enforce_eager, "Launch every decode step op by op (no CUDA graphs)");
  cmd.add_flag("--calculate-kv-scales", options->calculate_kv_scales,
               "FP8 KV without checkpoint scales: set each layer's k/v scale from the first prefill (amax / 448); "
               "turns decode graphs off");
  cmd.add_option("--api-key", options->api_key, "Require 'Authorization: Bearer KEY' on /v1/*");
  cmd.add_option("--served-model-name", options->served_model_name, "Model name in the API (default: MODEL as given)");
  cmd.add_option("--load-format", options->load_format,
                 "auto (the checkpoint's safetensors) | dummy (deterministic random weights of the config's shapes)")
      ->capture_default_str();
  cmd.add_option("--tokenizer", options->tokenizer, "Directory of tokenizer.json / tokenizer_config.json (default: MODEL)");
  cmd.add_option("--num-kv-blocks", options->num_kv_blocks,
                 "KV-cache blocks of --block-size tokens (default: CUDA fills --gpu-memory-utilization; CPU "
                 "takes max-num-seqs x max-model-len, capped at 4 GiB)")
      ->check(CLI::PositiveNumber);
  cmd.add_option("--block-size", options->block_size, kBlockSizeHelp)->capture_default_str();
  cmd.add_option("--max-body-bytes", *max_body, "Largest request body accepted (413 above)")
      ->capture_default_str()->check(CLI::PositiveNumber);
  return [options, max_body]() -> int {
    options->max_body_bytes = static_cast<size_t>(*max_body);
    const std::string device = options->device;
    const std::string kv_dtype = options->kv_cache_dtype;
    if (device != "auto" && device != "cpu" && device != "cuda") {
      fail("--device: unknown device '{}' (expected auto, cpu or cuda)", device);
    }
    const int32_t max_num_seqs = options->max_num_seqs;
    return server::run_serve(*options, [device, kv_dtype, max_num_seqs]() {
      server::BackendChoice choice;
      BackendRequest request;
      request.device = device;
      request.max_decode_seqs = max_num_seqs;  // sizes the split-K attention workspace
      choice.backend = make_backend(request);
      choice.kv_dtype = parse_kv_cache_dtype(kv_dtype, *choice.backend);
      return choice;
    });
  };
}};

}  // namespace
}  // namespace lathe::app
