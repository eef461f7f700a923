#pragma once
// Host-to-device copies that never make the host wait for the device: the bytes go through
// page-locked host buffers (a copy from pageable memory may synchronise with the stream, and the
// host would have to keep its buffer until the copy ends). The buffers form a small ring; each
// remembers, with an event, the copy that last read it, and is reused only once that copy has
// left it, so a caller may overwrite its own source as soon as send() returns.
#include <cuda_runtime.h>

#include <array>
#include <cstddef>

namespace lathe::cuda {

class PinnedStaging {
 public:
  PinnedStaging() = default;
  ~PinnedStaging();
  PinnedStaging(const PinnedStaging&) = delete;
  PinnedStaging& operator=(const PinnedStaging&) = delete;

  // A page-locked buffer of at least `bytes`, free of earlier copies, to fill on the host. Waits
  // only when the ring's next buffer still feeds a copy issued kSlots reserve()s ago.
  void* reserve(size_t bytes);
  // Copies the first `bytes` of the buffer the last reserve() returned to device memory `dst`, in
  // `stream`'s order; returns at once.
  void send(void* dst, size_t bytes, cudaStream_t stream);
  // reserve(bytes), the host copy of `src`, then send().
  void copy(void* dst, const void* src, size_t bytes, cudaStream_t stream);

 private:
  static constexpr int kSlots = 4;
  struct Slot {
    void* host = nullptr;
    size_t bytes = 0;
    cudaEvent_t read = nullptr;  // recorded after the last copy out of `host`
    bool pending = false;        // `read` was recorded since the slot was last waited on
  };
  std::array<Slot, kSlots> slots_{};
  int current_ = -1;  // the slot the last reserve() returned
};

}  // namespace lathe::cuda
