#include "app/bench_latency.h"

#include "app/backend_factory.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <memory>
#include <span>
#include <utility>

#include "app/bench_floor.h"
#include "app/bench_gemm_ceiling.h"
#include "app/bench_read_ceiling.h"
#include "app/bench_stats.h"
#include "app/model_runner.h"
#include "core/dtype.h"
#include "core/error.h"
#include "core/hash.h"
#include "engine/block_manager.h"
#include "engine/executor.h"
#include "engine/forward_batch.h"
#include "engine/scheduler.h"
#include "model/config.h"
#include "model/dummy_weights.h"
#include "model/qwen3.h"
#include "model/weights.h"
#include "ops/profiling_backend.h"
#include "server/model_executor.h"
#include "tokenizer/tokenizer.h"

namespace lathe::app {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// Prompt i of a batch: `len` ids in [0, id_limit), a pure function of (seed, batch, i).
std::vector<int32_t> random_prompt(uint64_t seed, int64_t batch, int64_t index, int64_t len, int32_t id_limit) {
  std::vector<int32_t> ids(static_cast<size_t>(len));
  const uint64_t key =
      splitmix64(splitmix64(seed) ^
                 splitmix64(static_cast<uint64_t>(batch) * 0x100000001B3ull + static_cast<uint64_t>(index)));
  for (int64_t t = 0; t < len; ++t) {
    ids[static_cast<size_t>(t)] =
        static_cast<int32_t>(splitmix64(key + static_cast<uint64_t>(t)) % static_cast<uint64_t>(id_limit));
  }
  return ids;
}

struct Setup {
  const LatencyOptions& options;
  const model::ModelConfig& config;
  engine::Executor& executor;
  int32_t num_blocks;
  int32_t id_limit;
  ops::OpClock* step_clock;  // the executor's step clock (--step-breakdown), else nullptr
};

// One decode step's phases in seconds (StepBreakdown).
struct StepPhases {
  std::vector<double> inputs, forward, sample, outside;
};

struct BatchTiming {
  double prefill_s = 0.0;
  int64_t prefill_steps = 0;
  std::vector<double> decode_s;  // one per decode step
  StepPhases phases;             // --step-breakdown
};

// Prefill B prompts of input_len, then output_len - 1 decode steps.
BatchTiming run_batch(const Setup& s, int64_t batch, int64_t input_len, int64_t output_len, uint64_t seed) {
  const LatencyOptions& o = s.options;
  engine::BlockManager blocks(s.num_blocks, o.block_size);
  std::vector<std::vector<int32_t>> prompts;
  for (int64_t i = 0; i < batch; ++i) {
    prompts.push_back(random_prompt(seed, batch, i, input_len, s.id_limit));
    if (!blocks.ensure_capacity(i + 1, input_len + output_len)) {
      fail("bench latency: internal: the KV cache ({} blocks) does not hold {} sequences of {} tokens", s.num_blocks,
           batch, input_len + output_len);
    }
  }

  BatchTiming timing;
  std::vector<int32_t> last(static_cast<size_t>(batch), 0);
  // Prefill: sequences in order, each prompt cut into chunks, steps filled to the token budget.
  const auto start = Clock::now();
  int64_t seq = 0;
  int64_t pos = 0;
  while (seq < batch) {
    engine::ScheduledStep step;
    int64_t budget = o.max_num_batched_tokens;
    while (seq < batch && budget > 0) {
      const int64_t n = std::min(budget, input_len - pos);
      engine::ScheduledSeq rows;
      rows.id = seq + 1;
      rows.start = static_cast<int32_t>(pos);
      const auto& prompt = prompts[static_cast<size_t>(seq)];
      rows.token_ids.assign(prompt.begin() + pos, prompt.begin() + pos + n);
      rows.samples = pos + n == input_len;
      rows.sampling.step = 0;
      step.seqs.push_back(std::move(rows));
      step.num_tokens += static_cast<int32_t>(n);
      budget -= n;
      pos += n;
      if (pos == input_len) {
        ++seq;
        pos = 0;
      }
    }
    const ops::ForwardBatch fb = engine::build_forward_batch(step, blocks);
    const std::vector<ops::SamplingParams> params = step.sampling_params();
    const std::vector<int32_t> ids = s.executor.execute(fb, params);
    if (s.step_clock) (void)s.step_clock->collect();  // prefill steps are not broken down
    size_t next = 0;
    for (const engine::ScheduledSeq& rows : step.seqs) {
      if (rows.samples) last[static_cast<size_t>(rows.id - 1)] = ids.at(next++);
    }
    ++timing.prefill_steps;
  }
  timing.prefill_s = seconds_since(start);

  // Decode: every sequence one row per step; step k feeds the token at position input_len+k-1.
  for (int64_t k = 1; k < output_len; ++k) {
    const auto step_start = Clock::now();
    engine::ScheduledStep step;
    for (int64_t i = 0; i < batch; ++i) {
      engine::ScheduledSeq rows;
      rows.id = i + 1;
      rows.start = static_cast<int32_t>(input_len + k - 1);
      rows.token_ids = {last[static_cast<size_t>(i)]};
      rows.decode = true;
      rows.samples = true;
      rows.sampling.step = static_cast<uint64_t>(k);
      step.seqs.push_back(std::move(rows));
    }
    step.num_tokens = static_cast<int32_t>(batch);
    const ops::ForwardBatch fb = engine::build_forward_batch(step, blocks);
    const std::vector<int32_t> ids = s.executor.execute(fb, step.sampling_params());
    for (int64_t i = 0; i < batch; ++i) last[static_cast<size_t>(i)] = ids.at(static_cast<size_t>(i));
    const double wall = seconds_since(step_start);
    timing.decode_s.push_back(wall);
    if (s.step_clock) {
      const std::vector<double> t = s.step_clock->collect();  // entry, inputs, forward, ids (executor marks)
      if (t.size() != 4)
        fail("bench latency: internal: a decode step left {} clock marks, expected 4", t.size());
      timing.phases.inputs.push_back(t[1] - t[0]);
      timing.phases.forward.push_back(t[2] - t[1]);
      timing.phases.sample.push_back(t[3] - t[2]);
      timing.phases.outside.push_back(wall - t[3]);
    }
  }
  return timing;
}

// --calculate-kv-scales: the model calibrates its FP8 KV scales on its first prefill step. Run
// that step here, on one random prompt like the warm-up's (its KV is overwritten later), so the
// decode graphs the executor then records carry the calibrated scales.
void calibrate_kv_scales(model::Qwen3Model& model, const LatencyOptions& o, int32_t num_blocks, int32_t id_limit) {
  if (!model.kv_scales_pending()) return;
  const int64_t len = std::min<int64_t>(o.input_len, model.options().max_tokens_per_step);
  engine::BlockManager blocks(num_blocks, o.block_size);
  if (!blocks.ensure_capacity(1, len)) fail("bench latency: internal: no KV blocks for the calibration prompt");
  engine::ScheduledStep step;
  engine::ScheduledSeq rows;
  rows.id = 1;
  rows.token_ids = random_prompt(o.seed ^ 0xC0FFEEull, 1, 0, len, id_limit);
  rows.samples = true;
  step.seqs.push_back(std::move(rows));
  step.num_tokens = static_cast<int32_t>(len);
  const ops::ForwardBatch fb = engine::build_forward_batch(step, blocks);
  const int64_t vocab = model.vocab_size();
  model::DeviceBuffer logits(model.backend(), static_cast<size_t>(vocab) * sizeof(float), "the calibration logits");
  model.forward(fb, ops::Act{logits.data(), DType::kF32, 1, vocab, vocab});
  model.backend().synchronize();
}

void validate(const LatencyOptions& o, const model::ModelConfig& config) {
  if (o.load_format != "auto" && o.load_format != "dummy") {
    fail("--load-format: unknown format '{}' (expected auto or dummy)", o.load_format);
  }
  if (o.batch_sizes.empty()) fail("--batch-sizes: give at least one batch size");
  for (int64_t b : o.batch_sizes) {
    if (b < 1 || b > 4096) fail("--batch-sizes: {} is not a batch size in [1, 4096]", b);
  }
  if (o.input_len < 1) fail("--input-len must be at least 1, got {}", o.input_len);
  if (o.output_len < 2) fail("--output-len must be at least 2 (one prefill token and one decode step), got {}", o.output_len);
  if (o.max_num_batched_tokens < 1) fail("--max-num-batched-tokens must be at least 1, got {}", o.max_num_batched_tokens);
  if (o.block_size < 1 || o.block_size > ops::kMaxKvBlockSize) {
    fail("--block-size must be in [1, {}], got {}", ops::kMaxKvBlockSize, o.block_size);
  }
  const int64_t seq_tokens = o.input_len + o.output_len;
  if (config.max_position_embeddings > 0 && seq_tokens > config.max_position_embeddings) {
    fail("--input-len {} + --output-len {} exceeds the model's max_position_embeddings {} ({})", o.input_len,
         o.output_len, config.max_position_embeddings, (config.dir / "config.json").string());
  }
  if (seq_tokens > std::numeric_limits<int32_t>::max() / 2) fail("--input-len + --output-len is too large");
}

// Ids a prompt may use: below the first added token when a tokenizer is known (so no special
// token appears), else the whole vocabulary.
int32_t prompt_id_limit(const LatencyOptions& o, const model::ModelConfig& config) {
  auto limit = static_cast<int32_t>(config.vocab_size);
  if (o.tokenizer) {
    const tokenizer::Tokenizer tok = tokenizer::Tokenizer::load(*o.tokenizer);
    for (const auto& added : tok.added_tokens()) limit = std::min(limit, added.id);
  }
  if (limit < 1) fail("--tokenizer: no ordinary token ids below the first added token");
  return limit;
}

std::string weights_line(const model::Qwen3Weights& w, const StepWeightBytes& bytes) {
  const model::Qwen3LayerWeights& l = w.layers.front();
  return fmt::format("linears {}{}, embed {}, lm_head {}; {:.3f} GB read per decode step (+ {} B per sequence)",
                     dtype_name(l.q_proj.view.dtype),
                     l.q_proj.view.scale_kind != ops::ScaleKind::kNone
                         ? fmt::format(" ({} scales)", ops::scale_kind_name(l.q_proj.view.scale_kind))
                         : std::string(),
                     dtype_name(w.embed_tokens.view.dtype), dtype_name(w.lm_head.view.dtype), bytes.fixed / 1e9,
                     bytes.embedding_row);
}

}  // namespace

LatencyReport run_latency(const LatencyOptions& o) {
  const model::ModelConfig config = model::load_model_config(o.model_dir);
  validate(o, config);
  const int32_t id_limit = prompt_id_limit(o, config);

  LatencyReport report;
  report.options = o;
  report.model = o.model_dir.string();
  report.load_format = o.load_format;
  report.started_at = utc_timestamp();

  BackendRequest request;
  request.device = o.device;
  request.max_decode_seqs = static_cast<int32_t>(*std::max_element(o.batch_sizes.begin(), o.batch_sizes.end()));
  std::unique_ptr<ops::Backend> backend = make_backend(request);
  report.backend = backend->name();
  const DType kv_dtype = parse_kv_cache_dtype(o.kv_cache_dtype, *backend);
  report.kv_dtype = std::string(dtype_name(kv_dtype));
  if (const std::optional<ReadCeiling> ceiling = measure_read_ceiling(*backend)) {
    report.read_ceiling_bytes_per_s = ceiling->best_bytes_per_s;
    report.read_ceiling_line = ceiling->description;
  } else {
    report.read_ceiling_line = "read ceiling n/a (not measured on this backend)";
  }
  if (const std::optional<GemmCeiling> gemm = measure_gemm_ceiling(*backend)) {
    const bool fp8_block = config.quant.method == model::QuantConfig::Method::kFp8Block;
    const double rate = fp8_block ? gemm->fp8_block_flops_per_s : gemm->bf16_flops_per_s;
    if (rate > 0) report.gemm_ceiling_flops_per_s = rate;
    report.gemm_ceiling_line =
        gemm->description + (fp8_block ? "; the prefill is quoted against W8A8 block-128"
                                       : "; the prefill is quoted against BF16");
  } else {
    report.gemm_ceiling_line = "GEMM reference n/a (not measured on this backend)";
  }

  const int64_t max_batch = *std::max_element(o.batch_sizes.begin(), o.batch_sizes.end());
  const int64_t seq_tokens = o.input_len + o.output_len;
  const int64_t blocks_per_seq = (seq_tokens + o.block_size - 1) / o.block_size;
  const int64_t num_blocks = max_batch * blocks_per_seq + 1;  // + the scratch block
  if (num_blocks > std::numeric_limits<int32_t>::max()) fail("--batch-sizes x sequence length needs too many KV blocks");

  const auto load_start = Clock::now();
  model::Qwen3Weights weights = o.load_format == "dummy"
                                    ? model::make_dummy_qwen3_weights(config, model::DummyOptions{.seed = o.seed})
                                    : model::load_qwen3_weights(config);
  const StepWeightBytes step_bytes = step_weight_bytes(weights);
  report.weights_line = weights_line(weights, step_bytes);
  model::Qwen3Options model_options;
  model_options.max_tokens_per_step =
      static_cast<int32_t>(std::max(std::min(o.max_num_batched_tokens, max_batch * o.input_len), max_batch));
  model_options.max_logits_rows = static_cast<int32_t>(max_batch);
  model_options.num_kv_blocks = static_cast<int32_t>(num_blocks);
  model_options.kv_block_size = o.block_size;
  model_options.kv_dtype = kv_dtype;
  model_options.calculate_kv_scales = o.calculate_kv_scales;
  // The serving executor (forward + sampling per step), so the bench times what `lathe serve`
  // runs, CUDA graphs included once the executor captures them.
  auto model = std::make_unique<model::Qwen3Model>(*backend, config, std::move(weights), model_options);
  report.load_s = seconds_since(load_start);
  calibrate_kv_scales(*model, o, static_cast<int32_t>(num_blocks), id_limit);
  server::ExecutorOptions executor_options;
  executor_options.decode_graphs = !o.enforce_eager;
  executor_options.max_decode_seqs = static_cast<int32_t>(max_batch);
  executor_options.max_blocks_per_seq = static_cast<int32_t>(blocks_per_seq);
  const auto capture_start = Clock::now();
  server::ModelExecutor executor(*backend, std::move(model), executor_options);
  report.capture_s = seconds_since(capture_start);
  if (const model::DecodeGraphs* graphs = executor.decode_graphs()) {
    report.graphs_line = fmt::format("decode graphs: buckets {} recorded in {:.2f} s", fmt::join(graphs->buckets(), ","),
                                     graphs->capture_seconds());
  } else {
    report.graphs_line = o.enforce_eager ? "decode graphs: off (--enforce-eager)" : "decode graphs: none (eager backend)";
  }
  std::unique_ptr<ops::OpClock> step_clock;
  if (o.step_breakdown) {
    step_clock = backend->make_op_clock();
    executor.set_step_clock(step_clock.get());
    report.step_clock = backend->kind() == ops::DeviceKind::kCpu ? "host" : "device";
  }
  const Setup setup{o, config, executor, static_cast<int32_t>(num_blocks), id_limit, step_clock.get()};
  if (o.warmup) {
    const int64_t batch = std::min<int64_t>(max_batch, 2);
    run_batch(setup, batch, std::min<int64_t>(o.input_len, 16), std::min<int64_t>(o.output_len, 3), o.seed ^ 0xA5A5ull);
    // LATHE_PROFILE=1: the warm-up's first-use costs (GEMM pins, kernel module loads) stay out of
    // the phase tables, as they stay out of the report.
    if (auto* profiling = dynamic_cast<ops::ProfilingBackend*>(backend.get())) profiling->reset();
  }

  for (int64_t batch : o.batch_sizes) {
    const BatchTiming timing = run_batch(setup, batch, o.input_len, o.output_len, o.seed);
    const Summary decode = summarize(timing.decode_s);
    LatencyRow row;
    row.batch = batch;
    row.prefill_s = timing.prefill_s;
    row.prefill_steps = timing.prefill_steps;
    row.prefill_flops = prefill_flops(config, batch, o.input_len);
    row.decode_steps = static_cast<int64_t>(decode.count);
    row.decode_median_ms = decode.p50 * 1e3;
    row.decode_mean_ms = decode.mean * 1e3;
    row.decode_min_ms = decode.min * 1e3;
    row.decode_max_ms = decode.max * 1e3;
    // Decode step k ends with input_len + k tokens cached; the median step is k = output_len / 2.
    row.floor_context = o.input_len + o.output_len / 2;
    row.weight_bytes = step_bytes.at_batch(batch);
    row.kv_bytes = decode_kv_bytes(config, batch, row.floor_context, kv_dtype);
    if (report.read_ceiling_bytes_per_s) {
      row.floor_ms = (row.weight_bytes + row.kv_bytes) / *report.read_ceiling_bytes_per_s * 1e3;
    }
    if (setup.step_clock) {
      const StepPhases& ph = timing.phases;
      row.breakdown = StepBreakdown{summarize(ph.inputs).p50 * 1e3, summarize(ph.forward).p50 * 1e3,
                                    summarize(ph.sample).p50 * 1e3, summarize(ph.outside).p50 * 1e3};
    }
    report.rows.push_back(row);
  }
  return report;
}

std::string format_latency_report(const LatencyReport& r) {
  const LatencyOptions& o = r.options;
  std::string out;
  out += fmt::format("model: {} (--load-format {}), {}\n", r.model, r.load_format, r.started_at);
  out += fmt::format("backend: {}, KV cache {}, load {:.2f} s\n", r.backend, r.kv_dtype, r.load_s);
  out += fmt::format("{}\n", r.graphs_line);
  out += fmt::format("weights: {}\n", r.weights_line);
  out += fmt::format("{}\n", r.read_ceiling_line);
  out += fmt::format("{}\n", r.gemm_ceiling_line);
  out += fmt::format("input {} tokens, output {} tokens (greedy, {} decode steps), prefill steps of <= {} tokens\n",
                     o.input_len, o.output_len, o.output_len - 1, o.max_num_batched_tokens);
  out += fmt::format("{:>6} {:>11} {:>12} {:>11} {:>10} {:>11} {:>9} {:>10} {:>9} {:>8}\n", "batch", "prefill_ms",
                     "prefill_tok/s", "decode_p50", "decode_avg", "decode_tok/s", "weight_GB", "kv_GB", "floor_ms",
                     "x_floor");
  for (const LatencyRow& row : r.rows) {
    const double prefill_tok_s = row.prefill_s > 0 ? static_cast<double>(row.batch * o.input_len) / row.prefill_s : 0.0;
    const double decode_tok_s = row.decode_median_ms > 0 ? static_cast<double>(row.batch) / (row.decode_median_ms * 1e-3) : 0.0;
    out += fmt::format("{:>6} {:>11.2f} {:>12.0f} {:>11.3f} {:>10.3f} {:>11.1f} {:>9.3f} {:>10.4f} {:>9} {:>8}\n",
                       row.batch, row.prefill_s * 1e3, prefill_tok_s, row.decode_median_ms, row.decode_mean_ms,
                       decode_tok_s, row.weight_bytes / 1e9, row.kv_bytes / 1e9,
                       row.floor_ms ? fmt::format("{:.3f}", *row.floor_ms) : std::string("n/a"),
                       row.floor_ms ? fmt::format("{:.2f}", row.decode_median_ms / *row.floor_ms) : std::string("n/a"));
  }
  out += "decode_p50: median decode step (host planning + forward + sampling + ids to host); floor at the median "
         "step's context (input + output/2): (weight + KV bytes) / read ceiling\n";
  out +=
      fmt::format("{:>6} {:>14} {:>15} {:>12}\n", "batch", "prefill_TFLOP", "prefill_TFLOP/s", "of_GEMM_ref");
  for (const LatencyRow& row : r.rows) {
    const double rate = row.prefill_s > 0 ? row.prefill_flops / row.prefill_s : 0.0;
    out += fmt::format("{:>6} {:>14.3f} {:>15.1f} {:>12}\n", row.batch, row.prefill_flops / 1e12, rate / 1e12,
                       r.gemm_ceiling_flops_per_s
                           ? fmt::format("{:.1f}%", 100.0 * rate / *r.gemm_ceiling_flops_per_s)
                           : std::string("n/a"));
  }
  out +=
      "prefill_TFLOP: linears over every prompt token, lm_head over one row a sequence, causal attention "
      "(2 FLOPs a multiply-add); of_GEMM_ref: against the GEMM reference above\n";
  if (!r.rows.empty() && r.rows.front().breakdown) {
    out += fmt::format("decode step phases, median ms ({} clock):\n", r.step_clock);
    out += fmt::format("{:>6} {:>9} {:>9} {:>11} {:>9}\n", "batch", "inputs", "forward", "sample+ids",
                       "outside");
    for (const LatencyRow& row : r.rows) {
      const StepBreakdown& b = *row.breakdown;
      out += fmt::format("{:>6} {:>9.3f} {:>9.3f} {:>11.3f} {:>9.3f}\n", row.batch, b.inputs_ms, b.forward_ms,
                         b.sample_ms, b.outside_ms);
    }
    out +=
        "inputs: host packing and the inputs' copy; forward: the layers and lm_head; sample+ids: sampling "
        "kernels, the ids' copy and the host's wait; outside: host time before and after (planning)\n";
  }
  return out;
}

nlohmann::ordered_json latency_report_json(const LatencyReport& r) {
  const LatencyOptions& o = r.options;
  nlohmann::ordered_json j;
  j["started_at"] = r.started_at;
  j["model"] = r.model;
  j["load_format"] = r.load_format;
  j["backend"] = r.backend;
  j["kv_cache_dtype"] = r.kv_dtype;
  j["calculate_kv_scales"] = o.calculate_kv_scales;
  j["weights"] = r.weights_line;
  j["load_s"] = r.load_s;
  j["decode_graphs"] = r.graphs_line;
  j["capture_s"] = r.capture_s;
  j["read_ceiling_gbs"] = r.read_ceiling_bytes_per_s ? nlohmann::ordered_json(*r.read_ceiling_bytes_per_s / 1e9)
                                                     : nlohmann::ordered_json(nullptr);
  j["read_ceiling"] = r.read_ceiling_line;
  j["gemm_reference_tflops"] = r.gemm_ceiling_flops_per_s
                                   ? nlohmann::ordered_json(*r.gemm_ceiling_flops_per_s / 1e12)
                                   : nlohmann::ordered_json(nullptr);
  j["gemm_reference"] = r.gemm_ceiling_line;
  j["input_len"] = o.input_len;
  j["output_len"] = o.output_len;
  j["max_num_batched_tokens"] = o.max_num_batched_tokens;
  j["seed"] = o.seed;
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const LatencyRow& row : r.rows) {
    nlohmann::ordered_json x;
    x["batch"] = row.batch;
    x["prefill_ms"] = row.prefill_s * 1e3;
    x["prefill_steps"] = row.prefill_steps;
    x["prefill_tflop"] = row.prefill_flops / 1e12;
    x["prefill_tflops"] = row.prefill_s > 0 ? row.prefill_flops / row.prefill_s / 1e12 : 0.0;
    x["decode_steps"] = row.decode_steps;
    x["decode_median_ms"] = row.decode_median_ms;
    x["decode_mean_ms"] = row.decode_mean_ms;
    x["decode_min_ms"] = row.decode_min_ms;
    x["decode_max_ms"] = row.decode_max_ms;
    x["floor_context"] = row.floor_context;
    x["weight_bytes_per_step"] = row.weight_bytes;
    x["kv_bytes_per_step"] = row.kv_bytes;
    x["floor_ms"] = row.floor_ms ? nlohmann::ordered_json(*row.floor_ms) : nlohmann::ordered_json(nullptr);
    x["measured_over_floor"] = row.floor_ms ? nlohmann::ordered_json(row.decode_median_ms / *row.floor_ms)
                                            : nlohmann::ordered_json(nullptr);
    if (row.breakdown) {
      x["step_inputs_ms"] = row.breakdown->inputs_ms;
      x["step_forward_ms"] = row.breakdown->forward_ms;
      x["step_sample_ms"] = row.breakdown->sample_ms;
      x["step_outside_ms"] = row.breakdown->outside_ms;
    }
    rows.push_back(std::move(x));
  }
  j["rows"] = std::move(rows);
  return j;
}

}  // namespace lathe::app
