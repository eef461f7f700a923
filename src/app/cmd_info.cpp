// `lathe info [--target NAME]`: the build, the device found (or none) and the resolved target
// line. Needs no GPU: without one (or without a CUDA build) it reports "none" and resolves the
// generic target, or the one --target names.
#include <fmt/format.h>

#include <cstdio>
#include <optional>
#include <string>

#include "app/commands.h"
#include "target/target.h"

#ifdef LATHE_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace lathe::app {
namespace {

struct DeviceProbe {
  std::optional<target::DeviceInfo> info;
  std::string description;  // one line for the report
};

DeviceProbe probe_device() {
  DeviceProbe probe;
#ifdef LATHE_HAVE_CUDA
  int count = 0;
  if (cudaError_t err = cudaGetDeviceCount(&count); err != cudaSuccess || count == 0) {
    probe.description = err != cudaSuccess ? fmt::format("none ({})", cudaGetErrorString(err)) : "none (no CUDA device)";
    cudaGetLastError();  // clear the sticky "no device" error
    return probe;
  }
  cudaDeviceProp prop{};
  if (cudaError_t err = cudaGetDeviceProperties(&prop, 0); err != cudaSuccess) {
    probe.description = fmt::format("none ({})", cudaGetErrorString(err));
    return probe;
  }
  probe.info = target::DeviceInfo{prop.name, prop.multiProcessorCount};
  probe.description = fmt::format("{} (cc {}.{}, {} SMs, {:.1f} GiB, L2 {} MiB){}", prop.name, prop.major, prop.minor,
                                  prop.multiProcessorCount, static_cast<double>(prop.totalGlobalMem) / (1u << 30),
                                  prop.l2CacheSize >> 20, count > 1 ? fmt::format(", device 0 of {}", count) : "");
#else
  probe.description = "none (this build has no CUDA backend)";
#endif
  return probe;
}

std::string build_line() {
#ifdef LATHE_HAVE_CUDA
  int runtime = 0;
  cudaRuntimeGetVersion(&runtime);
  return fmt::format("CUDA backend compiled (built against CUDA {}.{}; runtime {}.{})", CUDART_VERSION / 1000,
                     (CUDART_VERSION % 1000) / 10, runtime / 1000, (runtime % 1000) / 10);
#else
  return "CPU only (CUDA backend not compiled)";
#endif
}

const Registration kInfo{"info", "Print the build, the device found and the resolved target line", [](CLI::App& cmd) {
  auto requested = std::make_shared<std::string>();
  cmd.add_option("--target", *requested, "Resolve this target (targets/<NAME>.toml) instead of the device's");
  return [requested]() -> int {
    const DeviceProbe device = probe_device();
    std::optional<std::string> name;
    if (!requested->empty()) name = *requested;
    const target::ResolvedTarget resolved =
        target::resolve_target(target::load_targets(), name, device.info, target::process_env());
    std::printf("build: %s\n", build_line().c_str());
    std::printf("device: %s\n", device.description.c_str());
    std::printf("target: %s (%s; %s, %d SMs, declared in %s)\n", resolved.decl.id.c_str(), resolved.chosen_by.c_str(),
                resolved.decl.hardware.name.c_str(), resolved.decl.hardware.sm_count, resolved.decl.source.c_str());
    for (const std::string& note : resolved.notes) std::printf("note: %s\n", note.c_str());
    std::printf("%s\n", target::boot_line(resolved).c_str());
    return 0;
  };
}};

}  // namespace
}  // namespace lathe::app
