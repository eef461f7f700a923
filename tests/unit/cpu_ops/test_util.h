#pragma once
// Shared helpers of the CPU op tests: seeded random data, activation views over std::vectors,
// and an error tracker that reports max abs / relative error against a stated bound.
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "ops/tensor.h"

namespace lathe::test {

class Rng {
 public:
  explicit Rng(uint64_t seed) : engine_(seed) {}
  float uniform(float lo, float hi) { return std::uniform_real_distribution<float>(lo, hi)(engine_); }
  float normal(float stddev = 1.0f) { return std::normal_distribution<float>(0.0f, stddev)(engine_); }
  int64_t integer(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(engine_); }
  std::vector<float> normals(size_t n, float stddev = 1.0f);
  std::mt19937_64& engine() { return engine_; }

 private:
  std::mt19937_64 engine_;
};

// An F32 activation view [rows, cols] over `data` (stride = cols unless given).
ops::Act f32_act(std::vector<float>& data, int64_t rows, int64_t cols, int64_t stride = -1);
// A BF16 activation view over raw bf16 bits.
ops::Act bf16_act(std::vector<uint16_t>& data, int64_t rows, int64_t cols);

// Rounds through bf16 (core's conversion) and returns the bits / the rounded values.
std::vector<uint16_t> to_bf16_bits(const std::vector<float>& values);
std::vector<float> from_bf16_bits(const std::vector<uint16_t>& bits);

// Tracks |got - ref| and |got - ref| / norm over a set of elements, where `norm` is the
// magnitude the error is judged against (stated by each test).
class ErrorStats {
 public:
  explicit ErrorStats(std::string name) : name_(std::move(name)) {}
  void add(double got, double ref, double norm);
  double max_abs() const { return max_abs_; }
  double max_rel() const { return max_rel_; }
  int64_t count() const { return count_; }
  // Prints the line "name: N elements, max abs A, max rel R (bound B)" and checks R <= bound
  // (NaN fails).
  void expect_within(double bound) const;

 private:
  std::string name_;
  double max_abs_ = 0.0;
  double max_rel_ = 0.0;
  int64_t count_ = 0;
  bool saw_nan_ = false;
};

}  // namespace lathe::test
