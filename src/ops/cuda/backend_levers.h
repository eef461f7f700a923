#pragma once
// Levers of the CUDA backend itself, read once when a backend is constructed, each with the on/off
// grammar of target/levers.h (a spelling that does not parse keeps the default, with a warning)
// and one log line with its resolved value.
namespace lathe::ops::cuda {

// Chained launches (backends/cuda/chained_launch.cuh): on for sm_90+ unless LATHE_CHAINED_LAUNCH
// is off. Switches chained launches for a device of compute capability `sm_major` (process-wide).
void configure_chained_launch(int sm_major);

// SwiGLU fused into the down projection's decode GEMV (the GEMV stages silu(gate) * up as its
// activations; no silu_mul launch): on unless LATHE_FUSE_SWIGLU_DOWN is off. Rows are the same
// bytes either way (backends/cuda/activation.cuh), so the lever changes time only.
bool resolve_fused_swiglu_down();

}  // namespace lathe::ops::cuda
