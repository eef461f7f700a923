#pragma once
// The measurement probes' CUDA error check: a failed call prints where and exits (a probe has no
// caller to hand the error to).
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#define PROBE_CHECK(call)                                                                \
  do {                                                                                   \
    const cudaError_t err_ = (call);                                                     \
    if (err_ != cudaSuccess) {                                                           \
      std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(err_)); \
      std::exit(1);                                                                      \
    }                                                                                    \
  } while (0)
