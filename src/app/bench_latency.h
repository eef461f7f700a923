#pragma once
// `lathe bench latency`: offline prefill and decode timing of one model, no HTTP.
//
// Per batch size B: B prompts of exactly input_len random token ids are prefilled (packed into
// steps of at most max_num_batched_tokens rows, as a serving engine chunks them), then
// output_len - 1 greedy decode steps run over all B sequences (the first token comes from the
// prefill). Steps are planned with engine::BlockManager + engine::build_forward_batch and run by
// the serving executor (server::ModelExecutor: forward + sampling), so a step's time includes
// host planning, the forward, sampling and the copy of the sampled ids back to the host: what a
// serving step costs.
// Reported per batch size: the prefill time, the median (and mean) decode step, and the step's
// floor (app/bench_floor.h) against the read ceiling measured in the same run (CUDA only; the
// CPU has no floor to report); and the prefill's FLOP/s against a cuBLASLt GEMM reference
// measured in the same run (app/bench_gemm_ceiling.h; CUDA only).
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ops/kv_cache.h"

namespace lathe::app {

struct LatencyOptions {
  std::filesystem::path model_dir;
  std::string load_format = "auto";     // auto (safetensors in model_dir) | dummy (random weights)
  std::string device = "auto";          // auto | cpu | cuda
  std::string kv_cache_dtype = "auto";  // as `lathe generate`
  std::optional<std::filesystem::path> tokenizer;  // only to keep prompts clear of added tokens
  std::vector<int64_t> batch_sizes = {1, 4, 16, 64};
  int64_t input_len = 1024;
  int64_t output_len = 128;
  int64_t max_num_batched_tokens = 8192;  // prefill rows per step
  int32_t block_size = ops::kDefaultKvBlockSize;
  uint64_t seed = 0;                      // prompts and dummy weights
  bool warmup = true;                     // one short unmeasured run first
  bool enforce_eager = false;             // no decode graphs (every step launched op by op)
  bool calculate_kv_scales = false;       // FP8 KV: calibrate on one random prompt before the graphs
  bool step_breakdown = false;            // time each decode step's phases (LatencyRow::breakdown)
};

// Where a decode step's time goes (medians over the steps, ms), from marks on the backend's op
// clock (server::ModelExecutor::set_step_clock): the device's clock on CUDA, the host's on the CPU.
struct StepBreakdown {
  double inputs_ms = 0.0;   // entry -> the step's inputs copied (host packing, the copy)
  double forward_ms = 0.0;  // -> the forward done
  double sample_ms = 0.0;   // -> the sampled ids on the host (sampling kernels, the copy, the wait)
  double outside_ms = 0.0;  // the step's wall time outside those (host planning, the bench's own work)
};

struct LatencyRow {
  int64_t batch = 0;
  double prefill_s = 0.0;           // all prefill steps, first tokens sampled
  int64_t prefill_steps = 0;
  int64_t decode_steps = 0;
  double decode_median_ms = 0.0;
  double decode_mean_ms = 0.0;
  double decode_min_ms = 0.0;
  double decode_max_ms = 0.0;
  int64_t floor_context = 0;        // context length of the median step (where the floor is taken)
  double weight_bytes = 0.0;        // read per decode step (bench_floor.h)
  double kv_bytes = 0.0;            // read by the median decode step
  std::optional<double> floor_ms;   // (weight + kv) / read ceiling; CUDA only
  double prefill_flops = 0.0;       // the batch's prefill arithmetic (bench_floor.h)
  std::optional<StepBreakdown> breakdown;  // --step-breakdown
};

struct LatencyReport {
  std::string started_at;           // UTC, ISO 8601
  std::string model;
  std::string load_format;
  std::string backend;
  std::string kv_dtype;
  std::string weights_line;         // dtypes and size of the weights
  double load_s = 0.0;              // weights generated or mapped, uploaded, KV allocated
  std::string graphs_line;          // the decode graphs recorded (or why none)
  double capture_s = 0.0;           // recording the decode graphs (not in load_s)
  std::optional<double> read_ceiling_bytes_per_s;  // best pass
  std::string read_ceiling_line;
  // The GEMM reference of the model's linear weights (bench_gemm_ceiling.h: W8A8 block-128 for
  // block FP8 checkpoints, else BF16); CUDA only.
  std::optional<double> gemm_ceiling_flops_per_s;
  std::string gemm_ceiling_line;
  std::string step_clock;  // --step-breakdown: "device" or "host", whose clock timed the phases
  LatencyOptions options;
  std::vector<LatencyRow> rows;
};

// Throws lathe::Error naming the flag or file at fault.
LatencyReport run_latency(const LatencyOptions& options);

// The human-readable report (a header and one table row per batch size).
std::string format_latency_report(const LatencyReport& report);
nlohmann::ordered_json latency_report_json(const LatencyReport& report);

}  // namespace lathe::app
