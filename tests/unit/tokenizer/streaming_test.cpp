// The streaming detokenizer and the byte-level stream decoder on every corpus string: the
// concatenation of emitted pieces equals the full decode, and no piece is invalid UTF-8.
#include <gtest/gtest.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "test_support.h"
#include "tokenizer/streaming_detokenizer.h"
#include "tokenizer/utf8.h"

namespace lathe::tokenizer::test {
namespace {

const Tokenizer& tiny() {
  static const Tokenizer tokenizer = Tokenizer::load(tiny_dir());
  return tokenizer;
}

// Feeds `ids` one at a time; checks every piece and returns the concatenation.
std::string stream_ids(const Tokenizer& tokenizer, const std::vector<int32_t>& ids, bool skip_special,
                       int& held_back) {
  StreamingDetokenizer stream(tokenizer, skip_special);
  std::string out;
  for (int32_t id : ids) {
    std::string piece = stream.push(id);
    EXPECT_FALSE(find_invalid_utf8(piece).has_value()) << "invalid UTF-8 piece " << escaped(piece);
    held_back += stream.pending_bytes() > 0;
    out += piece;
  }
  std::string tail = stream.flush();
  EXPECT_FALSE(find_invalid_utf8(tail).has_value());
  EXPECT_EQ(stream.pending_bytes(), 0u);
  return out + tail;
}

void check_stream(const Tokenizer& tokenizer, const char* refs_file) {
  ReferenceFile file = read_references(refs_file);
  ASSERT_GT(file.records.size(), 100u);
  int held_back = 0;
  for (const Reference& ref : file.records) {
    EXPECT_EQ(stream_ids(tokenizer, ref.ids, false, held_back), ref.decode);
    EXPECT_EQ(stream_ids(tokenizer, ref.ids, true, held_back), ref.decode_skip_special);
  }
  // The corpus has multi-byte characters split over tokens, so some pushes must hold bytes back.
  EXPECT_GT(held_back, 0);
}

TEST(StreamingDetokenizer, Qwen3EveryCorpusString) { check_stream(qwen3(), "tokenizer/qwen3_refs.jsonl"); }
TEST(StreamingDetokenizer, TinyEveryCorpusString) { check_stream(tiny(), "tokenizer/tiny_refs.jsonl"); }
TEST(StreamingDetokenizer, Qwen3BrokenAndRandomSequences) {
  check_stream(qwen3(), "tokenizer/qwen3_decode_refs.jsonl");
}
TEST(StreamingDetokenizer, TinyBrokenAndRandomSequences) {
  check_stream(tiny(), "tokenizer/tiny_decode_refs.jsonl");
}

TEST(StreamingDetokenizer, Qwen3BatchPushEqualsSinglePushes) {
  std::vector<int32_t> ids = qwen3().encode("h\u00e9llo \U0001F44B\U0001F3FD <|im_end|> \u4e16\u754c");
  StreamingDetokenizer one(qwen3()), batch(qwen3());
  std::string a;
  for (int32_t id : ids) a += one.push(id);
  a += one.flush();
  std::string b = batch.push(ids) + batch.flush();
  EXPECT_EQ(a, b);
  EXPECT_EQ(a, qwen3().decode(ids));
}

// Byte-level API: split the decoded bytes of every corpus string at every byte boundary.
TEST(Utf8StreamDecoder, Qwen3CorpusSplitAtEveryByte) {
  ReferenceFile file = read_references("tokenizer/qwen3_refs.jsonl");
  size_t splits = 0;
  for (const Reference& ref : file.records) {
    std::string bytes;
    for (int32_t id : ref.ids) bytes += qwen3().token_bytes(id);
    ASSERT_EQ(utf8_lossy(bytes), ref.decode);
    for (size_t cut = 0; cut <= bytes.size(); ++cut) {
      Utf8StreamDecoder stream;
      std::string first = stream.push(std::string_view(bytes).substr(0, cut));
      std::string second = stream.push(std::string_view(bytes).substr(cut));
      std::string tail = stream.flush();
      ASSERT_FALSE(find_invalid_utf8(first).has_value());
      ASSERT_FALSE(find_invalid_utf8(second).has_value());
      ASSERT_EQ(first + second + tail, ref.decode) << "cut at byte " << cut;
      ++splits;
    }
    // And one byte at a time.
    Utf8StreamDecoder stream;
    std::string out;
    for (char c : bytes) {
      std::string piece = stream.push(std::string_view(&c, 1));
      ASSERT_FALSE(find_invalid_utf8(piece).has_value());
      out += piece;
    }
    ASSERT_EQ(out + stream.flush(), ref.decode);
  }
  EXPECT_GT(splits, 50000u);
}

// Ill-formed byte strings: utf8_lossy must equal Python's decode("utf-8", "replace") and the
// stream decoder must agree with it at every split.
TEST(Utf8StreamDecoder, IllFormedBytesMatchPythonReplacement) {
  std::ifstream in(fixture_path("tokenizer/utf8_lossy_refs.jsonl"));
  ASSERT_TRUE(in);
  std::string line;
  std::getline(in, line);  // header
  int cases = 0;
  while (std::getline(in, line)) {
    nlohmann::json record = nlohmann::json::parse(line);
    std::string hex = record["hex"].get<std::string>();
    std::string bytes;
    for (size_t i = 0; i + 1 < hex.size(); i += 2) bytes.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
    std::string want = record["text"].get<std::string>();
    EXPECT_EQ(utf8_lossy(bytes), want) << "bytes " << hex;
    EXPECT_EQ(find_invalid_utf8(bytes).has_value(), want.find("\xEF\xBF\xBD") != std::string::npos) << hex;
    for (size_t cut = 0; cut <= bytes.size(); ++cut) {
      Utf8StreamDecoder stream;
      std::string out = stream.push(std::string_view(bytes).substr(0, cut));
      out += stream.push(std::string_view(bytes).substr(cut));
      out += stream.flush();
      EXPECT_EQ(out, want) << "bytes " << hex << " cut " << cut;
    }
    ++cases;
  }
  EXPECT_GT(cases, 400);
}

}  // namespace
}  // namespace lathe::tokenizer::test
