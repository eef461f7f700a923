#pragma once
// A full-size decode-GEMV workspace on the device for the GEMV tests (gemv_workspace_in), and the
// check every test of them ends with: the register ring's split slots are all empty again.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "backends/cuda/check.h"
#include "backends/cuda/gemv.h"
#include "gpu_test_util.h"

namespace lathe::gpu_test {

class GemvTestWorkspace {
 public:
  GemvTestWorkspace()
      : bytes_(cuda::gemv_workspace_bytes()), ws_(cuda::gemv_workspace_in(bytes_.get(), nullptr)) {
    LATHE_CUDA_CHECK(cudaDeviceSynchronize());
  }
  const cuda::GemvWorkspace& get() const { return ws_; }

  // Split slots left full (every launch must leave none: the next one's sum relies on it).
  size_t full_split_slots() const { return nonzero_words(ws_.split_slots, ws_.split_slot_count); }

  // Split-K arrival counters left non-zero (every kernel must find them at 0).
  size_t nonzero_counters() const {
    return nonzero_words(ws_.counters, static_cast<size_t>(ws_.counter_count));
  }

 private:
  // Words of device array `words` (count of them) that are not 0, after every launch has finished.
  template <typename T>
  static size_t nonzero_words(const T* words, size_t count) {
    std::vector<T> host(count);
    LATHE_CUDA_CHECK(cudaDeviceSynchronize());
    LATHE_CUDA_CHECK(cudaMemcpy(host.data(), words, count * sizeof(T), cudaMemcpyDeviceToHost));
    return static_cast<size_t>(std::count_if(host.begin(), host.end(), [](T w) { return w != 0; }));
  }

  DeviceBuffer bytes_;
  cuda::GemvWorkspace ws_;
};

}  // namespace lathe::gpu_test
