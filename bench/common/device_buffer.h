#pragma once
// A device allocation owned for a scope, for the CUDA benchmarks (at least 256 bytes, so an empty
// request still yields a valid pointer). Throws lathe::Error when cudaMalloc fails.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>

#include "backends/cuda/check.h"

namespace lathe::bench {

struct DeviceBuffer {
  void* ptr = nullptr;
  explicit DeviceBuffer(size_t bytes) { LATHE_CUDA_CHECK(cudaMalloc(&ptr, std::max<size_t>(bytes, 256))); }
  ~DeviceBuffer() { cudaFree(ptr); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  template <typename T>
  T* as() const {
    return static_cast<T*>(ptr);
  }
};

}  // namespace lathe::bench
