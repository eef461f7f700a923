#pragma once
// The function CudaBackend::attention calls: plans the step's attention (ops/attention_plan.h)
// and launches the arm it names (paged prefill, decode non-split, GQA-packed decode, or split-K
// decode + reduce) on `stream`. Graph-capturable: it reads only host-known sizes of the batch,
// never device contents, and allocates nothing.
#include <cuda_runtime_api.h>

#include <cstddef>

#include "ops/attention_plan.h"
#include "ops/backend.h"
#include "ops/batch.h"
#include "ops/kv_cache.h"
#include "ops/tensor.h"

namespace lathe::ops::cuda {

// q [T, num_heads * head_dim] BF16 (post-RoPE; row stride q.stride), out [T, num_heads *
// head_dim] BF16. The cache holds every row of this step already (qk_norm_rope_kv_write ran).
// `workspace` is device memory of `workspace_bytes` bytes, at least
// attention_workspace_bytes(shape, config) (it may be null when that is 0). Throws lathe::Error
// for shapes the kernels do not serve or a workspace too small for the plan.
//
// A mixed step (phase kPrefill) whose batch carries num_decode_rows > 0 runs its leading decode
// sequences through the decode arm (as a pure decode step of those sequences would) and the rest
// through the prefill kernel, so a decoding sequence's bytes do not depend on prefill chunks
// sharing its step.
void attention_forward(const DeviceBatch& batch, Act q, const AttentionShape& shape,
                       const KvCacheShape& cache_shape, const KvCacheLayer& cache, Act out,
                       void* workspace, size_t workspace_bytes, const AttentionConfig& config,
                       cudaStream_t stream);

}  // namespace lathe::ops::cuda
