// The L2 promotion levers of the CUDA backend's tensor copies (host side, no GPU): the sizes a
// tensor map can ask for, their enum, and the three process-wide settings with their measured
// defaults (split-K decode K/V: none, session 38; the GEMV stream's weights: none, session 39;
// prefill ws K/V: 256 bytes, what it was measured with).
#include <gtest/gtest.h>

#include "backends/cuda/gemv.h"
#include "backends/cuda/paged_attention.h"
#include "backends/cuda/tensor_map.h"

namespace lathe::cuda {
namespace {

TEST(L2Promotion, SupportedSizesAndTheirEnum) {
  for (const int bytes : {0, 64, 128, 256}) EXPECT_TRUE(l2_promotion_supported(bytes)) << bytes;
  for (const int bytes : {-1, 1, 32, 63, 65, 127, 129, 255, 257, 512}) {
    EXPECT_FALSE(l2_promotion_supported(bytes)) << bytes;
  }
  EXPECT_EQ(l2_promotion_of(0), CU_TENSOR_MAP_L2_PROMOTION_NONE);
  EXPECT_EQ(l2_promotion_of(64), CU_TENSOR_MAP_L2_PROMOTION_L2_64B);
  EXPECT_EQ(l2_promotion_of(128), CU_TENSOR_MAP_L2_PROMOTION_L2_128B);
  EXPECT_EQ(l2_promotion_of(256), CU_TENSOR_MAP_L2_PROMOTION_L2_256B);
}

// Each lever: its default, every supported size taken, an unknown one refused with the setting
// kept, and the default restored for the rest of the process.
template <typename Set, typename Get>
void check_lever(const char* name, Set set, Get get, int expected_default) {
  EXPECT_EQ(get(), expected_default) << name;
  for (const int bytes : {0, 64, 128, 256}) {
    EXPECT_TRUE(set(bytes)) << name << " " << bytes;
    EXPECT_EQ(get(), bytes) << name;
  }
  EXPECT_FALSE(set(100)) << name;
  EXPECT_EQ(get(), 256) << name << ": a refused size keeps the setting";
  EXPECT_TRUE(set(expected_default));
}

TEST(L2Promotion, LeversKeepTheirMeasuredDefaults) {
  check_lever("split-K decode", set_splitk_kv_l2_promotion, splitk_kv_l2_promotion, 0);
  check_lever("prefill ws", set_prefill_kv_l2_promotion, prefill_kv_l2_promotion, 256);
  check_lever("GEMV stream", set_gemv_tma_l2_promotion, gemv_tma_l2_promotion, 0);
}

}  // namespace
}  // namespace lathe::cuda
