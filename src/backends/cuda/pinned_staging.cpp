#include "backends/cuda/pinned_staging.h"

#include <algorithm>
#include <cstring>

#include "backends/cuda/check.h"

namespace lathe::cuda {

PinnedStaging::~PinnedStaging() {
  for (Slot& s : slots_) {
    if (s.read) {
      cudaEventSynchronize(s.read);
      cudaEventDestroy(s.read);
    }
    if (s.host) cudaFreeHost(s.host);
  }
}

void* PinnedStaging::reserve(size_t bytes) {
  current_ = (current_ + 1) % kSlots;
  Slot& s = slots_[static_cast<size_t>(current_)];
  if (s.pending) {
    LATHE_CUDA_CHECK(cudaEventSynchronize(s.read));  // the copy that last read this buffer is done
    s.pending = false;
  }
  if (bytes > s.bytes) {
    if (s.host) LATHE_CUDA_CHECK(cudaFreeHost(s.host));
    s.host = nullptr;
    const size_t grown = std::max<size_t>({bytes, s.bytes * 2, 4096});
    LATHE_CUDA_CHECK(cudaMallocHost(&s.host, grown));
    s.bytes = grown;
  }
  if (!s.read) LATHE_CUDA_CHECK(cudaEventCreateWithFlags(&s.read, cudaEventDisableTiming));
  return s.host;
}

void PinnedStaging::send(void* dst, size_t bytes, cudaStream_t stream) {
  if (current_ < 0) throw_error("pinned staging: send() without reserve()");
  Slot& s = slots_[static_cast<size_t>(current_)];
  if (bytes > s.bytes) throw_error("pinned staging: send() of more bytes than reserved");
  LATHE_CUDA_CHECK(cudaMemcpyAsync(dst, s.host, bytes, cudaMemcpyHostToDevice, stream));
  LATHE_CUDA_CHECK(cudaEventRecord(s.read, stream));
  s.pending = true;
}

void PinnedStaging::copy(void* dst, const void* src, size_t bytes, cudaStream_t stream) {
  if (bytes == 0) return;
  std::memcpy(reserve(bytes), src, bytes);
  send(dst, bytes, stream);
}

}  // namespace lathe::cuda
