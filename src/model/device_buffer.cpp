#include "model/device_buffer.h"

#include <utility>

#include "core/error.h"

namespace lathe::model {

DeviceBuffer::DeviceBuffer(ops::Backend& backend, size_t bytes, const char* what) : backend_(&backend), bytes_(bytes) {
  try {
    data_ = backend.alloc(bytes);
  } catch (const Error& error) {
    fail("cannot allocate {} ({:.1f} MiB) on {}: {}", what, static_cast<double>(bytes) / (1024.0 * 1024.0),
         backend.name(), error.what());
  }
}

DeviceBuffer::~DeviceBuffer() { reset(); }

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : backend_(std::exchange(other.backend_, nullptr)),
      data_(std::exchange(other.data_, nullptr)),
      bytes_(std::exchange(other.bytes_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    reset();
    backend_ = std::exchange(other.backend_, nullptr);
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

void DeviceBuffer::reset() {
  if (backend_ != nullptr && data_ != nullptr) backend_->free(data_);
  data_ = nullptr;
  bytes_ = 0;
}

}  // namespace lathe::model
