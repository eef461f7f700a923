// The split-K launcher's occupancy cap (backends/cuda/wave_fill.h) against the driver: the shared
// memory request shared_memory_for_cap computes from this device's limits puts exactly `cap` CTAs
// on an SM, as the occupancy calculator counts them for a kernel that nothing else limits. (That
// the cap moves no byte of the attention output is tested in tests/gpu/attention/decode_test.cpp.)
#include <gtest/gtest.h>

#include "backends/cuda/device.h"
#include "backends/cuda/probe.h"
#include "backends/cuda/wave_fill.h"

namespace lathe {
namespace {

TEST(WaveFillOnDevice, PaddedSharedMemoryAdmitsExactlyTheCap) {
  const cuda::SharedMemoryLimits limits = cuda::device_shared_memory_limits();
  ASSERT_GT(limits.per_sm, 0);
  ASSERT_GT(limits.max_per_cta, 0);
  // The split-K geometries' own requests lie between ~38 KiB (FP8, head dim 128) and ~75 KiB.
  for (const int kernel_bytes : {4096, 38784, 43520, 71680}) {
    const int unpadded = cuda::probe_resident_ctas(128, kernel_bytes);
    for (int cap = 1; cap < unpadded && cap <= 8; ++cap) {
      const int bytes = cuda::shared_memory_for_cap(kernel_bytes, cap, limits);
      EXPECT_EQ(cuda::probe_resident_ctas(128, bytes), cap)
          << kernel_bytes << " bytes capped at " << cap << " asked for " << bytes;
    }
  }
}

}  // namespace
}  // namespace lathe
