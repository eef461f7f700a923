// The register ring's 4-row tier (gemv_ring_launch.cuh): this translation unit instantiates its kernels.
#include "backends/cuda/gemv_ring_launch.cuh"

namespace lathe::cuda::gemv_detail {

void launch_ring_tier4(bool balanced, bool fused, int epilogue, const Params& params, dim3 grid,
                       const RingConfig& cfg, cudaStream_t stream) {
  launch_tier_of<4>(balanced, fused, epilogue, params, grid, cfg, stream);
}

}  // namespace lathe::cuda::gemv_detail
