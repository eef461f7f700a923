#include "backends/cuda/chained_launch.h"

#include <atomic>

namespace lathe::cuda {
namespace {

// Process-wide: one device type per process, set once by the backend before its first launch.
std::atomic<bool> g_chained{false};
std::atomic<int> g_next_first{0};

}  // namespace

void set_chained_launch(bool enabled) { g_chained.store(enabled, std::memory_order_relaxed); }

bool chained_launch_enabled() { return g_chained.load(std::memory_order_relaxed); }

void set_chained_next_first(int mask) { g_next_first.store(mask, std::memory_order_relaxed); }

int chained_next_first() { return g_next_first.load(std::memory_order_relaxed); }

}  // namespace lathe::cuda
