// `lathe bench latency ...` and `lathe bench serve ...` (the kernel benchmark is its own binary,
// bench/kernels). Flags follow vLLM's `vllm bench latency` / `vllm bench serve` where one exists.
#include <fmt/format.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "app/bench_latency.h"
#include "app/bench_serve.h"
#include "app/cli_lists.h"
#include "app/commands.h"
#include "core/error.h"

namespace lathe::app {
namespace {

// "1,4,16,64" -> {1, 4, 16, 64}; errors name the flag.
std::vector<int64_t> parse_positive_list(const std::string& text, const char* flag) {
  return parse_int_list(text, 1, flag, "a positive integer (expected a comma-separated list such as 1,4,16,64)");
}

void write_text(const std::string& path, const std::string& text, const char* flag) {
  std::ofstream out(path, std::ios::binary);
  if (!out) fail("{} {}: cannot open the file for writing", flag, path);
  out << text;
  out.close();
  if (!out) fail("{} {}: writing the file failed", flag, path);
}

struct LatencyFlags {
  LatencyOptions options;
  std::string model;
  std::string batch_sizes = "1,4,16,64";
  std::string tokenizer;
  std::string out;
  bool no_warmup = false;
};

struct ServeFlags {
  ServeOptions options;
  std::string concurrency = "1,4,16,64";
  double request_rate = 0.0;  // 0: not given
  std::string tokenizer;
  std::string out;
  std::string plot;
  bool no_warmup = false;
};

void add_latency_flags(CLI::App& cmd, LatencyFlags& f) {
  LatencyOptions& o = f.options;
  cmd.add_option("model", f.model, "Model directory (config.json; safetensors unless --load-format dummy)")->required();
  cmd.add_option("--load-format", o.load_format, "auto (the directory's safetensors) or dummy (random weights)")
      ->capture_default_str();
  cmd.add_option("--device", o.device, "auto, cpu or cuda")->capture_default_str();
  cmd.add_option("--batch-sizes", f.batch_sizes, "Comma-separated batch sizes")->capture_default_str();
  cmd.add_option("--input-len", o.input_len, "Prompt tokens per sequence")->capture_default_str();
  cmd.add_option("--output-len", o.output_len, "Generated tokens per sequence (>= 2)")->capture_default_str();
  cmd.add_option("--kv-cache-dtype", o.kv_cache_dtype, "auto, f32, bf16 or fp8")->capture_default_str();
  cmd.add_option("--max-num-batched-tokens", o.max_num_batched_tokens, "Prefill tokens per step")->capture_default_str();
  cmd.add_option("--block-size", o.block_size, kBlockSizeHelp)->capture_default_str();
  cmd.add_option("--tokenizer", f.tokenizer, "Tokenizer directory (prompt ids then avoid its added tokens)");
  cmd.add_option("--seed", o.seed, "Seed of the prompts and the dummy weights")->capture_default_str();
  cmd.add_option("--out", f.out, "Also write the results as JSON to this file");
  cmd.add_flag("--no-warmup", f.no_warmup, "Skip the short unmeasured run before the first batch size");
  cmd.add_flag("--enforce-eager", o.enforce_eager, "Launch every decode step op by op (no CUDA graphs)");
  cmd.add_flag(
      "--step-breakdown", o.step_breakdown,
      "Also time each decode step's phases on the device clock (input copy, forward, sampling + ids to "
      "the host, host time outside them)");
  cmd.add_flag("--calculate-kv-scales", o.calculate_kv_scales,
               "FP8 KV without checkpoint scales: calibrate k/v scales (amax / 448) on one random prompt first");
}

void add_serve_flags(CLI::App& cmd, ServeFlags& f) {
  ServeOptions& o = f.options;
  cmd.add_option("--url", o.url, "Server root, e.g. http://127.0.0.1:8000")->required();
  cmd.add_option("--endpoint", o.endpoint, "Completions endpoint path")->capture_default_str();
  cmd.add_option("--concurrency", f.concurrency, "Comma-separated concurrency levels (requests in flight)")
      ->capture_default_str();
  cmd.add_option("--input-len", o.input_len, "Prompt tokens per request")->capture_default_str();
  cmd.add_option("--output-len", o.output_len, "max_tokens per request (ignore_eos: all of them)")->capture_default_str();
  cmd.add_option("--num-prompts", o.num_prompts, "Requests per level (0: 4 x concurrency, at least 16)")
      ->capture_default_str();
  cmd.add_option("--request-rate", f.request_rate, "Poisson arrival rate, requests/s (default: all at once)");
  cmd.add_option("--seed", o.seed, "Seed of the prompts and the arrivals")->capture_default_str();
  cmd.add_option("--model", o.model, "The request's model field (default: the first id of GET /v1/models)");
  cmd.add_option("--tokenizer", f.tokenizer, "Tokenizer directory: prompt ids avoid its added (special) tokens");
  cmd.add_option("--vocab-size", o.vocab_size, "Without --tokenizer: prompt ids are drawn from [0, N)")
      ->capture_default_str();
  cmd.add_option("--api-key", o.api_key, "Sent as Authorization: Bearer KEY");
  cmd.add_option("--timeout", o.timeout_s, "Per-request timeout, seconds")->capture_default_str();
  cmd.add_option("--out", f.out, "Write the results as JSON to this file");
  cmd.add_option("--plot", f.plot, "Write an SVG plot of tok/s and TPOT against concurrency");
  cmd.add_flag("--no-warmup", f.no_warmup, "Skip the warm-up request");
}

int run_latency_command(LatencyFlags& f) {
  LatencyOptions o = f.options;
  o.model_dir = f.model;
  o.batch_sizes = parse_positive_list(f.batch_sizes, "--batch-sizes");
  if (!f.tokenizer.empty()) o.tokenizer = f.tokenizer;
  o.warmup = !f.no_warmup;
  const LatencyReport report = run_latency(o);
  std::fputs(format_latency_report(report).c_str(), stdout);
  if (!f.out.empty()) write_text(f.out, latency_report_json(report).dump(2) + "\n", "--out");
  return 0;
}

int run_serve_command(ServeFlags& f) {
  ServeOptions o = f.options;
  o.concurrency = parse_positive_list(f.concurrency, "--concurrency");
  if (f.request_rate != 0.0) o.request_rate = f.request_rate;
  if (!f.tokenizer.empty()) o.tokenizer = f.tokenizer;
  o.warmup = !f.no_warmup;
  const ServeReport report = run_serve(o, [](const std::string& line) {
    std::fprintf(stderr, "%s\n", line.c_str());
    std::fflush(stderr);
  });
  std::fputs(format_serve_report(report).c_str(), stdout);
  if (!f.out.empty()) write_text(f.out, serve_report_json(report).dump(2) + "\n", "--out");
  if (!f.plot.empty()) write_text(f.plot, serve_report_svg(report), "--plot");
  return 0;
}

const Registration kBench{"bench", "Benchmarks: latency (offline prefill/decode) and serve (HTTP load)", [](CLI::App& cmd) {
  cmd.require_subcommand(1);
  auto latency_flags = std::make_shared<LatencyFlags>();
  auto serve_flags = std::make_shared<ServeFlags>();
  CLI::App* latency = cmd.add_subcommand(
      "latency", "Offline prefill time and decode step per batch size, against the decode floor (no HTTP)");
  add_latency_flags(*latency, *latency_flags);
  CLI::App* serve = cmd.add_subcommand(
      "serve", "Load an OpenAI-compatible server (streaming completions) at several concurrency levels");
  add_serve_flags(*serve, *serve_flags);
  return [latency, serve, latency_flags, serve_flags]() -> int {
    if (latency->parsed()) return run_latency_command(*latency_flags);
    if (serve->parsed()) return run_serve_command(*serve_flags);
    return 1;
  };
}};

}  // namespace
}  // namespace lathe::app
