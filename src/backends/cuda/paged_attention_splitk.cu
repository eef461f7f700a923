// Split-K paged decode: the public launcher, the variant selection and the split reduce. The
// split kernel itself is paged_attention_splitk.cuh (instantiated per KV dtype in
// paged_attention_splitk_bf16.cu and paged_attention_splitk_fp8.cu).
#include <cuda_bf16.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cstdlib>
#include <cstring>

#include "backends/cuda/chained_launch.cuh"
#include "backends/cuda/paged_attention.h"
#include "backends/cuda/paged_attention_splitk.cuh"

namespace lathe::cuda {
namespace attn::splitk {
namespace {

template <int HD>
__global__ void __launch_bounds__(HD) splitk_reduce(const float* workspace, __nv_bfloat16* out, int64_t out_stride,
                                                    int32_t num_heads, int32_t num_splits) {
  chained_kernel_begin();
  // Merges the records of one (sequence, head) in split order 0..num_splits-1:
  //   M = max_i m_i,  w_i = 2^(m_i - M),  out = (sum_i w_i o_i) / (sum_i w_i l_i)
  const int head = blockIdx.x, seq = blockIdx.y, d = threadIdx.x;
  const float* recs = workspace + (static_cast<int64_t>(seq) * num_heads + head) * num_splits * (HD + 2);
  float max_all = -INFINITY;
  for (int i = 0; i < num_splits; ++i) max_all = fmaxf(max_all, recs[i * (HD + 2) + HD]);
  float value = 0.0f;
  if (max_all != -INFINITY) {
    float sum = 0.0f, o = 0.0f;
    for (int i = 0; i < num_splits; ++i) {
      const float* rec = recs + i * (HD + 2);
      const float w = exp2f(rec[HD] - max_all);
      sum = __fmaf_rn(rec[HD + 1], w, sum);
      o = __fmaf_rn(rec[d], w, o);
    }
    value = __fdiv_rn(o, sum);
  }
  out[static_cast<int64_t>(seq) * out_stride + static_cast<int64_t>(head) * HD + d] = __float2bfloat16_rn(value);
}

template <int HD>
cudaError_t launch_reduce(const SplitParams& sp, int32_t num_seqs, cudaStream_t stream) {
  return launch_chained_status(splitk_reduce<HD>, dim3(sp.base.num_heads, num_seqs), dim3(HD), 0, stream,
                               sp.base.workspace, sp.base.out, sp.base.out_stride, sp.base.num_heads,
                               sp.base.num_splits);
}

// The default variant; LATHE_ATTN_SPLITK_KERNEL (0..9) overrides it at the first launch. Variant
// 5 (2 CTAs per SM, no clusters): on the H200 (2026-11-30, bench/attention/results/*-30b*) it is
// within a few points of the best variant at batch >= 4 and passed every GPU test; the cluster
// variants (7-9) are up to 2x faster at batch 1 with long contexts but up to 1.8x slower from
// batch 4 up (a cluster's CTAs are scheduled together and wait for each other), so they stay
// opt-in for latency-bound single-sequence serving.
constexpr int kDefaultVariant = 5;

// A decimal variant number in [0, kSplitkKernelVariants); anything else keeps the default.
int initial_variant() {
  const char* env = std::getenv("LATHE_ATTN_SPLITK_KERNEL");
  if (env == nullptr) return kDefaultVariant;
  const char* end = env + std::strlen(env);
  int value = -1;
  const auto [stop, error] = std::from_chars(env, end, value);
  const bool ok = error == std::errc() && stop == end && value >= 0 && value < kSplitkKernelVariants;
  return ok ? value : kDefaultVariant;
}

// The device's SM count, read once (a host attribute query: no stream work, capture-safe).
int device_sm_count() {
  static const int count = [] {
    int device = 0, n = 0;
    if (cudaGetDevice(&device) != cudaSuccess || cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, device) != cudaSuccess) {
      n = 0;
    }
    return n > 0 ? n : 132;
  }();
  return count;
}

// Variant 9: variant 5's geometry in clusters of C = the smallest of 1, 2, 4 with
// (kv heads x parts x splits) x C >= the SM count, i.e. clusters only where one sequence's
// (query rows, split) pairs cannot cover the SMs. A function of the shapes and the split count
// (never of the batch), so a sequence's bytes stay independent of its co-batch.
// Variant 11: variant 5's geometry, with the 4-stage pipeline (10) when the grid puts at most one
// CTA on each SM (then 5's second CTA slot would stay empty anyway). 5 and 10 give the same bytes,
// so choosing by the launch's width keeps every sequence's bytes independent of its co-batch.
int resolve_variant(int variant, const SplitParams& sp, int32_t num_seqs) {
  if (variant == 11) {
    const int64_t ctas = static_cast<int64_t>(sp.base.num_kv_heads) * sp.parts * sp.base.num_splits * num_seqs;
    return ctas <= device_sm_count() ? 10 : 5;
  }
  if (variant != 9) return variant;
  const int64_t units = static_cast<int64_t>(sp.base.num_kv_heads) * sp.parts * sp.base.num_splits;
  if (units >= device_sm_count()) return 5;
  return units * 2 >= device_sm_count() ? 7 : 8;
}

std::atomic<int>& variant_slot() {
  static std::atomic<int> slot{initial_variant()};
  return slot;
}

}  // namespace
}  // namespace attn::splitk

int splitk_kernel_variant() { return attn::splitk::variant_slot().load(std::memory_order_relaxed); }

SplitRule splitk_split_rule() {
  static const SplitRule rule = [] {
    const char* env = std::getenv("LATHE_ATTN_SPLIT_RULE");
    return env != nullptr && std::strcmp(env, "even") == 0 ? SplitRule::kEven : SplitRule::kSeed;
  }();
  return rule;
}

namespace {
// Default on: on the H200 (bundle 5d1f669, two rounds, same call) it took the Qwen3-8B-FP8 decode
// step at 1k context from 3.605 / 3.598 to 3.581 / 3.566 ms at batch 1 and 4.240 / 4.223 to
// 4.175 / 4.147 ms at batch 4, at 16k from 4.355 / 4.353 to 4.321 / 4.316 ms at batch 1; batch 16
// moved +0.4% (5.897 / 5.878 -> 5.918 / 5.900 ms). docs/PERFORMANCE.md.
std::atomic<bool> g_early_kv{true};
}  // namespace

void set_splitk_early_kv(bool enabled) { g_early_kv.store(enabled, std::memory_order_relaxed); }
bool splitk_early_kv() { return g_early_kv.load(std::memory_order_relaxed); }

bool set_splitk_kernel_variant(int variant) {
  if (variant < 0 || variant >= kSplitkKernelVariants) return false;
  attn::splitk::variant_slot().store(variant, std::memory_order_relaxed);
  return true;
}

cudaError_t launch_paged_decode_splitk(const AttentionRows& rows, const PagedKv& kv, int32_t num_splits,
                                       int32_t min_kv_per_split, int32_t rows_per_cta, float* workspace,
                                       cudaStream_t stream) {
  namespace sk = attn::splitk;
  if (rows.num_seqs <= 0) return cudaSuccess;
  if (kv.num_kv_heads <= 0 || rows.num_heads % kv.num_kv_heads != 0 || num_splits < 1 || min_kv_per_split < 1 ||
      workspace == nullptr || rows_per_cta < 1 || kv.block_size < 1) {
    return cudaErrorInvalidValue;
  }
  if (kv.head_dim != 64 && kv.head_dim != 128 && kv.head_dim != 256) return cudaErrorInvalidValue;
  sk::SplitParams sp{};
  sp.base = attn::make_decode_params(rows, kv);
  sp.base.num_splits = num_splits;
  sp.base.min_kv_per_split = min_kv_per_split;
  sp.base.split_rule = static_cast<int>(splitk_split_rule());
  sp.base.workspace = workspace;
  sp.group = rows.num_heads / kv.num_kv_heads;
  sp.rows_per_cta = std::min({rows_per_cta, sp.group, sk::kMaxRows});
  sp.parts = (sp.group + sp.rows_per_cta - 1) / sp.rows_per_cta;
  sp.early_kv = splitk_early_kv() ? 1 : 0;
  sp.block_shift = -1;
  if ((kv.block_size & (kv.block_size - 1)) == 0) {
    sp.block_shift = 0;
    while ((1 << sp.block_shift) < kv.block_size) ++sp.block_shift;
  }
  const int variant = sk::resolve_variant(splitk_kernel_variant(), sp, rows.num_seqs);
  const cudaError_t status = kv.dtype == KvDType::kBF16
                                 ? sk::launch_bf16(variant, kv.head_dim, sp, rows.num_seqs, stream)
                                 : sk::launch_fp8(variant, kv.head_dim, sp, rows.num_seqs, stream);
  if (status != cudaSuccess) return status;
  switch (kv.head_dim) {
    case 64:
      return sk::launch_reduce<64>(sp, rows.num_seqs, stream);
    case 128:
      return sk::launch_reduce<128>(sp, rows.num_seqs, stream);
    default:
      return sk::launch_reduce<256>(sp, rows.num_seqs, stream);
  }
}

}  // namespace lathe::cuda
