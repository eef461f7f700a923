#pragma once
// The CUDA backend (compiled only when CUDA is: callers guard with #if LATHE_HAVE_CUDA).
// Activations are BF16; weights keep their stored type (FP8 stays FP8 with its f32 scales).
// Linear layers route through ops/linear_dispatch (decode GEMV tiers, cuBLASLt at prefill).
#include <memory>

#include "ops/attention_plan.h"
#include "ops/backend.h"

namespace lathe::ops {

// True when a CUDA device is usable (never throws; false without a driver or device).
bool cuda_available();

// The backend on device `device` (0-based). Throws lathe::Error naming the device when it does
// not exist. Reads the linear levers (LATHE_FFN_BATCH16, LATHE_FFN_GEMV_MAX_M) once and logs
// them in one boot line.
std::unique_ptr<Backend> make_cuda_backend(int device = 0);

// Extra knobs of the CUDA backend beyond ops::Backend (reach them with dynamic_cast).
class CudaBackendControls {
 public:
  virtual ~CudaBackendControls() = default;
  // The attention configuration the serve resolved at boot (levers, target SM count, widest
  // decode batch); used to size the attention workspace. Call before the first forward.
  virtual void configure_attention(const AttentionConfig& config) = 0;
};

}  // namespace lathe::ops
