// Exact agreement with HF tokenizers (the fixtures of tools/make_tokenizer_refs.py): ids of every
// corpus string, and decode with and without skip_special, for Qwen3, the tiny tokenizer and the
// tiny tokenizer with lstrip/rstrip/single_word/normalized added tokens.
#include <gtest/gtest.h>

#include "test_support.h"
#include "tokenizer/tokenizer.h"

namespace lathe::tokenizer::test {
namespace {

struct Case {
  const char* name;
  const char* refs;
  std::string (*dir)();
};

std::string tiny_flags_dir() { return fixture_path("tokenizer/tiny_flags"); }

const Tokenizer& tokenizer_for(const Case& c) {
  if (std::string(c.name) == "qwen3") return qwen3();
  static const Tokenizer tiny = Tokenizer::load(tiny_dir());
  static const Tokenizer flags = Tokenizer::load(tiny_flags_dir());
  return std::string(c.name) == "tiny" ? tiny : flags;
}

class ReferenceTest : public ::testing::TestWithParam<Case> {};

TEST_P(ReferenceTest, EncodeMatchesHfIdsExactly) {
  ReferenceFile file = read_references(GetParam().refs);
  const Tokenizer& tokenizer = tokenizer_for(GetParam());
  ASSERT_GT(file.records.size(), 30u);
  int mismatches = 0;
  for (const Reference& ref : file.records) {
    ASSERT_TRUE(ref.text.has_value());
    std::vector<int32_t> ids = tokenizer.encode(*ref.text);
    if (ids != ref.ids) {
      ++mismatches;
      size_t at = 0;
      while (at < ids.size() && at < ref.ids.size() && ids[at] == ref.ids[at]) ++at;
      ADD_FAILURE() << GetParam().name << ": ids differ from HF (tokenizers " << file.tokenizers_version
                    << ") at index " << at << " (got " << ids.size() << " ids, want " << ref.ids.size()
                    << ") for text \"" << escaped(*ref.text).substr(0, 300) << "\"";
    }
  }
  EXPECT_EQ(mismatches, 0) << "of " << file.records.size() << " strings";
}

TEST_P(ReferenceTest, DecodeMatchesHfWithAndWithoutSkipSpecial) {
  ReferenceFile file = read_references(GetParam().refs);
  const Tokenizer& tokenizer = tokenizer_for(GetParam());
  for (const Reference& ref : file.records) {
    EXPECT_EQ(tokenizer.decode(ref.ids, false), ref.decode) << "text \"" << escaped(*ref.text).substr(0, 200) << "\"";
    EXPECT_EQ(tokenizer.decode(ref.ids, true), ref.decode_skip_special)
        << "text \"" << escaped(*ref.text).substr(0, 200) << "\"";
  }
}

TEST_P(ReferenceTest, RoundTripOfOwnEncodingEqualsHfDecode) {
  // decode(encode(text)) must give what HF gives for the same text: the text itself, up to
  // NFC normalisation.
  ReferenceFile file = read_references(GetParam().refs);
  const Tokenizer& tokenizer = tokenizer_for(GetParam());
  int identical = 0;
  for (const Reference& ref : file.records) {
    std::string round_trip = tokenizer.decode(tokenizer.encode(*ref.text), false);
    EXPECT_EQ(round_trip, ref.decode) << "text \"" << escaped(*ref.text).substr(0, 200) << "\"";
    identical += round_trip == *ref.text;
  }
  // Only NFD input may change under the corpus tokenizers (the flags tokenizer's lstrip/rstrip
  // tokens swallow whitespace by design); most strings come back unchanged.
  if (std::string(GetParam().name) != "tiny_flags") {
    EXPECT_GT(identical, static_cast<int>(file.records.size() * 8 / 10));
  }
}

INSTANTIATE_TEST_SUITE_P(Tokenizers, ReferenceTest,
                         ::testing::Values(Case{"qwen3", "tokenizer/qwen3_refs.jsonl", &qwen3_dir},
                                           Case{"tiny", "tokenizer/tiny_refs.jsonl", &tiny_dir},
                                           Case{"tiny_flags", "tokenizer/tiny_flags_refs.jsonl", &tiny_flags_dir}),
                         [](const ::testing::TestParamInfo<Case>& param) { return std::string(param.param.name); });

// Id sequences that are not whole encodings (slices cut inside characters, random ids incl.
// unknown ones): decode must reproduce HF's U+FFFD placement and skipping exactly.
class DecodeReferenceTest : public ::testing::TestWithParam<Case> {};

TEST_P(DecodeReferenceTest, PartialAndRandomIdSequencesDecodeLikeHf) {
  ReferenceFile file = read_references(GetParam().refs);
  const Tokenizer& tokenizer = tokenizer_for(GetParam());
  ASSERT_GT(file.records.size(), 100u);
  int with_replacement = 0;
  for (const Reference& ref : file.records) {
    EXPECT_EQ(tokenizer.decode(ref.ids, false), ref.decode);
    EXPECT_EQ(tokenizer.decode(ref.ids, true), ref.decode_skip_special);
    with_replacement += ref.decode.find("\xEF\xBF\xBD") != std::string::npos;
  }
  EXPECT_GT(with_replacement, 10) << "the fixture should exercise U+FFFD replacement";
}

INSTANTIATE_TEST_SUITE_P(Tokenizers, DecodeReferenceTest,
                         ::testing::Values(Case{"qwen3", "tokenizer/qwen3_decode_refs.jsonl", &qwen3_dir},
                                           Case{"tiny", "tokenizer/tiny_decode_refs.jsonl", &tiny_dir}),
                         [](const ::testing::TestParamInfo<Case>& param) { return std::string(param.param.name); });

}  // namespace
}  // namespace lathe::tokenizer::test
