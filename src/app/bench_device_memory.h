#pragma once
// Backend memory owned for the length of a measurement (the device ceilings of `bench latency`):
// freed on every path out, since a measurement may throw.
#include <cstddef>

#include "ops/backend.h"

namespace lathe::app {

class ScopedDeviceMemory {
 public:
  ScopedDeviceMemory(ops::Backend& backend, size_t bytes) : backend_(backend), ptr_(backend.alloc(bytes)) {}
  ~ScopedDeviceMemory() { backend_.free(ptr_); }
  ScopedDeviceMemory(const ScopedDeviceMemory&) = delete;
  ScopedDeviceMemory& operator=(const ScopedDeviceMemory&) = delete;
  void* get() const { return ptr_; }

 private:
  ops::Backend& backend_;
  void* ptr_;
};

}  // namespace lathe::app
