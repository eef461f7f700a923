#pragma once
// The pure half of `lathe bench serve`: the SSE stream parser, one request's timing record, and
// the per-concurrency metrics (definitions as vLLM's serving benchmark, so numbers compare):
//   TTFT  send -> first streamed chunk carrying choices;
//   ITL   gaps between consecutive such chunks (pooled over all requests);
//   TPOT  per request (e2e - TTFT) / (output tokens - 1), requests with > 1 output token;
//   E2E   send -> end of the stream;
//   request throughput = completed / duration, output tok/s = output tokens / duration, where
//   duration runs from the first request sent to the last one finished.
// Output tokens are the server's usage.completion_tokens when it reports usage (requested with
// stream_options.include_usage), else the number of chunks, which can undercount: a server may
// hold back a token whose text is an incomplete UTF-8 sequence and send it with the next one
// (lathe does), so ITL is then a gap between chunks rather than between tokens.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/bench_stats.h"

namespace lathe::app {

// Splits a text/event-stream into events and hands over each event's data (multi-line data
// joined with '\n'). Accepts "\n" and "\r\n" line ends and bytes arriving in any pieces.
class SseParser {
 public:
  using DataHandler = std::function<void(std::string_view data)>;
  explicit SseParser(DataHandler on_data) : on_data_(std::move(on_data)) {}
  void feed(std::string_view bytes);
  // The stream ended: dispatches a last event not followed by a blank line.
  void finish();

 private:
  void line(std::string_view text);
  DataHandler on_data_;
  std::string pending_;  // bytes of an incomplete line
  std::string data_;     // data lines of the current event
  bool has_data_ = false;
};

struct RequestResult {
  bool ok = false;
  std::string error;                 // why it failed (HTTP status and body, transport error)
  int64_t prompt_tokens = 0;
  int64_t output_tokens = 0;
  bool output_tokens_from_usage = false;
  double start_s = 0.0;              // send time, from the level's start
  double ttft_s = 0.0;
  double e2e_s = 0.0;
  std::vector<double> itl_s;         // chunk gaps after the first
};

// Folds one streamed event (the data of an SSE event) into `result`; `t_s` is its arrival time
// from the request's send; `last_chunk_s` is the previous chunk's time, negative before the
// first. Returns false on "[DONE]" (the stream is complete). Data that is not
// JSON, or JSON with an "error" member, marks the request failed.
bool apply_stream_event(std::string_view data, double t_s, RequestResult& result, double& last_chunk_s);

struct LevelMetrics {
  int64_t concurrency = 0;
  std::optional<double> request_rate;  // requests/s of the Poisson arrivals; nullopt: all at once
  int64_t completed = 0;
  int64_t failed = 0;
  int64_t total_input_tokens = 0;
  int64_t total_output_tokens = 0;
  double duration_s = 0.0;
  double request_throughput = 0.0;  // completed requests / s
  double output_throughput = 0.0;   // output tokens / s
  double total_throughput = 0.0;    // (input + output) tokens / s
  Summary ttft_s, tpot_s, itl_s, e2e_s;
  std::vector<std::string> errors;  // the first few failures
};

LevelMetrics compute_level_metrics(const std::vector<RequestResult>& requests, double duration_s,
                                   int64_t concurrency, std::optional<double> request_rate);

// Times in milliseconds.
nlohmann::ordered_json level_metrics_json(const LevelMetrics& metrics);

}  // namespace lathe::app
