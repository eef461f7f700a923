// The host read-ceiling probe (backends/cpu/read_probe.h): the fill is a pure function of (seed,
// index) with no zero word, and the probe's result is the words' sum whatever the thread split.
#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <vector>

#include "backends/cpu/read_probe.h"

namespace lathe {
namespace {

// Several 1 MiB worker shares plus a ragged tail, so the threaded split and the 4-word unroll's
// remainder both run.
constexpr size_t kWords = (size_t{3} << 17) + 7;

TEST(CpuReadProbe, FillIsSeededAndNeverZero) {
  std::vector<uint64_t> a(kWords), b(kWords), c(kWords);
  cpu::fill_read_probe(a.data(), kWords, 7);
  cpu::fill_read_probe(b.data(), kWords, 7);
  cpu::fill_read_probe(c.data(), kWords, 8);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  for (size_t i = 0; i < kWords; ++i) ASSERT_NE(a[i], 0u) << "word " << i;
}

TEST(CpuReadProbe, ReturnsTheWordsSum) {
  std::vector<uint64_t> data(kWords);
  cpu::fill_read_probe(data.data(), kWords, 11);
  // Unsigned addition wraps modulo 2^64, the probe's contract.
  const uint64_t expected = std::accumulate(data.begin(), data.end(), uint64_t{0});
  EXPECT_EQ(cpu::read_probe(data.data(), kWords), expected);
  EXPECT_EQ(cpu::read_probe(data.data(), 3), data[0] + data[1] + data[2]);
  EXPECT_EQ(cpu::read_probe(data.data(), 0), 0u);
}

}  // namespace
}  // namespace lathe
