// `lathe generate MODEL (--prompt TEXT | --chat TEXT | --prompt-ids 1,2,3) [--max-tokens N] [--temperature T]
// [--top-p P] [--top-k K] [--min-p P] [--seed S] [--ids] [--device cpu|auto] [--kv-cache-dtype ...]
// [--max-model-len N] [--max-num-batched-tokens N] [--block-size N]`
//
// --prompt is encoded with the model's tokenizer as is; --chat is one user message rendered through
// the model's chat template with the generation prompt. Prefills the prompt, then decodes until an
// eos id of the model's generation config, --max-tokens or the maximum model length. --ids prints
// the generated ids (a final eos id included) space-separated on one line; otherwise the text is
// streamed as it is decoded (special tokens skipped) when the model directory has a tokenizer.json,
// else the ids are printed. The decode speed is logged at info level.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "app/commands.h"
#include "app/model_runner.h"
#include "core/error.h"
#include "core/log.h"
#include "tokenizer/chat_template.h"
#include "tokenizer/streaming_detokenizer.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/tokenizer_config.h"

namespace lathe::app {
namespace {

struct GenerateArgs {
  std::string model;
  std::string prompt_ids;
  std::optional<std::string> prompt_text;
  std::optional<std::string> chat_text;
  int64_t max_tokens = 16;
  float temperature = 1.0f;
  float top_p = 1.0f;
  int32_t top_k = 0;
  float min_p = 0.0f;
  uint64_t seed = 0;
  bool ids = false;
  RunnerOptions runner;
};

std::string join_ids(const std::vector<int32_t>& ids) {
  std::string text;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i > 0) text += ' ';
    text += std::to_string(ids[i]);
  }
  return text;
}

int run_generate(const GenerateArgs& args) {
  if (args.max_tokens < 0) fail("--max-tokens must be >= 0, got {}", args.max_tokens);
  if (!(args.temperature >= 0.0f)) fail("--temperature must be >= 0, got {}", args.temperature);
  if (!(args.top_p > 0.0f && args.top_p <= 1.0f)) fail("--top-p must be in (0, 1], got {}", args.top_p);
  if (!(args.min_p >= 0.0f && args.min_p <= 1.0f)) fail("--min-p must be in [0, 1], got {}", args.min_p);
  if (args.top_k < -1) fail("--top-k must be -1 or 0 (all) or positive, got {}", args.top_k);
  const int given = (args.prompt_ids.empty() ? 0 : 1) + (args.prompt_text ? 1 : 0) + (args.chat_text ? 1 : 0);
  if (given != 1) fail("give exactly one of --prompt, --chat and --prompt-ids");

  // The tokenizer is loaded first so that a broken tokenizer.json fails before the weights load.
  std::optional<tokenizer::Tokenizer> tok;
  const std::filesystem::path dir(args.model);
  const bool needs_tokenizer = args.prompt_text || args.chat_text;
  if (needs_tokenizer && !std::filesystem::exists(dir / "tokenizer.json")) {
    fail("{}: --prompt and --chat need the model's tokenizer.json, which this directory lacks", dir.string());
  }
  if ((needs_tokenizer || !args.ids) && std::filesystem::exists(dir / "tokenizer.json")) tok = tokenizer::Tokenizer::load(dir);
  std::vector<int32_t> prompt;
  if (args.prompt_text) {
    prompt = tok->encode(*args.prompt_text);
  } else if (args.chat_text) {
    const tokenizer::TokenizerConfig tok_config = tokenizer::TokenizerConfig::load(dir);
    const tokenizer::ChatTemplate chat = tokenizer::ChatTemplate::from_config(tok_config);
    tokenizer::ChatRequest request;
    request.messages.push_back({{"role", "user"}, {"content", *args.chat_text}});
    request.add_generation_prompt = true;
    prompt = tok->encode(chat.render(request));
  } else {
    prompt = parse_token_ids(args.prompt_ids, "--prompt-ids");
  }
  if (prompt.empty()) fail("the prompt is empty after tokenization");

  const auto prompt_len = static_cast<int64_t>(prompt.size());
  const int64_t seq_tokens = args.max_tokens > INT64_MAX - prompt_len ? INT64_MAX : prompt_len + args.max_tokens;
  ModelRunner runner(dir, args.runner, prompt_len, seq_tokens);
  GenerateOptions options;
  options.max_tokens = args.max_tokens;
  options.sampling.temperature = args.temperature;
  options.sampling.top_k = args.top_k < 0 ? 0 : args.top_k;
  options.sampling.top_p = args.top_p;
  options.sampling.min_p = args.min_p;
  options.sampling.seed = args.seed;
  options.stop_ids = runner.config().eos_token_ids;
  // Text streams to stdout as each token completes a UTF-8 sequence.
  std::optional<tokenizer::StreamingDetokenizer> stream;
  if (tok && !args.ids) stream.emplace(*tok, /*skip_special=*/true);
  const GenerateResult result = runner.generate(prompt, options, [&](int32_t id) {
    if (!stream) return;
    const std::string piece = stream->push(id);
    std::fwrite(piece.data(), 1, piece.size(), stdout);
    std::fflush(stdout);
  });

  if (stream) {
    std::printf("%s\n", stream->flush().c_str());
  } else {
    std::printf("%s\n", join_ids(result.ids).c_str());
  }
  std::fflush(stdout);
  const double decode_rate =
      result.decode_seconds > 0.0 ? static_cast<double>(result.decode_steps) / result.decode_seconds : 0.0;
  spdlog::info("generate: {} prompt tokens prefilled in {:.3f} s; {} tokens generated ({}), decode {} steps in "
               "{:.3f} s = {:.1f} tok/s on {}",
               result.prompt_tokens, result.prefill_seconds, result.ids.size(), result.finish_reason,
               result.decode_steps, result.decode_seconds, decode_rate, runner.backend().name());
  return 0;
}

const Registration kGenerate{"generate", "Generate tokens from a prompt", [](CLI::App& cmd) -> CommandAction {
  auto args = std::make_shared<GenerateArgs>();
  cmd.add_option("model", args->model, "Model directory (config.json, safetensors)")->required();
  cmd.add_option("--prompt-ids", args->prompt_ids, "Prompt token ids, comma-separated");
  cmd.add_option("--prompt", args->prompt_text, "Prompt text, encoded with the model's tokenizer");
  cmd.add_option("--chat", args->chat_text, "A user message, rendered through the model's chat template");
  cmd.add_option("--max-tokens", args->max_tokens, "Most tokens to generate")->capture_default_str();
  cmd.add_option("--temperature", args->temperature, "Sampling temperature (0 = greedy)")->capture_default_str();
  cmd.add_option("--top-p", args->top_p, "Nucleus sampling mass")->capture_default_str();
  cmd.add_option("--top-k", args->top_k, "Keep the k most likely tokens (0 or -1 = all)")->capture_default_str();
  cmd.add_option("--min-p", args->min_p, "Drop tokens below min_p * p_max")->capture_default_str();
  cmd.add_option("--seed", args->seed, "Sampling seed")->capture_default_str();
  cmd.add_flag("--ids", args->ids, "Print the generated token ids on one line");
  cmd.add_option("--device", args->runner.device, "auto | cpu | cuda")->capture_default_str();
  cmd.add_option("--kv-cache-dtype", args->runner.kv_cache_dtype, "auto | f32 | bf16 | fp8")->capture_default_str();
  cmd.add_flag("--calculate-kv-scales", args->runner.calculate_kv_scales,
               "FP8 KV without checkpoint scales: set each layer's k/v scale from the first prefill (amax / 448)");
  cmd.add_option("--max-model-len", args->runner.max_model_len, "Longest prompt + output (default: the config's)");
  cmd.add_option("--max-num-batched-tokens", args->runner.prefill_chunk,
                 "Prompt tokens per prefill step (default: the whole prompt)");
  cmd.add_option("--block-size", args->runner.block_size, kBlockSizeHelp)->capture_default_str();
  return [args]() { return run_generate(*args); };
}};

}  // namespace
}  // namespace lathe::app
