#pragma once
// Host side of the bulk-copy stream GEMV kernel (gemv_stream.cu), used by gemv.cu's launcher.
#include <cuda_runtime.h>

#include <cstdint>

#include "backends/cuda/gemv_common.cuh"

namespace lathe::cuda::gemv_detail {

// Rows per CTA (8 consumer warps x 16 rows): the unit of the flattened work is one 128-row
// block x one 128-k step.
inline constexpr int kStreamRows = 128;
// Grid of the default: one CTA per SM of an H100/H200. A constant (not read off the device) so
// the split of every row block is a pure function of (n, k).
inline constexpr int kStreamCtas = 132;

// Units per CTA for `ctas` CTAs: ceil(total / ctas), where total = ceil(n / 128) * (k / 128).
int64_t stream_cta_units(int64_t n, int64_t k, int ctas);
// CTAs actually launched (those with a non-empty range).
int64_t stream_grid(int64_t n, int64_t k, int ctas);
// Deepest smem ring that fits one CTA per SM (stages of 256 bytes of every weight row), at most 5.
int stream_default_stages(int tier, bool fp8);
// Workspace the stream kernel needs: partial floats and counters for `ctas`.
size_t stream_partial_floats(int ctas);

// Launches the stream kernel; params.ksteps/total_units/cta_units are filled here. row_bytes:
// 256 (default) or 512 bytes of each weight row per stage (512: two stages only). tma: weights
// by 2-D tensor copies (one per warp and stage; 256-byte rows, deepest ring; stages ignored);
// with them, ctas_per_sm 2 or 3 sizes the ring for that many CTAs per SM (else one).
void launch_stream(int tier, Params params, bool fp8, int stages, int ctas, int row_bytes, bool tma, int ctas_per_sm,
                   cudaStream_t stream);

}  // namespace lathe::cuda::gemv_detail
