#include "app/backend_factory.h"

#include <algorithm>
#include <cstdlib>
#include <string>

#include "core/error.h"
#include "core/log.h"
#include "core/parallel.h"
#include "ops/profiling_backend.h"
#include "target/target.h"

#ifdef LATHE_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "ops/cuda_backend.h"
#endif

namespace lathe::app {
namespace {

#ifdef LATHE_HAVE_CUDA
std::unique_ptr<ops::Backend> make_cuda(const BackendRequest& request) {
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) {
    cudaGetLastError();
    fail("--device cuda: no usable CUDA device");
  }
  const target::ResolvedTarget resolved =
      target::resolve_boot_target(request.target, target::DeviceInfo{prop.name, prop.multiProcessorCount});
  std::unique_ptr<ops::Backend> backend = ops::make_cuda_backend(0);
  auto* controls = dynamic_cast<ops::CudaBackendControls*>(backend.get());
  if (controls == nullptr) fail("internal: the CUDA backend exposes no controls");
  ops::AttentionConfig config;
  config.levers = resolved.levers;
  config.sm_count = resolved.decl.hardware.sm_count;
  config.max_decode_seqs = std::max(1, request.max_decode_seqs);
  controls->configure_attention(config);
  return backend;
}
#endif

std::unique_ptr<ops::Backend> make_unprofiled(const BackendRequest& request) {
  const std::string& device = request.device;
  if (device != "auto" && device != "cpu" && device != "cuda") {
    fail("--device: unknown device '{}' (expected auto, cpu or cuda)", device);
  }
#ifdef LATHE_HAVE_CUDA
  if (device == "cuda" || (device == "auto" && ops::cuda_available())) return make_cuda(request);
#else
  if (device == "cuda") fail("--device cuda: this build has no CUDA backend (built without nvcc)");
#endif
  if (log_once("backend:cpu")) spdlog::info("backend: CPU reference (f32 activations, {} threads)", cpu_threads());
  return ops::make_cpu_backend();
}

}  // namespace

bool profiling_enabled() {
  static const bool enabled = [] {
    const char* value = std::getenv("LATHE_PROFILE");
    const std::string text = value ? value : "";
    if (text.empty() || text == "0") return false;
    if (text == "1") return true;
    spdlog::warn("LATHE_PROFILE='{}' is not 0 or 1: profiling stays off", text);
    return false;
  }();
  return enabled;
}

std::unique_ptr<ops::Backend> make_backend(const BackendRequest& request) {
  std::unique_ptr<ops::Backend> backend = make_unprofiled(request);
  if (!profiling_enabled()) return backend;
  if (log_once("backend:profile")) {
    spdlog::info("LATHE_PROFILE=1: timing every op of every step ({}); decode graphs are off, every step runs "
                 "eagerly; the per-phase table prints at exit",
                 backend->kind() == ops::DeviceKind::kCuda ? "CUDA events, read once per step" : "host clock");
  }
  return ops::make_profiling_backend(std::move(backend));
}

}  // namespace lathe::app
