// Tiled tensor maps through cudaGetDriverEntryPointByVersion (tensor_map.h).
#include "backends/cuda/tensor_map.h"

#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>

namespace lathe::cuda {
namespace {

PFN_cuTensorMapEncodeTiled_v12000 encoder() {
  static const PFN_cuTensorMapEncodeTiled_v12000 fn = [] {
    void* ptr = nullptr;
    cudaDriverEntryPointQueryResult status{};
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &ptr, 12000, cudaEnableDefault, &status) !=
            cudaSuccess ||
        status != cudaDriverEntryPointSuccess) {
      ptr = nullptr;
    }
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(ptr);
  }();
  return fn;
}

}  // namespace

CUtensorMapL2promotion l2_promotion_of(int bytes) {
  switch (bytes) {
    case 0:
      return CU_TENSOR_MAP_L2_PROMOTION_NONE;
    case 64:
      return CU_TENSOR_MAP_L2_PROMOTION_L2_64B;
    case 128:
      return CU_TENSOR_MAP_L2_PROMOTION_L2_128B;
    default:
      return CU_TENSOR_MAP_L2_PROMOTION_L2_256B;
  }
}

bool encode_tensor_map(const TensorMapSpec& spec, CUtensorMap& map, int& error) {
  const PFN_cuTensorMapEncodeTiled_v12000 encode = encoder();
  if (encode == nullptr) {
    error = -1;
    return false;
  }
  const cuuint32_t element_strides[5] = {1, 1, 1, 1, 1};
  const CUresult r = encode(&map, spec.dtype, spec.rank, const_cast<void*>(spec.base), spec.dims,
                            spec.strides, spec.box, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                            spec.swizzle, spec.l2_promotion, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  error = static_cast<int>(r);
  return r == CUDA_SUCCESS;
}

}  // namespace lathe::cuda
