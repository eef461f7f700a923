#include "test_util.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "core/numeric.h"

namespace lathe::test {

std::vector<float> Rng::normals(size_t n, float stddev) {
  std::vector<float> values(n);
  for (float& v : values) v = normal(stddev);
  return values;
}

ops::Act f32_act(std::vector<float>& data, int64_t rows, int64_t cols, int64_t stride) {
  return ops::Act{data.data(), DType::kF32, rows, cols, stride < 0 ? cols : stride};
}

ops::Act bf16_act(std::vector<uint16_t>& data, int64_t rows, int64_t cols) {
  return ops::Act{data.data(), DType::kBF16, rows, cols, cols};
}

std::vector<uint16_t> to_bf16_bits(const std::vector<float>& values) {
  std::vector<uint16_t> bits(values.size());
  for (size_t i = 0; i < values.size(); ++i) bits[i] = to_bf16(values[i]).bits;
  return bits;
}

std::vector<float> from_bf16_bits(const std::vector<uint16_t>& bits) {
  std::vector<float> values(bits.size());
  for (size_t i = 0; i < bits.size(); ++i) values[i] = to_float(bf16{bits[i]});
  return values;
}

void ErrorStats::add(double got, double ref, double norm) {
  const double err = std::fabs(got - ref);
  if (std::isnan(err)) saw_nan_ = true;
  max_abs_ = std::fmax(max_abs_, err);
  max_rel_ = std::fmax(max_rel_, err / std::fmax(norm, 1e-30));
  ++count_;
}

void ErrorStats::expect_within(double bound) const {
  std::printf("[ error    ] %s: %lld elements, max abs %.3g, max rel %.3g (bound %.3g)\n", name_.c_str(),
              static_cast<long long>(count_), max_abs_, max_rel_, bound);
  EXPECT_FALSE(saw_nan_) << name_ << ": NaN";
  EXPECT_GT(count_, 0) << name_ << ": nothing compared";
  EXPECT_LE(max_rel_, bound) << name_;
}

}  // namespace lathe::test
