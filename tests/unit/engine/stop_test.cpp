#include "engine/stop.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace lathe::engine {
namespace {

// Feeds pieces; returns the concatenated released text (and whether a stop matched).
struct Fed {
  std::string text;
  bool stopped = false;
  std::vector<std::string> releases;
};

Fed feed(StopStringMatcher& matcher, const std::vector<std::string>& pieces, bool flush_at_end = true) {
  Fed fed;
  for (const std::string& piece : pieces) {
    StopStringMatcher::Result r = matcher.append(piece);
    fed.releases.push_back(r.text);
    fed.text += r.text;
    if (r.stopped) {
      fed.stopped = true;
      return fed;
    }
  }
  if (flush_at_end) fed.text += matcher.flush();
  return fed;
}

TEST(TokenStop, StopIdWinsOverLengthAndLengthRulesApply) {
  TokenStopRules rules{.max_tokens = 3, .max_model_len = 10, .stop_token_ids = {7, 9}};
  EXPECT_FALSE(check_token_stop(rules, 4, 1, 5).has_value());
  EXPECT_EQ(check_token_stop(rules, 4, 2, 9), FinishReason::kStop);
  EXPECT_EQ(check_token_stop(rules, 4, 3, 7), FinishReason::kStop);  // both apply: stop first
  EXPECT_EQ(check_token_stop(rules, 4, 3, 5), FinishReason::kLength);
  rules.max_tokens = 100;
  EXPECT_FALSE(check_token_stop(rules, 4, 5, 5).has_value());
  EXPECT_EQ(check_token_stop(rules, 4, 6, 5), FinishReason::kLength);  // 4 + 6 == max_model_len
  EXPECT_STREQ(finish_reason_name(FinishReason::kStop), "stop");
  EXPECT_STREQ(finish_reason_name(FinishReason::kLength), "length");
}

TEST(StopStrings, NoStopsPassesEverythingThrough) {
  StopStringMatcher matcher;
  EXPECT_TRUE(matcher.empty());
  const Fed fed = feed(matcher, {"he", "llo", " wor", "ld"});
  EXPECT_FALSE(fed.stopped);
  EXPECT_EQ(fed.releases, (std::vector<std::string>{"he", "llo", " wor", "ld"}));
  EXPECT_EQ(matcher.held_back(), 0u);
}

TEST(StopStrings, MatchInsideOnePieceCutsBeforeIt) {
  StopStringMatcher matcher({"STOP"});
  const Fed fed = feed(matcher, {"hello STOP world"});
  EXPECT_TRUE(fed.stopped);
  EXPECT_EQ(fed.text, "hello ");
  EXPECT_TRUE(matcher.append("more").text.empty());  // nothing after a stop
  EXPECT_TRUE(matcher.flush().empty());
}

TEST(StopStrings, StopSpanningPiecesIsHeldBackThenDropped) {
  StopStringMatcher matcher({"STOP"});
  const Fed fed = feed(matcher, {"ab", "cS", "TO", "Pxyz"});
  EXPECT_TRUE(fed.stopped);
  EXPECT_EQ(fed.releases, (std::vector<std::string>{"ab", "c", "", ""}));
  EXPECT_EQ(fed.text, "abc");
}

TEST(StopStrings, HeldBackTextIsReleasedOnceDisproven) {
  StopStringMatcher matcher({"STOP"});
  EXPECT_EQ(matcher.append("xS").text, "x");
  EXPECT_EQ(matcher.held_back(), 1u);
  EXPECT_EQ(matcher.append("T").text, "");
  EXPECT_EQ(matcher.held_back(), 2u);
  EXPECT_EQ(matcher.append("x").text, "STx");
  EXPECT_EQ(matcher.held_back(), 0u);
  EXPECT_EQ(matcher.append("ST").text, "");
  EXPECT_EQ(matcher.flush(), "ST");  // the stream ended for another reason
}

TEST(StopStrings, SelfOverlappingStopUsesEarliestPossibleStart) {
  StopStringMatcher matcher({"aab"});
  const Fed fed = feed(matcher, {"a", "a", "a", "b"});
  EXPECT_TRUE(fed.stopped);
  EXPECT_EQ(fed.releases, (std::vector<std::string>{"", "", "a", ""}));
  EXPECT_EQ(fed.text, "a");
}

TEST(StopStrings, TheFirstStopToCompleteEndsTheStream) {
  // "bc" completes with the third piece, before "abcd" could: the stream ends there even though
  // the next piece would have completed an earlier-starting stop.
  StopStringMatcher matcher({"abcd", "bc"});
  const Fed fed = feed(matcher, {"a", "b", "c", "d"});
  EXPECT_TRUE(fed.stopped);
  EXPECT_EQ(fed.text, "a");
}

TEST(StopStrings, EarliestOfSeveralStopsWins) {
  StopStringMatcher matcher({"world", "lo w"});
  StopStringMatcher::Result r = matcher.append("hello world");
  EXPECT_TRUE(r.stopped);
  EXPECT_EQ(r.text, "hel");
  EXPECT_EQ(r.matched, "lo w");
}

TEST(StopStrings, MultibyteStopSplitInsideACharacter) {
  const std::string stop = "\xE3\x80\x82";  // U+3002
  StopStringMatcher matcher({stop});
  const Fed fed = feed(matcher, {"\xE4\xBD\xA0\xE3", "\x80", "\x82\xE5\xA5\xBD"});
  EXPECT_TRUE(fed.stopped);
  EXPECT_EQ(fed.text, "\xE4\xBD\xA0");
}

// The longest suffix of `text` that is a proper prefix of some stop (what must be held back).
size_t brute_force_hold(const std::string& text, const std::vector<std::string>& stops) {
  for (size_t p = 0; p < text.size(); ++p) {
    const std::string suffix = text.substr(p);
    for (const std::string& stop : stops) {
      if (suffix.size() < stop.size() && stop.compare(0, suffix.size(), suffix) == 0) return text.size() - p;
    }
  }
  return 0;
}

TEST(StopStrings, RandomisedAgainstPrefixSearch) {
  std::mt19937 rng(77);
  const std::string alphabet = "abc";
  for (int trial = 0; trial < 5000; ++trial) {
    std::vector<std::string> stops;
    const int num_stops = 1 + static_cast<int>(rng() % 3);
    for (int i = 0; i < num_stops; ++i) {
      std::string stop;
      const int len = 1 + static_cast<int>(rng() % 4);
      for (int j = 0; j < len; ++j) stop += alphabet[rng() % alphabet.size()];
      stops.push_back(stop);
    }
    std::string text;
    std::vector<std::string> pieces;
    const int num_pieces = static_cast<int>(rng() % 12);
    for (int i = 0; i < num_pieces; ++i) {
      std::string piece;
      const int len = static_cast<int>(rng() % 4);
      for (int j = 0; j < len; ++j) piece += alphabet[rng() % alphabet.size()];
      pieces.push_back(piece);
      text += piece;
    }
    // Reference: generation ends at the first piece after which the text contains a stop
    // string; the text is cut at the earliest occurrence present at that point.
    size_t cut = std::string::npos;
    std::string prefix;
    for (const std::string& piece : pieces) {
      prefix += piece;
      for (const std::string& stop : stops) cut = std::min(cut, prefix.find(stop));
      if (cut != std::string::npos) break;
    }

    StopStringMatcher matcher(stops);
    std::string released;
    std::string seen;
    bool stopped = false;
    for (const std::string& piece : pieces) {
      seen += piece;
      StopStringMatcher::Result r = matcher.append(piece);
      released += r.text;
      if (r.stopped) {
        stopped = true;
        break;
      }
      // Not stopped: released + held == everything seen, and exactly the necessary suffix is held.
      ASSERT_EQ(released.size() + matcher.held_back(), seen.size()) << "trial " << trial;
      ASSERT_EQ(matcher.held_back(), brute_force_hold(seen, stops)) << "trial " << trial;
    }
    if (!stopped) released += matcher.flush();
    ASSERT_EQ(stopped, cut != std::string::npos) << "trial " << trial;
    ASSERT_EQ(released, cut == std::string::npos ? text : text.substr(0, cut)) << "trial " << trial;
  }
}

}  // namespace
}  // namespace lathe::engine
