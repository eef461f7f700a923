#include "ops/cuda/attention_dispatch.h"

#include <fmt/format.h>

#include <cstdlib>

#include "backends/cuda/paged_attention.h"
#include "core/error.h"
#include "core/log.h"
#include "ops/splitk_policy.h"

namespace lathe::ops::cuda {
namespace {

namespace kernels = lathe::cuda;
static_assert(kernels::kMaxSplitSlices == kMaxSplitSlices, "the kernel's slice cap is the lever's");

void check_rows(const char* what, const Act& act, const AttentionShape& shape, int32_t rows) {
  const int64_t cols = static_cast<int64_t>(shape.num_heads) * shape.head_dim;
  if (act.dtype != DType::kBF16 || act.cols != cols || act.rows < rows || act.stride < act.cols) {
    fail("attention: {} must be BF16 [{} rows, {} cols] (got {} [{}, {}], stride {})", what, rows, cols,
         dtype_name(act.dtype), act.rows, act.cols, act.stride);
  }
}

void check_launch(cudaError_t status, AttentionArm arm) {
  if (status != cudaSuccess) {
    fail("attention: {} launch failed: {} ({})", attention_arm_name(arm), cudaGetErrorName(status),
         cudaGetErrorString(status));
  }
}

// A split-K length floor from the environment, for measurement: `env` holding a multiple of 16 in
// [16, 65536], else `fallback` (with a warning when `env` is set but not such a number). A
// constant for the whole process either way, so a sequence's splits and slices stay functions of
// its own length.
int32_t kv_floor_from_env(const char* env, int32_t fallback, const char* what) {
  const char* raw = std::getenv(env);
  if (raw == nullptr) return fallback;
  char* end = nullptr;
  const long parsed = std::strtol(raw, &end, 10);
  if (end == raw || *end != '\0' || parsed < 16 || parsed > 65536 || parsed % 16 != 0) {
    spdlog::warn("{}='{}' is not a multiple of 16 in [16, 65536]; keeping {}", env, raw, fallback);
    return fallback;
  }
  spdlog::info("attention: split-K minimum {} length {} (env)", what, parsed);
  return static_cast<int32_t>(parsed);
}

// The kernel's floors on a split's and on a slice's length (kMinKvPerSplit, kMinKvPerSlice), read
// once per process.
int32_t min_kv_per_split() {
  static const int32_t value = kv_floor_from_env("LATHE_ATTN_MIN_KV_PER_SPLIT", kMinKvPerSplit, "split");
  return value;
}
int32_t min_kv_per_slice() {
  static const int32_t value = kv_floor_from_env("LATHE_ATTN_MIN_KV_PER_SLICE", kMinKvPerSlice, "slice");
  return value;
}

// DeviceBatch::num_decode_rows (the leading decode sequences of a mixed step), or 0 where the op
// API does not carry it. Written as a constraint so this file builds against either version of
// ops/batch.h.
template <typename Batch>
int32_t decode_rows_of(const Batch& batch) {
  if constexpr (requires { batch.num_decode_rows; }) {
    return batch.num_decode_rows;
  } else {
    return 0;
  }
}

void run_step(const DeviceBatch& batch, Act q, const AttentionShape& shape, const KvCacheShape& cache_shape,
              const KvCacheLayer& cache, Act out, void* workspace, size_t workspace_bytes, const AttentionConfig& config,
              cudaStream_t stream);

}  // namespace

void attention_forward(const DeviceBatch& batch, Act q, const AttentionShape& shape, const KvCacheShape& cache_shape,
                       const KvCacheLayer& cache, Act out, void* workspace, size_t workspace_bytes,
                       const AttentionConfig& config, cudaStream_t stream) {
  const int32_t decode_rows = decode_rows_of(batch);
  if (batch.phase != Phase::kPrefill || decode_rows <= 0) {
    run_step(batch, q, shape, cache_shape, cache, out, workspace, workspace_bytes, config, stream);
    return;
  }
  // A mixed step: its leading decode sequences (one row each, rows 0..decode_rows-1) take the
  // decode arm they would take in a pure decode step, so their bytes do not depend on whether a
  // prefill chunk shares the step; the remaining sequences take the prefill kernel.
  if (decode_rows > batch.num_seqs || decode_rows > batch.num_tokens) {
    fail("attention: num_decode_rows {} exceeds the step ({} sequences, {} rows)", decode_rows, batch.num_seqs,
         batch.num_tokens);
  }
  DeviceBatch decode = batch;
  decode.phase = Phase::kDecode;
  decode.num_seqs = decode_rows;
  decode.num_tokens = decode_rows;
  decode.max_query_len = 1;
  run_step(decode, q.slice_rows(0, decode_rows), shape, cache_shape, cache, out.slice_rows(0, decode_rows), workspace,
           workspace_bytes, config, stream);
  if (decode_rows == batch.num_seqs) return;
  DeviceBatch prefill = batch;
  prefill.num_seqs = batch.num_seqs - decode_rows;
  prefill.query_start = batch.query_start + decode_rows;  // absolute row indices: q/out stay whole
  prefill.context_lens = batch.context_lens + decode_rows;
  prefill.block_tables = batch.block_tables + static_cast<int64_t>(decode_rows) * batch.max_blocks_per_seq;
  run_step(prefill, q, shape, cache_shape, cache, out, workspace, workspace_bytes, config, stream);
}

namespace {

void run_step(const DeviceBatch& batch, Act q, const AttentionShape& shape, const KvCacheShape& cache_shape,
              const KvCacheLayer& cache, Act out, void* workspace, size_t workspace_bytes, const AttentionConfig& config,
              cudaStream_t stream) {
  const AttentionPlan plan = plan_attention(batch.phase, batch.num_seqs, shape, cache_shape, config);
  check_rows("q", q, shape, batch.num_tokens);
  check_rows("out", out, shape, batch.num_tokens);
  if (plan.arm != AttentionArm::kPrefill && batch.num_tokens != batch.num_seqs) {
    fail("attention: a decode step has one row per sequence (got {} rows for {} sequences)", batch.num_tokens,
         batch.num_seqs);
  }
  if (plan.workspace_bytes > workspace_bytes || (plan.workspace_bytes > 0 && workspace == nullptr)) {
    fail("attention: the {} arm needs {} bytes of split-K workspace for {} sequences x {} heads x {} splits, {} given "
         "(size it with attention_workspace_bytes for max_decode_seqs >= the widest decode batch)",
         attention_arm_name(plan.arm), plan.workspace_bytes, batch.num_seqs, shape.num_heads, plan.num_splits,
         workspace_bytes);
  }
  const bool split = plan.arm == AttentionArm::kDecodeSplitK;
  const kernels::SplitRule rule = kernels::splitk_split_rule();
  const bool other_rule = split && rule != kernels::SplitRule::kSeed;
  const std::string route =
      fmt::format("attention route: {} splits={} slices={} group={} (heads {}/{}, head_dim {}, kv {}, policy {}){}{}",
                  attention_arm_name(plan.arm), plan.num_splits, plan.split_slices, plan.gqa_group, shape.num_heads, shape.num_kv_heads,
                  shape.head_dim, dtype_name(cache_shape.dtype),
                  target::splitk_policy_label(config.levers.attn_decode_splitk.value),
                  split ? fmt::format(" kernel variant {}", kernels::splitk_kernel_variant()) : std::string(),
                  other_rule ? fmt::format(" split rule {} (env)", kernels::split_rule_name(rule)) : std::string());
  if (log_once(route)) spdlog::info("{}", route);

  kernels::PagedKv kv;
  kv.k = cache.k;
  kv.v = cache.v;
  kv.dtype = cache_shape.dtype == DType::kBF16 ? kernels::KvDType::kBF16 : kernels::KvDType::kFP8E4M3;
  kv.k_scale = cache.k_scale;
  kv.v_scale = cache.v_scale;
  kv.num_kv_heads = cache_shape.num_kv_heads;
  kv.block_size = cache_shape.block_size;
  kv.head_dim = cache_shape.head_dim;
  kv.block_tables = batch.block_tables;
  kv.max_blocks_per_seq = batch.max_blocks_per_seq;
  kv.context_lens = batch.context_lens;
  kv.num_blocks = cache_shape.num_blocks;

  kernels::AttentionRows rows;
  rows.q = q.data;
  rows.q_stride = q.stride;
  rows.out = out.data;
  rows.out_stride = out.stride;
  rows.num_heads = shape.num_heads;
  rows.num_seqs = batch.num_seqs;
  rows.scale = shape.scale;

  switch (plan.arm) {
    case AttentionArm::kPrefill:
      check_launch(kernels::launch_paged_prefill(rows, kv, batch.query_start, batch.max_query_len, stream), plan.arm);
      return;
    case AttentionArm::kDecode:
      check_launch(kernels::launch_paged_decode(rows, kv, stream), plan.arm);
      return;
    case AttentionArm::kDecodeGqaPacked:
      check_launch(kernels::launch_paged_decode_gqa_packed(rows, kv, stream), plan.arm);
      return;
    case AttentionArm::kDecodeSplitK:
      check_launch(kernels::launch_paged_decode_splitk(
                       rows, kv,
                       kernels::SplitGeometry{plan.num_splits, min_kv_per_split(), plan.split_slices, min_kv_per_slice()},
                       plan.gqa_group, static_cast<float*>(workspace), stream),
                   plan.arm);
      return;
  }
}

}  // namespace
}  // namespace lathe::ops::cuda
