#pragma once
// Translations from the op API's types (ops/tensor.h, ops/kv_cache.h) to the CUDA kernels' argument types
// (backends/cuda/*.h), shared by the CUDA backend's ops. Each rejects what the kernels cannot take
// with a lathe::Error naming the op and the operand.
#include "backends/cuda/elementwise.h"
#include "backends/cuda/gemv.h"
#include "core/dtype.h"
#include "ops/kv_cache.h"
#include "ops/tensor.h"

namespace lathe::ops::cuda {

// The kernels' row type of a BF16, F16 or F32 tensor; fails for any other dtype.
lathe::cuda::RowType row_type(DType dtype, const char* op, const char* what);

// Fails unless `a` is BF16 (the activations of every CUDA op).
void require_bf16(const Act& a, const char* op, const char* what);

// The decode GEMV's scale kind of a weight's scale kind.
lathe::cuda::GemvScale gemv_scale(ScaleKind kind);

// The paged-cache fields the fused QK-norm + RoPE + KV write and the plain KV write share.
template <typename Args>
void set_cache_fields(Args& a, const KvCacheShape& shape, const KvCacheLayer& cache) {
  a.cache_k = cache.k;
  a.cache_v = cache.v;
  a.cache_fp8 = shape.dtype == DType::kF8E4M3;
  a.k_scale = cache.k_scale;
  a.v_scale = cache.v_scale;
  a.block_size = shape.block_size;
}

}  // namespace lathe::ops::cuda
