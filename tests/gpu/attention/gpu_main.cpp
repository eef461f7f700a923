// main() of the attention GPU tests: exit 77 (ctest "skipped") when no CUDA device is usable.
// Kernels launch chained on sm_90+, as the CUDA backend launches them in production, and the
// split-K measurement levers (LATHE_ATTN_SPLITK_KERNEL, LATHE_ATTN_SPLIT_RULE) apply as they do at
// backend start, so the whole suite can run under another kernel variant or split rule.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdio>

#include "backends/cuda/chained_launch.h"
#include "ops/cuda/chained_launch_lever.h"

int main(int argc, char** argv) {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess || count == 0) {
    std::printf("no CUDA device (%s): skipping\n", status != cudaSuccess ? cudaGetErrorString(status) : "0 devices");
    return 77;
  }
  int major = 0;
  if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0) == cudaSuccess)
    lathe::cuda::set_chained_launch(major >= 9);
  lathe::ops::cuda::configure_attention_kernel();
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
