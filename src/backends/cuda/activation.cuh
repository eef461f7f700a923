#pragma once
// SwiGLU's product, shared by every kernel that computes it (the standalone silu_mul kernel and
// the decode GEMV that stages silu(gate) * up as its activations), so both round the same fp32
// value to bf16 and a row's bits do not depend on which kernel made its input.
#include <cuda_runtime.h>

namespace lathe::cuda {

// silu(g) * u = g / (1 + e^-g) * u in fp32 (accurate expf; the build does not use fast math).
__device__ __forceinline__ float silu_mul_value(float g, float u) { return g / (1.0f + expf(-g)) * u; }

}  // namespace lathe::cuda
