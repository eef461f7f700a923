#pragma once
// GPU sampling of one token per logits row under ops/sampling.h's rule:
//   temperature 0 -> argmax (lowest index wins ties; NaN never wins over a number);
//   otherwise p = softmax(logits / T) in f32 (deterministic block reductions), candidates sorted
//   by p descending then index ascending (a stable segmented radix sort of the f32 bits), then
//   top_k, the shortest top_p prefix, the min_p cut and the draw u (host-computed from
//   (seed, step)) walked sequentially in f32 exactly as the rule states. The draw is reproducible
//   per request: it depends only on the row's logits and parameters.
// p itself can differ from the CPU reference in the last bit (expf and summation order), so a
// draw that lands within rounding of a boundary may pick the neighbouring candidate.
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace lathe::cuda {

struct SampleRow {
  float temperature = 0.0f;
  int32_t top_k = 0;
  float top_p = 1.0f;
  float min_p = 0.0f;
  float u = 0.0f;  // ops::sampling_uniform(seed, step)
};

// Rows sorted per pass (bounds the workspace).
inline constexpr int64_t kSampleChunkRows = 16;
size_t sampler_workspace_bytes(int64_t vocab);

// Device scratch of the greedy rows' argmax: partial results and per-row arrival counters. Zero it
// when it is allocated (or grown); every launch leaves its counters at zero again, so it is
// reused as is, by calls of any row count up to the size it was sized for (8-byte aligned).
size_t argmax_scratch_size(int64_t rows, int64_t vocab);

// logits f32 [rows, vocab] (row stride in elements); params and out_ids in device memory.
// `any_random`: false skips the softmax/sort path (all rows greedy).
void launch_sample(const float* logits, int64_t stride, int64_t rows, int64_t vocab, const SampleRow* params,
                   bool any_random, int32_t* out_ids, void* argmax_scratch, size_t argmax_scratch_bytes,
                   void* workspace, size_t workspace_bytes, cudaStream_t stream);

}  // namespace lathe::cuda
