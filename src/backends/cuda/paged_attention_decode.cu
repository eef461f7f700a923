// Non-split paged decode (paged_attention_decode.cuh holds the kernel body); the split-K arm is
// paged_attention_splitk.cu.
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

}  // namespace lathe::cuda
