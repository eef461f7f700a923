// `lathe bench serve` end to end: the built binary (LATHE_BINARY) against the in-process
// streaming server, writing --out JSON and the --plot SVG; and flag errors as one "error:" line
// with exit status 1.
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

#include "fake_openai_server.h"

namespace {

using Outcome = lathe::testing::CliOutcome;
using lathe::testing::read_file;

std::filesystem::path temp_dir() { return lathe::testing::temp_dir("bench_cli"); }

Outcome run_lathe(const std::string& args) { return lathe::testing::run_lathe("bench_cli", args); }

TEST(BenchServeCli, WritesJsonAndSvg) {
  lathe::testing::FakeOpenAiServer server;
  const auto dir = temp_dir();
  const auto json_path = dir / "results.json";
  const auto svg_path = dir / "plot.svg";
  const Outcome o = run_lathe("bench serve --url " + server.url() +
                              " --concurrency 1,2 --num-prompts 4 --input-len 8 --output-len 3 --vocab-size 50"
                              " --seed 5 --out '" + json_path.string() + "' --plot '" + svg_path.string() + "'");
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_NE(o.out.find("out_tok/s"), std::string::npos) << o.out;
  const nlohmann::json j = nlohmann::json::parse(read_file(json_path));
  EXPECT_EQ(j["model"], "tiny");
  EXPECT_EQ(j["input_len"], 8);
  EXPECT_EQ(j["output_len"], 3);
  ASSERT_EQ(j["levels"].size(), 2u);
  for (const auto& level : j["levels"]) {
    EXPECT_EQ(level["completed"], 4);
    EXPECT_EQ(level["failed"], 0);
    EXPECT_EQ(level["total_output_tokens"], 12);
    for (const char* key : {"ttft_ms", "tpot_ms", "itl_ms", "e2e_latency_ms"}) {
      EXPECT_TRUE(level[key].contains("p50")) << key;
      EXPECT_TRUE(level[key].contains("p99")) << key;
      EXPECT_TRUE(level[key].contains("mean")) << key;
    }
  }
  const std::string svg = read_file(svg_path);
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
  EXPECT_EQ(server.completion_requests(), 1 + 4 + 4);
}

TEST(BenchCli, FlagErrorsAreOneLine) {
  Outcome o = run_lathe("bench serve --url http://127.0.0.1:1 --concurrency 1,0");
  EXPECT_EQ(o.status, 1);
  EXPECT_NE(o.err.find("error: --concurrency"), std::string::npos) << o.err;
  o = run_lathe("bench serve --url nonsense");
  EXPECT_EQ(o.status, 1);
  EXPECT_NE(o.err.find("error: --url"), std::string::npos) << o.err;
  o = run_lathe("bench latency /nonexistent-model-dir --load-format dummy");
  EXPECT_EQ(o.status, 1);
  EXPECT_NE(o.err.find("error:"), std::string::npos) << o.err;
  o = run_lathe("bench");
  EXPECT_NE(o.status, 0);
}

}  // namespace
