// The device FP8 E4M3 -> BF16 conversion used by the GEMV, checked against core/numeric.h's
// reference decode for all 256 codes.
#include <gtest/gtest.h>

#include <cmath>

#include "backends/cuda/gemv.h"
#include "gpu_test_util.h"

namespace lathe {
namespace {

using gpu_test::DeviceBuffer;

TEST(Fp8Convert, PackedCvtIsBitExactForAll256Codes) {
  DeviceBuffer cvt(256 * 2), bits(256 * 2);
  cuda::fp8_decode_all_codes(cvt.as<uint16_t>(), bits.as<uint16_t>(), nullptr);
  const auto got = cvt.download<uint16_t>(256);
  int nan_codes = 0;
  for (int code = 0; code < 256; ++code) {
    const float ref = fp8_e4m3_to_float(static_cast<uint8_t>(code));
    const float dev = to_float(bf16{got[code]});
    ASSERT_NE(got[code], 0xdeadu) << "lanes disagree for code " << code;
    if (std::isnan(ref)) {
      ++nan_codes;
      EXPECT_TRUE(std::isnan(dev)) << "code " << code;
    } else {
      EXPECT_EQ(float_to_bits(dev), float_to_bits(ref)) << "code " << code << " ref " << ref << " dev " << dev;
    }
  }
  EXPECT_EQ(nan_codes, 2);
}

// The integer bit-trick variant (benchmark only) is exact for every finite code; it does not
// preserve NaN, which is why it is not the default.
TEST(Fp8Convert, BitTrickVariantIsExactForFiniteCodes) {
  DeviceBuffer cvt(256 * 2), bits(256 * 2);
  cuda::fp8_decode_all_codes(cvt.as<uint16_t>(), bits.as<uint16_t>(), nullptr);
  const auto got = bits.download<uint16_t>(256);
  for (int code = 0; code < 256; ++code) {
    const float ref = fp8_e4m3_to_float(static_cast<uint8_t>(code));
    if (std::isnan(ref)) continue;
    ASSERT_NE(got[code], 0xdeadu) << "lanes disagree for code " << code;
    EXPECT_EQ(float_to_bits(to_float(bf16{got[code]})), float_to_bits(ref)) << "code " << code;
  }
}

}  // namespace
}  // namespace lathe
