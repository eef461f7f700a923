// `lathe chat-template DIR` end to end: the built binary (LATHE_BINARY) reads a request on stdin
// and must print exactly transformers' rendering (tools/make_chat_refs.py references), from a
// tokenizer_config.json chat_template or from chat_template.jinja; bad input exits 1 with one
// "error: ..." line.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "test_util.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::ordered_json;

struct RunResult {
  int status = -1;
  std::string out;
  std::string err;
};

class ChatCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("lathe_chat_cli_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "model");
  }
  void TearDown() override { fs::remove_all(dir_); }

  void write(const fs::path& path, const std::string& text) {
    std::ofstream out(path, std::ios::binary);
    out << text;
  }

  RunResult run(const std::string& stdin_text) {
    write(dir_ / "in.json", stdin_text);
    std::string command = std::string("'") + LATHE_BINARY + "' chat-template '" + (dir_ / "model").string() + "' < '" +
                          (dir_ / "in.json").string() + "' > '" + (dir_ / "out.txt").string() + "' 2> '" +
                          (dir_ / "err.txt").string() + "'";
    int raw = std::system(command.c_str());
    RunResult result;
    result.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
    result.out = lathe::test::read_file((dir_ / "out.txt").string());
    result.err = lathe::test::read_file((dir_ / "err.txt").string());
    return result;
  }

  // tokenizer_config.json with the references' template and special tokens.
  void write_config(const ordered_json& refs, const std::string* chat_template) {
    ordered_json config = refs.at("special_tokens");
    if (chat_template) config["chat_template"] = *chat_template;
    write(dir_ / "model" / "tokenizer_config.json", config.dump());
  }

  fs::path dir_;
};

TEST_F(ChatCli, Qwen3ConversationsFromTokenizerConfig) {
  ordered_json refs = lathe::test::read_json(LATHE_FIXTURES_DIR "/chat/qwen3_chat_refs.json");
  std::string chat_template = refs.at("chat_template").get<std::string>();
  write_config(refs, &chat_template);
  size_t checked = 0;
  for (const auto& c : refs.at("cases")) {
    SCOPED_TRACE(c.at("name").get<std::string>());
    RunResult result = run(c.at("request").dump());
    if (c.value("error", false)) {
      EXPECT_EQ(result.status, 1);
      EXPECT_EQ(result.err.rfind("error: ", 0), 0u) << result.err;
      EXPECT_TRUE(result.out.empty());
    } else {
      EXPECT_EQ(result.status, 0) << result.err;
      EXPECT_EQ(result.out, c.at("expected").get<std::string>());
    }
    ++checked;
  }
  EXPECT_GE(checked, 20u);
}

TEST_F(ChatCli, ChatTemplateJinjaFileTakesPriority) {
  ordered_json refs = lathe::test::read_json(LATHE_FIXTURES_DIR "/chat/qwen3_5_chat_refs.json");
  std::string decoy = "decoy {{ messages|length }}";
  write_config(refs, &decoy);
  write(dir_ / "model" / "chat_template.jinja", lathe::test::read_file(LATHE_FIXTURES_DIR "/chat/qwen3_5_chat_template.jinja"));
  const auto& c = refs.at("cases").at(0);
  ASSERT_FALSE(c.value("error", false));
  RunResult result = run(c.at("request").dump());
  EXPECT_EQ(result.status, 0) << result.err;
  EXPECT_EQ(result.out, c.at("expected").get<std::string>());
}

TEST_F(ChatCli, RaiseExceptionMessageReachesStderr) {
  ordered_json refs = lathe::test::read_json(LATHE_FIXTURES_DIR "/chat/qwen3_5_chat_refs.json");
  write_config(refs, nullptr);
  write(dir_ / "model" / "chat_template.jinja", lathe::test::read_file(LATHE_FIXTURES_DIR "/chat/qwen3_5_chat_template.jinja"));
  for (const auto& c : refs.at("cases")) {
    if (!c.value("error", false) || c.at("error_type") != "TemplateError") continue;
    SCOPED_TRACE(c.at("name").get<std::string>());
    RunResult result = run(c.at("request").dump());
    EXPECT_EQ(result.status, 1);
    EXPECT_EQ(result.err, "error: " + c.at("error_message").get<std::string>() + "\n");
  }
}

TEST_F(ChatCli, BadInputFailsWithOneLine) {
  ordered_json refs = lathe::test::read_json(LATHE_FIXTURES_DIR "/chat/qwen3_chat_refs.json");
  std::string chat_template = refs.at("chat_template").get<std::string>();
  write_config(refs, &chat_template);
  for (const std::string input : {"not json", "[1, 2]", "{}", R"({"messages": "x"})",
                                  R"({"messages": [{"role": "user", "content": "x"}], "bogus": 1})",
                                  R"({"messages": [{"role": "user", "content": "x"}], "enable_thinking": "yes"})",
                                  R"({"messages": []})"}) {
    SCOPED_TRACE(input);
    RunResult result = run(input);
    EXPECT_EQ(result.status, 1);
    EXPECT_EQ(result.err.rfind("error: ", 0), 0u) << result.err;
    EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1) << result.err;
  }
  fs::remove(dir_ / "model" / "tokenizer_config.json");
  RunResult result = run(R"({"messages": [{"role": "user", "content": "x"}]})");
  EXPECT_EQ(result.status, 1);
  EXPECT_NE(result.err.find("no chat template"), std::string::npos) << result.err;
}

}  // namespace
