// Every case of tests/fixtures/chat/jinja_refs.json (rendered by jinja2 in transformers' chat
// template environment, tools/make_jinja_refs.py) must render byte for byte the same here, and
// every case where jinja2 raised must raise here too.
#include <gtest/gtest.h>

#include "test_util.h"
#include "tokenizer/jinja/template.h"

namespace lathe::tokenizer::jinja {
namespace {

TEST(JinjaRefs, MatchesJinja2ByteForByte) {
  nlohmann::ordered_json refs = test::read_json(LATHE_FIXTURES_DIR "/chat/jinja_refs.json");
  const auto& cases = refs.at("cases");
  ASSERT_GE(cases.size(), 150u);
  size_t rendered = 0;
  size_t raised = 0;
  for (const auto& c : cases) {
    const std::string name = c.at("name").get<std::string>();
    SCOPED_TRACE(name);
    const std::string source = c.at("template").get<std::string>();
    const bool expect_error = c.value("error", false);
    std::string output;
    std::string error;
    bool raised_error = false;
    try {
      output = Template(source).render(c.at("context"));
    } catch (const lathe::Error& e) {
      error = e.what();
      raised_error = dynamic_cast<const RaisedError*>(&e) != nullptr;
    }
    if (expect_error) {
      EXPECT_FALSE(error.empty()) << "jinja2 raised " << c.at("error_type").get<std::string>() << ": "
                                  << c.at("error_message").get<std::string>() << "\nbut lathe rendered: " << output;
      // raise_exception() surfaces the template's own message unchanged.
      if (c.at("error_type") == "TemplateError") {
        EXPECT_TRUE(raised_error);
        EXPECT_EQ(error, c.at("error_message").get<std::string>());
      }
      ++raised;
    } else {
      EXPECT_TRUE(error.empty()) << "unexpected error: " << error;
      EXPECT_EQ(output, c.at("expected").get<std::string>());
      ++rendered;
    }
  }
  EXPECT_GT(raised, 30u);
  EXPECT_GT(rendered, 100u);
}

}  // namespace
}  // namespace lathe::tokenizer::jinja
