// The Split pre-tokenizer and the Oniguruma -> PCRE2 pattern translation.
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <fstream>

#include "core/error.h"
#include "test_support.h"
#include "tokenizer/pre_tokenizer.h"
#include "tokenizer/unicode_classes.h"
#include "tokenizer/utf8.h"

namespace lathe::tokenizer::test {
namespace {

// The Qwen3 Split pattern, as tokenizer.json stores it.
const char* kQwen3Pattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

std::string tp(std::string_view pattern) { return translate_pattern(pattern, "t").pcre2; }

std::vector<std::string> pieces_of(const SplitPreTokenizer& split, std::string_view text) {
  std::vector<std::string_view> views;
  split.split(text, views);
  return {views.begin(), views.end()};
}

TEST(PreTokenizer, TranslatesWhiteSpaceAndCategoryClasses) {
  std::string ws = "\\t-\\r\\x{20}\\x{85}\\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}\\x{205F}\\x{3000}";
  // The Unicode 15/16 letters appended to \p{L}, as class items.
  std::string letters;
  const std::optional<CategoryDelta> delta = onig_category_delta("L");
  ASSERT_TRUE(delta.has_value());
  for (const CodePointRange& range : delta->extra) {
    letters += fmt::format("\\x{{{:X}}}", static_cast<uint32_t>(range.lo));
    if (range.hi != range.lo) letters += fmt::format("-\\x{{{:X}}}", static_cast<uint32_t>(range.hi));
  }
  ASSERT_FALSE(letters.empty());
  EXPECT_EQ(tp(R"(\s+)"), "[" + ws + "]+");
  EXPECT_EQ(tp(R"((?!\S))"), "(?![^" + ws + "])");
  EXPECT_EQ(tp(R"([^\s\p{L}])"), "[^" + ws + "\\p{L}" + letters + "]");
  EXPECT_EQ(tp(R"(\p{L}+)"), "[\\p{L}" + letters + "]+");
  EXPECT_EQ(tp(R"(\pL)"), "[\\pL" + letters + "]");
  EXPECT_EQ(tp(R"(\P{L})"), "[^\\p{L}" + letters + "]");
  EXPECT_EQ(tp(R"(\\s[]\s][[:alpha:]\s])"), "\\\\s[]" + ws + "][[:alpha:]" + ws + "]");
  // Categories without a delta, scripts and other escapes pass through.
  EXPECT_EQ(tp(R"(\p{Lt}\p{Han}\x{41}'x\w)"), R"(\p{Lt}\p{Han}\x{41}'x\w)");
  EXPECT_EQ(tp(R"(\d)").rfind("[\\d\\x{", 0), 0u);  // \d is \p{Nd}
  EXPECT_THROW(tp(R"([\S])"), Error);
  EXPECT_THROW(tp(R"([^\P{L}])"), Error);
  EXPECT_THROW(tp(R"([\D])"), Error);
  EXPECT_THROW(tp(R"(\Qa\E)"), Error);
  EXPECT_THROW(tp(R"([abc)"), Error);
  EXPECT_THROW(tp(R"(\p{L)"), Error);
  EXPECT_FALSE(translate_pattern(R"(\p{L}+|\s)", "t").delta_ranges.empty());
  EXPECT_TRUE(translate_pattern(R"([a-z]+|\s)", "t").delta_ranges.empty());
  EXPECT_EQ(translate_pattern(R"(\p{L}+)", "t", /*category_deltas=*/false).pcre2, R"(\p{L}+)");
}

// Exhaustive: for every code point, the translated \p{L}, \p{N}, \p{M} and \s match exactly
// what HF's Oniguruma matches (tests/fixtures/tokenizer/onig_classes.json, written by
// tools/make_tokenizer_unicode_tables.py from HF tokenizers).
TEST(PreTokenizer, TranslatedClassesEqualOnigurumaForEveryCodePoint) {
  std::ifstream in(fixture_path("tokenizer/onig_classes.json"));
  ASSERT_TRUE(in);
  nlohmann::json fixture = nlohmann::json::parse(in);
  for (const char* name : {"L", "N", "M", "s"}) {
    std::vector<bool> want(0x110000, false);
    for (const auto& range : fixture.at(name)) {
      for (uint32_t cp = range[0].get<uint32_t>(); cp <= range[1].get<uint32_t>(); ++cp) want[cp] = true;
    }
    std::string pattern = std::string(name) == "s" ? "\\s" : "\\p{" + std::string(name) + "}";
    SplitPreTokenizer split(pattern, name);
    // Every code point between two NULs (matched by none of these): a one-code-point piece
    // other than NUL is a match.
    std::vector<bool> got(0x110000, false);
    std::string text;
    for (uint32_t cp = 1; cp < 0x110000; ++cp) {
      if (cp >= 0xD800 && cp <= 0xDFFF) continue;
      text.push_back('\0');
      append_utf8(text, cp);
    }
    std::vector<std::string_view> pieces;
    split.split(text, pieces);
    for (std::string_view piece : pieces) {
      if (piece.empty() || piece[0] == '\0') continue;
      char32_t cp = 0;
      size_t length = piece.size();
      unsigned char lead = static_cast<unsigned char>(piece[0]);
      cp = length == 1 ? lead : length == 2 ? lead & 0x1F : length == 3 ? lead & 0x0F : lead & 0x07;
      for (size_t k = 1; k < length; ++k) cp = (cp << 6) | (static_cast<unsigned char>(piece[k]) & 0x3F);
      got[cp] = true;
    }
    size_t differences = 0;
    for (uint32_t cp = 1; cp < 0x110000; ++cp) {
      if (got[cp] != want[cp] && ++differences <= 5) {
        ADD_FAILURE() << name << ": U+" << std::hex << cp << " pcre2=" << got[cp] << " oniguruma=" << want[cp];
      }
    }
    EXPECT_EQ(differences, 0u) << name;
  }
}

TEST(PreTokenizer, QwenPatternSplitsLikeHf) {
  // Expected pieces are HF tokenizers' pre_tokenize_str output for the Qwen3 tokenizer
  // (tokenizers 0.23.3), written as raw text instead of byte-level symbols.
  SplitPreTokenizer split(kQwen3Pattern, "qwen3");
  EXPECT_TRUE(split.jit());
  using V = std::vector<std::string>;
  EXPECT_EQ(pieces_of(split, "a\u180e\u180eb"), (V{"a", "\u180e\u180e", "b"}));  // U+180E is not \s
  EXPECT_EQ(pieces_of(split, "a\u0085\u0085b"), (V{"a", "\u0085", "\u0085b"}));  // U+0085 is \s
  EXPECT_EQ(pieces_of(split, "a\x1c b"), (V{"a", "\x1c", " b"}));
  EXPECT_EQ(pieces_of(split, "it'\u017f y"), (V{"it", "'\u017f", " y"}));  // case folding: ſ ~ s
  EXPECT_EQ(pieces_of(split, "a\u3000\u3000b"), (V{"a", "\u3000", "\u3000b"}));
  EXPECT_EQ(pieces_of(split, "a\x0c\x0c" "b"), (V{"a", "\x0c", "\x0c" "b"}));
  // U+13C42 is a letter since Unicode 16 (the full-table variant of the regex handles it).
  EXPECT_EQ(pieces_of(split, "x\U00013c42|R"), (V{"x\U00013c42", "|R"}));
  EXPECT_EQ(pieces_of(split, "\U00013c42R"), (V{"\U00013c42R"}));
}

TEST(PreTokenizer, PiecesTileTheText) {
  SplitPreTokenizer split(kQwen3Pattern, "qwen3");
  std::string text = "Hello,  world!\r\n\tx  123 'S   \u00e9\u00e8 \U0001F600\n\n";
  std::vector<std::string_view> views;
  split.split(text, views);
  std::string joined;
  for (std::string_view piece : views) {
    EXPECT_FALSE(piece.empty());
    joined += piece;
  }
  EXPECT_EQ(joined, text);
}

TEST(PreTokenizer, GapsBetweenMatchesArePieces) {
  SplitPreTokenizer split("[0-9]+", "digits");
  EXPECT_EQ(pieces_of(split, "ab12cd345"), (std::vector<std::string>{"ab", "12", "cd", "345"}));
  SplitPreTokenizer empty_matches("x*", "empty");
  EXPECT_EQ(pieces_of(empty_matches, "abxxc"), (std::vector<std::string>{"ab", "xx", "c"}));
}

TEST(PreTokenizer, BadPatternIsAnError) {
  try {
    SplitPreTokenizer split("(unclosed", "file.json: pre_tokenizer Split #0 pattern");
    FAIL() << "expected an error";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("file.json"), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace lathe::tokenizer::test
