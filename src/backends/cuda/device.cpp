#include "backends/cuda/device.h"

#include <cuda_runtime.h>
#include <fmt/format.h>

#include "backends/cuda/check.h"
#include "core/error.h"

namespace lathe::cuda {

int device_count() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();  // clear the sticky "no device" status
    return 0;
  }
  return count;
}

DeviceInfo select_device(int index) {
  const int count = device_count();
  if (index < 0 || index >= count)
    fail("--device cuda: device index {} does not exist ({} CUDA devices found)", index, count);
  LATHE_CUDA_CHECK(cudaSetDevice(index));
  cudaDeviceProp prop{};
  LATHE_CUDA_CHECK(cudaGetDeviceProperties(&prop, index));
  DeviceInfo info;
  info.index = index;
  info.name = prop.name;
  info.sm_major = prop.major;
  info.sm_minor = prop.minor;
  info.multiprocessors = prop.multiProcessorCount;
  info.global_memory = prop.totalGlobalMem;
  info.l2_bytes = static_cast<size_t>(prop.l2CacheSize);
  info.smem_per_block_optin = prop.sharedMemPerBlockOptin;
  return info;
}

std::string describe(const DeviceInfo& info) {
  return fmt::format("cuda:{} {} sm_{}{} {} SMs {:.1f} GiB", info.index, info.name, info.sm_major,
                     info.sm_minor, info.multiprocessors,
                     static_cast<double>(info.global_memory) / (1024.0 * 1024.0 * 1024.0));
}

int device_sm_count() {
  static const int count = [] {
    int device = 0, n = 0;
    if (cudaGetDevice(&device) != cudaSuccess ||
        cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, device) != cudaSuccess) {
      n = 0;
    }
    return n > 0 ? n : 132;
  }();
  return count;
}

SharedMemoryLimits device_shared_memory_limits() {
  static const SharedMemoryLimits limits = [] {
    SharedMemoryLimits l;
    int device = 0;
    if (cudaGetDevice(&device) != cudaSuccess ||
        cudaDeviceGetAttribute(&l.per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, device) !=
            cudaSuccess ||
        cudaDeviceGetAttribute(&l.reserved_per_cta, cudaDevAttrReservedSharedMemoryPerBlock, device) !=
            cudaSuccess ||
        cudaDeviceGetAttribute(&l.max_per_cta, cudaDevAttrMaxSharedMemoryPerBlockOptin, device) !=
            cudaSuccess) {
      return SharedMemoryLimits{};
    }
    return l;
  }();
  return limits;
}

bool device_has_wgmma() {
#if defined(LATHE_BUILT_SM90A)
  static const bool has = [] {
    int device = 0, major = 0, minor = 0;
    if (cudaGetDevice(&device) != cudaSuccess) return false;
    if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess ||
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) != cudaSuccess)
      return false;
    return major == 9 && minor == 0;
  }();
  return has;
#else
  return false;
#endif
}

}  // namespace lathe::cuda
