#pragma once
// An owning handle to one allocation in a Backend's memory (host memory for the CPU backend,
// device memory for CUDA). Move-only; frees through the backend that allocated it, which must
// outlive the buffer.
#include <cstddef>

#include "ops/backend.h"

namespace lathe::model {

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  // Allocates `bytes` (throws lathe::Error naming `what` when memory runs out).
  DeviceBuffer(ops::Backend& backend, size_t bytes, const char* what);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void* data() const { return data_; }
  size_t bytes() const { return bytes_; }

 private:
  void reset();

  ops::Backend* backend_ = nullptr;
  void* data_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace lathe::model
