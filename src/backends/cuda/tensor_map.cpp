// Tiled tensor maps through cudaGetDriverEntryPointByVersion (tensor_map.h).
#include "backends/cuda/tensor_map.h"

#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>

#include <array>

#include "backends/cuda/bounded_memo.h"

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

// Every field of a spec, as words: the memo's key.
using SpecWords = std::array<uint64_t, 18>;
SpecWords spec_words(const TensorMapSpec& spec) {
  SpecWords w{};
  size_t i = 0;
  w[i++] = static_cast<uint64_t>(spec.dtype);
  w[i++] = spec.rank;
  w[i++] = reinterpret_cast<uintptr_t>(spec.base);
  for (uint64_t d : spec.dims) w[i++] = d;
  for (uint64_t s : spec.strides) w[i++] = s;
  for (uint32_t b : spec.box) w[i++] = b;
  w[i++] = static_cast<uint64_t>(spec.swizzle);
  return w;
}

// Layers x {K, V} of a few models at once; a new key past this clears the memo.
constexpr size_t kMemoCapacity = 4096;

}  // namespace

bool encode_tensor_map_cached(const TensorMapSpec& spec, CUtensorMap& map, int& error) {
  static BoundedMemo<SpecWords, CUtensorMap, WordsHash<18>> memo(kMemoCapacity);
  error = 0;
  return memo.get_or_make(spec_words(spec), map,
                          [&](CUtensorMap& fresh) { return encode_tensor_map(spec, fresh, error); });
}

bool encode_tensor_map(const TensorMapSpec& spec, CUtensorMap& map, int& error) {
  const PFN_cuTensorMapEncodeTiled_v12000 encode = encoder();
  if (encode == nullptr) {
    error = -1;
    return false;
  }
  const cuuint32_t element_strides[5] = {1, 1, 1, 1, 1};
  const CUresult r = encode(&map, spec.dtype, spec.rank, const_cast<void*>(spec.base), spec.dims, spec.strides,
                            spec.box, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, spec.swizzle,
                            CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  error = static_cast<int>(r);
  return r == CUDA_SUCCESS;
}

}  // namespace lathe::cuda
