#pragma once
// The host's read ceiling probe (what `lathe bench latency --device cpu` quotes its floor against):
// every CPU worker thread (core/parallel.h) streams its own contiguous share of a buffer with
// 8-byte loads, the way the CPU backend's linears stream their weights.
#include <cstddef>
#include <cstdint>

namespace lathe::cpu {

// Fills `words` 8-byte words with a hash of (seed, index), each thread writing the share it will
// later read (so the pages are first touched, and placed, by their reader). Never zeros: untouched
// or zero pages can be served without reading memory.
void fill_read_probe(uint64_t* data, size_t words, uint64_t seed);

// Reads all `words` on every worker thread and returns their sum modulo 2^64, which does not
// depend on how the words were split between threads (the caller keeps it alive, so the loads
// cannot be dropped).
uint64_t read_probe(const uint64_t* data, size_t words);

}  // namespace lathe::cpu
