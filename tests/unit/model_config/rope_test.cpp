// compute_rope against (a) the spec's formulas evaluated here in double and (b) the tables
// transformers' Qwen3RotaryEmbedding builds (fixture from tools/gen_rope_fixture.py).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>

#include "../io/test_util.h"
#include "io/json_util.h"
#include "model/config.h"

namespace lathe::model {
namespace {

using nlohmann::json;

ModelConfig config_with(const json& rope_scaling, int64_t head_dim = 128, double theta = 1e6) {
  json config = {{"model_type", "qwen3"}, {"hidden_size", 4096},       {"num_attention_heads", 32},
                 {"head_dim", head_dim},  {"rope_theta", theta},       {"max_position_embeddings", 40960},
                 {"rope_scaling", rope_scaling}};
  return parse_model_config(config.dump(), "config.json");
}

// Distance in units in the last place between two finite floats of the same sign.
int64_t ulp_distance(float a, float b) {
  int32_t ia, ib;
  std::memcpy(&ia, &a, 4);
  std::memcpy(&ib, &b, 4);
  return std::llabs(static_cast<int64_t>(ia) - static_cast<int64_t>(ib));
}

TEST(Rope, DefaultIsThetaToTheMinusTwoIOverR) {
  const RopeTables tables = compute_rope(config_with(nullptr));
  ASSERT_EQ(tables.inv_freq.size(), 64u);
  EXPECT_EQ(tables.attention_scaling, 1.0f);
  for (int i = 0; i < 64; ++i) {
    const double expected = std::pow(1e6, -2.0 * i / 128.0);
    EXPECT_NEAR(tables.inv_freq[static_cast<size_t>(i)], expected, expected * 1e-6) << i;
  }
  EXPECT_EQ(tables.inv_freq[0], 1.0f);
}

TEST(Rope, LinearDividesByFactor) {
  const RopeTables plain = compute_rope(config_with(nullptr));
  const RopeTables linear = compute_rope(config_with({{"rope_type", "linear"}, {"factor", 4.0}}));
  ASSERT_EQ(linear.inv_freq.size(), plain.inv_freq.size());
  for (size_t i = 0; i < plain.inv_freq.size(); ++i) EXPECT_EQ(linear.inv_freq[i], plain.inv_freq[i] / 4.0f) << i;
}

TEST(Rope, DynamicBelowMaxPositionsEqualsDefault) {
  const RopeTables plain = compute_rope(config_with(nullptr));
  const RopeTables dynamic = compute_rope(config_with({{"type", "dynamic"}, {"factor", 2.0}}));
  EXPECT_EQ(dynamic.inv_freq, plain.inv_freq);
  EXPECT_EQ(dynamic.attention_scaling, 1.0f);
}

// Qwen's long-context setting, by the spec's yarn formula (section 2) in double.
TEST(Rope, YarnMatchesSpecFormula) {
  const double theta = 1e6, s = 4.0, original = 32768.0;
  const int r = 128;
  const RopeTables tables =
      compute_rope(config_with({{"rope_type", "yarn"}, {"factor", s}, {"original_max_position_embeddings", 32768}}));
  auto corr = [&](double n) { return r * std::log(original / (2 * M_PI * n)) / (2 * std::log(theta)); };
  double lo = std::max(std::floor(corr(32.0)), 0.0);
  double hi = std::min(std::ceil(corr(1.0)), static_cast<double>(r - 1));
  if (lo == hi) hi += 0.001;
  ASSERT_EQ(tables.inv_freq.size(), 64u);
  int blended = 0;
  for (int i = 0; i < r / 2; ++i) {
    const double ramp = std::clamp((i - lo) / (hi - lo), 0.0, 1.0);
    const double w = 1.0 - ramp;
    const double base_freq = std::pow(theta, -2.0 * i / r);
    const double expected = (1 - w) * base_freq / s + w * base_freq;
    EXPECT_NEAR(tables.inv_freq[static_cast<size_t>(i)], expected, expected * 2e-6) << i;
    if (ramp > 0.0 && ramp < 1.0) ++blended;
  }
  EXPECT_GT(blended, 0);  // the case exercises the ramp, not only its ends
  EXPECT_FLOAT_EQ(tables.attention_scaling, static_cast<float>(0.1 * std::log(s) + 1.0));
}

TEST(Rope, YarnAttentionFactorRules) {
  const json base = {{"rope_type", "yarn"}, {"factor", 40.0}, {"original_max_position_embeddings", 4096}};
  json explicit_factor = base;
  explicit_factor["attention_factor"] = 1.25;
  EXPECT_EQ(compute_rope(config_with(explicit_factor)).attention_scaling, 1.25f);
  json mscale = base;
  mscale["mscale"] = 1.0;
  mscale["mscale_all_dim"] = 0.5;
  const double expected = (0.1 * 1.0 * std::log(40.0) + 1.0) / (0.1 * 0.5 * std::log(40.0) + 1.0);
  EXPECT_FLOAT_EQ(compute_rope(config_with(mscale)).attention_scaling, static_cast<float>(expected));
  json only_mscale = base;
  only_mscale["mscale"] = 1.0;  // both are needed; otherwise the factor rule applies
  EXPECT_FLOAT_EQ(compute_rope(config_with(only_mscale)).attention_scaling,
                  static_cast<float>(0.1 * std::log(40.0) + 1.0));
}

// The fixture holds transformers' own inv_freq (float32) for config.json variants, which are
// parsed here by lathe's parser. theta^e is correctly rounded in lathe and not always in torch's
// CPU pow, so entries may differ by one ulp (two after yarn's blend); every other step follows
// HF's float32 operations, so most entries are bit-equal.
TEST(Rope, MatchesTransformersFixture) {
  const io::Json fixture = io::read_json_file(std::string(LATHE_FIXTURES_DIR) + "/rope/qwen3_rope.json");
  ASSERT_GE(fixture.at("cases").size(), 10u);
  size_t entries = 0, exact = 0;
  int64_t max_ulp = 0;
  for (const io::Json& entry : fixture.at("cases")) {
    const std::string name = entry.at("name").get<std::string>();
    SCOPED_TRACE(name);
    const ModelConfig config = parse_model_config(entry.at("config").dump(), name + "/config.json");
    EXPECT_EQ(config.rope_scaling.type, entry.at("rope_type").get<std::string>());
    const RopeTables tables = compute_rope(config);
    const std::vector<double> expected = entry.at("inv_freq").get<std::vector<double>>();
    ASSERT_EQ(tables.inv_freq.size(), expected.size());
    for (size_t i = 0; i < expected.size(); ++i) {
      const float want = static_cast<float>(expected[i]);  // exact: the fixture holds float32 values
      EXPECT_LE(ulp_distance(tables.inv_freq[i], want), 2) << "inv_freq[" << i << "] " << tables.inv_freq[i]
                                                           << " vs HF " << want;
      ++entries;
      exact += tables.inv_freq[i] == want ? 1 : 0;
      max_ulp = std::max(max_ulp, ulp_distance(tables.inv_freq[i], want));
    }
    EXPECT_EQ(tables.attention_scaling, static_cast<float>(entry.at("attention_scaling").get<double>()));
  }
  // Most entries must be bit-equal; a systematic difference would show up here.
  EXPECT_GE(exact * 100, entries * 90) << exact << " of " << entries << " bit-equal";
  std::printf("rope fixture: %zu of %zu inv_freq entries bit-equal to transformers, max %lld ulp\n", exact, entries,
              static_cast<long long>(max_ulp));
}

}  // namespace
}  // namespace lathe::model
