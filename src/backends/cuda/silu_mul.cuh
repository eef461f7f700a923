#pragma once
// SwiGLU's value, silu(g) * u = g / (1 + e^-g) * u, with explicit round-to-nearest operations so
// the elementwise kernel (launch_silu_mul) and the GEMV that computes its input itself
// (GemvSiluInput, gemv.cu) give the same bits.
#include <cmath>

namespace lathe::cuda {

__device__ __forceinline__ float silu_mul_value(float g, float u) {
  return __fmul_rn(__fdiv_rn(g, __fadd_rn(1.0f, expf(-g))), u);
}

}  // namespace lathe::cuda
