#include "ops/profiling_backend.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <utility>

#include "ops/linear_dispatch.h"

namespace lathe::ops {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_between(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

// Marks on the host's steady clock: each mark is the moment the previous op returned.
class HostOpClock final : public OpClock {
 public:
  void mark() override { marks_.push_back(Clock::now()); }
  std::vector<double> collect() override {
    std::vector<double> seconds;
    seconds.reserve(marks_.size());
    for (const Clock::time_point& mark : marks_) seconds.push_back(seconds_between(marks_.front(), mark));
    marks_.clear();
    return seconds;
  }

 private:
  std::vector<Clock::time_point> marks_;
};

// Fixed phases, registered first in this order.
enum FixedPhase {
  kUpload,
  kEmbed,
  kNorm,
  kRopeKv,
  kAttention,
  kSiluMul,
  kGather,
  kSampling,
  kKvAmax,
  kKvWrite,
  kFixedCount
};
constexpr const char* kFixedNames[kFixedCount] = {"upload",   "embed",  "norm",     "rope+kv", "attention",
                                                  "silu_mul", "gather", "sampling", "kv_amax", "kv_write"};

constexpr const char* kHostScheduling = "host scheduling (previous step's end -> upload_batch)";
constexpr const char* kBetweenOps = "between ops (inside the step, in no op: host work, launch gaps)";

std::string group_title(const StepGroupProfile& g) {
  const double steps = static_cast<double>(std::max<int64_t>(g.steps, 1));
  const double forward_ms = g.step_seconds / steps * 1e3;
  const double host_ms = g.host_seconds / steps * 1e3;
  const std::string what =
      g.kind == "decode" ? fmt::format("decode steps of {} token(s)", g.tokens)
                         : fmt::format("{} steps (any width; mean {:.1f} tokens)", g.kind,
                                       static_cast<double>(g.tokens_total) / steps);
  return fmt::format("{}: {} steps, mean step {:.3f} ms = {:.3f} ms upload_batch..sample + {:.3f} ms host scheduling",
                     what, g.steps, forward_ms + host_ms, forward_ms, host_ms);
}

}  // namespace

std::unique_ptr<OpClock> make_host_op_clock() { return std::make_unique<HostOpClock>(); }

std::string format_profile(const Profile& profile) {
  std::string out = fmt::format("LATHE_PROFILE: time per phase of each step ({}; every step eager, no graphs)\n",
                                profile.clock);
  for (const StepGroupProfile& g : profile.groups) {
    if (g.steps == 0) continue;
    const double steps = static_cast<double>(g.steps);
    const double period = g.step_seconds + g.host_seconds;  // the step as the caller sees it
    struct Row {
      std::string name;
      std::string calls;
      double seconds;
    };
    std::vector<Row> rows;
    double timed = 0.0;
    for (const PhaseProfile& p : g.phases) {
      rows.push_back({p.name, fmt::format("{:.2f}", static_cast<double>(p.calls) / steps), p.seconds});
      timed += p.seconds;
    }
    rows.push_back({kHostScheduling, "-", g.host_seconds});
    rows.push_back({kBetweenOps, "-", g.step_seconds - timed});
    std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.seconds > b.seconds; });
    size_t width = 5;
    for (const Row& r : rows) width = std::max(width, r.name.size());
    out += group_title(g) + "\n";
    out += fmt::format("  {:<{}} {:>10} {:>11} {:>11} {:>7}\n", "phase", width, "calls/step", "total_ms", "us/step",
                       "%step");
    for (const Row& r : rows) {
      out += fmt::format("  {:<{}} {:>10} {:>11.3f} {:>11.2f} {:>7.1f}\n", r.name, width, r.calls, r.seconds * 1e3,
                         r.seconds / steps * 1e6, period > 0 ? 100.0 * r.seconds / period : 0.0);
    }
  }
  if (profile.untimed_ops > 0) {
    out += fmt::format("({} ops ran outside a step (before any upload_batch) and are not counted)\n",
                       profile.untimed_ops);
  }
  return out;
}

ProfilingBackend::ProfilingBackend(std::unique_ptr<Backend> inner)
    : inner_(std::move(inner)), clock_(inner_->make_op_clock()) {
  for (const char* name : kFixedNames) phase_index(name);
}

ProfilingBackend::~ProfilingBackend() {
  try {
    if (open_ || any_step_) std::fputs(format_profile(profile()).c_str(), stderr);
  } catch (...) {
    // A destructor must not throw; a device error here has already been reported by the op.
  }
}

std::unique_ptr<OpGraph> ProfilingBackend::capture(const std::function<void()>& body) {
  (void)body;
  return nullptr;
}

int ProfilingBackend::phase_index(const std::string& name) {
  const auto [it, inserted] = phase_ids_.emplace(name, static_cast<int>(phase_names_.size()));
  if (inserted) phase_names_.push_back(name);
  return it->second;
}

int ProfilingBackend::linear_phase(Phase phase, const Act& x, const WeightView& weight, const Act& out) {
  // Keyed by shape, not by weight pointer, so the map stays small (one entry per projection
  // shape and row count); the arm depends on the shape, rows, strides and dtypes.
  const LinearKey key{weight.rows,
                      weight.cols,
                      static_cast<int64_t>(weight.dtype),
                      static_cast<int64_t>(weight.scale_kind),
                      static_cast<int64_t>(phase),
                      x.rows,
                      x.stride,
                      static_cast<int64_t>(out.dtype),
                      out.stride,
                      static_cast<int64_t>(source_)};
  if (const auto it = linear_phases_.find(key); it != linear_phases_.end()) return it->second;
  const std::string arm = inner_->linear_arm(phase, x, weight, out);
  const char* from = "";
  switch (source_) {
    case Source::kNorm:
      from = " x=norm";
      break;
    case Source::kAttention:
      from = " x=attention";
      break;
    case Source::kSiluMul:
      from = " x=silu_mul";
      break;
    default:
      break;
  }
  const bool lm_head = source_ == Source::kGather;
  const std::string name = fmt::format("{} {} {}{}{}x{}{}", lm_head ? "lm_head" : "linear", phase_name(phase), arm,
                                       arm.empty() ? "" : " ", weight.rows, weight.cols, from);
  const int id = phase_index(name);
  linear_phases_.emplace(key, id);
  return id;
}

template <typename Op>
void ProfilingBackend::timed(int phase, Op&& op) {
  if (!open_) {
    ++untimed_ops_;
    op();
    return;
  }
  clock_->mark();
  try {
    op();
  } catch (...) {
    // The step is lost: drop its marks so the next step starts clean.
    open_ = false;
    step_ops_.clear();
    try {
      clock_->collect();
    } catch (...) {
    }
    throw;
  }
  clock_->mark();
  step_ops_.push_back(phase);
}

void ProfilingBackend::close_step() {
  const std::vector<double> marks = clock_->collect();
  open_ = false;
  const Clock::time_point end = Clock::now();
  Group& g = groups_[step_group_];
  if (g.totals.steps == 0) {
    g.totals.kind = step_group_.first == 0 ? "decode" : step_group_.first == 1 ? "prefill" : "mixed";
    g.totals.tokens = step_group_.second;
  }
  g.seconds.resize(phase_names_.size(), 0.0);
  g.calls.resize(phase_names_.size(), 0);
  for (size_t i = 0; i < step_ops_.size() && 2 * i + 1 < marks.size(); ++i) {
    const auto p = static_cast<size_t>(step_ops_[i]);
    g.seconds[p] += marks[2 * i + 1] - marks[2 * i];
    ++g.calls[p];
  }
  ++g.totals.steps;
  g.totals.tokens_total += step_tokens_;
  g.totals.step_seconds += seconds_between(step_start_, end);
  g.totals.host_seconds += step_host_seconds_;
  step_ops_.clear();
  any_step_ = true;
  last_step_end_ = end;
}

Profile ProfilingBackend::profile() {
  if (open_) close_step();
  Profile out;
  out.untimed_ops = untimed_ops_;
  out.clock = inner_->kind() == DeviceKind::kCuda ? "device time: CUDA events on the backend's stream"
                                                   : "host wall time: the ops run synchronously";
  for (const auto& [key, g] : groups_) {
    StepGroupProfile totals = g.totals;
    for (size_t p = 0; p < g.seconds.size(); ++p) {
      if (g.calls[p] > 0) totals.phases.push_back(PhaseProfile{phase_names_[p], g.calls[p], g.seconds[p]});
    }
    std::stable_sort(totals.phases.begin(), totals.phases.end(),
                     [](const PhaseProfile& a, const PhaseProfile& b) { return a.seconds > b.seconds; });
    out.groups.push_back(std::move(totals));
  }
  return out;
}

void ProfilingBackend::reset() {
  if (open_) close_step();
  groups_.clear();
  untimed_ops_ = 0;
  any_step_ = false;
}

DeviceBatch ProfilingBackend::upload_batch(const ForwardBatch& batch) {
  if (open_) close_step();  // the previous step sampled nothing: it ends here
  const Clock::time_point now = Clock::now();
  step_host_seconds_ = any_step_ ? seconds_between(last_step_end_, now) : 0.0;
  open_ = true;
  step_start_ = now;
  step_ops_.clear();
  source_ = Source::kNone;
  step_tokens_ = batch.num_tokens();
  if (batch.phase == Phase::kDecode) {
    step_group_ = {0, step_tokens_};
  } else {
    step_group_ = {batch.num_decode_rows > 0 ? 2 : 1, 0};
  }
  DeviceBatch device;
  timed(kUpload, [&] { device = inner_->upload_batch(batch); });
  return device;
}

void ProfilingBackend::embedding(const DeviceBatch& batch, const WeightView& table, Act out) {
  timed(kEmbed, [&] { inner_->embedding(batch, table, out); });
  source_ = Source::kOther;
}

void ProfilingBackend::rms_norm(Act x, const float* weight, float eps, Act out) {
  timed(kNorm, [&] { inner_->rms_norm(x, weight, eps, out); });
  source_ = Source::kNorm;
}

void ProfilingBackend::add_rms_norm(Act residual, Act delta, const float* weight, float eps, Act out) {
  timed(kNorm, [&] { inner_->add_rms_norm(residual, delta, weight, eps, out); });
  source_ = Source::kNorm;
}

void ProfilingBackend::linear(Phase phase, Act x, const WeightView& weight, Act out) {
  const int id = open_ ? linear_phase(phase, x, weight, out) : 0;
  timed(id, [&] { inner_->linear(phase, x, weight, out); });
}

void ProfilingBackend::qk_norm_rope_kv_write(const DeviceBatch& batch, Act q, Act k, Act v, const float* q_norm,
                                             const float* k_norm, float eps, const RopeParams& rope,
                                             const AttentionShape& shape, const KvCacheShape& cache_shape,
                                             const KvCacheLayer& cache) {
  timed(kRopeKv,
        [&] { inner_->qk_norm_rope_kv_write(batch, q, k, v, q_norm, k_norm, eps, rope, shape, cache_shape, cache); });
  source_ = Source::kOther;
}

void ProfilingBackend::attention(const DeviceBatch& batch, Act q, const AttentionShape& shape,
                                 const KvCacheShape& cache_shape, const KvCacheLayer& cache, Act out) {
  timed(kAttention, [&] { inner_->attention(batch, q, shape, cache_shape, cache, out); });
  source_ = Source::kAttention;
}

void ProfilingBackend::kv_amax(Act k, Act v, float* amax) {
  timed(kKvAmax, [&] { inner_->kv_amax(k, v, amax); });
}

void ProfilingBackend::kv_write(const DeviceBatch& batch, Act k, Act v, const KvCacheShape& cache_shape,
                                const KvCacheLayer& cache) {
  timed(kKvWrite, [&] { inner_->kv_write(batch, k, v, cache_shape, cache); });
}

void ProfilingBackend::silu_mul(Act gate_up, Act out) {
  timed(kSiluMul, [&] { inner_->silu_mul(gate_up, out); });
  source_ = Source::kSiluMul;
}

void ProfilingBackend::gather_logits_rows(const DeviceBatch& batch, Act x, Act out) {
  timed(kGather, [&] { inner_->gather_logits_rows(batch, x, out); });
  source_ = Source::kGather;
}

void ProfilingBackend::sample(Act logits, const std::vector<SamplingParams>& params, int32_t* out_ids) {
  timed(kSampling, [&] { inner_->sample(logits, params, out_ids); });
  source_ = Source::kOther;
  if (open_) close_step();  // sample synchronized: the step's marks are complete
}

std::unique_ptr<Backend> make_profiling_backend(std::unique_ptr<Backend> inner) {
  return std::make_unique<ProfilingBackend>(std::move(inner));
}

}  // namespace lathe::ops
