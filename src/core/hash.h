#pragma once
// FNV-1a (64-bit) over bytes: a fast, stable, non-cryptographic fingerprint (dummy weights' tensor
// keys, benchmark output fingerprints).
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

}  // namespace lathe
