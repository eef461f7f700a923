// NFC against utf8proc and against HF: whole blocks of common scripts (unchanged by both), text
// that must change, and probes of every mark and composition (HF's output).
#include <gtest/gtest.h>
#include <utf8proc.h>

#include <cstdlib>

#include <nlohmann/json.hpp>

#include <fstream>

#include "test_support.h"
#include "tokenizer/normalizer.h"
#include "tokenizer/utf8.h"

namespace lathe::tokenizer::test {
namespace {

std::string utf8proc_nfc(const std::string& text) {
  utf8proc_uint8_t* mapped = nullptr;
  utf8proc_ssize_t n = utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(text.data()),
                                    static_cast<utf8proc_ssize_t>(text.size()), &mapped,
                                    static_cast<utf8proc_option_t>(UTF8PROC_STABLE | UTF8PROC_COMPOSE));
  std::string out = n >= 0 ? std::string(reinterpret_cast<char*>(mapped), static_cast<size_t>(n)) : "<error>";
  std::free(mapped);
  return out;
}

TEST(Normalizer, InertRangesAreTheirOwnNfc) {
  Normalizer nfc({NormalForm::kNfc});
  const std::pair<char32_t, char32_t> ranges[] = {
      {0x0001, 0x02FF}, {0x0400, 0x0482}, {0x2002, 0x206F}, {0x3000, 0x3029}, {0x3040, 0x3096}, {0x30A0, 0x30FF},
      {0x4E00, 0x9FFF}, {0xAC00, 0xD7A3}, {0xFE00, 0xFE0F}, {0xFF00, 0xFFEF}, {0x1F000, 0x1FAFF}, {0xE0000, 0xE007F}};
  for (const auto& [lo, hi] : ranges) {
    // Every code point after every other one of its range, in chunks, so pairs are covered too.
    std::string text;
    for (char32_t cp = lo; cp <= hi; ++cp) append_utf8(text, cp);
    std::string out;
    nfc.apply(text, out);
    EXPECT_EQ(out, text) << "range " << std::hex << static_cast<uint32_t>(lo);
    EXPECT_EQ(utf8proc_nfc(text), text) << "range " << std::hex << static_cast<uint32_t>(lo);
  }
}

TEST(Normalizer, NonInertTextIsNormalised) {
  Normalizer nfc({NormalForm::kNfc});
  std::string out;
  // Each of these starts inert and ends with a character that composes or changes.
  for (std::string text : {"cafe\u0301", "\u304b\u3099", "\u1100\u1161", "\u2126", "\u0374", "x\u0308",
                           "\uAC00\u11A8", "\u0041\u030A"}) {
    nfc.apply(text, out);
    EXPECT_EQ(out, utf8proc_nfc(text));
    EXPECT_NE(out, text);
  }
  Normalizer nfd({NormalForm::kNfd});
  nfd.apply("\u00e9", out);
  EXPECT_EQ(out, "e\u0301");
}

// HF's NFC of a probe string around every mark and every composition (and of every
// decomposable character), from tools/make_tokenizer_unicode_tables.py. HF's tables are older
// than utf8proc's; marks it does not know must stay where they are.
TEST(Normalizer, NfcMatchesHfOnEveryProbe) {
  std::ifstream in(fixture_path("tokenizer/nfc_probes.jsonl"));
  ASSERT_TRUE(in);
  std::string line;
  std::getline(in, line);  // header
  Normalizer nfc({NormalForm::kNfc});
  int probes = 0, differences = 0, utf8proc_differs = 0;
  std::string out;
  while (std::getline(in, line)) {
    nlohmann::json probe = nlohmann::json::parse(line);
    std::string text = probe[0].get<std::string>();
    std::string want = probe[1].get<std::string>();
    nfc.apply(text, out);
    if (out != want && ++differences <= 5) ADD_FAILURE() << "probe " << escaped(text) << ": got " << escaped(out);
    utf8proc_differs += utf8proc_nfc(text) != want;
    ++probes;
  }
  EXPECT_EQ(differences, 0);
  EXPECT_GT(probes, 7000);
  // The probes do exercise the difference between the two table versions.
  EXPECT_GT(utf8proc_differs, 50);
}

}  // namespace
}  // namespace lathe::tokenizer::test
