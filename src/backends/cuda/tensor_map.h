#pragma once
// Host-side encoding of tiled tensor maps (the descriptors the sm_90 copy engine reads), through
// the runtime's driver entry point so that nothing links libcuda directly.
#include <cuda.h>

#include <atomic>
#include <cstdint>

namespace lathe::cuda {

// A tiled tensor map of `rank` (1..5) dimensions, innermost first: dims in elements, strides in
// bytes for dimensions 1..rank-1 (multiples of 16), box in elements. Zero fill outside the
// tensor; the copies' L2 promotion as set (256 bytes unless the user sets another). Returns false
// (and leaves `map` unspecified) when the driver offers no encoder or refuses the description;
// `error` then says which.
struct TensorMapSpec {
  CUtensorMapDataType dtype = CU_TENSOR_MAP_DATA_TYPE_UINT8;
  uint32_t rank = 0;
  const void* base = nullptr;
  uint64_t dims[5] = {};
  uint64_t strides[4] = {};
  uint32_t box[5] = {};
  CUtensorMapSwizzle swizzle = CU_TENSOR_MAP_SWIZZLE_NONE;
  CUtensorMapL2promotion l2_promotion = CU_TENSOR_MAP_L2_PROMOTION_L2_256B;
};
bool encode_tensor_map(const TensorMapSpec& spec, CUtensorMap& map, int& error);

// The L2 promotions a tensor map can ask for, in bytes: 0 (none), 64, 128, 256.
constexpr bool l2_promotion_supported(int bytes) {
  return bytes == 0 || bytes == 64 || bytes == 128 || bytes == 256;
}
// The promotion of `bytes` (one of l2_promotion_supported's; any other gives 256 bytes).
CUtensorMapL2promotion l2_promotion_of(int bytes);

// A process-wide promotion setting of one kernel family's copies (a benchmark lever): set()
// refuses a size l2_promotion_supported does not know and keeps the setting.
class L2PromotionSetting {
 public:
  constexpr explicit L2PromotionSetting(int bytes) : bytes_(bytes) {}
  bool set(int bytes) {
    if (!l2_promotion_supported(bytes)) return false;
    bytes_.store(bytes, std::memory_order_relaxed);
    return true;
  }
  int get() const { return bytes_.load(std::memory_order_relaxed); }

 private:
  std::atomic<int> bytes_;
};

}  // namespace lathe::cuda
