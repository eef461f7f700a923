// GQA-packed paged decode: instantiations of paged_decode_kernel<Kv, HD, G, false> for the
// compiled (G, HD) pairs, G in {2, 4, 6, 8} and HD in {128, 256}, BF16 and FP8 KV. The list here
// must equal ops/splitk_policy.h's kGqaPackGroups x kGqaPackHeadDims; tests/gpu/attention checks
// gqa_packed_compiled against that gate for every shape.
#include "backends/cuda/paged_attention.h"
#include "backends/cuda/paged_attention_decode.cuh"

namespace lathe::cuda {
namespace {

template <int G>
cudaError_t launch_group(const attn::DecodeParams& p, KvDType dtype, int32_t head_dim, int32_t num_seqs,
                         cudaStream_t stream) {
  const bool bf16 = dtype == KvDType::kBF16;
  if (head_dim == 128) {
    return bf16 ? attn::launch_decode_nonsplit<attn::Bf16Kv, 128, G>(p, num_seqs, stream)
                : attn::launch_decode_nonsplit<attn::Fp8Kv, 128, G>(p, num_seqs, stream);
  }
  if (head_dim == 256) {
    return bf16 ? attn::launch_decode_nonsplit<attn::Bf16Kv, 256, G>(p, num_seqs, stream)
                : attn::launch_decode_nonsplit<attn::Fp8Kv, 256, G>(p, num_seqs, stream);
  }
  return cudaErrorInvalidValue;
}

}  // namespace

bool gqa_packed_compiled(int32_t group, int32_t head_dim) {
  return (group == 2 || group == 4 || group == 6 || group == 8) && (head_dim == 128 || head_dim == 256);
}

cudaError_t launch_paged_decode_gqa_packed(const AttentionRows& rows, const PagedKv& kv, cudaStream_t stream) {
  if (rows.num_seqs <= 0) return cudaSuccess;
  if (kv.num_kv_heads <= 0) return cudaErrorInvalidValue;
  const int32_t group = rows.num_heads / kv.num_kv_heads;
  // The ratio is checked by multiplication: a truncating division alone would admit 25 / 4.
  if (static_cast<int64_t>(group) * kv.num_kv_heads != rows.num_heads || !gqa_packed_compiled(group, kv.head_dim)) {
    return cudaErrorInvalidValue;
  }
  const attn::DecodeParams p = attn::make_decode_params(rows, kv);
  switch (group) {
    case 2:
      return launch_group<2>(p, kv.dtype, kv.head_dim, rows.num_seqs, stream);
    case 4:
      return launch_group<4>(p, kv.dtype, kv.head_dim, rows.num_seqs, stream);
    case 6:
      return launch_group<6>(p, kv.dtype, kv.head_dim, rows.num_seqs, stream);
    case 8:
      return launch_group<8>(p, kv.dtype, kv.head_dim, rows.num_seqs, stream);
    default:
      return cudaErrorInvalidValue;
  }
}

}  // namespace lathe::cuda
