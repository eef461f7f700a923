// `lathe bench latency` end to end on the CPU with a tiny fixture: dummy and real weights, the
// JSON report (one row per batch size, decode steps = output_len - 1, the floor against the host's
// read ceiling), and bad flags as one "error:" line with exit status 1.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "lathe_cli.h"

#include <nlohmann/json.hpp>

namespace {

using Outcome = lathe::testing::CliOutcome;
using lathe::testing::read_file;

std::filesystem::path temp_dir() { return lathe::testing::temp_dir("bench_latency"); }

Outcome run_lathe(const std::string& args) { return lathe::testing::run_lathe("bench_latency", args); }

const std::string kTiny = std::string(LATHE_FIXTURES_DIR) + "/models/qwen3-tiny-chat";

void check_report(const nlohmann::json& j, const std::string& load_format) {
  EXPECT_EQ(j["load_format"], load_format);
  EXPECT_EQ(j["backend"], "cpu");
  EXPECT_GT(j["read_ceiling_gbs"].get<double>(), 0.0);  // the host's, measured in the run
  EXPECT_TRUE(j["gemm_reference_tflops"].is_null());  // the CPU has no GEMM reference
  ASSERT_EQ(j["rows"].size(), 2u);
  EXPECT_EQ(j["rows"][0]["batch"], 1);
  EXPECT_EQ(j["rows"][1]["batch"], 3);
  for (const auto& row : j["rows"]) {
    EXPECT_EQ(row["decode_steps"], 4);  // output_len - 1
    EXPECT_GT(row["decode_median_ms"].get<double>(), 0.0);
    EXPECT_GT(row["prefill_ms"].get<double>(), 0.0);
    EXPECT_EQ(row["floor_context"], 12 + 5 / 2);
    // The floor is the step's bytes over the ceiling measured in the same run.
    const double step_bytes =
        row["weight_bytes_per_step"].get<double>() + row["kv_bytes_per_step"].get<double>();
    EXPECT_NEAR(row["floor_ms"].get<double>(), step_bytes / (j["read_ceiling_gbs"].get<double>() * 1e9) * 1e3,
                1e-9 * row["floor_ms"].get<double>());
    EXPECT_GT(row["weight_bytes_per_step"].get<double>(), 0.0);
    // The prefill's arithmetic over its time (bench_floor_test checks the count itself).
    EXPECT_GT(row["prefill_tflop"].get<double>(), 0.0);
    EXPECT_NEAR(row["prefill_tflops"].get<double>(),
                row["prefill_tflop"].get<double>() / (row["prefill_ms"].get<double>() * 1e-3), 1e-9);
  }
  // Three prompts do three times one prompt's work.
  const double one = j["rows"][0]["prefill_tflop"].get<double>();
  EXPECT_NEAR(j["rows"][1]["prefill_tflop"].get<double>(), 3 * one, 1e-12 * one);
  // One more sequence reads one more embedding row and its KV.
  EXPECT_GT(j["rows"][1]["weight_bytes_per_step"].get<double>(), j["rows"][0]["weight_bytes_per_step"].get<double>());
  EXPECT_DOUBLE_EQ(j["rows"][1]["kv_bytes_per_step"].get<double>(), 3 * j["rows"][0]["kv_bytes_per_step"].get<double>());
}

TEST(BenchLatencyCli, DummyAndRealWeightsOnTheCpu) {
  const auto dir = temp_dir();
  for (const std::string format : {"dummy", "auto"}) {
    SCOPED_TRACE(format);
    const auto json = dir / ("latency-" + format + ".json");
    const Outcome o = run_lathe("bench latency '" + kTiny + "' --load-format " + format +
                                " --device cpu --batch-sizes 1,3 --input-len 12 --output-len 5"
                                " --max-num-batched-tokens 16 --tokenizer '" + kTiny + "' --out '" + json.string() + "'");
    ASSERT_EQ(o.status, 0) << o.err;
    EXPECT_NE(o.out.find("x_floor"), std::string::npos) << o.out;
    EXPECT_NE(o.out.find("host memory"), std::string::npos) << o.out;  // the ceiling's method
    EXPECT_NE(o.out.find("GEMM reference n/a"), std::string::npos) << o.out;
    EXPECT_NE(o.out.find("prefill_TFLOP/s"), std::string::npos) << o.out;
    const nlohmann::json j = nlohmann::json::parse(read_file(json));
    check_report(j, format);
    // 3 prompts of 12 tokens in steps of <= 16 tokens: 36 / 16 -> 3 steps.
    EXPECT_EQ(j["rows"][1]["prefill_steps"], 3);
    EXPECT_EQ(j["rows"][0]["prefill_steps"], 1);
  }
}

// --step-breakdown: each row carries the step's phases, which fit inside the measured step (the
// CPU's clock is the host's, so the marks and the step's wall time share one clock).
TEST(BenchLatencyCli, StepBreakdownPartsFitTheStep) {
  const auto json = temp_dir() / "latency-breakdown.json";
  const Outcome o =
      run_lathe("bench latency '" + kTiny + "' --load-format dummy --device cpu --batch-sizes 1,3" +
                " --input-len 12 --output-len 6 --step-breakdown --out '" + json.string() + "'");
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_NE(o.out.find("decode step phases, median ms (host clock)"), std::string::npos) << o.out;
  const nlohmann::json j = nlohmann::json::parse(read_file(json));
  ASSERT_EQ(j["rows"].size(), 2u);
  for (const auto& row : j["rows"]) {
    // Each step's parts add up to its wall time, so no part's median exceeds the slowest step.
    for (const char* key : {"step_inputs_ms", "step_forward_ms", "step_sample_ms", "step_outside_ms"}) {
      ASSERT_TRUE(row.contains(key)) << key;
      EXPECT_GE(row[key].get<double>(), 0.0) << key;
      EXPECT_LE(row[key].get<double>(), row["decode_max_ms"].get<double>()) << key;
    }
    EXPECT_GT(row["step_forward_ms"].get<double>(), 0.0);
  }
  // Without the flag the rows carry no phases.
  const auto plain = temp_dir() / "latency-plain.json";
  ASSERT_EQ(run_lathe("bench latency '" + kTiny +
                      "' --load-format dummy --device cpu --batch-sizes 1 --input-len 12" +
                      " --output-len 3 --out '" + plain.string() + "'")
                .status,
            0);
  EXPECT_FALSE(nlohmann::json::parse(read_file(plain))["rows"][0].contains("step_forward_ms"));
}

TEST(BenchLatencyCli, BadFlagsAreOneLineErrors) {
  struct Case {
    std::string args;
    std::string message;
  } cases[] = {
      {"--load-format dummy --device cpu --batch-sizes 1,0", "error: --batch-sizes"},
      {"--load-format nope --device cpu", "error: --load-format"},
      {"--load-format dummy --device cpu --output-len 1", "error: --output-len"},
      {"--load-format dummy --device cpu --input-len 250 --output-len 10", "max_position_embeddings"},
      {"--load-format dummy --device tpu --input-len 8 --output-len 4", "error: --device"},
  };

  for (const Case& c : cases) {
    const Outcome o = run_lathe("bench latency '" + kTiny + "' " + c.args);
    EXPECT_EQ(o.status, 1) << c.args;
    EXPECT_NE(o.err.find(c.message), std::string::npos) << c.args << ": " << o.err;
  }
}

}  // namespace
