// The reference sampler: the rule of ops/sampling.h, step by step, on one row of logits.
#include <algorithm>
#include <cmath>
#include <vector>

#include "backends/cpu/cpu_ops.h"
#include "core/error.h"
#include "core/numeric.h"

namespace lathe::cpu {
namespace {

// Stable LSD radix sort of keys by their upper 32 bits (4 byte passes). Keys that tie there keep
// their incoming order, so keys built in index order end up ordered by (upper, index).
void radix_sort_upper32(std::vector<uint64_t>& keys) {
  std::vector<uint64_t> scratch(keys.size());
  for (int shift = 32; shift < 64; shift += 8) {
    size_t offsets[257] = {};
    for (uint64_t key : keys) offsets[((key >> shift) & 0xffu) + 1]++;
    if (offsets[((keys[0] >> shift) & 0xffu) + 1] == keys.size()) continue;  // one bucket: nothing moves
    for (int b = 0; b < 256; ++b) offsets[b + 1] += offsets[b];
    for (uint64_t key : keys) scratch[offsets[(key >> shift) & 0xffu]++] = key;
    keys.swap(scratch);
  }
}

}  // namespace

int32_t argmax(const float* values, int64_t n) {
  int64_t best = 0;
  for (int64_t i = 1; i < n; ++i) {
    if (values[i] > values[best] || (std::isnan(values[best]) && !std::isnan(values[i]))) best = i;
  }
  return static_cast<int32_t>(best);
}

int32_t sample_row(const float* logits, int64_t vocab, float temperature, int32_t top_k, float top_p, float min_p,
                   float u) {
  if (vocab <= 0) fail("cpu sample: empty logits row");
  if (!(temperature >= 0.0f)) fail("cpu sample: temperature {} must be >= 0", temperature);
  if (temperature == 0.0f) return argmax(logits, vocab);

  // p = softmax(logits / temperature) in f32 with max subtraction.
  std::vector<float> probs(static_cast<size_t>(vocab));
  float max_z = -INFINITY;
  for (int64_t i = 0; i < vocab; ++i) {
    probs[static_cast<size_t>(i)] = logits[i] / temperature;
    max_z = std::max(max_z, probs[static_cast<size_t>(i)]);
  }
  float sum = 0.0f;
  for (float& p : probs) {
    p = std::exp(p - max_z);
    sum += p;
  }
  if (!(sum > 0.0f) || !std::isfinite(sum)) fail("cpu sample: logits row has no finite maximum (NaN or infinite values)");
  for (float& p : probs) {
    p /= sum;
    if (std::isnan(p)) fail("cpu sample: logits row contains NaN");
  }

  // Candidates by p descending, ties by lower index; only the first top_k need ordering. Each
  // candidate is one 64-bit key, (~bits(p) << 32) | index: p >= 0, so its f32 bits order like
  // its value, and ascending keys are p descending, then index ascending, exactly.
  std::vector<uint64_t> keys(static_cast<size_t>(vocab));
  for (int64_t i = 0; i < vocab; ++i) {
    const uint32_t bits = float_to_bits(probs[static_cast<size_t>(i)]);
    keys[static_cast<size_t>(i)] = (static_cast<uint64_t>(0xffffffffu - bits) << 32) | static_cast<uint32_t>(i);
  }
  int64_t kept = vocab;
  if (top_k > 0 && top_k < vocab) {
    kept = top_k;
    std::partial_sort(keys.begin(), keys.begin() + kept, keys.end());
  } else {
    radix_sort_upper32(keys);
  }
  std::vector<int32_t> order(static_cast<size_t>(kept));
  for (int64_t j = 0; j < kept; ++j) order[static_cast<size_t>(j)] = static_cast<int32_t>(keys[static_cast<size_t>(j)] & 0xffffffffu);

  // Shortest prefix whose mass reaches top_p (at least one candidate).
  if (top_p < 1.0f) {
    float mass = 0.0f;
    for (int64_t j = 0; j < kept; ++j) {
      mass += probs[static_cast<size_t>(order[static_cast<size_t>(j)])];
      if (mass >= top_p) {
        kept = j + 1;
        break;
      }
    }
  }

  // Drop candidates below min_p * p_max; candidates are sorted, so this trims the tail.
  if (min_p > 0.0f) {
    const float threshold = min_p * probs[static_cast<size_t>(order[0])];
    int64_t j = 1;
    while (j < kept && !(probs[static_cast<size_t>(order[static_cast<size_t>(j)])] < threshold)) ++j;
    kept = j;
  }

  float kept_total = 0.0f;
  for (int64_t j = 0; j < kept; ++j) kept_total += probs[static_cast<size_t>(order[static_cast<size_t>(j)])];
  const float target = u * kept_total;
  float cumulative = 0.0f;
  for (int64_t j = 0; j < kept; ++j) {
    cumulative += probs[static_cast<size_t>(order[static_cast<size_t>(j)])];
    if (cumulative > target) return order[static_cast<size_t>(j)];
  }
  return order[static_cast<size_t>(kept - 1)];  // only reachable when u * total rounds up to total
}

}  // namespace lathe::cpu
