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
  size_t full_split_slots() const {
    std::vector<uint64_t> slots(ws_.split_slot_count);
    LATHE_CUDA_CHECK(cudaDeviceSynchronize());
    LATHE_CUDA_CHECK(
        cudaMemcpy(slots.data(), ws_.split_slots, slots.size() * sizeof(uint64_t), cudaMemcpyDeviceToHost));
    return static_cast<size_t>(std::count_if(slots.begin(), slots.end(), [](uint64_t s) { return s != 0; }));
  }

  // Split-K arrival counters left non-zero (every kernel must find them at 0).
  size_t nonzero_counters() const {
    std::vector<int> counters(static_cast<size_t>(ws_.counter_count));
    LATHE_CUDA_CHECK(cudaDeviceSynchronize());
    LATHE_CUDA_CHECK(
        cudaMemcpy(counters.data(), ws_.counters, counters.size() * sizeof(int), cudaMemcpyDeviceToHost));
    return static_cast<size_t>(std::count_if(counters.begin(), counters.end(), [](int c) { return c != 0; }));
  }

 private:
  DeviceBuffer bytes_;
  cuda::GemvWorkspace ws_;
};

}  // namespace lathe::gpu_test
