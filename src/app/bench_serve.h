#pragma once
// `lathe bench serve`: a load generator speaking the OpenAI streaming completions API, so it
// measures lathe's server or any other (vLLM, SGLang, ...) the same way.
//
// Per concurrency level C: num_prompts requests, each POST {endpoint} with
//   {"model", "prompt": [input_len random token ids], "max_tokens": output_len, "stream": true,
//    "stream_options": {"include_usage": true}, "ignore_eos": true, "temperature": 0}
// (ignore_eos is vLLM's extension, which lathe supports: every request produces output_len
// tokens). Without --request-rate all requests are released at once and C workers keep C in
// flight; with it, request i is released at its Poisson arrival time (exponential gaps of mean
// 1/R from the seed) and still at most C are in flight. Prompt ids avoid the tokenizer's added
// (special) tokens when a tokenizer is given, else they lie in [0, vocab_size). Each level uses
// its own prompts (so a prefix cache cannot reuse another level's). Metrics: bench_serve_metrics.h.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/bench_serve_metrics.h"

namespace lathe::app {

struct ServeOptions {
  std::string url;                          // server root: http(s)://host:port[/prefix]
  std::string endpoint = "/v1/completions";
  std::vector<int64_t> concurrency = {1, 4, 16, 64};
  int64_t input_len = 1024;
  int64_t output_len = 256;
  int64_t num_prompts = 0;                  // per level; 0: max(16, 4 x concurrency)
  std::optional<double> request_rate;       // requests/s (Poisson); nullopt: all at once
  uint64_t seed = 0;
  std::string model;                        // empty: the first id GET /v1/models lists
  std::optional<std::filesystem::path> tokenizer;
  int64_t vocab_size = 151643;              // without a tokenizer: ids in [0, vocab_size)
  std::string api_key;                      // sent as "Authorization: Bearer KEY" when set
  double timeout_s = 600.0;                 // per request (connect + read)
  bool warmup = true;                       // one short request first, which must succeed
};

struct ServeReport {
  ServeOptions options;
  std::string model;
  std::string started_at;  // UTC, ISO 8601
  std::string prompt_ids;  // how prompt ids were drawn
  std::vector<LevelMetrics> levels;
};

// Throws lathe::Error for bad options or when the server cannot be used at all (the warm-up
// request fails); failures of individual measured requests are counted, not thrown. `log` gets
// one progress line per level.
ServeReport run_serve(const ServeOptions& options, const std::function<void(const std::string&)>& log = {});

nlohmann::ordered_json serve_report_json(const ServeReport& report);
std::string format_serve_report(const ServeReport& report);
// Release times (seconds from the level's start) of `count` Poisson arrivals at `rate` per
// second: cumulative exponential gaps of mean 1 / rate, a pure function of `key`.
std::vector<double> poisson_release_times(uint64_t key, int64_t count, double rate);

// Output tok/s and TPOT (mean, p50, p99) against concurrency.
std::string serve_report_svg(const ServeReport& report);

}  // namespace lathe::app
