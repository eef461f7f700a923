#include "core/parallel.h"

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <string>
#include <thread>
#include <vector>

namespace lathe {

int cpu_threads() {
  static const int threads = [] {
    if (const char* env = std::getenv("LATHE_CPU_THREADS")) {
      try {
        const int value = std::stoi(env);
        if (value >= 1) return value;
      } catch (const std::exception&) {
      }
    }
    return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  }();
  return threads;
}

void parallel_for(int64_t n, const std::function<void(int64_t, int64_t)>& fn, int64_t min_chunk) {
  if (n <= 0) return;
  const int64_t workers = std::min<int64_t>(cpu_threads(), std::max<int64_t>(1, n / std::max<int64_t>(1, min_chunk)));
  if (workers <= 1) {
    fn(0, n);
    return;
  }
  std::vector<std::thread> threads;
  std::vector<std::exception_ptr> errors(static_cast<size_t>(workers));
  const int64_t chunk = (n + workers - 1) / workers;
  for (int64_t w = 1; w < workers; ++w) {
    const int64_t begin = w * chunk;
    const int64_t end = std::min(n, begin + chunk);
    if (begin >= end) break;
    threads.emplace_back([&, w, begin, end] {
      try {
        fn(begin, end);
      } catch (...) {
        errors[static_cast<size_t>(w)] = std::current_exception();
      }
    });
  }
  try {
    fn(0, std::min(n, chunk));
  } catch (...) {
    errors[0] = std::current_exception();
  }
  for (std::thread& thread : threads) thread.join();
  for (const std::exception_ptr& error : errors) {
    if (error) std::rethrow_exception(error);
  }
}

}  // namespace lathe
