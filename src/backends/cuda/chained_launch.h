#pragma once
// Host switch of the chained (programmatic dependent) launches of chained_launch.cuh. Off until
// the CUDA backend sets it at construction from the device (sm_90+) and LATHE_CHAINED_LAUNCH.
namespace lathe::cuda {

void set_chained_launch(bool enabled);
bool chained_launch_enabled();

// Kernels that let the next chained grid launch BEFORE their own wait (chained_kernel_begin's
// `next_first`), so that grid's CTAs can be resident, and a decode GEMV can request its first
// weight steps, one kernel earlier: kNextFirstNorms covers the RMSNorms and SwiGLU (each of which
// precedes a GEMV), kNextFirstAttention the split-K attention reduce (before the o projection).
// A mask of those bits; 0: every kernel waits first. Set once by the backend
// (LATHE_CHAINED_NEXT_FIRST, ops/cuda/chained_launch_lever.cpp).
inline constexpr int kNextFirstNorms = 1;
inline constexpr int kNextFirstAttention = 2;
void set_chained_next_first(int mask);
int chained_next_first();

}  // namespace lathe::cuda
