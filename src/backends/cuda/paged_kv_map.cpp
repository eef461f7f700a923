#include "backends/cuda/paged_kv_map.h"

#include <cstdint>

#include "backends/cuda/tensor_map.h"

namespace lathe::cuda {

bool encode_paged_kv_map(const void* base, const PagedKv& kv, int box_rows, int box_pieces, CUtensorMap& map,
                         int l2_promotion_bytes) {
  if (kv.num_blocks <= 0 || box_rows < 1 || box_rows > 256 || kv.block_size % box_rows != 0 ||
      !l2_promotion_supported(l2_promotion_bytes)) {
    return false;
  }
  const uint64_t elem = kv.dtype == KvDType::kBF16 ? 2 : 1;
  const uint64_t row_bytes = static_cast<uint64_t>(kv.head_dim) * elem;
  TensorMapSpec spec;
  spec.dtype = elem == 2 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_UINT8;
  spec.rank = 5;
  spec.base = base;
  spec.dims[0] = 128 / elem;
  spec.dims[1] = static_cast<uint64_t>(kv.block_size);
  spec.dims[2] = row_bytes / 128;
  spec.dims[3] = static_cast<uint64_t>(kv.num_kv_heads);
  spec.dims[4] = static_cast<uint64_t>(kv.num_blocks);
  spec.strides[0] = row_bytes;                       // slot
  spec.strides[1] = 128;                             // piece
  spec.strides[2] = row_bytes * spec.dims[1];        // KV head
  spec.strides[3] = spec.strides[2] * spec.dims[3];  // block
  spec.box[0] = static_cast<uint32_t>(spec.dims[0]);
  spec.box[1] = static_cast<uint32_t>(box_rows);
  spec.box[2] = static_cast<uint32_t>(box_pieces);
  spec.box[3] = 1;
  spec.box[4] = 1;
  spec.swizzle = CU_TENSOR_MAP_SWIZZLE_128B;
  spec.l2_promotion = l2_promotion_of(l2_promotion_bytes);
  int error = 0;
  return encode_tensor_map(spec, map, error);
}

}  // namespace lathe::cuda
