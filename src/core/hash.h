#pragma once
// Stable, non-cryptographic hashes: FNV-1a (64-bit) over bytes (dummy weights' tensor keys,
// benchmark output fingerprints) and splitmix64 over one word (counter-based random streams: dummy
// weights, benchmark prompts, the host read probe's fill).
#include <cstdint>
#include <string_view>

namespace lathe {

constexpr uint64_t fnv1a64(std::string_view bytes) {
  uint64_t hash = 0xCBF29CE484222325ull;
  for (char c : bytes) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 0x100000001B3ull;
  }
  return hash;
}

// splitmix64: the golden-ratio increment, then two xor-shift-multiply rounds and a final xor-shift.
constexpr uint64_t splitmix64(uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace lathe
