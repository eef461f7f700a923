// The sampling rule of ops/sampling.h: greedy, temperature, top-k, top-p, min-p, and the
// seeded draw, checked exactly against a double-precision restatement of the rule and
// statistically against the filtered distribution.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <vector>

#include "backends/cpu/cpu_ops.h"
#include "core/error.h"
#include "ops/backend.h"
#include "test_util.h"

namespace lathe {
namespace {

using test::Rng;

struct Filter {
  float temperature = 1.0f;
  int32_t top_k = 0;
  float top_p = 1.0f;
  float min_p = 0.0f;
};

// The rule restated in double: returns the kept candidates in order and their probabilities
// (unnormalised p), plus the smallest distance of any filter decision from its threshold so a
// test can refuse cases where f32 and double could disagree.
struct Kept {
  std::vector<int32_t> ids;
  std::vector<double> p;
  double margin = INFINITY;
};

Kept reference_filter(const std::vector<float>& logits, const Filter& f) {
  const size_t n = logits.size();
  std::vector<double> p(n);
  double mx = -INFINITY;
  for (size_t i = 0; i < n; ++i) mx = std::max(mx, static_cast<double>(logits[i]) / f.temperature);
  double sum = 0.0;
  for (size_t i = 0; i < n; ++i) sum += p[i] = std::exp(static_cast<double>(logits[i]) / f.temperature - mx);
  for (double& v : p) v /= sum;
  std::vector<int32_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return p[static_cast<size_t>(a)] > p[static_cast<size_t>(b)]; });
  Kept kept;
  size_t count = (f.top_k > 0 && static_cast<size_t>(f.top_k) < n) ? static_cast<size_t>(f.top_k) : n;
  if (f.top_p < 1.0f) {
    double mass = 0.0;
    for (size_t j = 0; j < count; ++j) {
      mass += p[static_cast<size_t>(order[j])];
      kept.margin = std::min(kept.margin, std::fabs(mass - f.top_p));
      if (mass >= f.top_p) {
        count = j + 1;
        break;
      }
    }
  }
  if (f.min_p > 0.0f) {
    const double threshold = f.min_p * p[static_cast<size_t>(order[0])];
    size_t j = 1;
    for (; j < count; ++j) {
      kept.margin = std::min(kept.margin, std::fabs(p[static_cast<size_t>(order[j])] - threshold));
      if (p[static_cast<size_t>(order[j])] < threshold) break;
    }
    count = j;
  }
  for (size_t j = 0; j < count; ++j) {
    kept.ids.push_back(order[j]);
    kept.p.push_back(p[static_cast<size_t>(order[j])]);
  }
  return kept;
}

ops::SamplingParams params_of(const Filter& f, uint64_t seed, uint64_t step) {
  ops::SamplingParams p;
  p.temperature = f.temperature;
  p.top_k = f.top_k;
  p.top_p = f.top_p;
  p.min_p = f.min_p;
  p.seed = seed;
  p.step = step;
  return p;
}

std::vector<int32_t> sample_rows(ops::Backend& backend, std::vector<float>& logits, int64_t vocab,
                                 const std::vector<ops::SamplingParams>& params) {
  std::vector<int32_t> ids(params.size(), -1);
  backend.sample(test::f32_act(logits, static_cast<int64_t>(params.size()), vocab), params, ids.data());
  return ids;
}

TEST(CpuSampling, GreedyTiesGoToLowestIndex) {
  auto backend = ops::make_cpu_backend();
  std::vector<float> logits = {1.0f, 5.0f, 2.0f, 5.0f, 5.0f, -1.0f, 3.0f, 4.0f, 7.0f, 7.0f};
  const auto ids = sample_rows(*backend, logits, 5, {ops::SamplingParams{}, ops::SamplingParams{}});
  EXPECT_EQ(ids[0], 1);
  EXPECT_EQ(ids[1], 3);  // row 2 = {-1, 3, 4, 7, 7}
  std::vector<float> flat(100, 0.25f);
  EXPECT_EQ(sample_rows(*backend, flat, 100, {ops::SamplingParams{}})[0], 0);
}

// Equal probabilities order by lower index in the candidate list (both the full sort and the
// partial top-k sort): keeping one candidate must keep the lowest-index tie.
TEST(CpuSampling, EqualProbabilitiesOrderByLowerIndex) {
  auto backend = ops::make_cpu_backend();
  std::vector<float> logits = {1.0f, 3.0f, 0.5f, 3.0f, 3.0f, 2.0f};
  for (int32_t top_k : {0, 1, 2, 4}) {
    Filter f;
    f.top_k = top_k;
    f.top_p = 1e-6f;
    for (uint64_t seed = 0; seed < 20; ++seed) {
      EXPECT_EQ(sample_rows(*backend, logits, 6, {params_of(f, seed, 0)})[0], 1) << "top_k " << top_k;
    }
  }
  // Three equal candidates kept (top_k 3): the draw walks them in index order 1, 3, 4.
  EXPECT_EQ(cpu::sample_row(logits.data(), 6, 1.0f, 3, 1.0f, 0.0f, 0.1f), 1);
  EXPECT_EQ(cpu::sample_row(logits.data(), 6, 1.0f, 3, 1.0f, 0.0f, 0.5f), 3);
  EXPECT_EQ(cpu::sample_row(logits.data(), 6, 1.0f, 3, 1.0f, 0.0f, 0.9f), 4);
  EXPECT_EQ(cpu::sample_row(logits.data(), 6, 1.0f, 0, 1.0f, 0.5f, 0.9f), 4);  // min_p keeps the same three
}

TEST(CpuSampling, TopKOneEqualsGreedy) {
  auto backend = ops::make_cpu_backend();
  Rng rng(51);
  const int64_t vocab = 1000;
  for (float temperature : {0.3f, 1.0f, 2.5f}) {
    for (int trial = 0; trial < 30; ++trial) {
      std::vector<float> logits = rng.normals(static_cast<size_t>(vocab), 3.0f);
      const int32_t greedy = sample_rows(*backend, logits, vocab, {ops::SamplingParams{}})[0];
      Filter f;
      f.temperature = temperature;
      f.top_k = 1;
      const int32_t got = sample_rows(*backend, logits, vocab, {params_of(f, static_cast<uint64_t>(trial), 3)})[0];
      EXPECT_EQ(got, greedy) << "temperature " << temperature << " trial " << trial;
      // A vanishing top_p keeps exactly one candidate too.
      f.top_k = 0;
      f.top_p = 1e-6f;
      EXPECT_EQ(sample_rows(*backend, logits, vocab, {params_of(f, static_cast<uint64_t>(trial), 9)})[0], greedy);
    }
  }
}

// The draw for (seed, step) is fixed: the same token on every call, whatever the other rows.
TEST(CpuSampling, SeededDrawIsReproducibleAndBatchIndependent) {
  auto backend = ops::make_cpu_backend();
  Rng rng(52);
  const int64_t vocab = 300;
  const int rows = 6;
  std::vector<float> logits = rng.normals(static_cast<size_t>(rows * vocab), 2.0f);
  std::vector<ops::SamplingParams> params;
  for (int r = 0; r < rows; ++r) {
    Filter f;
    f.temperature = 0.7f + 0.2f * static_cast<float>(r);
    f.top_k = r % 2 == 0 ? 0 : 50;
    f.top_p = r % 3 == 0 ? 1.0f : 0.9f;
    f.min_p = r == 4 ? 0.05f : 0.0f;
    params.push_back(params_of(f, 1000 + static_cast<uint64_t>(r), 17 + static_cast<uint64_t>(r)));
  }
  const std::vector<int32_t> batch = sample_rows(*backend, logits, vocab, params);
  for (int repeat = 0; repeat < 3; ++repeat) EXPECT_EQ(sample_rows(*backend, logits, vocab, params), batch);
  for (int r = 0; r < rows; ++r) {
    std::vector<float> one(logits.begin() + r * vocab, logits.begin() + (r + 1) * vocab);
    EXPECT_EQ(sample_rows(*backend, one, vocab, {params[static_cast<size_t>(r)]})[0], batch[static_cast<size_t>(r)]) << "row " << r;
  }
  // Reversed batch order: every row still draws its own token.
  std::vector<float> reversed;
  std::vector<ops::SamplingParams> reversed_params;
  for (int r = rows - 1; r >= 0; --r) {
    reversed.insert(reversed.end(), logits.begin() + r * vocab, logits.begin() + (r + 1) * vocab);
    reversed_params.push_back(params[static_cast<size_t>(r)]);
  }
  const std::vector<int32_t> rev = sample_rows(*backend, reversed, vocab, reversed_params);
  for (int r = 0; r < rows; ++r) EXPECT_EQ(rev[static_cast<size_t>(rows - 1 - r)], batch[static_cast<size_t>(r)]);
}

// Every draw equals the double restatement of the rule with u = sampling_uniform(seed, step):
// the first kept candidate whose cumulative mass exceeds u * kept_total (draws within 1e-5 of
// a boundary are skipped, where f32 and double may legitimately disagree).
TEST(CpuSampling, DrawsFollowTheRuleExactly) {
  auto backend = ops::make_cpu_backend();
  Rng rng(53);
  const int64_t vocab = 64;
  const Filter filters[] = {{1.0f, 0, 1.0f, 0.0f}, {0.8f, 5, 1.0f, 0.0f}, {1.3f, 0, 0.8f, 0.0f},
                            {1.0f, 0, 1.0f, 0.1f}, {0.9f, 20, 0.9f, 0.02f}};
  int64_t checked = 0;
  for (const Filter& f : filters) {
    std::vector<float> logits = rng.normals(static_cast<size_t>(vocab), 1.5f);
    const Kept kept = reference_filter(logits, f);
    ASSERT_GT(kept.margin, 1e-5) << "test logits sit on a filter threshold; pick another seed";
    const double total = std::accumulate(kept.p.begin(), kept.p.end(), 0.0);
    for (uint64_t seed = 0; seed < 400; ++seed) {
      const uint64_t step = seed % 7;
      const double target = static_cast<double>(ops::sampling_uniform(seed, step)) * total;
      double cumulative = 0.0;
      int32_t want = kept.ids.back();
      bool near_boundary = false;
      for (size_t j = 0; j < kept.ids.size(); ++j) {
        cumulative += kept.p[j];
        if (std::fabs(cumulative - target) < 1e-5) near_boundary = true;
        if (cumulative > target) {
          want = kept.ids[j];
          break;
        }
      }
      if (near_boundary) continue;
      EXPECT_EQ(sample_rows(*backend, logits, vocab, {params_of(f, seed, step)})[0], want)
          << "seed " << seed << " filter top_k " << f.top_k << " top_p " << f.top_p << " min_p " << f.min_p;
      ++checked;
    }
  }
  EXPECT_GT(checked, 1900);
}

// Over many seeds the empirical frequencies match the filtered, renormalised distribution
// (Pearson chi-square, loose threshold) and no filtered-out token ever appears.
TEST(CpuSampling, FrequenciesMatchTheFilteredDistribution) {
  auto backend = ops::make_cpu_backend();
  std::vector<float> logits = {2.0f, 1.5f, 1.1f, 0.5f, 0.0f, -0.5f, -1.0f, -3.0f};
  const int64_t vocab = static_cast<int64_t>(logits.size());
  const Filter filters[] = {{0.8f, 0, 1.0f, 0.0f}, {1.0f, 3, 1.0f, 0.0f}, {1.0f, 0, 0.7f, 0.0f},
                            {1.0f, 0, 1.0f, 0.15f}, {1.2f, 5, 0.9f, 0.05f}};
  const int draws = 40000;
  for (const Filter& f : filters) {
    const Kept kept = reference_filter(logits, f);
    ASSERT_GT(kept.margin, 1e-4);
    const double total = std::accumulate(kept.p.begin(), kept.p.end(), 0.0);
    std::vector<ops::SamplingParams> params;
    for (int d = 0; d < draws; ++d) params.push_back(params_of(f, static_cast<uint64_t>(d) * 7919u + 13u, static_cast<uint64_t>(d % 5)));
    std::vector<float> rows;
    rows.reserve(static_cast<size_t>(draws * vocab));
    for (int d = 0; d < draws; ++d) rows.insert(rows.end(), logits.begin(), logits.end());
    const std::vector<int32_t> ids = sample_rows(*backend, rows, vocab, params);
    std::vector<int64_t> counts(static_cast<size_t>(vocab), 0);
    for (int32_t id : ids) counts[static_cast<size_t>(id)]++;
    double chi2 = 0.0;
    std::vector<bool> is_kept(static_cast<size_t>(vocab), false);
    for (size_t j = 0; j < kept.ids.size(); ++j) {
      const size_t id = static_cast<size_t>(kept.ids[j]);
      is_kept[id] = true;
      const double expected = draws * kept.p[j] / total;
      chi2 += (static_cast<double>(counts[id]) - expected) * (static_cast<double>(counts[id]) - expected) / expected;
    }
    for (int64_t i = 0; i < vocab; ++i) {
      if (!is_kept[static_cast<size_t>(i)]) {
        EXPECT_EQ(counts[static_cast<size_t>(i)], 0) << "filtered token " << i << " drawn";
      }
    }
    const double df = static_cast<double>(kept.ids.size()) - 1.0;
    const double limit = 3.0 * df + 20.0;  // p-value below 1e-5 for df <= 7
    std::printf("[ chi2     ] T=%.2f top_k=%d top_p=%.2f min_p=%.2f: kept %zu, chi2 %.2f (df %.0f, limit %.0f)\n",
                static_cast<double>(f.temperature), f.top_k, static_cast<double>(f.top_p), static_cast<double>(f.min_p),
                kept.ids.size(), chi2, df, limit);
    EXPECT_LE(chi2, limit);
  }
}

// Explicit filter outcomes on p = {0.5, 0.3, 0.15, 0.05} (logits = log p, temperature 1).
TEST(CpuSampling, TopPAndMinPRemoveWhatTheyShould) {
  auto backend = ops::make_cpu_backend();
  const std::vector<float> base = {std::log(0.15f), std::log(0.5f), std::log(0.05f), std::log(0.3f)};
  // Index order by p: 1 (0.5), 3 (0.3), 0 (0.15), 2 (0.05).
  struct Case {
    Filter filter;
    std::vector<int32_t> allowed;
  };
  const Case cases[] = {
      {{1.0f, 0, 0.75f, 0.0f}, {1, 3}},     // 0.5 < 0.75 <= 0.8
      {{1.0f, 0, 0.85f, 0.0f}, {1, 3, 0}},  // 0.8 < 0.85 <= 0.95
      {{1.0f, 0, 0.4f, 0.0f}, {1}},         // the first candidate alone reaches 0.4
      {{1.0f, 0, 1.0f, 0.35f}, {1, 3}},     // threshold 0.175 drops 0.15 and 0.05
      {{1.0f, 0, 1.0f, 0.2f}, {1, 3, 0}},   // threshold 0.1 drops 0.05
      {{1.0f, 2, 1.0f, 0.0f}, {1, 3}},      // top_k
      {{1.0f, 3, 0.99f, 0.35f}, {1, 3}},    // all three, in order
  };
  for (const Case& c : cases) {
    std::vector<int64_t> counts(4, 0);
    std::vector<ops::SamplingParams> params;
    std::vector<float> rows;
    for (uint64_t seed = 0; seed < 3000; ++seed) {
      params.push_back(params_of(c.filter, seed, 0));
      rows.insert(rows.end(), base.begin(), base.end());
    }
    for (int32_t id : sample_rows(*backend, rows, 4, params)) counts[static_cast<size_t>(id)]++;
    for (int32_t id = 0; id < 4; ++id) {
      const bool allowed = std::find(c.allowed.begin(), c.allowed.end(), id) != c.allowed.end();
      if (allowed) {
        EXPECT_GT(counts[static_cast<size_t>(id)], 0) << "token " << id << " never drawn (top_k " << c.filter.top_k
                                                      << " top_p " << c.filter.top_p << " min_p " << c.filter.min_p << ")";
      } else {
        EXPECT_EQ(counts[static_cast<size_t>(id)], 0) << "token " << id << " should be filtered (top_k " << c.filter.top_k
                                                      << " top_p " << c.filter.top_p << " min_p " << c.filter.min_p << ")";
      }
    }
  }
}

// The draw itself, with u given: p = {0.5, 0.3, 0.15, 0.05}; cumulative 0.5, 0.8, 0.95, 1.
TEST(CpuSampling, PicksFirstCandidateWhoseMassExceedsTheDraw) {
  const std::vector<float> logits = {std::log(0.5f), std::log(0.3f), std::log(0.15f), std::log(0.05f)};
  EXPECT_EQ(cpu::sample_row(logits.data(), 4, 1.0f, 0, 1.0f, 0.0f, 0.0f), 0);
  EXPECT_EQ(cpu::sample_row(logits.data(), 4, 1.0f, 0, 1.0f, 0.0f, 0.49f), 0);
  EXPECT_EQ(cpu::sample_row(logits.data(), 4, 1.0f, 0, 1.0f, 0.0f, 0.51f), 1);
  EXPECT_EQ(cpu::sample_row(logits.data(), 4, 1.0f, 0, 1.0f, 0.0f, 0.81f), 2);
  EXPECT_EQ(cpu::sample_row(logits.data(), 4, 1.0f, 0, 1.0f, 0.0f, 0.96f), 3);
  EXPECT_EQ(cpu::sample_row(logits.data(), 4, 1.0f, 0, 1.0f, 0.0f, 0.99999994f), 3);
  // top_p 0.75 keeps {0, 1} with mass 0.8: u * 0.8 against 0.5.
  EXPECT_EQ(cpu::sample_row(logits.data(), 4, 1.0f, 0, 0.75f, 0.0f, 0.6f), 0);
  EXPECT_EQ(cpu::sample_row(logits.data(), 4, 1.0f, 0, 0.75f, 0.0f, 0.65f), 1);
  EXPECT_EQ(cpu::sample_row(logits.data(), 4, 1.0f, 0, 0.75f, 0.0f, 0.99f), 1);
}

TEST(CpuSampling, TemperatureDividesLogits) {
  auto backend = ops::make_cpu_backend();
  Rng rng(54);
  std::vector<float> logits = rng.normals(100, 2.0f);
  std::vector<float> halved(logits);
  for (float& v : halved) v *= 0.5f;  // exact
  for (uint64_t seed = 0; seed < 200; ++seed) {
    Filter hot;
    hot.temperature = 2.0f;
    Filter unit;
    EXPECT_EQ(sample_rows(*backend, logits, 100, {params_of(hot, seed, 1)})[0],
              sample_rows(*backend, halved, 100, {params_of(unit, seed, 1)})[0]);
  }
}

TEST(CpuSampling, RejectsBadInput) {
  auto backend = ops::make_cpu_backend();
  std::vector<float> logits = {0.0f, 1.0f, NAN, 2.0f};
  ops::SamplingParams warm;
  warm.temperature = 1.0f;
  EXPECT_THROW(sample_rows(*backend, logits, 4, {warm}), Error);
  logits[2] = 0.5f;
  ops::SamplingParams negative;
  negative.temperature = -1.0f;
  EXPECT_THROW(sample_rows(*backend, logits, 4, {negative}), Error);
  std::vector<int32_t> ids(2);
  EXPECT_THROW(backend->sample(test::f32_act(logits, 1, 4), {warm, warm}, ids.data()), Error);
}

}  // namespace
}  // namespace lathe
