#pragma once
// The chained-launch lever of the CUDA backend (backends/cuda/chained_launch.cuh): on for sm_90+
// unless LATHE_CHAINED_LAUNCH is off (the on/off grammar of target/levers.h; a spelling that does
// not parse keeps the default, with a warning). Read once, when a backend is constructed.
namespace lathe::ops::cuda {

// Resolves the lever for a device of compute capability `sm_major`, switches chained launches
// accordingly (process-wide) and logs the resolved value.
void configure_chained_launch(int sm_major);

}  // namespace lathe::ops::cuda
