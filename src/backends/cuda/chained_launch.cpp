#include "backends/cuda/chained_launch.h"

#include <atomic>

namespace lathe::cuda {
namespace {

// Process-wide: one device type per process, set once by the backend before its first launch.
std::atomic<bool> g_chained{false};

}  // namespace

void set_chained_launch(bool enabled) { g_chained.store(enabled, std::memory_order_relaxed); }

bool chained_launch_enabled() { return g_chained.load(std::memory_order_relaxed); }

}  // namespace lathe::cuda
