// Split-K paged decode kernels with BF16 KV: every (head dim, variant) of
// paged_attention_splitk_variants.cuh. (One file per KV dtype so the two compile in parallel.)
#include "backends/cuda/paged_attention_splitk_variants.cuh"

namespace lathe::cuda::attn::splitk {

cudaError_t launch_bf16(int variant, int32_t head_dim, const SplitParams& sp, int32_t num_seqs, cudaStream_t stream) {
  switch (head_dim) {
    case 64:
      return launch_variant<Bf16Kv, 64>(variant, sp, num_seqs, stream);
    case 128:
      return launch_variant<Bf16Kv, 128>(variant, sp, num_seqs, stream);
    case 256:
      return launch_variant<Bf16Kv, 256>(variant, sp, num_seqs, stream);
    default:
      return cudaErrorInvalidValue;
  }
}

}  // namespace lathe::cuda::attn::splitk
