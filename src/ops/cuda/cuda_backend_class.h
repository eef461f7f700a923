#pragma once
// The CudaBackend class (cuda_backend.cpp: construction helpers and sampling;
// cuda_backend_linear.cpp: the linear layers). Internal to ops/cuda: users build one through
// ops/cuda_backend.h (make_cuda_backend).
#include "ops/cuda_backend.h"


#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <utility>
#include <vector>

#include "backends/cuda/arena.h"
#include "backends/cuda/check.h"
#include "backends/cuda/device.h"
#include "backends/cuda/elementwise.h"
#include "backends/cuda/gemm_lt.h"
#include "backends/cuda/gemv.h"
#include "backends/cuda/kv_amax.h"
#include "backends/cuda/pinned_staging.h"
#include "backends/cuda/quant.h"
#include "backends/cuda/rope_kv.h"
#include "backends/cuda/sampling.h"
#include "core/error.h"
#include "core/log.h"
#include "ops/cuda/attention_dispatch.h"
#include "ops/cuda/chained_launch_lever.h"
#include "ops/cuda/kernel_args.h"
#include "ops/cuda/stream_recording.h"
#include "ops/linear_dispatch.h"

namespace lathe::ops::cuda_detail {


namespace kc = lathe::cuda;

constexpr size_t kLtWorkspaceBytes = size_t{32} << 20;
constexpr int64_t kQuantRowsPerCall = 4096;  // prefill rows quantized per cuBLASLt call (scratch bound)
// The cuBLASLt W8A8 block128 route: gpu_cuda_gemm_test's W8A8Block128ScaleLayoutsAgainstReference,
// W8A8Block128ScaleIndexProbe and RowsAreBitIdenticalAcrossM_Fp8Block passed on the H200 on
// 2026-11-30 (activation scales token-fastest with pitch roundup(m, 4), weight scales in the
// checkpoint's [n/128][k/128] order; rows padded to a multiple of 4). Set false to send block128
// weights back to the dequantize-to-bf16 route.
constexpr bool kW8A8BlockVerified = true;

using cuda::gemv_scale;
using cuda::require_bf16;
using cuda::row_type;
using cuda::set_cache_fields;

enum Scratch {
  kQuantAct,
  kQuantScale,
  kDequant,
  kScaleVector,
  kPaddedOut,
  kSampler,
  kSampleParams,
  kSampleIds,
  kArgmax,
  kScratchCount
};

class CudaBackend final : public Backend, public CudaBackendControls {
 public:
  explicit CudaBackend(int device) {
    info_ = kc::select_device(device);
    device_ = device;
    LATHE_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    arena_ = std::make_unique<kc::DeviceArena>();
    lt_workspace_ = arena_->allocate(kLtWorkspaceBytes, kc::MemoryPurpose::kWorkspace);
    gemv_ws_ = kc::gemv_workspace_in(
        arena_->allocate(kc::gemv_workspace_bytes(), kc::MemoryPurpose::kWorkspace), stream_);
    std::string warnings;
    levers_ = linear_levers_from_env(&warnings);
    if (!warnings.empty()) spdlog::warn("{}", warnings);
    // One pinned algorithm per (n, k) and phase; both run on stream_, one at a time, so they
    // share the workspace.
    lt_prefill_ = std::make_unique<kc::LtGemm>(lt_workspace_, kLtWorkspaceBytes, levers_.gemm_prefill_pin_m);
    lt_decode_ = std::make_unique<kc::LtGemm>(lt_workspace_, kLtWorkspaceBytes, kDecodeGemmPinM);
    // Until configure_attention() brings the serve's values: the target's default levers and a
    // split-K workspace wide enough for 256 decode sequences (--max-num-seqs' usual ceiling).
    attn_config_.max_decode_seqs = 256;
    spdlog::info("cuda backend: {}; linear levers: {}", kc::describe(info_), describe_levers(levers_));
    cuda::configure_chained_launch(info_.sm_major);
    cuda::configure_gemv_levers();
    cuda::configure_attention_early_kv();
    cuda::configure_prefill_attention();
    cuda::configure_attention_kernel(static_cast<uint32_t>(attn_config_.max_decode_seqs));
  }

  ~CudaBackend() override {
    cudaStreamSynchronize(stream_);
    if (ids_pinned_) cudaFreeHost(ids_pinned_);
    lt_prefill_.reset();
    lt_decode_.reset();
    arena_.reset();
    cudaStreamDestroy(stream_);
  }

  DeviceKind kind() const override { return DeviceKind::kCuda; }
  std::string name() const override { return kc::describe(info_); }
  DType activation_dtype() const override { return DType::kBF16; }

  void* alloc(size_t bytes) override { return arena_->allocate(bytes, kc::MemoryPurpose::kOther); }
  void free(void* ptr) override { arena_->release(ptr); }
  void upload(void* dst, const void* host_src, size_t bytes) override {
    LATHE_CUDA_CHECK(cudaMemcpyAsync(dst, host_src, bytes, cudaMemcpyHostToDevice, stream_));
    LATHE_CUDA_CHECK(cudaStreamSynchronize(stream_));  // the caller may reuse host_src at once
  }
  void upload_async(void* dst, const void* host_src, size_t bytes) override {
    staging_.copy(dst, host_src, bytes, stream_);  // through page-locked memory; no wait
  }
  void upload_linear_weight(void* dst, const void* host_src, DType dtype, int64_t rows, int64_t cols) override;
  void download(void* host_dst, const void* src, size_t bytes) override {
    LATHE_CUDA_CHECK(cudaMemcpyAsync(host_dst, src, bytes, cudaMemcpyDeviceToHost, stream_));
    LATHE_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }
  void fill_zero(void* dst, size_t bytes) override { LATHE_CUDA_CHECK(cudaMemsetAsync(dst, 0, bytes, stream_)); }
  void synchronize() override { LATHE_CUDA_CHECK(cudaStreamSynchronize(stream_)); }

  std::optional<DeviceMemory> device_memory() const override {
    DeviceMemory m;
    LATHE_CUDA_CHECK(cudaMemGetInfo(&m.free_bytes, &m.total_bytes));
    return m;
  }

  std::unique_ptr<OpGraph> capture(const std::function<void()>& body) override {
    return cuda::capture_stream_graph(stream_, body);  // the HTTP threads never touch CUDA
  }

  std::vector<int32_t> decode_arm_boundaries() const override {
    if (levers_.decode_wide_gemv) return {};  // every decode width runs the tiers
    const int64_t widest = decode_gemv_widest(levers_);
    if (widest <= 0) return {};
    return {static_cast<int32_t>(widest)};
  }

  std::unique_ptr<OpClock> make_op_clock() override { return cuda::make_stream_op_clock(stream_); }

  std::string linear_arm(Phase phase, const Act& x, const WeightView& w, const Act& out) override {
    if (x.rows == 0) return "none";
    return linear_arm_name(plan_linear(phase, x, w, out).arm);
  }

  void configure_attention(const AttentionConfig& config) override {
    attn_config_ = config;
    levers_.batch16 = config.levers.ffn_batch16.value;
    levers_.gemv_max_m = config.levers.ffn_gemv_max_m.value;
    spdlog::info("cuda backend: linear levers from the target: {}", describe_levers(levers_));
    cuda::configure_attention_kernel(static_cast<uint32_t>(std::max(config.max_decode_seqs, 1)));
  }

  DeviceBatch upload_batch(const ForwardBatch& b) override {
    const int32_t t = b.num_tokens(), s = b.num_seqs();
    if (static_cast<int32_t>(b.positions.size()) != t || static_cast<int32_t>(b.slot_mapping.size()) != t ||
        static_cast<int32_t>(b.query_start.size()) != s + 1 ||
        b.block_tables.size() != static_cast<size_t>(s) * static_cast<size_t>(b.max_blocks_per_seq))
      fail("cuda upload_batch: inconsistent ForwardBatch sizes (tokens {}, sequences {})", t, s);
    const std::array<const std::vector<int32_t>*, 7> arrays = {&b.token_ids,   &b.positions,    &b.slot_mapping,
                                                               &b.query_start, &b.context_lens, &b.block_tables,
                                                               &b.logits_rows};
    std::array<size_t, 7> offsets{};
    size_t total = 0;
    for (size_t i = 0; i < arrays.size(); ++i) {
      offsets[i] = total;
      total += (arrays[i]->size() * sizeof(int32_t) + 255) / 256 * 256;
    }
    total = std::max<size_t>(total, 256);
    if (total > batch_dev_bytes_) {
      LATHE_CUDA_CHECK(cudaStreamSynchronize(stream_));  // nothing may still read the old buffer
      arena_->release(batch_dev_);
      batch_dev_bytes_ = std::max(total, batch_dev_bytes_ * 2);
      batch_dev_ = arena_->allocate(batch_dev_bytes_, kc::MemoryPurpose::kActivations);
    }
    char* host = static_cast<char*>(staging_.reserve(total));
    for (size_t i = 0; i < arrays.size(); ++i)
      std::memcpy(host + offsets[i], arrays[i]->data(), arrays[i]->size() * sizeof(int32_t));
    staging_.send(batch_dev_, total, stream_);
    auto at = [&](size_t i) { return reinterpret_cast<const int32_t*>(static_cast<char*>(batch_dev_) + offsets[i]); };
    return device_batch(b, {at(0), at(1), at(2), at(3), at(4), at(5), at(6)});
  }

  void embedding(const DeviceBatch& batch, const WeightView& table, Act out) override {
    if (out.rows < batch.num_tokens || out.cols != table.cols)
      fail("cuda embedding: out [{}, {}] does not fit {} tokens of width {}", out.rows, out.cols, batch.num_tokens, table.cols);
    kc::launch_embedding(batch.token_ids, batch.num_tokens, table.data, row_type(table.dtype, "embedding", "table"),
                         table.rows, table.cols, out.data, row_type(out.dtype, "embedding", "out"), out.stride, stream_);
  }

  void rms_norm(Act x, const float* weight, float eps, Act out) override {
    check_same_shape("rms_norm", x, out);
    kc::launch_rms_norm(x.data, row_type(x.dtype, "rms_norm", "x"), x.stride, x.rows, x.cols, weight, eps, out.data,
                        row_type(out.dtype, "rms_norm", "out"), out.stride, stream_);
  }

  void add_rms_norm(Act residual, Act delta, const float* weight, float eps, Act out) override {
    check_same_shape("add_rms_norm", residual, delta);
    check_same_shape("add_rms_norm", residual, out);
    kc::launch_add_rms_norm(residual.data, row_type(residual.dtype, "add_rms_norm", "residual"), residual.stride,
                            delta.data, row_type(delta.dtype, "add_rms_norm", "delta"), delta.stride, residual.rows,
                            residual.cols, weight, eps, out.data, row_type(out.dtype, "add_rms_norm", "out"),
                            out.stride, stream_);
  }

  void linear(Phase phase, Act x, const WeightView& w, Act out) override;
  void linear_add_rms_norm_linear(Phase phase, Act x, const WeightView& w, Act residual, Act delta,
                                  const float* norm_weight, float eps, Act normed, const WeightView& next,
                                  Act out, Act silu_out, const QkNormRopeStep* rope) override;
  void linear_silu_mul(Phase phase, Act x, const WeightView& w, Act gate_up, Act out) override;
  void linear_qk_norm_rope_kv_write(Phase phase, Act x, const WeightView& w, Act qkv,
                                    const QkNormRopeStep& step) override;

  void qk_norm_rope_kv_write(const DeviceBatch& batch, Act q, Act k, Act v, const float* q_norm, const float* k_norm,
                             float eps, const RopeParams& rope, const AttentionShape& shape,
                             const KvCacheShape& cache_shape, const KvCacheLayer& cache) override {
    require_bf16(q, "qk_norm_rope_kv_write", "q");
    require_bf16(k, "qk_norm_rope_kv_write", "k");
    require_bf16(v, "qk_norm_rope_kv_write", "v");
    if (cache_shape.dtype != DType::kBF16 && cache_shape.dtype != DType::kF8E4M3)
      fail("cuda qk_norm_rope_kv_write: KV cache dtype {} (expected BF16 or F8_E4M3)", dtype_name(cache_shape.dtype));
    if (q.cols != int64_t{shape.num_heads} * shape.head_dim || k.cols != int64_t{shape.num_kv_heads} * shape.head_dim ||
        v.cols != k.cols || cache_shape.head_dim != shape.head_dim || cache_shape.num_kv_heads != shape.num_kv_heads)
      fail("cuda qk_norm_rope_kv_write: q/k/v widths or cache geometry do not match the attention shape");
    kc::QkNormRopeArgs a =
        qk_norm_rope_args(QkNormRopeStep{&batch, q_norm, k_norm, eps, &rope, &shape, &cache_shape, &cache});
    a.q = q.data;
    a.q_stride = q.stride;
    a.k = k.data;
    a.k_stride = k.stride;
    a.v = v.data;
    a.v_stride = v.stride;
    kc::launch_qk_norm_rope_kv_write(a, stream_);
  }

  // The kernel arguments of a QK-norm / RoPE / KV write step, all but q, k, v and their strides.
  static kc::QkNormRopeArgs qk_norm_rope_args(const QkNormRopeStep& step) {
    kc::QkNormRopeArgs a;
    a.tokens = step.batch->num_tokens;
    a.positions = step.batch->positions;
    a.slot_mapping = step.batch->slot_mapping;
    a.q_norm = step.q_norm;
    a.k_norm = step.k_norm;
    a.eps = step.eps;
    a.inv_freq = step.rope->inv_freq;
    a.rotary_dim = step.rope->rotary_dim;
    a.attention_scaling = step.rope->attention_scaling;
    a.num_heads = step.shape->num_heads;
    a.num_kv_heads = step.shape->num_kv_heads;
    a.head_dim = step.shape->head_dim;
    set_cache_fields(a, *step.cache_shape, *step.cache);
    return a;
  }

  void attention(const DeviceBatch& batch, Act q, const AttentionShape& shape, const KvCacheShape& cache_shape,
                 const KvCacheLayer& cache, Act out) override {
    const size_t need = attention_workspace_bytes(shape, attn_config_);
    if (need > attn_ws_bytes_) {
      LATHE_CUDA_CHECK(cudaStreamSynchronize(stream_));
      arena_->release(attn_ws_);
      attn_ws_ = arena_->allocate(need, kc::MemoryPurpose::kWorkspace);
      attn_ws_bytes_ = need;
    }
    cuda::attention_forward(batch, q, shape, cache_shape, cache, out, attn_ws_, attn_ws_bytes_, attn_config_, stream_);
    gemv_after_attention_ = true;
  }

  // FP8 KV-scale calibration (backends/cuda/kv_amax.h).
  void kv_amax(Act k, Act v, float* amax) override {
    require_bf16(k, "kv_amax", "k");
    require_bf16(v, "kv_amax", "v");
    if (k.rows != v.rows || k.cols != v.cols)
      fail("cuda kv_amax: k [{}, {}] and v [{}, {}] differ", k.rows, k.cols, v.rows, v.cols);
    kc::launch_kv_amax(k.data, k.stride, v.data, v.stride, k.rows, k.cols, amax, stream_);
  }

  void kv_write(const DeviceBatch& batch, Act k, Act v, const KvCacheShape& cache_shape,
                const KvCacheLayer& cache) override {
    require_bf16(k, "kv_write", "k");
    require_bf16(v, "kv_write", "v");
    if (cache_shape.dtype != DType::kBF16 && cache_shape.dtype != DType::kF8E4M3)
      fail("cuda kv_write: KV cache dtype {} (expected BF16 or F8_E4M3)", dtype_name(cache_shape.dtype));
    const int64_t cols = int64_t{cache_shape.num_kv_heads} * cache_shape.head_dim;
    if (k.rows != batch.num_tokens || v.rows != batch.num_tokens || k.cols != cols || v.cols != cols)
      fail("cuda kv_write: k [{}, {}] / v [{}, {}] must be [{}, {}]", k.rows, k.cols, v.rows, v.cols, batch.num_tokens,
           cols);
    kc::KvWriteArgs a;
    a.tokens = batch.num_tokens;
    a.slot_mapping = batch.slot_mapping;
    a.k = k.data;
    a.k_stride = k.stride;
    a.v = v.data;
    a.v_stride = v.stride;
    a.num_kv_heads = cache_shape.num_kv_heads;
    a.head_dim = cache_shape.head_dim;
    set_cache_fields(a, cache_shape, cache);
    kc::launch_kv_write(a, stream_);
  }

  void silu_mul(Act gate_up, Act out) override {
    if (gate_up.cols != 2 * out.cols || gate_up.rows != out.rows)
      fail("cuda silu_mul: gate_up [{}, {}] must be [rows, 2 * {}] for out [{}, {}]", gate_up.rows, gate_up.cols, out.cols,
           out.rows, out.cols);
    kc::launch_silu_mul(gate_up.data, row_type(gate_up.dtype, "silu_mul", "gate_up"), gate_up.stride, out.rows, out.cols,
                        out.data, row_type(out.dtype, "silu_mul", "out"), out.stride, stream_);
  }

  void gather_logits_rows(const DeviceBatch& batch, Act x, Act out) override {
    if (out.rows < batch.num_logits_rows || out.cols != x.cols)
      fail("cuda gather_logits_rows: out [{}, {}] cannot hold {} rows of width {}", out.rows, out.cols,
           batch.num_logits_rows, x.cols);
    kc::launch_gather_rows(x.data, row_type(x.dtype, "gather_logits_rows", "x"), x.stride, batch.logits_rows,
                           batch.num_logits_rows, x.cols, out.data, row_type(out.dtype, "gather_logits_rows", "out"),
                           out.stride, stream_);
  }

  void sample(Act logits, const std::vector<SamplingParams>& params, int32_t* out_ids) override;

 private:
  static void check_same_shape(const char* op, const Act& a, const Act& b) {
    if (a.rows != b.rows || a.cols != b.cols)
      fail("cuda {}: shapes [{}, {}] and [{}, {}] differ", op, a.rows, a.cols, b.rows, b.cols);
  }

  void* scratch(Scratch slot, size_t bytes) {
    auto& [ptr, size] = scratch_[slot];
    if (bytes > size) {
      LATHE_CUDA_CHECK(cudaStreamSynchronize(stream_));
      arena_->release(ptr);
      size = std::max(bytes, size + size / 2);
      ptr = arena_->allocate(size, kc::MemoryPurpose::kWorkspace);
    }
    return ptr;
  }

  // scratch() whose bytes are zero whenever it is (re)allocated; returns it and its size.
  std::pair<void*, size_t> zeroed_scratch(Scratch slot, size_t bytes) {
    const bool grows = bytes > scratch_[slot].second;
    void* ptr = scratch(slot, bytes);
    if (grows) LATHE_CUDA_CHECK(cudaMemsetAsync(ptr, 0, scratch_[slot].second, stream_));
    return {ptr, scratch_[slot].second};
  }

  // The arm linear() takes for these arguments (what the kernels support here, then the ladder).
  LinearRoute plan_linear(Phase phase, const Act& x, const WeightView& w, const Act& out);
  // norm: the tier normalises its own input; y_add: out is the residual stream, added into
  // (linear_add_rms_norm_linear, tiers 1 and 4).
  // silu_inter > 0: w is gate|up and out the SwiGLU [rows, silu_inter] (GemvProblem::silu_inter).
  // rope (not null): w is q | k | v and its QK-norm / RoPE / KV write runs in the epilogue
  // (GemvProblem::rope; positions and slots from the route's row 0, offset per launch here).
  void run_gemv(const LinearRoute& route, Act x, const WeightView& w, Act out,
                const kc::GemvNormInput& norm = {}, bool y_add = false, int64_t silu_inter = 0,
                const kc::QkNormRopeArgs* rope = nullptr);
  // Runs gate|up's route with the SwiGLU in the GEMV epilogue (and norm, if set) when every launch
  // of the route supports it (LinearLevers::fused_silu); false (nothing launched) otherwise.
  bool try_gemv_silu(Phase phase, const Act& x, const WeightView& w, const Act& gate_up, const Act& out,
                     const kc::GemvNormInput& norm);
  // Runs q|k|v's route with the QK-norm / RoPE / KV write of `step` in the GEMV epilogue (and
  // norm, if set) when every launch of the route supports it (LinearLevers::fused_rope_rows); false
  // (nothing launched) otherwise.
  bool try_gemv_rope(Phase phase, const Act& x, const WeightView& w, const Act& qkv,
                     const QkNormRopeStep& step, const kc::GemvNormInput& norm);
  // The tier (1 or 4) one GEMV of a fused linear_add_rms_norm_linear runs, or 0 when it cannot.
  int fusable_tier(const LinearRoute& route, const Act& x, const WeightView& w, const Act& out,
                   const kc::GemvNormInput& norm, bool y_add);
  void run_gemm(Phase phase, LinearArm arm, Act x, const WeightView& w, Act out);
  // The GEMM of a phase: prefill rows and decode rows pin their algorithms apart (LinearLevers).
  kc::LtGemm& lt(Phase phase) { return phase == Phase::kPrefill ? *lt_prefill_ : *lt_decode_; }

  kc::DeviceInfo info_;
  int device_ = 0;
  cudaStream_t stream_ = nullptr;
  std::unique_ptr<kc::DeviceArena> arena_;
  void* lt_workspace_ = nullptr;
  std::unique_ptr<kc::LtGemm> lt_prefill_;
  std::unique_ptr<kc::LtGemm> lt_decode_;
  kc::GemvWorkspace gemv_ws_;
  LinearLevers levers_;
  AttentionConfig attn_config_;
  bool gemv_after_attention_ = false;  // the next GEMV follows decode attention (run_gemv)
  void* attn_ws_ = nullptr;
  size_t attn_ws_bytes_ = 0;
  kc::PinnedStaging
      staging_;  // every host-to-device copy of step inputs (upload_batch, upload_async, sample)
  int32_t* ids_pinned_ = nullptr;  // sampled ids on their way to the host
  size_t ids_pinned_count_ = 0;
  void* batch_dev_ = nullptr;
  size_t batch_dev_bytes_ = 0;
  std::array<std::pair<void*, size_t>, kScratchCount> scratch_{};
};

// The GEMV problem of x . W^T -> out (all rows from row 0).
kc::GemvProblem gemv_problem(const Act& x, const WeightView& w, const Act& out);

}  // namespace lathe::ops::cuda_detail
