// Linked into every CUDA gpu test: without a usable device the binary exits 77 before any test
// runs, which ctest reports as "skipped" (never as "passed"). With one, kernels launch chained on
// sm_90+ exactly as the CUDA backend launches them in production (backends/cuda/chained_launch.h).
#include <cstdio>
#include <cstdlib>

#include "backends/cuda/chained_launch.h"
#include "backends/cuda/device.h"
#include "gpu_test_util.h"

namespace lathe::gpu_test {

void require_gpu_or_skip() {
  if (cuda::device_count() == 0) {
    std::fprintf(stderr, "no CUDA device found: skipping (exit 77)\n");
    std::exit(77);
  }
  const cuda::DeviceInfo info = cuda::select_device(0);
  cuda::set_chained_launch(info.sm_major >= 9);
}

namespace {
const bool kGate = (require_gpu_or_skip(), true);
}  // namespace

}  // namespace lathe::gpu_test
