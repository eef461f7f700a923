#pragma once
// SwiGLU's value for one element, shared by the silu_mul kernel (elementwise.cu) and the decode
// GEMV's gate|up epilogue (gemv.cu, GemvProblem::silu_inter), so both produce the same bits:
// silu(g) * u = g / (1 + e^-g) * u in fp32, every operation rounded to nearest with no
// contraction (the explicit _rn intrinsics keep the compiler from fusing the add or the
// multiply into a neighbouring operation differently in the two kernels).
#include <cuda_runtime.h>

namespace lathe::cuda {

__device__ __forceinline__ float silu_mul_value(float gate, float up) {
  return __fmul_rn(__fdiv_rn(gate, __fadd_rn(1.0f, expf(-gate))), up);
}

}  // namespace lathe::cuda
