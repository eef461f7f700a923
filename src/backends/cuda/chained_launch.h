#pragma once
// Host switch of the chained (programmatic dependent) launches of chained_launch.cuh. Off until
// the CUDA backend sets it at construction from the device (sm_90+) and LATHE_CHAINED_LAUNCH.
namespace lathe::cuda {

void set_chained_launch(bool enabled);
bool chained_launch_enabled();

}  // namespace lathe::cuda
