#pragma once
// The benchmarks' L2-promotion flags (--kv-l2-promotion, --tma-l2-promotion): one grammar (none,
// 0, 64, 128 or 256 bytes: target::parse_kv_l2_promotion, as LATHE_ATTN_KV_L2_PROMOTION reads it)
// handed to the backend setter of one kernel family's copies.
#include <cstdint>
#include <cstdio>
#include <optional>

#include "target/levers.h"

namespace lathe::bench {

// Parses `value` and sets it with `set`; prints "<what>: L2 promotion N bytes", or an error naming
// `flag` and returns false (the caller exits 2).
inline bool apply_l2_promotion_arg(const char* flag, const char* value, bool (*set)(int), const char* what) {
  const std::optional<int32_t> bytes = target::parse_kv_l2_promotion(value);
  if (!bytes || !set(*bytes)) {
    std::fprintf(stderr, "error: %s: %s is not none, 0, 64, 128 or 256\n", flag, value);
    return false;
  }
  std::printf("%s: L2 promotion %d bytes\n", what, *bytes);
  return true;
}

}  // namespace lathe::bench
