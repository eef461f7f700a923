#include "app/bench_serve.h"

#include <fmt/format.h>
#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <mutex>
#include <thread>

#include "app/bench_plot.h"
#include "core/error.h"
#include "core/hash.h"
#include "tokenizer/tokenizer.h"

namespace lathe::app {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_between(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

// A counter-based generator: the n-th draw of stream `key`.
struct Draws {
  uint64_t key;
  uint64_t n = 0;
  uint64_t next() { return splitmix64(key ^ splitmix64(n++)); }
  double unit() { return static_cast<double>(next() >> 11) * (1.0 / 9007199254740992.0); }  // [0, 1)
};

struct Url {
  std::string origin;  // scheme://host[:port]
  std::string prefix;  // path before the endpoint ("" or "/something")
};

Url parse_url(const std::string& url) {
  const size_t scheme_end = url.find("://");
  if (scheme_end == std::string::npos) fail("--url '{}': expected http://HOST:PORT or https://HOST:PORT", url);
  const std::string scheme = url.substr(0, scheme_end);
  if (scheme != "http" && scheme != "https") fail("--url '{}': scheme '{}' is not http or https", url, scheme);
  const size_t host_begin = scheme_end + 3;
  const size_t path_begin = url.find('/', host_begin);
  Url out;
  out.origin = url.substr(0, path_begin);
  if (out.origin.size() == host_begin) fail("--url '{}': no host", url);
  if (path_begin != std::string::npos) out.prefix = url.substr(path_begin);
  while (!out.prefix.empty() && out.prefix.back() == '/') out.prefix.pop_back();
  return out;
}

void configure(httplib::Client& client, const ServeOptions& o) {
  const auto timeout = static_cast<time_t>(std::ceil(o.timeout_s));
  client.set_connection_timeout(std::min<time_t>(timeout, 30), 0);
  client.set_read_timeout(timeout, 0);
  client.set_write_timeout(timeout, 0);
  client.set_keep_alive(true);
  client.set_tcp_nodelay(true);  // the request is two writes (headers, body): no Nagle delay
  if (!o.api_key.empty()) client.set_bearer_token_auth(o.api_key);
}

// The prompt-id sampler: ordinary (non-added, known) ids of the tokenizer, or [0, vocab_size).
class PromptIds {
 public:
  explicit PromptIds(const ServeOptions& o) {
    if (o.tokenizer) {
      const tokenizer::Tokenizer tok = tokenizer::Tokenizer::load(*o.tokenizer);
      for (int32_t id = 0; id < tok.vocab_size(); ++id) {
        if (tok.is_known(id) && !tok.is_added(id)) allowed_.push_back(id);
      }
      if (allowed_.empty()) fail("--tokenizer {}: no ordinary token ids", o.tokenizer->string());
      description_ = fmt::format("uniform over the {} ordinary ids of {} (added tokens excluded)", allowed_.size(),
                                 tok.source());
    } else {
      if (o.vocab_size < 1 || o.vocab_size > (int64_t{1} << 31) - 1) {
        fail("--vocab-size must be in [1, 2^31), got {}", o.vocab_size);
      }
      limit_ = o.vocab_size;
      description_ = fmt::format("uniform over [0, {}) (no --tokenizer)", limit_);
    }
  }

  std::vector<int32_t> prompt(uint64_t key, int64_t len) const {
    Draws draws{key};
    std::vector<int32_t> ids(static_cast<size_t>(len));
    for (int32_t& id : ids) {
      const uint64_t r = draws.next();
      id = allowed_.empty() ? static_cast<int32_t>(r % static_cast<uint64_t>(limit_))
                            : allowed_[static_cast<size_t>(r % allowed_.size())];
    }
    return ids;
  }

  const std::string& description() const { return description_; }

 private:
  std::vector<int32_t> allowed_;
  int64_t limit_ = 0;
  std::string description_;
};

std::string request_body(const std::string& model, const std::vector<int32_t>& prompt, int64_t max_tokens) {
  nlohmann::ordered_json body;
  if (!model.empty()) body["model"] = model;
  body["prompt"] = prompt;
  body["max_tokens"] = max_tokens;
  body["temperature"] = 0;
  body["stream"] = true;
  body["stream_options"] = {{"include_usage", true}};
  body["ignore_eos"] = true;
  return body.dump();
}

// Sends one streaming request and times it. Never throws for server or transport trouble: that
// is recorded in the result.
RequestResult send_one(httplib::Client& client, const std::string& path, const std::string& body, int64_t prompt_tokens,
                       Clock::time_point level_start) {
  RequestResult result;
  result.prompt_tokens = prompt_tokens;
  int status = 0;
  std::string error_body;
  bool done = false;
  double last_chunk_s = -1.0;
  const Clock::time_point start = Clock::now();
  result.start_s = seconds_between(level_start, start);
  result.ok = true;  // until something says otherwise
  SseParser parser([&](std::string_view data) {
    if (done) return;
    done = !apply_stream_event(data, seconds_between(start, Clock::now()), result, last_chunk_s);
  });

  httplib::Request req;
  req.method = "POST";
  req.path = path;
  req.body = body;
  req.set_header("Content-Type", "application/json");
  req.set_header("Accept", "text/event-stream");
  req.response_handler = [&](const httplib::Response& res) {
    status = res.status;
    return true;
  };
  req.content_receiver = [&](const char* data, size_t len, uint64_t, uint64_t) {
    if (status != 200) {
      if (error_body.size() < 2000) error_body.append(data, std::min<size_t>(len, 2000 - error_body.size()));
      return true;
    }
    parser.feed(std::string_view(data, len));
    return true;
  };
  const httplib::Result res = client.send(req);
  if (status == 200) parser.finish();
  result.e2e_s = seconds_between(start, Clock::now());
  if (!res) {
    result.ok = false;
    result.error = fmt::format("transport error: {}", httplib::to_string(res.error()));
  } else if (status != 200) {
    result.ok = false;
    result.error = fmt::format("HTTP {}: {}", status, error_body);
  } else if (result.ok && last_chunk_s < 0.0) {
    result.ok = false;
    result.error = "the stream ended without a completion chunk";
  }
  return result;
}

// The model name: --model, else the first id of GET /v1/models.
std::string resolve_model(const ServeOptions& o, const Url& url) {
  if (!o.model.empty()) return o.model;
  httplib::Client client(url.origin);
  configure(client, o);
  const httplib::Result res = client.Get(url.prefix + "/v1/models");
  if (!res) fail("--url {}: GET /v1/models failed ({}); is the server up? (or pass --model)", o.url, httplib::to_string(res.error()));
  if (res->status != 200) fail("--url {}: GET /v1/models answered HTTP {}; pass --model NAME", o.url, res->status);
  const nlohmann::json j = nlohmann::json::parse(res->body, nullptr, false);
  if (j.is_object() && j.contains("data") && j["data"].is_array() && !j["data"].empty() && j["data"][0].contains("id") &&
      j["data"][0]["id"].is_string()) {
    return j["data"][0]["id"].get<std::string>();
  }
  fail("--url {}: GET /v1/models listed no model id; pass --model NAME", o.url);
}

void validate(const ServeOptions& o) {
  if (o.url.empty()) fail("--url is required");
  if (o.endpoint.empty() || o.endpoint.front() != '/') fail("--endpoint '{}' must start with '/'", o.endpoint);
  if (o.concurrency.empty()) fail("--concurrency: give at least one level");
  for (int64_t c : o.concurrency) {
    if (c < 1 || c > 4096) fail("--concurrency: {} is not in [1, 4096]", c);
  }
  if (o.input_len < 1) fail("--input-len must be at least 1, got {}", o.input_len);
  if (o.output_len < 1) fail("--output-len must be at least 1, got {}", o.output_len);
  if (o.num_prompts < 0) fail("--num-prompts must be positive (0: 4 x concurrency, at least 16), got {}", o.num_prompts);
  if (o.request_rate && !(*o.request_rate > 0.0 && std::isfinite(*o.request_rate))) {
    fail("--request-rate must be a positive number of requests per second");
  }
  if (!(o.timeout_s > 0.0) || !std::isfinite(o.timeout_s)) fail("--timeout must be positive");
}


// One concurrency level: num_prompts requests, at most `concurrency` in flight.
LevelMetrics run_level(const ServeOptions& o, const Url& url, const std::string& model, const PromptIds& ids,
                       int64_t concurrency, size_t level_index) {
  const int64_t count = o.num_prompts > 0 ? o.num_prompts : std::max<int64_t>(16, 4 * concurrency);
  const uint64_t level_key = splitmix64(splitmix64(o.seed) ^ splitmix64(0x1000 + level_index));
  std::vector<std::string> bodies;
  bodies.reserve(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    bodies.push_back(request_body(
        model, ids.prompt(splitmix64(level_key + static_cast<uint64_t>(i)), o.input_len), o.output_len));
  }
  // Release times: all 0, or cumulative exponential gaps of mean 1 / rate.
  const std::vector<double> release =
      o.request_rate ? poisson_release_times(splitmix64(level_key ^ 0xA11CEull), count, *o.request_rate)
                     : std::vector<double>(static_cast<size_t>(count), 0.0);

  std::vector<RequestResult> results(static_cast<size_t>(count));
  std::atomic<int64_t> next{0};
  const std::string path = url.prefix + o.endpoint;
  const Clock::time_point level_start = Clock::now();
  auto worker = [&] {
    httplib::Client client(url.origin);
    configure(client, o);
    for (int64_t i = next++; i < count; i = next++) {
      const auto at = level_start + std::chrono::duration_cast<Clock::duration>(
                                        std::chrono::duration<double>(release[static_cast<size_t>(i)]));
      std::this_thread::sleep_until(at);
      results[static_cast<size_t>(i)] = send_one(client, path, bodies[static_cast<size_t>(i)], o.input_len, level_start);
    }
  };
  std::vector<std::thread> workers;
  for (int64_t w = 0; w < std::min(concurrency, count); ++w) workers.emplace_back(worker);
  for (std::thread& t : workers) t.join();

  double first = results.front().start_s;
  double last = 0.0;
  for (const RequestResult& r : results) {
    first = std::min(first, r.start_s);
    last = std::max(last, r.start_s + r.e2e_s);
  }
  return compute_level_metrics(results, last - first, concurrency, o.request_rate);
}

}  // namespace

std::vector<double> poisson_release_times(uint64_t key, int64_t count, double rate) {
  std::vector<double> release(static_cast<size_t>(std::max<int64_t>(count, 0)));
  Draws draws{key};
  double t = 0.0;
  for (double& r : release) {
    t += -std::log(1.0 - draws.unit()) / rate;  // unit() < 1: the log is finite
    r = t;
  }
  return release;
}

ServeReport run_serve(const ServeOptions& o, const std::function<void(const std::string&)>& log) {
  validate(o);
  const Url url = parse_url(o.url);
  const PromptIds ids(o);
  ServeReport report;
  report.options = o;
  report.started_at = utc_timestamp();
  report.prompt_ids = ids.description();
  report.model = resolve_model(o, url);

  if (o.warmup) {
    httplib::Client client(url.origin);
    configure(client, o);
    const std::vector<int32_t> prompt =
        ids.prompt(splitmix64(o.seed ^ 0x3A3Aull), std::min<int64_t>(o.input_len, 16));
    const RequestResult r = send_one(client, url.prefix + o.endpoint,
                                     request_body(report.model, prompt, std::min<int64_t>(o.output_len, 4)),
                                     static_cast<int64_t>(prompt.size()), Clock::now());
    if (!r.ok) fail("--url {}: the warm-up request to {} failed: {}", o.url, o.endpoint, r.error);
  }

  for (size_t l = 0; l < o.concurrency.size(); ++l) {
    const int64_t c = o.concurrency[l];
    LevelMetrics m = run_level(o, url, report.model, ids, c, l);
    if (log) {
      log(fmt::format("concurrency {:>4}: {} ok, {} failed in {:.2f} s; {:.1f} output tok/s, TTFT p50 {:.1f} ms, "
                      "TPOT p50 {:.2f} ms",
                      c, m.completed, m.failed, m.duration_s, m.output_throughput, m.ttft_s.p50 * 1e3,
                      m.tpot_s.p50 * 1e3));
    }
    report.levels.push_back(std::move(m));
  }
  return report;
}

nlohmann::ordered_json serve_report_json(const ServeReport& r) {
  const ServeOptions& o = r.options;
  nlohmann::ordered_json j;
  j["started_at"] = r.started_at;
  j["url"] = o.url;
  j["endpoint"] = o.endpoint;
  j["model"] = r.model;
  j["input_len"] = o.input_len;
  j["output_len"] = o.output_len;
  j["num_prompts"] = o.num_prompts > 0 ? nlohmann::ordered_json(o.num_prompts) : nlohmann::ordered_json("auto");
  j["request_rate"] = o.request_rate ? nlohmann::ordered_json(*o.request_rate) : nlohmann::ordered_json("inf");
  j["seed"] = o.seed;
  j["prompt_ids"] = r.prompt_ids;
  nlohmann::ordered_json levels = nlohmann::ordered_json::array();
  for (const LevelMetrics& m : r.levels) levels.push_back(level_metrics_json(m));
  j["levels"] = std::move(levels);
  return j;
}

std::string format_serve_report(const ServeReport& r) {
  const ServeOptions& o = r.options;
  std::string out = fmt::format("server {}{} model '{}', input {} / output {} tokens, request rate {}\n", o.url,
                                o.endpoint, r.model, o.input_len, o.output_len,
                                o.request_rate ? fmt::format("{} /s (Poisson)", *o.request_rate) : "inf (all at once)");
  out += fmt::format("{:>5} {:>5} {:>4} {:>8} {:>8} {:>10} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}\n", "conc",
                     "ok", "fail", "dur_s", "req/s", "out_tok/s", "ttft_avg", "ttft_p50", "ttft_p99", "tpot_avg",
                     "tpot_p50", "tpot_p99", "itl_p50", "e2e_p50");
  for (const LevelMetrics& m : r.levels) {
    out += fmt::format(
        "{:>5} {:>5} {:>4} {:>8.2f} {:>8.2f} {:>10.1f} {:>9.1f} {:>9.1f} {:>9.1f} {:>9.2f} {:>9.2f} {:>9.2f} {:>9.2f} "
        "{:>9.0f}\n",
        m.concurrency, m.completed, m.failed, m.duration_s, m.request_throughput, m.output_throughput,
        m.ttft_s.mean * 1e3, m.ttft_s.p50 * 1e3, m.ttft_s.p99 * 1e3, m.tpot_s.mean * 1e3, m.tpot_s.p50 * 1e3,
        m.tpot_s.p99 * 1e3, m.itl_s.p50 * 1e3, m.e2e_s.p50 * 1e3);
    for (const std::string& e : m.errors) out += fmt::format("      error: {}\n", e);
  }
  out += "times in ms; TPOT = (e2e - TTFT) / (output tokens - 1) per request; ITL pooled over chunks\n";
  return out;
}

std::string serve_report_svg(const ServeReport& r) {
  std::vector<std::string> x;
  PlotSeries throughput{"output tok/s", {}};
  PlotSeries tpot_mean{"mean", {}}, tpot_p50{"p50", {}}, tpot_p99{"p99", {}};
  for (const LevelMetrics& m : r.levels) {
    x.push_back(std::to_string(m.concurrency));
    throughput.y.push_back(m.output_throughput);
    const bool any = m.tpot_s.count > 0;
    tpot_mean.y.push_back(any ? m.tpot_s.mean * 1e3 : NAN);
    tpot_p50.y.push_back(any ? m.tpot_s.p50 * 1e3 : NAN);
    tpot_p99.y.push_back(any ? m.tpot_s.p99 * 1e3 : NAN);
  }
  const std::string title = fmt::format("{}: input {}, output {} tokens", r.model, r.options.input_len, r.options.output_len);
  return render_svg_chart(title, "concurrency", x,
                          {PlotPanel{"Output throughput", "tokens / s", {throughput}},
                           PlotPanel{"Time per output token", "TPOT (ms)", {tpot_mean, tpot_p50, tpot_p99}}});
}

}  // namespace lathe::app
