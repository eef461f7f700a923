// CudaBackend: ops::Backend on one CUDA device and one stream (the class: cuda_backend_class.h;
// its linear layers: cuda_backend_linear.cpp). Every byte comes from the device arena;
// workspaces are grow-only (sized by the first, warm-up, calls) so the decode loop allocates
// nothing. Kernels live in backends/cuda; these files bind the op API to them and route linear
// layers through the pure dispatch ladder (ops/linear_dispatch).
#include "ops/cuda/cuda_backend_class.h"

#include <algorithm>
#include <vector>

namespace lathe::ops {
namespace cuda_detail {

void CudaBackend::sample(Act logits, const std::vector<SamplingParams>& params, int32_t* out_ids) {
  if (logits.dtype != DType::kF32) fail("cuda sample: logits must be F32 (got {})", dtype_name(logits.dtype));
  if (static_cast<int64_t>(params.size()) != logits.rows)
    fail("cuda sample: {} parameter sets for {} logits rows", params.size(), logits.rows);
  if (logits.rows == 0) return;
  std::vector<kc::SampleRow> rows(params.size());
  bool any_random = false;
  for (size_t i = 0; i < params.size(); ++i) {
    const SamplingParams& p = params[i];
    if (!(p.temperature >= 0.0f)) fail("cuda sample: temperature {} must be >= 0", p.temperature);
    rows[i] = kc::SampleRow{p.temperature, p.top_k, p.top_p, p.min_p, sampling_uniform(p.seed, p.step)};
    any_random = any_random || p.temperature > 0.0f;
  }
  auto* dparams = static_cast<kc::SampleRow*>(scratch(kSampleParams, rows.size() * sizeof(kc::SampleRow)));
  auto* dids = static_cast<int32_t*>(scratch(kSampleIds, rows.size() * sizeof(int32_t)));
  staging_.copy(dparams, rows.data(), rows.size() * sizeof(kc::SampleRow), stream_);
  const auto [argmax, argmax_bytes] =
      zeroed_scratch(kArgmax, kc::argmax_scratch_size(logits.rows, logits.cols));
  void* ws = nullptr;
  size_t ws_bytes = 0;
  if (any_random) {
    ws_bytes = kc::sampler_workspace_bytes(logits.cols);
    ws = scratch(kSampler, ws_bytes);
  }
  kc::launch_sample(static_cast<const float*>(logits.data), logits.stride, logits.rows, logits.cols, dparams,
                    any_random, dids, argmax, argmax_bytes, ws, ws_bytes, stream_);
  if (rows.size() > ids_pinned_count_) {  // page-locked, so the copy below is a plain DMA
    LATHE_CUDA_CHECK(cudaStreamSynchronize(stream_));
    if (ids_pinned_) LATHE_CUDA_CHECK(cudaFreeHost(ids_pinned_));
    ids_pinned_ = nullptr;
    ids_pinned_count_ = std::max<size_t>(rows.size(), 256);
    LATHE_CUDA_CHECK(cudaMallocHost(&ids_pinned_, ids_pinned_count_ * sizeof(int32_t)));
  }
  LATHE_CUDA_CHECK(
      cudaMemcpyAsync(ids_pinned_, dids, rows.size() * sizeof(int32_t), cudaMemcpyDeviceToHost, stream_));
  LATHE_CUDA_CHECK(cudaStreamSynchronize(stream_));
  std::copy(ids_pinned_, ids_pinned_ + rows.size(), out_ids);
}

}  // namespace cuda_detail

bool cuda_available() { return lathe::cuda::device_count() > 0; }

std::unique_ptr<Backend> make_cuda_backend(int device) { return std::make_unique<cuda_detail::CudaBackend>(device); }

}  // namespace lathe::ops
