// ops::ProfilingBackend over the CPU reference: the tiny fixture model's forward through the
// decorator. Checks that profiling changes no result (same sampled tokens as the bare backend),
// that steps are grouped by kind and width, that each phase is called the number of times the
// Qwen3 forward issues it per step, that the timed phases fit inside the step, and that the
// table prints every group and the lm_head / o_proj / down_proj routes by name.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "engine/block_manager.h"
#include "engine/forward_batch.h"
#include "engine/scheduler.h"
#include "model/config.h"
#include "model/device_buffer.h"
#include "model/weights.h"
#include "model/qwen3.h"
#include "ops/backend.h"
#include "ops/profiling_backend.h"

namespace lathe {
namespace {

const std::string kTiny = std::string(LATHE_FIXTURES_DIR) + "/models/qwen3-tiny-chat";

struct Seq {
  engine::SeqId id;
  std::vector<int32_t> prompt;
  std::vector<int32_t> out;  // sampled tokens
  int32_t cached = 0;        // tokens in the KV cache
};

// One scheduled row group: `count` prompt tokens of a prefill chunk (0: a decode row).
struct Part {
  Seq* seq;
  int32_t count;
};

// Runs this script of steps on `backend`; returns every sampled token in order.
//   0: prefill chunk of A (4 of 6 tokens, samples nothing: the step ends at the next upload)
//   1: prefill A's last 2 tokens + B's 6 (prefill, two logits rows)
//   2-4: decode A, B (decode width 2)
//   5: decode A + prefill C (mixed)
//   6-7: decode A (decode width 1)
std::vector<int32_t> run_script(ops::Backend& backend, const model::ModelConfig& config) {
  model::Qwen3Options options;
  options.max_tokens_per_step = 32;
  options.max_logits_rows = 2;
  options.num_kv_blocks = 16;
  options.kv_block_size = 16;
  model::Qwen3Model model(backend, config, model::load_qwen3_weights(config), options);
  model::DeviceBuffer logits_buf(backend, 2 * static_cast<size_t>(config.vocab_size) * sizeof(float), "logits");
  engine::BlockManager blocks(16, 16);
  Seq a{1, {5, 17, 300, 42, 9, 77}, {}, 0};
  Seq b{2, {6, 18, 301, 43, 10, 78}, {}, 0};
  Seq c{3, {7, 19, 302, 44, 11}, {}, 0};
  const std::vector<std::vector<Part>> script = {
      {{&a, 4}}, {{&a, 2}, {&b, 6}}, {{&a, 0}, {&b, 0}}, {{&a, 0}, {&b, 0}}, {{&a, 0}, {&b, 0}},
      {{&a, 0}, {&c, 5}}, {{&a, 0}}, {{&a, 0}}};
  std::vector<int32_t> sampled;
  for (const std::vector<Part>& parts : script) {
    engine::ScheduledStep step;
    for (const Part& part : parts) {
      Seq& s = *part.seq;
      engine::ScheduledSeq rows;
      rows.id = s.id;
      rows.start = s.cached;
      rows.decode = part.count == 0;
      if (rows.decode) {
        rows.token_ids = {s.out.back()};
      } else {
        rows.token_ids.assign(s.prompt.begin() + s.cached, s.prompt.begin() + s.cached + part.count);
      }
      rows.samples = rows.decode || s.cached + part.count == static_cast<int32_t>(s.prompt.size());
      rows.sampling.step = s.out.size();
      EXPECT_TRUE(blocks.ensure_capacity(rows.id, rows.start + rows.num_tokens()));
      s.cached += rows.num_tokens();
      step.num_tokens += rows.num_tokens();
      step.seqs.push_back(std::move(rows));
    }
    const ops::ForwardBatch batch = engine::build_forward_batch(step, blocks);
    const auto logits_rows = static_cast<int64_t>(batch.logits_rows.size());
    ops::Act logits{logits_buf.data(), DType::kF32, logits_rows, config.vocab_size, config.vocab_size};
    model.forward(batch, logits);
    if (logits_rows == 0) continue;
    std::vector<int32_t> ids(static_cast<size_t>(logits_rows));
    backend.sample(logits, step.sampling_params(), ids.data());
    size_t next = 0;
    for (const engine::ScheduledSeq& rows : step.seqs) {
      if (!rows.samples) continue;
      Seq& s = rows.id == a.id ? a : rows.id == b.id ? b : c;
      s.out.push_back(ids[next]);
      sampled.push_back(ids[next++]);
    }
  }
  return sampled;
}

const ops::StepGroupProfile* find_group(const ops::Profile& p, const std::string& kind, int32_t tokens) {
  for (const auto& g : p.groups) {
    if (g.kind == kind && g.tokens == tokens) return &g;
  }
  return nullptr;
}

// Calls per step of every phase whose name starts with `prefix`.
double calls_per_step(const ops::StepGroupProfile& g, const std::string& prefix) {
  int64_t calls = 0;
  for (const auto& p : g.phases) {
    if (p.name.rfind(prefix, 0) == 0) calls += p.calls;
  }
  return static_cast<double>(calls) / static_cast<double>(g.steps);
}

TEST(ProfilingBackend, TimesEveryPhaseOfTheTinyModelsSteps) {
  const model::ModelConfig config = model::load_model_config(kTiny);
  const int64_t layers = config.num_hidden_layers;
  const int64_t hidden = config.hidden_size, vocab = config.vocab_size;

  std::unique_ptr<ops::Backend> bare = ops::make_cpu_backend();
  const std::vector<int32_t> expected = run_script(*bare, config);

  ops::ProfilingBackend profiled(ops::make_cpu_backend());
  EXPECT_EQ(profiled.capture([] {}), nullptr);  // graphs off: every step eager
  const std::vector<int32_t> got = run_script(profiled, config);
  EXPECT_EQ(got, expected);  // the decorator only forwards
  const ops::Profile p = profiled.profile();
  EXPECT_EQ(p.untimed_ops, 0);

  ASSERT_EQ(p.groups.size(), 4u);
  const ops::StepGroupProfile* d2 = find_group(p, "decode", 2);
  const ops::StepGroupProfile* d1 = find_group(p, "decode", 1);
  const ops::StepGroupProfile* prefill = find_group(p, "prefill", 0);
  const ops::StepGroupProfile* mixed = find_group(p, "mixed", 0);
  ASSERT_TRUE(d2 && d1 && prefill && mixed);
  EXPECT_EQ(d2->steps, 3);
  EXPECT_EQ(d1->steps, 2);
  EXPECT_EQ(prefill->steps, 2);
  EXPECT_EQ(prefill->tokens_total, 4 + 8);
  EXPECT_EQ(mixed->steps, 1);
  EXPECT_EQ(mixed->tokens_total, 1 + 5);

  for (const ops::StepGroupProfile* g : {d2, d1}) {
    SCOPED_TRACE(g->tokens);
    // The Qwen3 forward per decode step.
    EXPECT_DOUBLE_EQ(calls_per_step(*g, "upload"), 1);
    EXPECT_DOUBLE_EQ(calls_per_step(*g, "embed"), 1);
    EXPECT_DOUBLE_EQ(calls_per_step(*g, "norm"), static_cast<double>(1 + 2 * layers));
    EXPECT_DOUBLE_EQ(calls_per_step(*g, "rope+kv"), static_cast<double>(layers));
    EXPECT_DOUBLE_EQ(calls_per_step(*g, "attention"), static_cast<double>(layers));
    EXPECT_DOUBLE_EQ(calls_per_step(*g, "silu_mul"), static_cast<double>(layers));
    EXPECT_DOUBLE_EQ(calls_per_step(*g, "gather"), 1);
    EXPECT_DOUBLE_EQ(calls_per_step(*g, "sampling"), 1);
    // o_proj follows the attention, down_proj silu_mul; q/k/v and gate/up follow a norm, as five
    // linears or (backends that fuse them at upload) two.
    const double per_layer_after_norm = calls_per_step(*g, "linear decode") / static_cast<double>(layers) - 2;
    EXPECT_TRUE(per_layer_after_norm == 5 || per_layer_after_norm == 2) << per_layer_after_norm;
    EXPECT_DOUBLE_EQ(calls_per_step(*g, "linear prefill"), 0);
    const std::string o = fmt::format("linear decode {}x{} x=attention", hidden, config.num_attention_heads * config.head_dim);
    const std::string down = fmt::format("linear decode {}x{} x=silu_mul", hidden, config.intermediate_size);
    const std::string lm_head = fmt::format("lm_head decode {}x{}", vocab, hidden);
    EXPECT_DOUBLE_EQ(calls_per_step(*g, o), static_cast<double>(layers));
    EXPECT_DOUBLE_EQ(calls_per_step(*g, down), static_cast<double>(layers));
    EXPECT_DOUBLE_EQ(calls_per_step(*g, lm_head), 1);
    // Every linear is named by the op that made its input.
    int64_t linears = 0, named = 0;
    for (const auto& phase : g->phases) {
      if (phase.name.rfind("linear ", 0) != 0) continue;
      linears += phase.calls;
      if (phase.name.find(" x=") != std::string::npos) named += phase.calls;
    }
    EXPECT_EQ(named, linears);
  }
  // The first prefill step sampled nothing: no gather, lm_head or sampling in it.
  EXPECT_DOUBLE_EQ(calls_per_step(*prefill, "sampling"), 0.5);
  EXPECT_DOUBLE_EQ(calls_per_step(*prefill, "lm_head prefill"), 0.5);
  EXPECT_DOUBLE_EQ(calls_per_step(*prefill, "linear decode"), 0);
  // A mixed step runs each linear twice: decode rows, then prefill rows.
  EXPECT_DOUBLE_EQ(calls_per_step(*mixed, "linear decode"), calls_per_step(*d1, "linear decode"));
  EXPECT_DOUBLE_EQ(calls_per_step(*mixed, "linear prefill"), calls_per_step(*d1, "linear decode"));
  EXPECT_DOUBLE_EQ(calls_per_step(*mixed, "lm_head decode"), 1);
  EXPECT_DOUBLE_EQ(calls_per_step(*mixed, "lm_head prefill"), 1);

  for (const auto& g : p.groups) {
    SCOPED_TRACE(g.kind + std::to_string(g.tokens));
    double timed = 0.0;
    for (size_t i = 0; i < g.phases.size(); ++i) {
      EXPECT_GE(g.phases[i].seconds, 0.0) << g.phases[i].name;
      if (i > 0) {
        EXPECT_LE(g.phases[i].seconds, g.phases[i - 1].seconds);  // sorted, largest first
      }
      timed += g.phases[i].seconds;
    }
    EXPECT_GT(timed, 0.0);
    EXPECT_LE(timed, g.step_seconds);  // the ops run inside the step's wall time
    EXPECT_GE(g.host_seconds, 0.0);
  }
  // Every step after the first has a host-scheduling gap.
  EXPECT_GT(d2->host_seconds, 0.0);

  const std::string table = ops::format_profile(p);
  for (const std::string needle : {"decode steps of 2 token(s): 3 steps", "decode steps of 1 token(s): 2 steps",
                                   "prefill steps (any width; mean 6.0 tokens): 2 steps", "mixed steps",
                                   "host scheduling", "calls/step", "%step", "lm_head decode", "attention"}) {
    EXPECT_NE(table.find(needle), std::string::npos) << needle << "\n" << table;
  }
}

TEST(ProfilingBackend, OpsOutsideAStepAreForwardedUntimed) {
  ops::ProfilingBackend profiled(ops::make_cpu_backend());
  std::vector<float> x = {1.0f, 2.0f, 3.0f, 4.0f};
  std::vector<float> out(4, 0.0f);
  const std::vector<float> weight = {1.0f, 1.0f, 1.0f, 1.0f};
  profiled.rms_norm(ops::Act{x.data(), DType::kF32, 1, 4, 4}, weight.data(), 1e-6f,
                    ops::Act{out.data(), DType::kF32, 1, 4, 4});
  // rms(x) = sqrt(30 / 4): the op ran.
  EXPECT_NEAR(out[3], 4.0f / std::sqrt(7.5f), 1e-5f);
  const ops::Profile p = profiled.profile();
  EXPECT_EQ(p.untimed_ops, 1);
  EXPECT_TRUE(p.groups.empty());
}

// A linear weight goes up through the inner backend's own layout. The CPU reference keeps the host's
// natural order, which Backend's default (a plain upload) would give as well, so the bytes alone
// cannot tell a forwarded call from the default: the decorator must declare its own override (the
// CUDA backend's reordering would otherwise be skipped under LATHE_PROFILE=1).
static_assert(std::is_same_v<decltype(&ops::ProfilingBackend::upload_linear_weight),
                             void (ops::ProfilingBackend::*)(void*, const void*, DType, int64_t, int64_t)>,
              "ProfilingBackend overrides upload_linear_weight");
TEST(ProfilingBackend, LinearWeightUploadsAreForwardedToTheInnerBackend) {
  ops::ProfilingBackend profiled(ops::make_cpu_backend());
  std::vector<uint8_t> host(2 * 128);
  for (size_t i = 0; i < host.size(); ++i) host[i] = static_cast<uint8_t>(i * 7);
  void* dst = profiled.alloc(host.size());
  profiled.upload_linear_weight(dst, host.data(), DType::kF8E4M3, 2, 128);
  std::vector<uint8_t> back(host.size());
  profiled.download(back.data(), dst, back.size());
  profiled.free(dst);
  EXPECT_EQ(back, host);
}

TEST(ProfilingBackend, ResetForgetsEveryStepSoFar) {
  const model::ModelConfig config = model::load_model_config(kTiny);
  ops::ProfilingBackend profiled(ops::make_cpu_backend());
  const std::vector<int32_t> first = run_script(profiled, config);
  ASSERT_FALSE(profiled.profile().groups.empty());
  profiled.reset();
  EXPECT_TRUE(profiled.profile().groups.empty());
  EXPECT_EQ(profiled.profile().untimed_ops, 0);
  // The script again: the profile holds its steps once, as a fresh backend's would.
  EXPECT_EQ(run_script(profiled, config), first);
  ops::ProfilingBackend fresh(ops::make_cpu_backend());
  run_script(fresh, config);
  const ops::Profile again = profiled.profile(), once = fresh.profile();
  ASSERT_EQ(again.groups.size(), once.groups.size());
  for (size_t g = 0; g < once.groups.size(); ++g) {
    EXPECT_EQ(again.groups[g].kind, once.groups[g].kind);
    EXPECT_EQ(again.groups[g].steps, once.groups[g].steps) << once.groups[g].kind;
    EXPECT_EQ(again.groups[g].tokens_total, once.groups[g].tokens_total) << once.groups[g].kind;
  }
}

TEST(HostOpClock, MarksAreSecondsSinceTheFirstAndCollectStartsAfresh) {
  std::unique_ptr<ops::OpClock> clock = ops::make_host_op_clock();
  EXPECT_TRUE(clock->collect().empty());
  clock->mark();
  clock->mark();
  clock->mark();
  const std::vector<double> t = clock->collect();
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(t[0], 0.0);
  EXPECT_LE(t[0], t[1]);
  EXPECT_LE(t[1], t[2]);
  EXPECT_TRUE(clock->collect().empty());
}

}  // namespace
}  // namespace lathe
