#pragma once
// Device discovery and selection. `device_count()` never throws: no driver, no device or a
// driver/runtime mismatch all read as 0 devices, so CPU-only machines take the CPU backend.
#include <cstddef>
#include <string>

#include "backends/cuda/wave_fill.h"

namespace lathe::cuda {

struct DeviceInfo {
  int index = 0;
  std::string name;
  int sm_major = 0;
  int sm_minor = 0;
  int multiprocessors = 0;
  size_t global_memory = 0;
  size_t l2_bytes = 0;
  size_t smem_per_block_optin = 0;
};

int device_count();
// Makes `index` current for the calling thread; throws lathe::Error naming the index when it
// does not exist.
DeviceInfo select_device(int index);
// One line for logs and `lathe info`: "cuda:0 NVIDIA H200 sm_90 132 SMs 139.8 GiB".
std::string describe(const DeviceInfo& info);

// Whether warpgroup MMA kernels (wgmma: the GEMV's ":wg" tiers, the prefill attention) can run on
// the current device: an sm_90 device (wgmma is Hopper's; later architectures dropped it) and a
// build with sm_90a code (LATHE_BUILT_SM90A, src/backends/cuda/CMakeLists.txt), which the runtime
// picks for that device. Read once per process.
bool device_has_wgmma();

// The current device's multiprocessor count (132 when the query fails), read once per process: a
// host attribute query, no stream work, so callable while a stream is being captured.
int device_sm_count();

// The current device's shared memory limits (wave_fill.h), read once per process like
// device_sm_count (all zero when the query fails, which makes shared_memory_for_cap a no-op).
SharedMemoryLimits device_shared_memory_limits();

}  // namespace lathe::cuda
