// The Split pre-tokenizer and the Oniguruma -> PCRE2 pattern translation.
#include <gtest/gtest.h>

#include "core/error.h"
#include "test_support.h"
#include "tokenizer/pre_tokenizer.h"

namespace lathe::tokenizer::test {
namespace {

// The Qwen3 Split pattern, as tokenizer.json stores it.
const char* kQwen3Pattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

std::vector<std::string> pieces_of(const SplitPreTokenizer& split, std::string_view text) {
  std::vector<std::string_view> views;
  split.split(text, views);
  return {views.begin(), views.end()};
}

TEST(PreTokenizer, TranslatesWhiteSpaceClassesOnly) {
  std::string ws = "\\t-\\r\\x{20}\\x{85}\\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}\\x{205F}\\x{3000}";
  EXPECT_EQ(translate_pattern(R"(\s+)", "t"), "[" + ws + "]+");
  EXPECT_EQ(translate_pattern(R"((?!\S))", "t"), "(?![^" + ws + "])");
  EXPECT_EQ(translate_pattern(R"([^\s\p{L}])", "t"), "[^" + ws + "\\p{L}]");
  EXPECT_EQ(translate_pattern(R"(\\s[]\s][[:alpha:]\s])", "t"), "\\\\s[]" + ws + "][[:alpha:]" + ws + "]");
  EXPECT_EQ(translate_pattern(R"(\p{N}\d'x)", "t"), R"(\p{N}\d'x)");
  EXPECT_THROW(translate_pattern(R"([\S])", "t"), Error);
  EXPECT_THROW(translate_pattern(R"(\Qa\E)", "t"), Error);
  EXPECT_THROW(translate_pattern(R"([abc)", "t"), Error);
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
