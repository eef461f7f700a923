// TokenizerConfig: special-token strings and the chat template, in every form
// tokenizer_config.json uses, plus chat_template.jinja precedence.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "test_support.h"
#include "tokenizer/tokenizer_config.h"

namespace lathe::tokenizer::test {
namespace {

namespace fs = std::filesystem;

class TempDir {
 public:
  TempDir() {
    path_ = fs::temp_directory_path() / ("lathe_tok_config_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  const fs::path& path() const { return path_; }
  void write(const std::string& name, const std::string& text) const {
    fs::create_directories((path_ / name).parent_path());
    std::ofstream(path_ / name, std::ios::binary) << text;
  }

 private:
  fs::path path_;
};

TEST(TokenizerConfig, Qwen3) {
  TokenizerConfig config = TokenizerConfig::load(qwen3_dir());
  EXPECT_EQ(config.eos_token, "<|im_end|>");
  EXPECT_EQ(config.pad_token, "<|endoftext|>");
  EXPECT_FALSE(config.bos_token.has_value());  // "bos_token": null
  EXPECT_FALSE(config.unk_token.has_value());
  EXPECT_FALSE(config.add_bos_token);
  ASSERT_TRUE(config.chat_template.has_value());
  EXPECT_EQ(config.chat_template->rfind("{%- if tools %}", 0), 0u);
  EXPECT_NE(config.chat_template_source.find("tokenizer_config.json:chat_template"), std::string::npos);
  EXPECT_TRUE(config.named_chat_templates.empty());
}

TEST(TokenizerConfig, TinyFixtureCarriesTheQwen3Template) {
  TokenizerConfig tiny = TokenizerConfig::load(tiny_dir());
  TokenizerConfig qwen = TokenizerConfig::load(qwen3_dir() + "/tokenizer_config.json");
  EXPECT_EQ(tiny.chat_template, qwen.chat_template);
  EXPECT_EQ(tiny.eos_token, "<|im_end|>");
  EXPECT_EQ(tiny.pad_token, "<|endoftext|>");
  EXPECT_FALSE(tiny.bos_token.has_value());
}

TEST(TokenizerConfig, AddedTokenObjectsAndListTemplates) {
  nlohmann::json json = {
      {"bos_token", {{"__type", "AddedToken"}, {"content", "<s>"}, {"lstrip", false}}},
      {"eos_token", "</s>"},
      {"pad_token", nullptr},
      {"add_bos_token", true},
      {"chat_template", {{{"name", "default"}, {"template", "D"}}, {{"name", "tool_use"}, {"template", "T"}}}}};
  TokenizerConfig config = TokenizerConfig::parse(json.dump(), "cfg.json");
  EXPECT_EQ(config.bos_token, "<s>");
  EXPECT_EQ(config.eos_token, "</s>");
  EXPECT_FALSE(config.pad_token.has_value());
  EXPECT_TRUE(config.add_bos_token);
  EXPECT_EQ(config.chat_template, "D");
  EXPECT_EQ(config.named_chat_templates.at("tool_use"), "T");
  EXPECT_EQ(config.named_chat_templates.size(), 2u);

  json["chat_template"] = {{{"name", "tool_use"}, {"template", "T"}}};
  EXPECT_FALSE(TokenizerConfig::parse(json.dump(), "cfg.json").chat_template.has_value());
}

TEST(TokenizerConfig, BadFieldsNameFileAndField) {
  auto message = [](const std::string& text) {
    try {
      TokenizerConfig::parse(text, "dir/tokenizer_config.json");
    } catch (const Error& error) {
      return std::string(error.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message(R"({"eos_token": 5})").find("eos_token"), std::string::npos);
  EXPECT_NE(message(R"({"eos_token": {"x": 1}})").find("content"), std::string::npos);
  EXPECT_NE(message(R"({"chat_template": 7})").find("chat_template"), std::string::npos);
  EXPECT_NE(message(R"({"chat_template": [{"name": "a"}]})").find("chat_template[0]"), std::string::npos);
  EXPECT_NE(message(R"({"add_bos_token": "yes"})").find("add_bos_token"), std::string::npos);
  EXPECT_NE(message("{oops").find("dir/tokenizer_config.json"), std::string::npos);
  EXPECT_THROW(TokenizerConfig::load("/nonexistent/lathe/tokenizer_config.json"), Error);
}

TEST(TokenizerConfig, JinjaFilesTakePrecedence) {
  TempDir dir;
  dir.write("tokenizer_config.json", R"({"eos_token": "<e>", "chat_template": "from json"})");
  EXPECT_EQ(TokenizerConfig::load(dir.path()).chat_template, "from json");
  dir.write("chat_template.jinja", "from file");
  TokenizerConfig config = TokenizerConfig::load(dir.path());
  EXPECT_EQ(config.chat_template, "from file");
  EXPECT_EQ(config.eos_token, "<e>");
  EXPECT_NE(config.chat_template_source.find("chat_template.jinja"), std::string::npos);
  dir.write("additional_chat_templates/rag.jinja", "rag file");
  config = TokenizerConfig::load(dir.path());
  EXPECT_EQ(config.chat_template, "from file");
  EXPECT_EQ(config.named_chat_templates.at("rag"), "rag file");
  EXPECT_EQ(config.named_chat_templates.at("default"), "from file");
}

TEST(TokenizerConfig, DirectoryWithoutConfigIsEmpty) {
  TempDir dir;
  TokenizerConfig config = TokenizerConfig::load(dir.path());
  EXPECT_FALSE(config.eos_token.has_value());
  EXPECT_FALSE(config.chat_template.has_value());
}

}  // namespace
}  // namespace lathe::tokenizer::test
