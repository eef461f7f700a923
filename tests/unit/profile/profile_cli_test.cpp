// LATHE_PROFILE end to end: `lathe bench latency` on the tiny fixture (CPU) prints the per-phase
// table on stderr at exit, one block per decode width and one for prefill, with the step counts
// the bench runs; graphs are reported off. Unset, 0 or an unparseable value print no table.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "lathe_cli.h"

namespace {

using Outcome = lathe::testing::CliOutcome;

// Runs `env lathe args` (env: "VAR=value" assignments or empty), capturing stdout and stderr.
Outcome run_lathe(const std::string& env, const std::string& args) {
  return lathe::testing::run_lathe("profile_cli", args, "env -u LATHE_PROFILE " + env);
}

const std::string kBench = "bench latency '" + std::string(LATHE_FIXTURES_DIR) +
                           "/models/qwen3-tiny-chat' --load-format dummy --device cpu --batch-sizes 1,2 "
                           "--input-len 8 --output-len 4";

bool has(const std::string& text, const std::string& needle) { return text.find(needle) != std::string::npos; }

TEST(ProfileCli, BenchLatencyPrintsThePhaseTableAtExit) {
  const Outcome o = run_lathe("LATHE_PROFILE=1", kBench + " --no-warmup");
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_TRUE(has(o.out, "x_floor")) << o.out;  // the bench's own report is unchanged
  EXPECT_TRUE(has(o.out, "decode graphs: none (eager backend)")) << o.out;
  EXPECT_TRUE(has(o.err, "LATHE_PROFILE=1: timing every op")) << o.err;
  EXPECT_TRUE(has(o.err, "LATHE_PROFILE: time per phase of each step (host wall time")) << o.err;
  // Per batch size: one prefill step, then output_len - 1 = 3 decode steps of that width.
  EXPECT_TRUE(has(o.err, "decode steps of 1 token(s): 3 steps")) << o.err;
  EXPECT_TRUE(has(o.err, "decode steps of 2 token(s): 3 steps")) << o.err;
  EXPECT_TRUE(has(o.err, "prefill steps (any width; mean 12.0 tokens): 2 steps")) << o.err;
  for (const std::string phase : {"calls/step", "%step", "attention", "norm", "rope+kv", "embed", "sampling", "upload",
                                   "silu_mul", "gather", "lm_head decode 384x128", "linear decode 128x256 x=attention",
                                   "host scheduling"}) {
    EXPECT_TRUE(has(o.err, phase)) << phase << "\n" << o.err;
  }
  // The table follows the bench's last step: it is printed when the backend is destroyed.
  EXPECT_LT(o.err.find("LATHE_PROFILE=1: timing"), o.err.find("LATHE_PROFILE: time per phase"));
}

TEST(ProfileCli, WarmupStepsAreNotCounted) {
  const Outcome o = run_lathe("LATHE_PROFILE=1", kBench);
  ASSERT_EQ(o.status, 0) << o.err;
  // The warm-up (batch 2, output 3: one prefill step, 2 decode steps of width 2) is forgotten:
  // the tables hold exactly the measured batches' steps, as without it.
  EXPECT_TRUE(has(o.err, "decode steps of 1 token(s): 3 steps")) << o.err;
  EXPECT_TRUE(has(o.err, "decode steps of 2 token(s): 3 steps")) << o.err;
  EXPECT_TRUE(has(o.err, "prefill steps (any width; mean 12.0 tokens): 2 steps")) << o.err;
}

TEST(ProfileCli, OffPrintsNoTable) {
  for (const std::string env : {"", "LATHE_PROFILE=0", "LATHE_PROFILE=yes"}) {
    SCOPED_TRACE(env);
    const Outcome o = run_lathe(env, kBench + " --no-warmup");
    ASSERT_EQ(o.status, 0) << o.err;
    EXPECT_FALSE(has(o.err, "LATHE_PROFILE: time per phase")) << o.err;
    EXPECT_FALSE(has(o.err, "LATHE_PROFILE=1: timing")) << o.err;
  }
  const Outcome bad = run_lathe("LATHE_PROFILE=yes", kBench + " --no-warmup");
  EXPECT_TRUE(has(bad.err, "LATHE_PROFILE='yes' is not 0 or 1")) << bad.err;
}

}  // namespace
