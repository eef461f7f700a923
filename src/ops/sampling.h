#pragma once
// Per-request sampling parameters and the reproducible sampling rule both backends implement.
//
// Rule (reference: backends/cpu): temperature == 0 -> argmax (lowest index wins ties).
// Otherwise p = softmax(logits / temperature) in f32; candidates sorted by p descending (ties by
// lower index); keep the first top_k (0 = all); keep the shortest prefix whose mass reaches
// top_p (always at least one); drop candidates with p < min_p * p_max; draw u in [0, 1) from
// counter-based RNG keyed by (seed, step) and pick the first candidate whose cumulative kept
// mass exceeds u * kept_total. `step` is the index of the token being generated within its
// request, so a request's draws never depend on what else is in the batch.
#include <cstdint>

namespace lathe::ops {

struct SamplingParams {
  float temperature = 0.0f;
  int32_t top_k = 0;
  float top_p = 1.0f;
  float min_p = 0.0f;
  uint64_t seed = 0;
  uint64_t step = 0;
};

// The uniform draw in [0, 1) for (seed, step): a splitmix64-style hash of both, top 24 bits.
// Deterministic and identical on host and device.
inline float sampling_uniform(uint64_t seed, uint64_t step) {
  uint64_t z = seed * 0x9E3779B97F4A7C15ull + step * 0xD1B54A32D192ED03ull + 0x632BE59BD9B4E019ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return static_cast<float>(z >> 40) * (1.0f / 16777216.0f);
}

}  // namespace lathe::ops
