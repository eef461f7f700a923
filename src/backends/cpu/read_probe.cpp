#include "backends/cpu/read_probe.h"

#include <atomic>

#include "core/hash.h"
#include "core/parallel.h"

namespace lathe::cpu {
namespace {

// One worker's range per parallel_for chunk: at least 1 MiB each, so small buffers stay on one
// thread and big ones use them all.
constexpr int64_t kMinWordsPerThread = int64_t{1} << 17;

}  // namespace

void fill_read_probe(uint64_t* data, size_t words, uint64_t seed) {
  parallel_for(
      static_cast<int64_t>(words),
      [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) data[i] = splitmix64(seed + static_cast<uint64_t>(i)) | 1u;
      },
      kMinWordsPerThread);
}

uint64_t read_probe(const uint64_t* data, size_t words) {
  std::atomic<uint64_t> checksum{0};
  parallel_for(
      static_cast<int64_t>(words),
      [&](int64_t begin, int64_t end) {
        // Four independent sums, so the adds never wait on each other and the compiler may
        // vectorise; the memory system is the limit, not the arithmetic.
        uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
        int64_t i = begin;
        for (; i + 4 <= end; i += 4) {
          s0 += data[i];
          s1 += data[i + 1];
          s2 += data[i + 2];
          s3 += data[i + 3];
        }
        for (; i < end; ++i) s0 += data[i];
        checksum.fetch_add(s0 + s1 + s2 + s3, std::memory_order_relaxed);
      },
      kMinWordsPerThread);
  return checksum.load(std::memory_order_relaxed);
}

}  // namespace lathe::cpu
