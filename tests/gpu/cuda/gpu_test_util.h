#pragma once
// Shared helpers of the CUDA gpu tests: a device buffer, host random data, and the "no GPU ->
// exit 77" gate that makes ctest report the test as skipped on machines without a device.
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "backends/cuda/check.h"
#include "core/numeric.h"

namespace lathe::gpu_test {

// Exits the process with 77 (ctest: skipped) when no CUDA device is usable. Call first in main
// or from a static initializer (see gpu_gate.cpp, linked into every test here).
void require_gpu_or_skip();

class DeviceBuffer {
 public:
  explicit DeviceBuffer(size_t bytes) : bytes_(bytes) { LATHE_CUDA_CHECK(cudaMalloc(&ptr_, bytes < 256 ? 256 : bytes)); }
  ~DeviceBuffer() { cudaFree(ptr_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  template <typename T>
  T* as() const {
    return static_cast<T*>(ptr_);
  }
  void* get() const { return ptr_; }
  template <typename T>
  void upload(const std::vector<T>& host) {
    LATHE_CUDA_CHECK(cudaMemcpy(ptr_, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
  }
  template <typename T>
  std::vector<T> download(size_t count) const {
    std::vector<T> host(count);
    LATHE_CUDA_CHECK(cudaDeviceSynchronize());
    LATHE_CUDA_CHECK(cudaMemcpy(host.data(), ptr_, count * sizeof(T), cudaMemcpyDeviceToHost));
    return host;
  }
  // Poisons the buffer (0xff bytes: bf16/f32 NaN) so unwritten outputs are caught.
  void poison() { LATHE_CUDA_CHECK(cudaMemset(ptr_, 0xff, bytes_ < 256 ? 256 : bytes_)); }

 private:
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

inline std::vector<uint16_t> random_bf16(size_t count, std::mt19937& rng, float scale = 1.0f) {
  std::uniform_real_distribution<float> dist(-scale, scale);
  std::vector<uint16_t> out(count);
  for (auto& v : out) v = to_bf16(dist(rng)).bits;
  return out;
}

// Finite E4M3 codes (never NaN).
inline std::vector<uint8_t> random_fp8(size_t count, std::mt19937& rng) {
  std::vector<uint8_t> out(count);
  for (auto& v : out) {
    v = static_cast<uint8_t>(rng());
    if ((v & 0x7f) == 0x7f) v ^= 1;
  }
  return out;
}

inline std::vector<float> random_f32(size_t count, std::mt19937& rng, float lo, float hi) {
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> out(count);
  for (auto& v : out) v = dist(rng);
  return out;
}

inline float bf16_value(uint16_t bits) { return to_float(bf16{bits}); }

// ||a - b|| / ||b|| in double.
inline double normalized_error(const std::vector<double>& got, const std::vector<double>& ref) {
  double num = 0, den = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    const double d = got[i] - ref[i];
    num += d * d;
    den += ref[i] * ref[i];
  }
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

}  // namespace lathe::gpu_test
