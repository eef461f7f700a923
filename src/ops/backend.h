#pragma once
// The backend-neutral op API: what a model forward is written against. One implementation per
// backend (CpuBackend: the fp32 reference; CudaBackend: kernels). Every op takes views into the
// backend's own memory and is asynchronous on CUDA (ordered on the backend's stream) until
// synchronize() or a download.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ops/batch.h"
#include "ops/kv_cache.h"
#include "ops/sampling.h"
#include "ops/tensor.h"

namespace lathe::ops {

// Rotary embedding parameters. inv_freq is f32 [rotary_dim / 2] in backend memory (already
// scaled per rope_scaling); angle = position * inv_freq[i] in f32; cos/sin are multiplied by
// attention_scaling. Rotate-half pairing (i with i + rotary_dim/2); dims >= rotary_dim pass.
struct RopeParams {
  const float* inv_freq = nullptr;
  int32_t rotary_dim = 0;
  float attention_scaling = 1.0f;
};

// Attention geometry of one layer. Query head j reads KV head j / (num_heads / num_kv_heads).
struct AttentionShape {
  int32_t num_heads = 0;
  int32_t num_kv_heads = 0;
  int32_t head_dim = 0;
  float scale = 1.0f;  // usually head_dim^-0.5
};

// What qk_norm_rope_kv_write takes besides q, k and v, so that a q | k | v projection can carry
// it (Backend::linear_qk_norm_rope_kv_write); every pointer is the caller's and must stay valid for
// the call.
struct QkNormRopeStep {
  const DeviceBatch* batch = nullptr;
  const float* q_norm = nullptr;
  const float* k_norm = nullptr;
  float eps = 0.0f;
  const RopeParams* rope = nullptr;
  const AttentionShape* shape = nullptr;
  const KvCacheShape* cache_shape = nullptr;
  const KvCacheLayer* cache = nullptr;
};

// A recorded sequence of ops (a CUDA graph) that replays with the pointers and sizes it was
// recorded with; the contents of the buffers it reads may change between replays.
class OpGraph {
 public:
  virtual ~OpGraph() = default;
  // Enqueues the recorded ops on the backend's stream (asynchronous, like the ops themselves).
  virtual void replay() = 0;
};

// Device memory as the driver reports it.
struct DeviceMemory {
  size_t free_bytes = 0;
  size_t total_bytes = 0;
};

// Timestamps on a backend's op stream, for profiling (ops/profiling_backend.h). Valid while the
// backend that made it lives; used from one thread.
class OpClock {
 public:
  virtual ~OpClock() = default;
  // Records a timestamp after every op issued so far, without waiting for them.
  virtual void mark() = 0;
  // Waits for the last mark, then returns each mark's time in seconds since the first one (one
  // per mark, in order; empty without marks) and forgets them: the next mark starts afresh.
  virtual std::vector<double> collect() = 0;
};

// A clock that reads the host's steady clock at each mark: exact for ops that run synchronously
// on the calling thread (the CPU backend), the default of Backend::make_op_clock.
std::unique_ptr<OpClock> make_host_op_clock();

class Backend {
 public:
  virtual ~Backend() = default;

  virtual DeviceKind kind() const = 0;
  virtual std::string name() const = 0;
  // dtype of hidden states between ops (F32 on the CPU reference, BF16 on CUDA).
  virtual DType activation_dtype() const = 0;

  // ---- memory -------------------------------------------------------------------------------
  virtual void* alloc(size_t bytes) = 0;  // throws lathe::Error when memory runs out
  virtual void free(void* ptr) = 0;
  virtual void upload(void* dst, const void* host_src, size_t bytes) = 0;
  // upload() in the order of the backend's ops, without waiting for the copy: host_src may be
  // reused as soon as the call returns, and later ops see the bytes. The default is upload().
  virtual void upload_async(void* dst, const void* host_src, size_t bytes) { upload(dst, host_src, bytes); }
  // Uploads a linear layer's weight matrix [rows, cols] of `dtype` (row-major on the host) in the
  // layout this backend's linear ops read. The default is upload(); the CUDA backend stores fp8 rows
  // reordered inside 64-k blocks (backends/cuda/fp8_weight_layout.h). Embedding tables go by upload().
  virtual void upload_linear_weight(void* dst, const void* host_src, DType dtype, int64_t rows, int64_t cols) {
    upload(dst, host_src, static_cast<size_t>(rows * cols) * dtype_size(dtype));
  }
  virtual void download(void* host_dst, const void* src, size_t bytes) = 0;
  virtual void fill_zero(void* dst, size_t bytes) = 0;
  virtual void synchronize() = 0;

  // The device's memory (nothing on backends without device memory: the CPU).
  virtual std::optional<DeviceMemory> device_memory() const { return std::nullopt; }

  // ---- graphs (optional) ---------------------------------------------------------------------
  // Records the ops `body` issues into a graph instead of running them. nullptr when the backend
  // cannot record (the CPU: callers then run eagerly). `body` must not synchronize, allocate,
  // download, or read device contents on the host; run it once eagerly first so every
  // grow-only workspace has its final size. Throws lathe::Error when recording fails.
  virtual std::unique_ptr<OpGraph> capture(const std::function<void()>& body) {
    (void)body;
    return nullptr;
  }
  // Decode row counts m at which a row's linear arm (and so its bits) may change between m and
  // m + 1 (the GEMV/GEMM boundary). Padding a decode step from m to M rows keeps every row's
  // bits only when no boundary b has m <= b < M; graph buckets therefore include each boundary.
  virtual std::vector<int32_t> decode_arm_boundaries() const { return {}; }

  // ---- profiling (optional) -----------------------------------------------------------------
  // A clock on this backend's op stream (the default: the host clock, for synchronous backends).
  virtual std::unique_ptr<OpClock> make_op_clock() { return make_host_op_clock(); }
  // The name of the arm linear(phase, x, weight, out) runs (e.g. "gemv_batch4"); launches
  // nothing. Empty when the backend has a single arm (the CPU reference).
  virtual std::string linear_arm(Phase phase, const Act& x, const WeightView& weight, const Act& out) {
    (void)phase, (void)x, (void)weight, (void)out;
    return {};
  }

  // Copies the step's host-planned arrays into backend memory owned by the backend (reused
  // across steps; valid until the next call).
  virtual DeviceBatch upload_batch(const ForwardBatch& batch) = 0;

  // ---- ops ----------------------------------------------------------------------------------
  // out[t, :] = table[ids[t], :] for t < batch.num_tokens (ids = batch.token_ids).
  virtual void embedding(const DeviceBatch& batch, const WeightView& table, Act out) = 0;

  // out = weight * x / sqrt(mean(x^2) + eps), per row. weight: f32 [cols].
  virtual void rms_norm(Act x, const float* weight, float eps, Act out) = 0;

  // residual += delta; out = rms_norm(residual). Both rows in place where views alias.
  virtual void add_rms_norm(Act residual, Act delta, const float* weight, float eps, Act out) = 0;

  // delta = linear(phase, x, weight); add_rms_norm(residual, delta, norm_weight, eps, normed); out =
  // linear(phase, normed, next): the three ops from one GEMV to the next across a residual add and
  // norm, as one call so a backend may fuse them (the CUDA decode tiers add into the residual and
  // normalise their own input, LinearLevers::fused_norm_rows, and then leave delta and normed
  // unwritten). residual's and out's bits are those of the three calls. With silu_out (data not
  // null) `next` is a gate|up weight and the last step is linear_silu_mul(phase, normed, next, out,
  // silu_out) instead; with rope (not null) `next` is a q | k | v weight and the last step is
  // linear_qk_norm_rope_kv_write(phase, normed, next, out, *rope).
  virtual void linear_add_rms_norm_linear(Phase phase, Act x, const WeightView& weight, Act residual,
                                          Act delta, const float* norm_weight, float eps, Act normed,
                                          const WeightView& next, Act out, Act silu_out,
                                          const QkNormRopeStep* rope) {
    linear(phase, x, weight, delta);
    add_rms_norm(residual, delta, norm_weight, eps, normed);
    if (silu_out.data != nullptr) {
      linear_silu_mul(phase, normed, next, out, silu_out);
    } else if (rope != nullptr) {
      linear_qk_norm_rope_kv_write(phase, normed, next, out, *rope);
    } else {
      linear(phase, normed, next, out);
    }
  }

  // gate_up = linear(phase, x, weight); silu_mul(gate_up, out): a gate|up projection ([gate; up],
  // 2I rows) and its SwiGLU as one call so a backend may fuse them (the CUDA decode tiers compute
  // the SwiGLU in the GEMV's epilogue, LinearLevers::fused_silu, and then leave gate_up unwritten).
  // out's bits are those of the two calls.
  virtual void linear_silu_mul(Phase phase, Act x, const WeightView& weight, Act gate_up, Act out) {
    linear(phase, x, weight, gate_up);
    silu_mul(gate_up, out);
  }

  // qkv = linear(phase, x, weight) for a q | k | v weight ([num_heads; num_kv_heads; num_kv_heads]
  // heads of head_dim rows), then qk_norm_rope_kv_write(*step.batch, q, k, v, ...) on its column
  // ranges: one call so a backend may fuse them (the CUDA decode tiers run the QK-norm, RoPE and
  // KV write in the GEMV's epilogue, LinearLevers::fused_rope_rows). x's rows must be every token of
  // step.batch. qkv's and the cache's bits are those of the two calls.
  virtual void linear_qk_norm_rope_kv_write(Phase phase, Act x, const WeightView& weight, Act qkv,
                                            const QkNormRopeStep& step) {
    linear(phase, x, weight, qkv);
    qk_norm_rope_kv_write_cols(qkv, step);
  }

  // qk_norm_rope_kv_write on the q, k and v column ranges of a q | k | v output.
  void qk_norm_rope_kv_write_cols(Act qkv, const QkNormRopeStep& step) {
    const int64_t q_cols = int64_t{step.shape->num_heads} * step.shape->head_dim;
    const int64_t kv_cols = int64_t{step.shape->num_kv_heads} * step.shape->head_dim;
    qk_norm_rope_kv_write(*step.batch, qkv.slice_cols(0, q_cols), qkv.slice_cols(q_cols, kv_cols),
                          qkv.slice_cols(q_cols + kv_cols, kv_cols), step.q_norm, step.k_norm, step.eps,
                          *step.rope, *step.shape, *step.cache_shape, *step.cache);
  }

  // out[m, n] = sum_k x[m, k] * W[n, k] (+ bias[n]). out may be F32 or the activation dtype.
  // The backend picks the arm from (phase, rows, weight kind) through ops/dispatch.
  virtual void linear(Phase phase, Act x, const WeightView& weight, Act out) = 0;

  // In place on q [T, nH*hd] and k [T, nKV*hd]: per-head RMSNorm over hd with q_norm / k_norm
  // (f32 [hd], shared across heads), then RoPE at batch.positions; then k and v rows are
  // written into the cache at batch.slot_mapping.
  virtual void qk_norm_rope_kv_write(const DeviceBatch& batch, Act q, Act k, Act v, const float* q_norm,
                                     const float* k_norm, float eps, const RopeParams& rope,
                                     const AttentionShape& shape, const KvCacheShape& cache_shape,
                                     const KvCacheLayer& cache) = 0;

  // Causal paged attention: each row attends to its sequence's cached positions
  // [0, context_len - query_len + i] (i = row index within the sequence's chunk).
  // q [T, nH*hd] (post-RoPE), out [T, nH*hd].
  virtual void attention(const DeviceBatch& batch, Act q, const AttentionShape& shape,
                         const KvCacheShape& cache_shape, const KvCacheLayer& cache, Act out) = 0;

  // ---- FP8 KV-scale calibration (--calculate-kv-scales; run eagerly, once) -------------------
  // amax[0] = max |k[t, c]| and amax[1] = max |v[t, c]| over every row and column of k and v
  // (activation rows, e.g. the post-RoPE k left in place by qk_norm_rope_kv_write); amax is f32
  // [2] in backend memory. A max of magnitudes is exact and order-independent, so the result is
  // bit-identical on every backend for the same inputs; a NaN anywhere makes the result NaN
  // (non-finite). The defaults throw lathe::Error naming the backend.
  virtual void kv_amax(Act k, Act v, float* amax);
  // Writes rows k[t] and v[t] (already normed and rotated) into the cache slots
  // batch.slot_mapping[t] exactly as qk_norm_rope_kv_write stores its rows (FP8: e4m3(x /
  // scale), saturating; negative slot: skipped). Used to re-store a step's rows after its scales
  // were calibrated.
  virtual void kv_write(const DeviceBatch& batch, Act k, Act v, const KvCacheShape& cache_shape,
                        const KvCacheLayer& cache);

  // out[t, i] = silu(gate_up[t, i]) * gate_up[t, I + i] for gate_up [T, 2I], out [T, I].
  virtual void silu_mul(Act gate_up, Act out) = 0;

  // out[i, :] = x[batch.logits_rows[i], :] for i < batch.num_logits_rows.
  virtual void gather_logits_rows(const DeviceBatch& batch, Act x, Act out) = 0;

  // One token per row of logits (F32 [S, V]) under params[row] (host array of S), written to
  // host memory out_ids[S]. Follows the rule in ops/sampling.h.
  virtual void sample(Act logits, const std::vector<SamplingParams>& params, int32_t* out_ids) = 0;
};

// The CPU reference backend (always available).
std::unique_ptr<Backend> make_cpu_backend();

}  // namespace lathe::ops
