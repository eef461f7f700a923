#pragma once
// A tiny fork-join helper for the CPU reference: splits [0, n) into contiguous ranges, one per
// worker thread, and waits for all of them. Contiguous, fixed ranges keep every element's
// arithmetic independent of the thread count (results never depend on how work was split).
#include <cstdint>
#include <functional>

namespace lathe {

// Number of worker threads the CPU backend uses (LATHE_CPU_THREADS, else the hardware count).
int cpu_threads();

// Calls fn(begin, end) on disjoint ranges covering [0, n). Runs inline when n < min_chunk * 2
// or one thread is configured. Exceptions from workers are rethrown on the caller.
void parallel_for(int64_t n, const std::function<void(int64_t, int64_t)>& fn, int64_t min_chunk = 1);

}  // namespace lathe
