// `lathe logits MODEL --prompt-ids 1,2,3 --out FILE.safetensors [--device ...]
// [--kv-cache-dtype ...] [--max-num-batched-tokens N] [--block-size N]`
//
// Writes the float32 logits of every prompt position as the tensor `logits` [T, V].
#include <cstddef>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "app/commands.h"
#include "app/model_runner.h"
#include "core/error.h"
#include "core/log.h"
#include "io/safetensors.h"

namespace lathe::app {
namespace {

struct LogitsArgs {
  std::string model;
  std::string prompt_ids;
  std::string out;
  RunnerOptions runner;
};

int run_logits(const LogitsArgs& args) {
  const std::vector<int32_t> prompt = parse_token_ids(args.prompt_ids, "--prompt-ids");
  const std::filesystem::path out_dir = std::filesystem::path(args.out).parent_path();
  if (!out_dir.empty() && !std::filesystem::is_directory(out_dir)) {
    fail("--out: directory {} does not exist", out_dir.string());
  }
  const auto prompt_len = static_cast<int64_t>(prompt.size());
  ModelRunner runner(args.model, args.runner, prompt_len, prompt_len);
  const std::vector<float> logits = runner.prompt_logits(prompt);
  io::TensorToWrite tensor;
  tensor.name = "logits";
  tensor.dtype = DType::kF32;
  tensor.shape = {prompt_len, runner.config().vocab_size};
  tensor.bytes = std::as_bytes(std::span<const float>(logits));
  io::write_safetensors(args.out, {tensor});
  spdlog::info("logits: wrote {} x {} float32 logits to {}", prompt_len, runner.config().vocab_size, args.out);
  return 0;
}

const Registration kLogits{"logits", "Write the logits of every prompt position", [](CLI::App& cmd) -> CommandAction {
  auto args = std::make_shared<LogitsArgs>();
  cmd.add_option("model", args->model, "Model directory (config.json, safetensors)")->required();
  cmd.add_option("--prompt-ids", args->prompt_ids, "Prompt token ids, comma-separated")->required();
  cmd.add_option("--out", args->out, "Output .safetensors file (tensor `logits` F32 [T, V])")->required();
  cmd.add_option("--device", args->runner.device, "auto | cpu | cuda")->capture_default_str();
  cmd.add_option("--kv-cache-dtype", args->runner.kv_cache_dtype, "auto | f32 | bf16 | fp8")->capture_default_str();
  cmd.add_option("--max-model-len", args->runner.max_model_len, "Longest prompt (default: the config's)");
  cmd.add_option("--max-num-batched-tokens", args->runner.prefill_chunk,
                 "Prompt tokens per prefill step (default: the whole prompt)");
  cmd.add_option("--block-size", args->runner.block_size, kBlockSizeHelp)->capture_default_str();
  return [args]() { return run_logits(*args); };
}};

}  // namespace
}  // namespace lathe::app
