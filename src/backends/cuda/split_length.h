#pragma once
// How a split-K decode CTA finds its KV range: positions per non-empty split of one sequence, a
// pure function of the sequence's own length and constants (never of the batch), computed on the
// device by the split-K kernel and tested on the host (tests/unit/splitk/split_length_test.cpp).
// Split s covers [s * n, min((s + 1) * n, len)); splits past the end are empty.
#if defined(__CUDACC__)
#define LATHE_SPLIT_FN __host__ __device__ __forceinline__
#else
#define LATHE_SPLIT_FN inline
#endif

namespace lathe::cuda {

// kSeed (the default, the seed's rule): n = max(ceil(len / splits), min_per); with a floor above
//   ceil(len / splits) the last non-empty split can be short (a ragged tail).
// kEven (opt-in, LATHE_ATTN_SPLIT_RULE=even): u = clamp(floor(len / min_per), 1, splits) splits
//   of n = ceil(len / u) positions: each at least min_per long when len >= min_per, none ragged.
// kAligned (opt-in, LATHE_ATTN_SPLIT_RULE=aligned): the seed's n rounded up to a multiple of
//   `granule` (the split kernel passes its warps x tile positions, so every warp of a full split
//   gets the same number of tiles); never more splits than the seed's rule uses.
enum class SplitRule : int { kSeed = 0, kEven = 1, kAligned = 2 };

// The rule's LATHE_ATTN_SPLIT_RULE spelling, for log lines.
inline const char* split_rule_name(SplitRule rule) {
  return rule == SplitRule::kEven ? "even" : rule == SplitRule::kAligned ? "aligned" : "seed";
}

LATHE_SPLIT_FN int split_length(int len, int splits, int min_per, int rule, int granule = 1) {
  if (rule == static_cast<int>(SplitRule::kAligned)) {
    const int n = (len + splits - 1) / splits;
    const int seed = n > min_per ? n : min_per;
    return (seed + granule - 1) / granule * granule;
  }
  if (rule == static_cast<int>(SplitRule::kEven)) {
    int used = len / min_per;
    used = used < 1 ? 1 : (used > splits ? splits : used);
    const int n = (len + used - 1) / used;
    return n > 1 ? n : 1;
  }
  const int n = (len + splits - 1) / splits;
  return n > min_per ? n : min_per;
}

// Slices of one split: the pieces that separate CTAs may take when a launch has too few
// (kv head, split) pairs to fill the device (batch 1). A split of n positions is cut into
// u = clamp(floor(n / min_per_slice), 1, slices) slices of ceil(n / u) positions, slice i covering
// [i * ceil(n / u), min((i + 1) * ceil(n / u), n)) of the split; 0 slices for an empty split. Like
// the split length, a function of the sequence's own length and constants, so a sequence's bytes
// never depend on its co-batch or on how many CTAs share its slices.
LATHE_SPLIT_FN int split_slices_used(int n, int slices, int min_per_slice) {
  if (n <= 0) return 0;
  int used = min_per_slice > 0 ? n / min_per_slice : n;
  used = used < 1 ? 1 : used;
  return used > slices ? (slices > 1 ? slices : 1) : used;
}

}  // namespace lathe::cuda

#undef LATHE_SPLIT_FN
