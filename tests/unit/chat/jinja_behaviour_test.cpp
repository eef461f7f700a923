// Interpreter behaviour that jinja2 references cannot pin down: error locations, deliberate
// divergences (printing a generator is an error here; jinja2 prints a memory address), the
// wall-clock global, and reuse of a parsed template.
#include <gtest/gtest.h>

#include <ctime>
#include <thread>

#include "tokenizer/jinja/template.h"

namespace lathe::tokenizer::jinja {
namespace {

std::string render(const std::string& source, const nlohmann::ordered_json& context = nlohmann::ordered_json::object()) {
  return Template(source).render(context);
}

std::string error_of(const std::string& source, const nlohmann::ordered_json& context = nlohmann::ordered_json::object()) {
  try {
    render(source, context);
  } catch (const lathe::Error& e) {
    return e.what();
  }
  return "";
}

TEST(JinjaBehaviour, RuntimeErrorsNameLineAndColumn) {
  std::string error = error_of("line one\n{% if true %}\n  {{ 1 + x.y }}\n{% endif %}");
  EXPECT_NE(error.find("line 3 column"), std::string::npos) << error;
  EXPECT_NE(error.find("'x' is undefined"), std::string::npos) << error;
}

TEST(JinjaBehaviour, SyntaxErrorsNameLineAndColumn) {
  std::string error = error_of("a\nb {{ 1 + }}");
  EXPECT_NE(error.find("line 2 column"), std::string::npos) << error;
  error = error_of("ok\n\n{% for x in y %}{% endif %}");
  EXPECT_NE(error.find("line 3"), std::string::npos) << error;
  EXPECT_NE(error.find("endif"), std::string::npos) << error;
  error = error_of("{{ x | groupby('a') }}");
  EXPECT_NE(error.find("not supported"), std::string::npos) << error;
}

TEST(JinjaBehaviour, RaiseExceptionKeepsTheMessage) {
  try {
    render("{{ raise_exception('System message must be at the beginning.') }}");
    FAIL() << "raise_exception did not throw";
  } catch (const RaisedError& e) {
    EXPECT_STREQ(e.what(), "System message must be at the beginning.");
  }
}

TEST(JinjaBehaviour, PrintingAGeneratorIsAnError) {
  std::string error = error_of("{{ [1, 2]|map('string') }}");
  EXPECT_NE(error.find("generator"), std::string::npos) << error;
  EXPECT_EQ(render("{{ [1, 2]|map('string')|list }}"), "['1', '2']");
}

TEST(JinjaBehaviour, StrftimeNowUsesTheLocalClock) {
  std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  std::string year = render("{{ strftime_now('%Y') }}");
  // Tolerate a year boundary between the two clock reads.
  EXPECT_TRUE(year == std::to_string(local.tm_year + 1900) || year == std::to_string(local.tm_year + 1901)) << year;
}

TEST(JinjaBehaviour, ParsedTemplateRendersRepeatedlyAndConcurrently) {
  Template tmpl("{% set ns = namespace(n=0) %}{% for m in xs %}{% set ns.n = ns.n + m %}{% endfor %}{{ ns.n }}");
  nlohmann::ordered_json context = {{"xs", {1, 2, 3}}};
  EXPECT_EQ(tmpl.render(context), "6");
  EXPECT_EQ(tmpl.render(context), "6");  // namespaces do not survive between renders
  std::vector<std::thread> threads;
  std::vector<std::string> results(8);
  for (size_t i = 0; i < results.size(); ++i) {
    threads.emplace_back([&, i] { results[i] = tmpl.render(nlohmann::ordered_json{{"xs", {static_cast<int>(i), 1}}}); });
  }
  for (auto& thread : threads) thread.join();
  for (size_t i = 0; i < results.size(); ++i) EXPECT_EQ(results[i], std::to_string(i + 1));
}

TEST(JinjaBehaviour, DeepOutputIsNotQuadratic) {
  // 20k messages of 1 KiB: rendering must stay linear (a few MB of output).
  nlohmann::ordered_json messages = nlohmann::ordered_json::array();
  for (int i = 0; i < 20000; ++i) messages.push_back({{"role", "user"}, {"content", std::string(1024, 'a')}});
  std::string out = render("{% for m in messages %}{{ m.role + ':' + m.content }}\n{% endfor %}", {{"messages", messages}});
  EXPECT_EQ(out.size(), 20000u * (5 + 1024 + 1));
}

}  // namespace
}  // namespace lathe::tokenizer::jinja

namespace lathe::tokenizer::jinja {
namespace {

// Runaway recursion and pathological nesting end in a TemplateError, never a stack overflow.
TEST(JinjaBehaviour, DeepNestingIsAnErrorNotACrash) {
  EXPECT_NE(error_of("{% macro r(n) %}{{ r(n + 1) }}{% endmacro %}{{ r(0) }}").find("nested macro calls"),
            std::string::npos);
  EXPECT_NE(error_of("{{ " + std::string(100000, '(') + "1" + std::string(100000, ')') + " }}").find("levels deep"),
            std::string::npos);
  std::string chain = "{{ 1";
  for (int i = 0; i < 100000; ++i) chain += " + 1";
  EXPECT_NE(error_of(chain + " }}").find("levels deep"), std::string::npos);
  std::string nots = "{{ ";
  for (int i = 0; i < 100000; ++i) nots += "not ";
  EXPECT_NE(error_of(nots + "1 }}").find("levels deep"), std::string::npos);
  std::string blocks;
  for (int i = 0; i < 20000; ++i) blocks += "{% if true %}";
  EXPECT_NE(error_of(blocks).find("levels deep"), std::string::npos);
  nlohmann::ordered_json deep = nlohmann::ordered_json::parse(std::string(5000, '[') + std::string(5000, ']'));
  EXPECT_NE(error_of("{{ v }}", {{"v", deep}}).find("levels deep"), std::string::npos);
  // A namespace grown in a loop nests values without any JSON input.
  EXPECT_NE(error_of("{% set ns = namespace(v=[]) %}{% for i in range(5000) %}{% set ns.v = [ns.v] %}{% endfor %}"
                     "{{ ns.v|tojson }}")
                .find("levels deep"),
            std::string::npos);
  EXPECT_NE(error_of("{% set ns = namespace(p=none) %}{% for i in range(5000) %}{% set ns.p = namespace(p=ns.p) %}"
                     "{% endfor %}")
                .find("levels deep"),
            std::string::npos);
  // Legitimate depth still works: a 100-deep recursive macro (jinja2 itself manages ~150).
  EXPECT_EQ(render("{% macro r(n) %}{% if n > 0 %}{{ r(n - 1) }}{% endif %}x{% endmacro %}{{ r(100)|length }}"), "101");
}

}  // namespace
}  // namespace lathe::tokenizer::jinja
