// The serve load generator: SSE parsing, per-request accounting, the per-level metrics on
// hand-built records, and whole runs against an in-process streaming server (fake_openai_server)
// where the counts are exact and the timings have known lower bounds (the server sleeps).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include "app/bench_serve.h"
#include "app/bench_serve_metrics.h"
#include "core/error.h"
#include "fake_openai_server.h"
#include "tokenizer/tokenizer.h"

namespace lathe::app {
namespace {

using testing::FakeOpenAiServer;
using testing::FakeServerConfig;

std::vector<std::string> parse_all(const std::string& stream, size_t piece) {
  std::vector<std::string> events;
  SseParser parser([&](std::string_view data) { events.emplace_back(data); });
  for (size_t i = 0; i < stream.size(); i += piece) parser.feed(std::string_view(stream).substr(i, piece));
  parser.finish();
  return events;
}

TEST(SseParser, EventsSurviveAnySplitAndBothLineEnds) {
  const std::string stream =
      "data: a\n\n"
      "data: b\r\ndata: c\r\n\r\n"
      ": a comment\n\n"
      "event: message\nid: 7\ndata:{\"k\":1}\n\n"
      "data: [DONE]\n\n";
  const std::vector<std::string> want = {"a", "b\nc", "{\"k\":1}", "[DONE]"};
  for (size_t piece : {size_t{1}, size_t{2}, size_t{3}, size_t{7}, stream.size()}) {
    EXPECT_EQ(parse_all(stream, piece), want) << "piece size " << piece;
  }
}

TEST(SseParser, FinishDispatchesAnUnterminatedEvent) {
  EXPECT_EQ(parse_all("data: one\n\ndata: tail", 4), (std::vector<std::string>{"one", "tail"}));
  EXPECT_TRUE(parse_all("", 1).empty());
}

TEST(StreamEvents, ChunksGiveTtftItlAndUsageOverridesTheCount) {
  RequestResult r;
  r.ok = true;
  double last = -1.0;
  const std::string chunk = R"({"choices":[{"index":0,"text":"x"}]})";
  EXPECT_TRUE(apply_stream_event(chunk, 0.5, r, last));
  EXPECT_TRUE(apply_stream_event(chunk, 0.75, r, last));
  EXPECT_TRUE(apply_stream_event(chunk, 1.25, r, last));
  EXPECT_DOUBLE_EQ(r.ttft_s, 0.5);
  ASSERT_EQ(r.itl_s.size(), 2u);
  EXPECT_DOUBLE_EQ(r.itl_s[0], 0.25);
  EXPECT_DOUBLE_EQ(r.itl_s[1], 0.5);
  EXPECT_EQ(r.output_tokens, 3);
  EXPECT_FALSE(r.output_tokens_from_usage);
  EXPECT_TRUE(apply_stream_event(R"({"choices":[],"usage":{"prompt_tokens":9,"completion_tokens":4}})", 1.3, r, last));
  EXPECT_EQ(r.output_tokens, 4);
  EXPECT_EQ(r.prompt_tokens, 9);
  EXPECT_TRUE(r.output_tokens_from_usage);
  EXPECT_EQ(r.itl_s.size(), 2u);  // the usage chunk carries no token
  EXPECT_FALSE(apply_stream_event("[DONE]", 1.4, r, last));
  EXPECT_TRUE(r.ok);
}

TEST(StreamEvents, ErrorsAndGarbageFailTheRequest) {
  RequestResult r;
  r.ok = true;
  double last = -1.0;
  apply_stream_event(R"({"error":{"message":"boom"}})", 0.1, r, last);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("boom"), std::string::npos);
  RequestResult g;
  g.ok = true;
  apply_stream_event("not json", 0.1, g, last);
  EXPECT_FALSE(g.ok);
}

RequestResult record(double ttft, double e2e, int64_t out, int64_t prompt, double itl) {
  RequestResult r;
  r.ok = true;
  r.ttft_s = ttft;
  r.e2e_s = e2e;
  r.output_tokens = out;
  r.prompt_tokens = prompt;
  r.itl_s.assign(static_cast<size_t>(out - 1), itl);
  return r;
}

TEST(LevelMetrics, DefinitionsOnHandBuiltRecords) {
  std::vector<RequestResult> rs;
  rs.push_back(record(0.1, 1.1, 11, 100, 0.1));  // TPOT (1.1 - 0.1) / 10 = 0.1
  rs.push_back(record(0.3, 4.3, 21, 100, 0.2));  // TPOT (4.3 - 0.3) / 20 = 0.2
  RequestResult failed;
  failed.error = "HTTP 500: nope";
  rs.push_back(failed);
  const LevelMetrics m = compute_level_metrics(rs, 2.5, 4, std::nullopt);
  EXPECT_EQ(m.completed, 2);
  EXPECT_EQ(m.failed, 1);
  EXPECT_EQ(m.total_input_tokens, 200);
  EXPECT_EQ(m.total_output_tokens, 32);
  EXPECT_DOUBLE_EQ(m.request_throughput, 2 / 2.5);
  EXPECT_DOUBLE_EQ(m.output_throughput, 32 / 2.5);
  EXPECT_DOUBLE_EQ(m.total_throughput, 232 / 2.5);
  EXPECT_NEAR(m.ttft_s.mean, 0.2, 1e-12);
  EXPECT_NEAR(m.ttft_s.p50, 0.2, 1e-12);            // interpolated between 0.1 and 0.3
  EXPECT_NEAR(m.ttft_s.p99, 0.1 + 0.99 * 0.2, 1e-12);
  EXPECT_NEAR(m.tpot_s.mean, 0.15, 1e-12);
  EXPECT_NEAR(m.tpot_s.p99, 0.1 + 0.99 * 0.1, 1e-12);
  EXPECT_EQ(m.itl_s.count, 30u);                     // pooled: 10 + 20 gaps
  EXPECT_NEAR(m.itl_s.mean, (10 * 0.1 + 20 * 0.2) / 30, 1e-12);
  EXPECT_NEAR(m.itl_s.p50, 0.2, 1e-12);
  EXPECT_NEAR(m.e2e_s.p50, 2.7, 1e-12);
  ASSERT_EQ(m.errors.size(), 1u);
  EXPECT_EQ(m.errors[0], "HTTP 500: nope");
  const nlohmann::ordered_json j = level_metrics_json(m);
  EXPECT_NEAR(j["tpot_ms"]["mean"].get<double>(), 150.0, 1e-9);
  EXPECT_EQ(j["request_rate"], "inf");
}

TEST(LevelMetrics, SingleTokenRequestsHaveNoTpot) {
  const LevelMetrics m = compute_level_metrics({record(0.1, 0.1, 1, 5, 0.0)}, 1.0, 1, 2.0);
  EXPECT_EQ(m.completed, 1);
  EXPECT_EQ(m.tpot_s.count, 0u);
  EXPECT_EQ(m.itl_s.count, 0u);
  EXPECT_EQ(level_metrics_json(m)["request_rate"].get<double>(), 2.0);
}

TEST(Poisson, ReleaseTimesHaveTheRequestedRate) {
  const double rate = 50.0;
  const std::vector<double> t = poisson_release_times(123, 20000, rate);
  ASSERT_EQ(t.size(), 20000u);
  std::vector<double> gaps = {t[0]};
  for (size_t i = 1; i < t.size(); ++i) gaps.push_back(t[i] - t[i - 1]);
  EXPECT_TRUE(std::all_of(gaps.begin(), gaps.end(), [](double g) { return g >= 0.0 && std::isfinite(g); }));
  const double mean = std::accumulate(gaps.begin(), gaps.end(), 0.0) / static_cast<double>(gaps.size());
  double var = 0.0;
  for (double g : gaps) var += (g - mean) * (g - mean);
  var /= static_cast<double>(gaps.size() - 1);
  // Exponential gaps: mean 1/rate and coefficient of variation 1 (3-sigma bounds for n = 20000).
  EXPECT_NEAR(mean * rate, 1.0, 0.03);
  EXPECT_NEAR(std::sqrt(var) / mean, 1.0, 0.05);
  EXPECT_EQ(poisson_release_times(123, 5, rate), poisson_release_times(123, 5, rate));
  EXPECT_NE(poisson_release_times(123, 5, rate), poisson_release_times(124, 5, rate));
}

ServeOptions small_run(const FakeOpenAiServer& server) {
  ServeOptions o;
  o.url = server.url();
  o.concurrency = {1, 4};
  o.num_prompts = 8;
  o.input_len = 12;
  o.output_len = 5;
  o.vocab_size = 100;
  o.seed = 7;
  o.timeout_s = 30;
  return o;
}

TEST(ServeRun, CountsTimingsAndRequestsAgainstAStreamingServer) {
  FakeServerConfig cfg;
  FakeOpenAiServer server(cfg);
  std::vector<std::string> log;
  const ServeReport report = run_serve(small_run(server), [&](const std::string& line) { log.push_back(line); });
  EXPECT_EQ(report.model, "tiny");  // from GET /v1/models
  ASSERT_EQ(report.levels.size(), 2u);
  EXPECT_EQ(log.size(), 2u);
  for (const LevelMetrics& m : report.levels) {
    SCOPED_TRACE(m.concurrency);
    EXPECT_EQ(m.completed, 8);
    EXPECT_EQ(m.failed, 0);
    EXPECT_EQ(m.total_input_tokens, 8 * 12);
    EXPECT_EQ(m.total_output_tokens, 8 * 5);
    EXPECT_EQ(m.itl_s.count, 8u * 4u);
    EXPECT_EQ(m.tpot_s.count, 8u);
    // The server sleeps before the first token and between tokens, so these lower bounds hold
    // however the client is scheduled (per-gap bounds would not: a late read merges chunks).
    EXPECT_GE(m.ttft_s.min, cfg.first_token_delay_s);
    EXPECT_GE(m.e2e_s.min, cfg.first_token_delay_s + 4 * cfg.token_interval_s);
    EXPECT_GE(m.itl_s.min, 0.0);
    EXPECT_GE(m.tpot_s.min, 0.0);
    EXPECT_LE(m.tpot_s.max, m.e2e_s.max);
    EXPECT_LE(m.ttft_s.p50, m.ttft_s.p99);
    EXPECT_GT(m.output_throughput, 0.0);
    EXPECT_NEAR(m.request_throughput * m.duration_s, 8.0, 1e-9);
  }
  // Four workers keep four requests in flight at the second level, never more.
  EXPECT_EQ(server.max_in_flight(), 4);
  // 1 warm-up + 2 levels x 8.
  const std::vector<nlohmann::json> bodies = server.bodies();
  ASSERT_EQ(bodies.size(), 17u);
  std::set<std::vector<int32_t>> prompts;
  for (size_t i = 1; i < bodies.size(); ++i) {
    const nlohmann::json& b = bodies[i];
    EXPECT_EQ(b["model"], "tiny");
    EXPECT_EQ(b["max_tokens"], 5);
    EXPECT_EQ(b["stream"], true);
    EXPECT_EQ(b["ignore_eos"], true);
    EXPECT_EQ(b["temperature"], 0);
    EXPECT_EQ(b["stream_options"]["include_usage"], true);
    const auto prompt = b["prompt"].get<std::vector<int32_t>>();
    ASSERT_EQ(prompt.size(), 12u);
    for (int32_t id : prompt) {
      EXPECT_GE(id, 0);
      EXPECT_LT(id, 100);
    }
    prompts.insert(prompt);
  }
  EXPECT_EQ(prompts.size(), 16u);  // every measured prompt differs, across levels too

  const nlohmann::ordered_json j = serve_report_json(report);
  EXPECT_EQ(j["levels"].size(), 2u);
  EXPECT_EQ(j["levels"][1]["concurrency"], 4);
  EXPECT_EQ(j["levels"][1]["completed"], 8);
  EXPECT_EQ(j["model"], "tiny");
  EXPECT_NE(format_serve_report(report).find("out_tok/s"), std::string::npos);
}

TEST(ServeRun, SamePromptsForTheSameSeed) {
  FakeOpenAiServer a;
  FakeOpenAiServer b;
  ServeOptions oa = small_run(a);
  ServeOptions ob = small_run(b);
  oa.concurrency = ob.concurrency = {2};
  run_serve(oa);
  run_serve(ob);
  auto prompts = [](const FakeOpenAiServer& s) {
    std::multiset<std::vector<int32_t>> out;
    for (const auto& body : s.bodies()) out.insert(body["prompt"].get<std::vector<int32_t>>());
    return out;
  };
  EXPECT_EQ(prompts(a), prompts(b));
}

TEST(ServeRun, WithoutUsageChunksAreCounted) {
  FakeServerConfig cfg;
  cfg.send_usage = false;
  FakeOpenAiServer server(cfg);
  ServeOptions o = small_run(server);
  o.concurrency = {2};
  o.model = "named";
  const ServeReport report = run_serve(o);
  EXPECT_EQ(report.model, "named");
  EXPECT_EQ(report.levels[0].total_output_tokens, 8 * 5);
  EXPECT_EQ(report.levels[0].total_input_tokens, 8 * 12);  // the prompt as sent
  EXPECT_EQ(server.bodies().back()["model"], "named");
}

TEST(ServeRun, PoissonArrivalsComplete) {
  FakeOpenAiServer server;
  ServeOptions o = small_run(server);
  o.concurrency = {8};
  o.request_rate = 200.0;
  const ServeReport report = run_serve(o);
  EXPECT_EQ(report.levels[0].completed, 8);
  EXPECT_EQ(serve_report_json(report)["levels"][0]["request_rate"].get<double>(), 200.0);
}

TEST(ServeRun, FailedRequestsAreCountedNotThrown) {
  FakeServerConfig cfg;
  cfg.fail_every = 3;
  FakeOpenAiServer server(cfg);
  ServeOptions o = small_run(server);
  o.concurrency = {2};
  o.num_prompts = 6;
  o.warmup = false;
  const ServeReport report = run_serve(o);
  EXPECT_EQ(report.levels[0].completed, 4);
  EXPECT_EQ(report.levels[0].failed, 2);
  ASSERT_FALSE(report.levels[0].errors.empty());
  EXPECT_NE(report.levels[0].errors[0].find("HTTP 500"), std::string::npos);
  EXPECT_NE(report.levels[0].errors[0].find("injected failure"), std::string::npos);
}

TEST(ServeRun, AFailingWarmupStopsTheRun) {
  FakeServerConfig cfg;
  cfg.fail_every = 1;
  FakeOpenAiServer server(cfg);
  try {
    run_serve(small_run(server));
    FAIL() << "expected lathe::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("warm-up"), std::string::npos) << e.what();
  }
}

TEST(ServeRun, PromptsAvoidTheTokenizersAddedTokens) {
  const std::string dir = std::string(LATHE_FIXTURES_DIR) + "/models/qwen3-tiny-chat";
  const tokenizer::Tokenizer tok = tokenizer::Tokenizer::load(dir);
  FakeOpenAiServer server;
  ServeOptions o = small_run(server);
  o.concurrency = {4};
  o.num_prompts = 16;
  o.input_len = 64;
  o.tokenizer = dir;
  run_serve(o);
  int64_t checked = 0;
  for (const auto& body : server.bodies()) {
    for (int32_t id : body["prompt"].get<std::vector<int32_t>>()) {
      EXPECT_TRUE(tok.is_known(id)) << id;
      EXPECT_FALSE(tok.is_added(id)) << id;
      ++checked;
    }
  }
  EXPECT_EQ(checked, 16 + 16 * 64);  // warm-up (16 ids) + the level
}

TEST(ServeRun, BadOptionsAndUnreachableServersAreErrors) {
  ServeOptions o;
  o.url = "ftp://127.0.0.1:1";
  EXPECT_THROW(run_serve(o), Error);
  o.url = "http://127.0.0.1:1";
  o.concurrency = {0};
  EXPECT_THROW(run_serve(o), Error);
  o.concurrency = {1};
  o.request_rate = -1.0;
  EXPECT_THROW(run_serve(o), Error);
  o.request_rate.reset();
  o.timeout_s = 2;
  EXPECT_THROW(run_serve(o), Error);  // nothing listens on port 1: GET /v1/models fails
  o.model = "m";
  EXPECT_THROW(run_serve(o), Error);  // ... and so does the warm-up
}

}  // namespace
}  // namespace lathe::app
