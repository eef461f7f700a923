#include <cub/device/device_segmented_radix_sort.cuh>

#include <algorithm>

#include "backends/cuda/check.h"
#include "backends/cuda/sampling.h"

namespace lathe::cuda {
namespace {

constexpr int kThreads = 1024;

struct Best {
  float v;
  int32_t i;
};

// The argmax order (the CPU reference's rule): any number beats NaN, a larger value wins, and the
// lower index breaks ties (between equal values or two NaNs). A total order, so any grouping of
// the comparisons finds the same winner.
__device__ __forceinline__ Best better(Best a, Best b) {
  if (isnan(b.v)) return isnan(a.v) && b.i < a.i ? b : a;
  if (isnan(a.v) || b.v > a.v || (b.v == a.v && b.i < a.i)) return b;
  return a;
}

__device__ __forceinline__ Best candidate(float v, int64_t i) {
  return Best{v, static_cast<int32_t>(i)};
}

// Greedy rows: each CTA of grid (argmax_chunks(vocab), rows) finds the best of kArgmaxChunk
// logits of its row (float4 loads, all in flight at once), leaves it in `partials`, and the
// row's last CTA to arrive (an arrival counter, zero between launches: it resets it) takes the best of the
// row's partials. `better` is a total order on (value, index), so the winner does not depend on the order in
// which chunks or threads are combined: the same token as one CTA scanning the whole row.
constexpr int kArgmaxThreads = 256;
constexpr int kArgmaxVectors = 4;  // float4 loads per thread
constexpr int64_t kArgmaxChunk = int64_t{kArgmaxThreads} * kArgmaxVectors * 4;

int argmax_chunks(int64_t vocab) {
  return static_cast<int>((vocab + kArgmaxChunk - 1) / kArgmaxChunk);
}

__device__ __forceinline__ Best warp_best(Best b) {
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) {
    const Best other{__shfl_xor_sync(0xffffffffu, b.v, off), __shfl_xor_sync(0xffffffffu, b.i, off)};
    b = better(b, other);
  }
  return b;
}

__global__ void __launch_bounds__(kArgmaxThreads)
    argmax_kernel(const float* logits, int64_t stride, int64_t vocab, const SampleRow* params, Best* partials,
                  unsigned* arrivals_end, int32_t* out) {
  __shared__ Best warps[kArgmaxThreads / 32];
  __shared__ bool last;
  const int64_t r = blockIdx.y;
  const int chunks = static_cast<int>(gridDim.x);
  const float* row = logits + r * stride;
  const int64_t begin = static_cast<int64_t>(blockIdx.x) * kArgmaxChunk;
  const int64_t end = min(begin + kArgmaxChunk, vocab);
  Best best{NAN, INT32_MAX};  // loses to every element
  if (end - begin == kArgmaxChunk && (reinterpret_cast<uintptr_t>(row) & 15) == 0) {
    float4 v[kArgmaxVectors];
#pragma unroll
    for (int u = 0; u < kArgmaxVectors; ++u)
      v[u] = __ldcg(reinterpret_cast<const float4*>(row + begin) + u * kArgmaxThreads + threadIdx.x);
#pragma unroll
    for (int u = 0; u < kArgmaxVectors; ++u) {
      const int64_t i = begin + (static_cast<int64_t>(u) * kArgmaxThreads + threadIdx.x) * 4;
      best = better(best, candidate(v[u].x, i));
      best = better(best, candidate(v[u].y, i + 1));
      best = better(best, candidate(v[u].z, i + 2));
      best = better(best, candidate(v[u].w, i + 3));
    }
  } else {  // the row's ragged last chunk, or rows not 16-byte aligned
    for (int64_t i = begin + threadIdx.x; i < end; i += kArgmaxThreads)
      best = better(best, candidate(row[i], i));
  }
  best = warp_best(best);
  const int lane = threadIdx.x & 31;
  if (lane == 0) warps[threadIdx.x >> 5] = best;
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int w = 1; w < kArgmaxThreads / 32; ++w) best = better(best, warps[w]);
    last = chunks == 1;
    if (!last) {
      partials[r * chunks + blockIdx.x] = best;
      __threadfence();  // the partial is visible before the arrival
      last = atomicAdd(arrivals_end - 1 - r, 1u) == static_cast<unsigned>(chunks - 1);
    }
    warps[0] = best;
  }
  __syncthreads();
  if (!last || threadIdx.x >= 32) return;
  if (chunks > 1) {
    __threadfence();
    best = Best{NAN, INT32_MAX};
    for (int c = lane; c < chunks; c += 32) {
      const int2 w = __ldcg(reinterpret_cast<const int2*>(partials + r * chunks + c));
      best = better(best, Best{__int_as_float(w.x), w.y});
    }
    best = warp_best(best);
  } else {
    best = warps[0];
  }
  if (lane == 0) {
    if (chunks > 1) arrivals_end[-1 - r] = 0;  // ready for the next launch
    if (params[r].temperature == 0.0f) out[r] = best.i == INT32_MAX ? 0 : best.i;
  }
}

// Deterministic block reduction (fixed shuffle tree, then warps in order).
template <bool kMax>
__device__ float block_reduce(float v, float* scratch) {
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) {
    const float o = __shfl_xor_sync(0xffffffffu, v, off);
    v = kMax ? fmaxf(v, o) : v + o;
  }
  __syncthreads();
  if ((threadIdx.x & 31) == 0) scratch[threadIdx.x >> 5] = v;
  __syncthreads();
  float total = scratch[0];
  for (int w = 1; w < kThreads / 32; ++w) total = kMax ? fmaxf(total, scratch[w]) : total + scratch[w];
  return total;
}

__global__ void softmax_keys_kernel(const float* logits, int64_t stride, int64_t vocab, const SampleRow* params,
                                    float* probs, uint32_t* keys, int32_t* values, int* offsets) {
  __shared__ float scratch[kThreads / 32];
  const int64_t r = blockIdx.x;  // row within the chunk
  const float* row = logits + r * stride;
  const float t = params[r].temperature > 0.0f ? params[r].temperature : 1.0f;
  float mx = -INFINITY;
  for (int64_t i = threadIdx.x; i < vocab; i += blockDim.x) mx = fmaxf(mx, row[i] / t);
  mx = block_reduce<true>(mx, scratch);
  float sum = 0.0f;
  for (int64_t i = threadIdx.x; i < vocab; i += blockDim.x) sum += expf(row[i] / t - mx);
  sum = block_reduce<false>(sum, scratch);
  float* p = probs + r * vocab;
  for (int64_t i = threadIdx.x; i < vocab; i += blockDim.x) {
    const float v = expf(row[i] / t - mx) / sum;
    p[i] = v;
    keys[r * vocab + i] = 0xffffffffu - __float_as_uint(v);
    values[r * vocab + i] = static_cast<int32_t>(i);
  }
  if (threadIdx.x == 0) {
    offsets[r] = static_cast<int>(r * vocab);
    if (r == gridDim.x - 1) offsets[r + 1] = static_cast<int>((r + 1) * vocab);
  }
}

// The rule after sorting, one thread per row, f32 arithmetic in the rule's order.
__global__ void select_kernel(const float* probs, const int32_t* order_all, int64_t rows, int64_t vocab,
                              const SampleRow* params, int32_t* out) {
  const int64_t r = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  const SampleRow sp = params[r];
  if (sp.temperature == 0.0f) return;
  const float* p = probs + r * vocab;
  const int32_t* order = order_all + r * vocab;
  int64_t kept = vocab;
  if (sp.top_k > 0 && sp.top_k < vocab) kept = sp.top_k;
  if (sp.top_p < 1.0f) {
    float mass = 0.0f;
    for (int64_t j = 0; j < kept; ++j) {
      mass = __fadd_rn(mass, p[order[j]]);
      if (mass >= sp.top_p) {
        kept = j + 1;
        break;
      }
    }
  }
  if (sp.min_p > 0.0f) {
    const float threshold = __fmul_rn(sp.min_p, p[order[0]]);
    int64_t j = 1;
    while (j < kept && !(p[order[j]] < threshold)) ++j;
    kept = j;
  }
  float total = 0.0f;
  for (int64_t j = 0; j < kept; ++j) total = __fadd_rn(total, p[order[j]]);
  const float target = __fmul_rn(sp.u, total);
  float cumulative = 0.0f;
  int32_t pick = order[kept - 1];
  for (int64_t j = 0; j < kept; ++j) {
    cumulative = __fadd_rn(cumulative, p[order[j]]);
    if (cumulative > target) {
      pick = order[j];
      break;
    }
  }
  out[r] = pick;
}

struct Layout {
  size_t probs, keys_in, keys_out, vals_in, vals_out, offsets, temp, total;
};

size_t align256(size_t v) { return (v + 255) / 256 * 256; }

Layout layout(int64_t vocab) {
  const size_t items = static_cast<size_t>(kSampleChunkRows * vocab);
  size_t temp = 0;
  cub::DeviceSegmentedRadixSort::SortPairs(nullptr, temp, static_cast<const uint32_t*>(nullptr),
                                           static_cast<uint32_t*>(nullptr), static_cast<const int32_t*>(nullptr),
                                           static_cast<int32_t*>(nullptr), static_cast<int64_t>(items),
                                           static_cast<int64_t>(kSampleChunkRows), static_cast<const int*>(nullptr),
                                           static_cast<const int*>(nullptr));
  Layout l{};
  size_t at = 0;
  l.probs = at;
  at += align256(items * 4);
  l.keys_in = at;
  at += align256(items * 4);
  l.keys_out = at;
  at += align256(items * 4);
  l.vals_in = at;
  at += align256(items * 4);
  l.vals_out = at;
  at += align256(items * 4);
  l.offsets = at;
  at += align256((kSampleChunkRows + 1) * 4);
  l.temp = at;
  at += align256(temp);
  l.total = at;
  return l;
}

}  // namespace

size_t sampler_workspace_bytes(int64_t vocab) { return layout(vocab).total; }

// The partials from the scratch's start, the arrival counters (row r at the (r+1)-th word from
// the end) from its end, so a call with fewer rows than an earlier one never writes partials
// over a counter a later, wider call may use: 8 r c + 4 r' <= 8 r' c + 4 r' <= size whenever
// r < r', and 8 r c <= size - 4 r <= size - 4 r' whenever r > r'.
size_t argmax_scratch_size(int64_t rows, int64_t vocab) {
  return static_cast<size_t>(rows) *
         (static_cast<size_t>(argmax_chunks(vocab)) * sizeof(Best) + sizeof(unsigned));
}

void launch_sample(const float* logits, int64_t stride, int64_t rows, int64_t vocab, const SampleRow* params,
                   bool any_random, int32_t* out_ids, void* argmax_scratch, size_t argmax_scratch_bytes,
                   void* workspace, size_t workspace_bytes, cudaStream_t stream) {
  if (rows <= 0) return;
  if (vocab <= 0 || vocab > (int64_t{1} << 31) / kSampleChunkRows) throw_error("sample: vocabulary size out of range");
  if (rows > 65535) throw_error("sample: more than 65535 rows in one call");
  if (argmax_scratch_bytes < argmax_scratch_size(rows, vocab))
    throw_error("sample: argmax scratch too small");
  const int chunks = argmax_chunks(vocab);
  if (reinterpret_cast<uintptr_t>(argmax_scratch) % 8 != 0) throw_error("sample: argmax scratch misaligned");
  auto* partials = static_cast<Best*>(argmax_scratch);
  auto* arrivals_end =
      reinterpret_cast<unsigned*>(static_cast<char*>(argmax_scratch) + argmax_scratch_bytes / 4 * 4);
  argmax_kernel<<<dim3(static_cast<unsigned>(chunks), static_cast<unsigned>(rows)), kArgmaxThreads, 0,
                  stream>>>(logits, stride, vocab, params, partials, arrivals_end, out_ids);
  LATHE_CUDA_CHECK_LAUNCH();
  if (!any_random) return;
  const Layout l = layout(vocab);
  if (workspace_bytes < l.total) throw_error("sample: workspace too small");
  char* base = static_cast<char*>(workspace);
  auto* probs = reinterpret_cast<float*>(base + l.probs);
  auto* keys_in = reinterpret_cast<uint32_t*>(base + l.keys_in);
  auto* keys_out = reinterpret_cast<uint32_t*>(base + l.keys_out);
  auto* vals_in = reinterpret_cast<int32_t*>(base + l.vals_in);
  auto* vals_out = reinterpret_cast<int32_t*>(base + l.vals_out);
  auto* offsets = reinterpret_cast<int*>(base + l.offsets);
  for (int64_t first = 0; first < rows; first += kSampleChunkRows) {
    const int64_t count = std::min<int64_t>(kSampleChunkRows, rows - first);
    softmax_keys_kernel<<<static_cast<unsigned>(count), kThreads, 0, stream>>>(logits + first * stride, stride, vocab,
                                                                              params + first, probs, keys_in, vals_in,
                                                                              offsets);
    LATHE_CUDA_CHECK_LAUNCH();
    size_t temp_bytes = l.total - l.temp;
    LATHE_CUDA_CHECK(cub::DeviceSegmentedRadixSort::SortPairs(base + l.temp, temp_bytes, keys_in, keys_out, vals_in,
                                                             vals_out, count * vocab, count, offsets, offsets + 1, 0, 32,
                                                             stream));
    select_kernel<<<1, 32, 0, stream>>>(probs, vals_out, count, vocab, params + first, out_ids + first);
    LATHE_CUDA_CHECK_LAUNCH();
  }
}

}  // namespace lathe::cuda
