#pragma once
// The non-split paged decode kernel body (CUDA cores), shared by two arms so that their
// arithmetic is the same code:
//   non-split  <Kv, HD, 1>: one CTA per (q head, sequence), whole context, BF16 out;
//   GQA-packed <Kv, HD, G>: one CTA per (kv head, sequence) carrying the G query heads of the
//              group; each query does exactly the operations of the non-split kernel in the same
//              order, so the output bytes are identical while K/V are read once per group.
// (The split-K arm is a tensor-core kernel: paged_attention_splitk.cu.)
//
// Work layout (256 threads): a KV row of HD elements is read by HD/8 consecutive threads, 8
// elements each (16 bytes of BF16, 8 of FP8); the CTA covers kRows = 256 / (HD/8) rows per step
// and 8 steps per chunk, so a chunk is 8 * kRows positions (64 at HD 256, 128 at HD 128, 256 at
// HD 64). K and V of a whole chunk are requested before either is used. Per chunk and query:
//   s_j  = group_sum(q' . k_j)             q' = q * scale * log2(e) (* k_scale for FP8)
//   m'   = max(m, max_j s_j)               every warp computes it, same order, same value
//   l'   = l * 2^(m - m') + sum_j 2^(s_j - m')   (lane-strided partials, then a butterfly)
//   acc' = acc * 2^(m - m') + sum_j 2^(s_j - m') v_j   (per thread over its own rows)
// and at the end the per-row-slot accumulators are summed in slot order 0..kRows-1. Chunks start
// at position 0, so the reduction tree depends only on the sequence's own length and the chunk
// size.
#include "backends/cuda/chained_launch.cuh"
#include "backends/cuda/paged_attention_common.cuh"

namespace lathe::cuda::attn {

struct DecodeParams {
  const __nv_bfloat16* q;  // [num_seqs rows, num_heads * HD]
  int64_t q_stride;
  __nv_bfloat16* out;
  int64_t out_stride;
  const void* k;
  const void* v;
  float k_scale;
  float v_scale;
  float scale;
  int32_t num_heads;
  int32_t num_kv_heads;
  int32_t block_size;
  const int32_t* block_tables;
  int32_t max_blocks_per_seq;
  const int32_t* context_lens;
  int32_t num_splits;       // split-K (paged_attention_splitk.cu) only
  int32_t min_kv_per_split; // split-K only
  int32_t split_rule;       // split-K only: SplitRule (split_length.h)
  float* workspace;         // split-K only
};

inline constexpr int kDecodeThreads = 256;
inline constexpr int kDecodeSteps = 8;

template <int HD>
struct DecodeGeometry {
  static constexpr int kTpr = HD / kFragElems;           // threads per KV row
  static constexpr int kRows = kDecodeThreads / kTpr;    // rows per step
  static constexpr int kChunk = kDecodeSteps * kRows;    // positions per chunk
  static_assert(kTpr >= 1 && kTpr <= 32 && kDecodeThreads % kTpr == 0, "head dim not served");
  static_assert(kChunk <= kDecodeThreads, "one block id per thread must cover a chunk");
};

template <typename Kv, int HD, int G>
__global__ void __launch_bounds__(kDecodeThreads) paged_decode_kernel(const DecodeParams p) {
  chained_kernel_begin();
  using Geo = DecodeGeometry<HD>;
  using Frag = typename Kv::Frag;
  constexpr int kTpr = Geo::kTpr, kRows = Geo::kRows, kChunk = Geo::kChunk;
  // V of a chunk is requested with K where registers allow; wide groups request it after the
  // scores instead. Only the issue time of the loads differs: the arithmetic is the same.
  constexpr bool kEarlyV = G <= 4;

  __shared__ float logits[G][kChunk];
  __shared__ float partial[kRows][HD];
  __shared__ int32_t chunk_blocks[2][kChunk];

  const int seq = blockIdx.y;
  const int head0 = blockIdx.x * G;
  const int kv_head = head0 / (p.num_heads / p.num_kv_heads);
  const int tid = threadIdx.x;
  const int row = tid / kTpr;
  const int lane_in_row = tid % kTpr;
  const int warp_lane = tid % 32;

  const int start = 0, end = p.context_lens[seq];

  const float q_mul = p.scale * kLog2e * (Kv::kDType == KvDType::kFP8E4M3 ? p.k_scale : 1.0f);
  float q[G][kFragElems];
#pragma unroll
  for (int g = 0; g < G; ++g) {
    load_query(p.q + static_cast<int64_t>(seq) * p.q_stride + static_cast<int64_t>(head0 + g) * HD + lane_in_row * kFragElems,
               q_mul, q[g]);
  }
  float acc[G][kFragElems];
  float m[G], l[G];
#pragma unroll
  for (int g = 0; g < G; ++g) {
    m[g] = -INFINITY;
    l[g] = 0.0f;
#pragma unroll
    for (int e = 0; e < kFragElems; ++e) acc[g][e] = 0.0f;
  }

  const int32_t* table = p.block_tables + static_cast<int64_t>(seq) * p.max_blocks_per_seq;
  const int bs = p.block_size;
  // Block ids of a chunk, staged in shared memory one chunk ahead: thread t loads the t-th block
  // the chunk touches, so no thread waits on a table read right before its KV loads.
  auto stage_blocks = [&](int chunk_start, int buffer) {
    if (chunk_start >= end) return;
    const int first_block = chunk_start / bs;
    const int last_block = (min(chunk_start + kChunk, end) - 1) / bs;
    if (tid <= last_block - first_block) chunk_blocks[buffer][tid] = __ldg(table + first_block + tid);
  };
  stage_blocks(start, 0);
  __syncthreads();

  int buffer = 0;
  for (int chunk_start = start; chunk_start < end; chunk_start += kChunk, buffer ^= 1) {
    const int first_block = chunk_start / bs;
    Frag kf[kDecodeSteps], vf[kDecodeSteps];
#pragma unroll
    for (int i = 0; i < kDecodeSteps; ++i) {
      const int pos = chunk_start + i * kRows + row;
      if (pos < end) {
        const int32_t block = chunk_blocks[buffer][pos / bs - first_block];
        const int64_t off = kv_offset(block, kv_head, pos % bs, p.num_kv_heads, bs, HD) + lane_in_row * kFragElems;
        kf[i] = load_frag<Frag>(p.k, off, Kv::kBytes);
        if constexpr (kEarlyV) vf[i] = load_frag<Frag>(p.v, off, Kv::kBytes);
      } else {
        zero(kf[i]);
        zero(vf[i]);
      }
    }
    stage_blocks(chunk_start + kChunk, buffer ^ 1);

    // Scores of the chunk.
#pragma unroll
    for (int i = 0; i < kDecodeSteps; ++i) {
      float kk[kFragElems];
      widen(kf[i], kk);
      const bool valid = chunk_start + i * kRows + row < end;
#pragma unroll
      for (int g = 0; g < G; ++g) {
        float dot = __fmul_rn(q[g][0], kk[0]);
#pragma unroll
        for (int e = 1; e < kFragElems; ++e) dot = __fmaf_rn(q[g][e], kk[e], dot);
        dot = group_sum<kTpr>(dot);
        if (lane_in_row == 0) logits[g][i * kRows + row] = valid ? dot : -INFINITY;
      }
    }
    __syncthreads();

    // Running max and sum, computed identically by every warp.
#pragma unroll
    for (int g = 0; g < G; ++g) {
      float chunk_max = -INFINITY;
#pragma unroll
      for (int j = warp_lane; j < kChunk; j += 32) chunk_max = fmaxf(chunk_max, logits[g][j]);
      const float m_new = fmaxf(m[g], warp_max(chunk_max));
      const float alpha = exp2f(m[g] - m_new);
      float sum = 0.0f;
#pragma unroll
      for (int j = warp_lane; j < kChunk; j += 32) sum = __fadd_rn(sum, exp2f(logits[g][j] - m_new));
      sum = group_sum<32>(sum);
      l[g] = __fmaf_rn(l[g], alpha, sum);
      m[g] = m_new;
#pragma unroll
      for (int e = 0; e < kFragElems; ++e) acc[g][e] = __fmul_rn(acc[g][e], alpha);
    }

    if constexpr (!kEarlyV) {
#pragma unroll
      for (int i = 0; i < kDecodeSteps; ++i) {
        const int pos = chunk_start + i * kRows + row;
        if (pos < end) {
          const int32_t block = chunk_blocks[buffer][pos / bs - first_block];
          vf[i] = load_frag<Frag>(p.v, kv_offset(block, kv_head, pos % bs, p.num_kv_heads, bs, HD) + lane_in_row * kFragElems,
                                  Kv::kBytes);
        }
      }
    }

    // Weighted values.
#pragma unroll
    for (int i = 0; i < kDecodeSteps; ++i) {
      float vv[kFragElems];
      widen(vf[i], vv);
#pragma unroll
      for (int g = 0; g < G; ++g) {
        const float weight = exp2f(logits[g][i * kRows + row] - m[g]);
#pragma unroll
        for (int e = 0; e < kFragElems; ++e) acc[g][e] = __fmaf_rn(weight, vv[e], acc[g][e]);
      }
    }
    __syncthreads();  // logits and this chunk's block buffer are rewritten next
  }

  // Sum the row slots' accumulators in slot order, one query at a time.
  const float v_mul = Kv::kDType == KvDType::kFP8E4M3 ? p.v_scale : 1.0f;
#pragma unroll
  for (int g = 0; g < G; ++g) {
#pragma unroll
    for (int e = 0; e < kFragElems; ++e) partial[row][lane_in_row * kFragElems + e] = acc[g][e];
    __syncthreads();
    for (int d = tid; d < HD; d += kDecodeThreads) {
      float o = partial[0][d];
#pragma unroll
      for (int r = 1; r < kRows; ++r) o = __fadd_rn(o, partial[r][d]);
      o = __fmul_rn(o, v_mul);
      const float value = l[g] > 0.0f ? __fdiv_rn(o, l[g]) : 0.0f;
      p.out[static_cast<int64_t>(seq) * p.out_stride + static_cast<int64_t>(head0 + g) * HD + d] = __float2bfloat16_rn(value);
    }
    __syncthreads();
  }
}

// Launches the non-split kernel (G = 1) or the packed one (G = group) over (heads / G, seqs).
template <typename Kv, int HD, int G>
cudaError_t launch_decode_nonsplit(const DecodeParams& p, int32_t num_seqs, cudaStream_t stream) {
  if (num_seqs <= 0) return cudaSuccess;
  const dim3 grid(p.num_heads / G, num_seqs);
  return launch_chained_status(paged_decode_kernel<Kv, HD, G>, grid, dim3(kDecodeThreads), 0, stream, p);
}

// Shared by both launchers: the DecodeParams of a rows/kv pair.
DecodeParams make_decode_params(const AttentionRows& rows, const PagedKv& kv);

}  // namespace lathe::cuda::attn
