// Non-split and split-K paged decode (paged_attention_decode.cuh holds the kernel body) and the
// split-K reduce.
#include "backends/cuda/paged_attention.h"
#include "backends/cuda/paged_attention_decode.cuh"

namespace lathe::cuda {
namespace attn {

DecodeParams make_decode_params(const AttentionRows& rows, const PagedKv& kv) {
  DecodeParams p{};
  p.q = static_cast<const __nv_bfloat16*>(rows.q);
  p.q_stride = rows.q_stride;
  p.out = static_cast<__nv_bfloat16*>(rows.out);
  p.out_stride = rows.out_stride;
  p.k = kv.k;
  p.v = kv.v;
  p.k_scale = kv.k_scale;
  p.v_scale = kv.v_scale;
  p.scale = rows.scale;
  p.num_heads = rows.num_heads;
  p.num_kv_heads = kv.num_kv_heads;
  p.block_size = kv.block_size;
  p.block_tables = kv.block_tables;
  p.max_blocks_per_seq = kv.max_blocks_per_seq;
  p.context_lens = kv.context_lens;
  return p;
}

namespace {

// Merges the records of one (sequence, head) in split order 0..num_splits-1:
//   M = max_i m_i,  w_i = 2^(m_i - M),  out = (sum_i w_i o_i) / (sum_i w_i l_i)
// One thread per output element; every thread forms M and the sum the same way.
template <int HD>
__global__ void __launch_bounds__(HD) splitk_reduce_kernel(const float* workspace, __nv_bfloat16* out,
                                                           int64_t out_stride, int32_t num_heads, int32_t num_splits) {
  const int head = blockIdx.x;
  const int seq = blockIdx.y;
  const int d = threadIdx.x;
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

template <typename Kv, int HD>
cudaError_t launch_splitk(const DecodeParams& p, int32_t num_seqs, cudaStream_t stream) {
  const dim3 grid(p.num_heads, p.num_splits, num_seqs);
  paged_decode_kernel<Kv, HD, 1, true><<<grid, kDecodeThreads, 0, stream>>>(p);
  if (cudaError_t err = cudaGetLastError(); err != cudaSuccess) return err;
  splitk_reduce_kernel<HD><<<dim3(p.num_heads, num_seqs), HD, 0, stream>>>(p.workspace, p.out, p.out_stride,
                                                                           p.num_heads, p.num_splits);
  return cudaGetLastError();
}

// Calls fn.template operator()<Kv, HD>() for the runtime (dtype, head_dim); cudaErrorInvalidValue
// for a head dim that is not compiled.
template <typename Fn>
cudaError_t with_kv_and_dim(KvDType dtype, int32_t head_dim, Fn&& fn) {
  auto by_dim = [&](auto kv) -> cudaError_t {
    using Kv = decltype(kv);
    switch (head_dim) {
      case 64:
        return fn.template operator()<Kv, 64>();
      case 128:
        return fn.template operator()<Kv, 128>();
      case 256:
        return fn.template operator()<Kv, 256>();
      default:
        return cudaErrorInvalidValue;
    }
  };
  return dtype == KvDType::kBF16 ? by_dim(Bf16Kv{}) : by_dim(Fp8Kv{});
}

}  // namespace
}  // namespace attn

bool attention_head_dim_compiled(int32_t head_dim) { return head_dim == 64 || head_dim == 128 || head_dim == 256; }

cudaError_t launch_paged_decode(const AttentionRows& rows, const PagedKv& kv, cudaStream_t stream) {
  if (rows.num_seqs <= 0) return cudaSuccess;
  if (kv.num_kv_heads <= 0 || rows.num_heads % kv.num_kv_heads != 0) return cudaErrorInvalidValue;
  const attn::DecodeParams p = attn::make_decode_params(rows, kv);
  return attn::with_kv_and_dim(kv.dtype, kv.head_dim, [&]<typename Kv, int HD>() {
    return attn::launch_decode_nonsplit<Kv, HD, 1>(p, rows.num_seqs, stream);
  });
}

cudaError_t launch_paged_decode_splitk(const AttentionRows& rows, const PagedKv& kv, int32_t num_splits,
                                       int32_t min_kv_per_split, float* workspace, cudaStream_t stream) {
  if (rows.num_seqs <= 0) return cudaSuccess;
  if (kv.num_kv_heads <= 0 || rows.num_heads % kv.num_kv_heads != 0 || num_splits < 1 || min_kv_per_split < 1 ||
      workspace == nullptr) {
    return cudaErrorInvalidValue;
  }
  attn::DecodeParams p = attn::make_decode_params(rows, kv);
  p.num_splits = num_splits;
  p.min_kv_per_split = min_kv_per_split;
  p.workspace = workspace;
  return attn::with_kv_and_dim(kv.dtype, kv.head_dim, [&]<typename Kv, int HD>() {
    return attn::launch_splitk<Kv, HD>(p, rows.num_seqs, stream);
  });
}

}  // namespace lathe::cuda
