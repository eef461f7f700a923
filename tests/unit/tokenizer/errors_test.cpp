// What the tokenizer refuses, and the API facts of the Qwen3 tokenizer (ids from
// shared/tokenizers/qwen3/tokenizer.json and spec section 6).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>

#include "core/error.h"
#include "test_support.h"
#include "tokenizer/byte_level.h"
#include "tokenizer/tokenizer.h"

namespace lathe::tokenizer::test {
namespace {

using nlohmann::json;

json tiny_json() {
  std::ifstream in(tiny_dir() + "/tokenizer.json");
  std::stringstream text;
  text << in.rdbuf();
  return json::parse(text.str());
}

// Expects from_json(spec) to throw lathe::Error whose message contains every `needles` entry.
void expect_refused(const json& spec, std::initializer_list<const char*> needles) {
  try {
    Tokenizer::from_json(spec.dump(), "test/tokenizer.json");
    ADD_FAILURE() << "expected lathe::Error for " << spec.dump().substr(0, 200);
  } catch (const Error& error) {
    std::string message = error.what();
    for (const char* needle : needles) EXPECT_NE(message.find(needle), std::string::npos) << message;
  }
}

TEST(TokenizerErrors, RefusesNonBpeModelsNamingTheType) {
  json word_piece = {
      {"version", "1.0"},
      {"added_tokens", json::array()},
      {"normalizer", nullptr},
      {"pre_tokenizer", {{"type", "Whitespace"}}},
      {"decoder", {{"type", "WordPiece"}, {"prefix", "##"}}},
      {"model", {{"type", "WordPiece"}, {"unk_token", "[UNK]"}, {"vocab", {{"[UNK]", 0}, {"a", 1}}}}}};
  expect_refused(word_piece, {"test/tokenizer.json", "model.type", "WordPiece"});
  json unigram = tiny_json();
  unigram["model"] = {{"type", "Unigram"}, {"vocab", json::array({json::array({"a", -1.0})})}};
  expect_refused(unigram, {"Unigram"});
}

TEST(TokenizerErrors, RefusesWhatIsNotByteLevel) {
  json spec = tiny_json();
  spec["normalizer"] = {{"type", "Lowercase"}};
  expect_refused(spec, {"normalizer", "Lowercase"});

  spec = tiny_json();
  spec["pre_tokenizer"] = {{"type", "Metaspace"}, {"replacement", "\u2581"}};
  expect_refused(spec, {"pre_tokenizer", "Metaspace"});

  spec = tiny_json();
  spec["pre_tokenizer"]["pretokenizers"].erase(1);  // drop the ByteLevel step
  expect_refused(spec, {"ByteLevel"});

  spec = tiny_json();
  spec["pre_tokenizer"]["pretokenizers"][0]["behavior"] = "Removed";
  expect_refused(spec, {"behavior", "Removed"});

  spec = tiny_json();
  spec["pre_tokenizer"]["pretokenizers"][1]["use_regex"] = true;
  expect_refused(spec, {"use_regex"});

  spec = tiny_json();
  spec["decoder"] = {{"type", "Metaspace"}};
  expect_refused(spec, {"decoder", "Metaspace"});

  spec = tiny_json();
  spec["model"]["dropout"] = 0.1;
  expect_refused(spec, {"dropout"});

  spec = tiny_json();
  spec["model"]["vocab"].erase("\u0120");  // the symbol of the space byte
  expect_refused(spec, {"byte-level symbol", "0x20"});

  spec = tiny_json();
  spec["model"]["merges"].push_back(json::array({"zz", "qq"}));
  expect_refused(spec, {"merges[121]", "zz"});

  spec = tiny_json();
  spec["model"]["merges"].push_back("no_space_here");
  expect_refused(spec, {"merges[121]"});

  spec = tiny_json();
  spec["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"] = "(unclosed";
  expect_refused(spec, {"Split", "regex"});
}

TEST(TokenizerErrors, BadFilesAndBadInput) {
  EXPECT_THROW(Tokenizer::from_json("{not json", "x.json"), Error);
  EXPECT_THROW(Tokenizer::from_json("[]", "x.json"), Error);
  EXPECT_THROW(Tokenizer::load("/nonexistent/dir/for/lathe"), Error);
  try {
    Tokenizer::load(tiny_dir()).encode("ok \xC3\x28 bad");
    ADD_FAILURE() << "invalid UTF-8 must be refused";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("byte 3"), std::string::npos) << error.what();
  }
  Tokenizer tiny = Tokenizer::load(tiny_dir());
  EXPECT_EQ(tiny.vocab_size(), 384);
  EXPECT_THROW(tiny.token_text(-1), Error);
  EXPECT_THROW(tiny.token_text(tiny.vocab_size()), Error);
}

TEST(TokenizerErrors, MergesAsStringsEqualMergesAsPairs) {
  json pairs = tiny_json();
  ASSERT_TRUE(pairs["model"]["merges"][0].is_array());
  json strings = pairs;
  for (json& merge : strings["model"]["merges"]) merge = merge[0].get<std::string>() + " " + merge[1].get<std::string>();
  Tokenizer a = Tokenizer::from_json(pairs.dump(), "pairs");
  Tokenizer b = Tokenizer::from_json(strings.dump(), "strings");
  ReferenceFile file = read_references("tokenizer/tiny_refs.jsonl");
  for (const Reference& ref : file.records) {
    EXPECT_EQ(a.encode(*ref.text), ref.ids);
    EXPECT_EQ(b.encode(*ref.text), ref.ids);
  }
}

TEST(Qwen3Tokenizer, SpecialTokensAndVocabulary) {
  const Tokenizer& tok = qwen3();
  EXPECT_EQ(tok.vocab_size(), 151669);  // 151643 regular + 26 added (HF get_vocab_size(True))
  EXPECT_EQ(tok.token_id("<|endoftext|>"), 151643);
  EXPECT_EQ(tok.token_id("<|im_start|>"), 151644);
  EXPECT_EQ(tok.token_id("<|im_end|>"), 151645);
  EXPECT_EQ(tok.token_id("<tool_call>"), 151657);
  EXPECT_EQ(tok.token_id("</tool_call>"), 151658);
  EXPECT_EQ(tok.token_id("<think>"), 151667);
  EXPECT_EQ(tok.token_id("</think>"), 151668);
  EXPECT_EQ(tok.token_id("\u0120the"), tok.encode(" the").at(0));  // byte-level form
  EXPECT_FALSE(tok.token_id("<|no_such_token|>").has_value());
  EXPECT_TRUE(tok.is_special(151643));
  EXPECT_TRUE(tok.is_special(151645));
  EXPECT_FALSE(tok.is_special(151667));  // <think> is added but not special
  EXPECT_TRUE(tok.is_added(151667));
  EXPECT_FALSE(tok.is_added(1));
  EXPECT_EQ(tok.token_text(151645), "<|im_end|>");
  EXPECT_EQ(tok.token_bytes(*tok.token_id("\u0120the")), " the");
  EXPECT_EQ(tok.added_tokens().size(), 26u);

  std::vector<int32_t> ids = tok.encode("<|im_start|>user\n<think>x</think><|im_end|>");
  EXPECT_EQ(ids.front(), 151644);
  EXPECT_EQ(ids.back(), 151645);
  EXPECT_EQ(tok.decode(ids, true), "user\n<think>x</think>");
  EXPECT_EQ(tok.decode(ids, false), "<|im_start|>user\n<think>x</think><|im_end|>");
  // Ids the tokenizer does not know are skipped, as HF does.
  std::vector<int32_t> unknown = {-5, 151700, 2000000000, ids.front()};
  EXPECT_EQ(tok.decode(unknown, false), "<|im_start|>");
}

TEST(Qwen3Tokenizer, EveryVocabularyTokenRoundTripsThroughTheByteMap) {
  // Every regular Qwen3 token is written in byte-level symbols: mapping its decoded bytes back
  // through the GPT-2 map must give its vocabulary text exactly.
  const Tokenizer& tok = qwen3();
  const ByteLevelMap& map = ByteLevelMap::get();
  int checked = 0;
  for (int32_t id = 0; id < tok.vocab_size(); ++id) {
    if (!tok.is_known(id) || tok.is_added(id)) continue;
    ASSERT_EQ(map.encode(tok.token_bytes(id)), tok.token_text(id)) << "id " << id;
    ++checked;
  }
  EXPECT_EQ(checked, 151643);
}

}  // namespace
}  // namespace lathe::tokenizer::test
