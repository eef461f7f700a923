#pragma once
// ProfilingBackend (LATHE_PROFILE=1): an ops::Backend that forwards every call to the backend it
// wraps and times each op of each step on that backend's OpClock (CUDA events on the stream, no
// host wait per op; the host clock on the CPU, whose ops are synchronous). capture() returns
// nullptr, so decode graphs are off and every step runs eagerly.
//
// A step starts at upload_batch and ends when sample returns (one clock read per step, after the
// step's own synchronization), or at the next upload_batch when the step sampled nothing. Each
// op is bracketed by two marks and its time goes to a phase: embed, norm, rope+kv, attention,
// silu_mul, gather, sampling, upload, kv_amax / kv_write (--calculate-kv-scales' calibration
// step), and one phase per linear route
// ("linear <phase> <arm> <N>x<K> x=<op that produced the input>") or "lm_head ..." for the linear
// after gather_logits_rows. Host scheduling is host wall time from the previous step's end to
// this step's upload_batch. Steps are grouped by kind: decode steps per width (tokens per step),
// prefill steps and mixed steps one group each. Memory calls (alloc, upload, download, ...) and
// ops issued outside a step are forwarded untimed.
//
// Used from one thread at a time, like every backend.
#include <array>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ops/backend.h"

namespace lathe::ops {

// Time of one phase summed over a group's steps.
struct PhaseProfile {
  std::string name;
  int64_t calls = 0;
  double seconds = 0.0;  // device time on CUDA, host wall time on the CPU
};

// One group of steps (one decode width, or every prefill / every mixed step).
struct StepGroupProfile {
  std::string kind;    // "decode" | "prefill" | "mixed"
  int32_t tokens = 0;  // tokens per step for decode groups; 0 for prefill / mixed (all widths)
  int64_t steps = 0;
  int64_t tokens_total = 0;
  double step_seconds = 0.0;  // host wall from upload_batch to the step's end, summed over steps
  double host_seconds = 0.0;  // host scheduling before each step (previous step's end -> upload_batch)
  std::vector<PhaseProfile> phases;  // sorted by seconds, largest first
};

struct Profile {
  std::vector<StepGroupProfile> groups;  // decode groups by width, then prefill, then mixed
  int64_t untimed_ops = 0;               // compute ops issued outside any step
  std::string clock;                     // what the times are ("device (cuda events)" / "host wall")
};

// The table LATHE_PROFILE prints: one block per group, phases sorted by time, with calls per
// step, total ms, mean us per step and the share of the step period (step + host scheduling).
std::string format_profile(const Profile& profile);

class ProfilingBackend final : public Backend {
 public:
  explicit ProfilingBackend(std::unique_ptr<Backend> inner);
  // Prints format_profile(profile()) to stderr when any step was timed.
  ~ProfilingBackend() override;
  ProfilingBackend(const ProfilingBackend&) = delete;
  ProfilingBackend& operator=(const ProfilingBackend&) = delete;

  // The profile so far (closes a step still open first).
  Profile profile();
  // Forgets every step timed so far (a bench's warm-up: first-use costs such as pinning a GEMM
  // algorithm or loading a kernel module belong to no measured step).
  void reset();

  DeviceKind kind() const override { return inner_->kind(); }
  std::string name() const override { return inner_->name(); }
  DType activation_dtype() const override { return inner_->activation_dtype(); }

  void* alloc(size_t bytes) override { return inner_->alloc(bytes); }
  void free(void* ptr) override { inner_->free(ptr); }
  void upload(void* dst, const void* host_src, size_t bytes) override { inner_->upload(dst, host_src, bytes); }
  void upload_linear_weight(void* dst, const void* host_src, DType dtype, int64_t rows, int64_t cols) override {
    inner_->upload_linear_weight(dst, host_src, dtype, rows, cols);
  }
  void upload_async(void* dst, const void* host_src, size_t bytes) override {
    inner_->upload_async(dst, host_src, bytes);
  }
  void download(void* host_dst, const void* src, size_t bytes) override { inner_->download(host_dst, src, bytes); }
  void fill_zero(void* dst, size_t bytes) override { inner_->fill_zero(dst, bytes); }
  void synchronize() override { inner_->synchronize(); }
  std::optional<DeviceMemory> device_memory() const override { return inner_->device_memory(); }

  // Never records: a profiled step runs op by op.
  std::unique_ptr<OpGraph> capture(const std::function<void()>& body) override;
  std::vector<int32_t> decode_arm_boundaries() const override { return inner_->decode_arm_boundaries(); }
  std::unique_ptr<OpClock> make_op_clock() override { return inner_->make_op_clock(); }
  std::string linear_arm(Phase phase, const Act& x, const WeightView& weight, const Act& out) override {
    return inner_->linear_arm(phase, x, weight, out);
  }

  DeviceBatch upload_batch(const ForwardBatch& batch) override;
  void embedding(const DeviceBatch& batch, const WeightView& table, Act out) override;
  void rms_norm(Act x, const float* weight, float eps, Act out) override;
  void add_rms_norm(Act residual, Act delta, const float* weight, float eps, Act out) override;
  void linear(Phase phase, Act x, const WeightView& weight, Act out) override;
  void qk_norm_rope_kv_write(const DeviceBatch& batch, Act q, Act k, Act v, const float* q_norm, const float* k_norm,
                             float eps, const RopeParams& rope, const AttentionShape& shape,
                             const KvCacheShape& cache_shape, const KvCacheLayer& cache) override;
  void attention(const DeviceBatch& batch, Act q, const AttentionShape& shape, const KvCacheShape& cache_shape,
                 const KvCacheLayer& cache, Act out) override;
  void kv_amax(Act k, Act v, float* amax) override;
  void kv_write(const DeviceBatch& batch, Act k, Act v, const KvCacheShape& cache_shape,
                const KvCacheLayer& cache) override;
  void silu_mul(Act gate_up, Act out) override;
  void gather_logits_rows(const DeviceBatch& batch, Act x, Act out) override;
  void sample(Act logits, const std::vector<SamplingParams>& params, int32_t* out_ids) override;

 private:
  using Clock = std::chrono::steady_clock;
  enum class Source { kNone, kNorm, kAttention, kSiluMul, kGather, kOther };
  // What names a linear's phase: weight N, K, dtype, scale kind; phase, rows, x stride; out
  // dtype, out stride; the input's source op.
  using LinearKey = std::array<int64_t, 10>;
  struct Group {
    StepGroupProfile totals;
    std::vector<double> seconds;  // per phase index
    std::vector<int64_t> calls;   // per phase index
  };

  // Runs `op` between two marks and charges it to phase `phase` (untimed outside a step).
  template <typename Op>
  void timed(int phase, Op&& op);
  int phase_index(const std::string& name);
  int linear_phase(Phase phase, const Act& x, const WeightView& weight, const Act& out);
  void close_step();

  std::unique_ptr<Backend> inner_;
  std::unique_ptr<OpClock> clock_;
  std::vector<std::string> phase_names_;
  std::map<std::string, int> phase_ids_;
  std::map<LinearKey, int> linear_phases_;
  std::map<std::pair<int, int32_t>, Group> groups_;  // (kind order, tokens)

  // The open step.
  bool open_ = false;
  std::pair<int, int32_t> step_group_{0, 0};
  int32_t step_tokens_ = 0;
  Clock::time_point step_start_{};
  double step_host_seconds_ = 0.0;
  std::vector<int> step_ops_;  // phase of op i, timed between marks 2i and 2i+1
  Source source_ = Source::kNone;

  bool any_step_ = false;
  Clock::time_point last_step_end_{};
  int64_t untimed_ops_ = 0;
};

// Wraps `inner` (LATHE_PROFILE=1 in app/backend_factory).
std::unique_ptr<Backend> make_profiling_backend(std::unique_ptr<Backend> inner);

}  // namespace lathe::ops
