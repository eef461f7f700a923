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
enum class SplitRule : int { kSeed = 0, kEven = 1 };

LATHE_SPLIT_FN int split_length(int len, int splits, int min_per, int rule) {
  if (rule == static_cast<int>(SplitRule::kEven)) {
    int used = len / min_per;
    used = used < 1 ? 1 : (used > splits ? splits : used);
    const int n = (len + used - 1) / used;
    return n > 1 ? n : 1;
  }
  const int n = (len + splits - 1) / splits;
  return n > min_per ? n : min_per;
}

}  // namespace lathe::cuda

#undef LATHE_SPLIT_FN
