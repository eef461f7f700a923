#include "app/bench_serve_metrics.h"

#include <fmt/format.h>

namespace lathe::app {

void SseParser::feed(std::string_view bytes) {
  pending_.append(bytes);
  size_t begin = 0;
  for (size_t nl = pending_.find('\n', begin); nl != std::string::npos; nl = pending_.find('\n', begin)) {
    std::string_view text(pending_.data() + begin, nl - begin);
    if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
    line(text);
    begin = nl + 1;
  }
  pending_.erase(0, begin);
}

void SseParser::finish() {
  if (!pending_.empty()) {
    std::string rest = std::move(pending_);
    pending_.clear();
    if (!rest.empty() && rest.back() == '\r') rest.pop_back();
    line(rest);
  }
  line("");
}

void SseParser::line(std::string_view text) {
  if (text.empty()) {  // blank line: dispatch the event
    if (has_data_) on_data_(data_);
    data_.clear();
    has_data_ = false;
    return;
  }
  if (text.front() == ':') return;  // comment
  const size_t colon = text.find(':');
  const std::string_view field = text.substr(0, colon);
  std::string_view value = colon == std::string_view::npos ? std::string_view() : text.substr(colon + 1);
  if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  if (field != "data") return;  // event/id/retry carry nothing the benchmark needs
  if (has_data_) data_.push_back('\n');
  data_.append(value);
  has_data_ = true;
}

bool apply_stream_event(std::string_view data, double t_s, RequestResult& result, double& last_chunk_s) {
  if (data == "[DONE]") return false;
  const nlohmann::json event = nlohmann::json::parse(data, nullptr, /*allow_exceptions=*/false);
  if (event.is_discarded() || !event.is_object()) {
    result.ok = false;
    result.error = fmt::format("stream event is not a JSON object: {}", std::string(data.substr(0, 200)));
    return true;
  }
  if (auto err = event.find("error"); err != event.end()) {
    result.ok = false;
    result.error = fmt::format("stream error: {}", err->dump());
    return true;
  }
  if (auto choices = event.find("choices"); choices != event.end() && choices->is_array() && !choices->empty()) {
    if (last_chunk_s < 0.0) {  // the first chunk
      result.ttft_s = t_s;
    } else {
      result.itl_s.push_back(t_s - last_chunk_s);
    }
    last_chunk_s = t_s;
    if (!result.output_tokens_from_usage) ++result.output_tokens;
  }
  if (auto usage = event.find("usage"); usage != event.end() && usage->is_object()) {
    if (auto c = usage->find("completion_tokens"); c != usage->end() && c->is_number_integer()) {
      result.output_tokens = c->get<int64_t>();
      result.output_tokens_from_usage = true;
    }
    if (auto p = usage->find("prompt_tokens"); p != usage->end() && p->is_number_integer()) {
      result.prompt_tokens = p->get<int64_t>();
    }
  }
  return true;
}

LevelMetrics compute_level_metrics(const std::vector<RequestResult>& requests, double duration_s,
                                   int64_t concurrency, std::optional<double> request_rate) {
  LevelMetrics m;
  m.concurrency = concurrency;
  m.request_rate = request_rate;
  m.duration_s = duration_s;
  std::vector<double> ttft, tpot, itl, e2e;
  for (const RequestResult& r : requests) {
    if (!r.ok) {
      ++m.failed;
      if (m.errors.size() < 5) m.errors.push_back(r.error);
      continue;
    }
    ++m.completed;
    m.total_input_tokens += r.prompt_tokens;
    m.total_output_tokens += r.output_tokens;
    ttft.push_back(r.ttft_s);
    e2e.push_back(r.e2e_s);
    if (r.output_tokens > 1) tpot.push_back((r.e2e_s - r.ttft_s) / static_cast<double>(r.output_tokens - 1));
    itl.insert(itl.end(), r.itl_s.begin(), r.itl_s.end());
  }
  if (duration_s > 0.0) {
    m.request_throughput = static_cast<double>(m.completed) / duration_s;
    m.output_throughput = static_cast<double>(m.total_output_tokens) / duration_s;
    m.total_throughput = static_cast<double>(m.total_input_tokens + m.total_output_tokens) / duration_s;
  }
  m.ttft_s = summarize(std::move(ttft));
  m.tpot_s = summarize(std::move(tpot));
  m.itl_s = summarize(std::move(itl));
  m.e2e_s = summarize(std::move(e2e));
  return m;
}

nlohmann::ordered_json level_metrics_json(const LevelMetrics& m) {
  nlohmann::ordered_json j;
  j["concurrency"] = m.concurrency;
  j["request_rate"] = m.request_rate ? nlohmann::ordered_json(*m.request_rate) : nlohmann::ordered_json("inf");
  j["completed"] = m.completed;
  j["failed"] = m.failed;
  j["duration_s"] = m.duration_s;
  j["total_input_tokens"] = m.total_input_tokens;
  j["total_output_tokens"] = m.total_output_tokens;
  j["request_throughput"] = m.request_throughput;
  j["output_throughput"] = m.output_throughput;
  j["total_token_throughput"] = m.total_throughput;
  j["ttft_ms"] = summary_json(m.ttft_s, 1e3);
  j["tpot_ms"] = summary_json(m.tpot_s, 1e3);
  j["itl_ms"] = summary_json(m.itl_s, 1e3);
  j["e2e_latency_ms"] = summary_json(m.e2e_s, 1e3);
  j["errors"] = m.errors;
  return j;
}

}  // namespace lathe::app
