// Driver for tools/fuzz_jinja.py (not a test): reads a JSON array of {"template", "context"} from
// the file named on the command line and prints a JSON array of {"output"} or {"error"}, one per
// case, rendered by lathe's Jinja interpreter.
#include <iostream>

#include "test_util.h"
#include "tokenizer/jinja/template.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: jinja_render_tool CASES.json\n";
    return 2;
  }
  nlohmann::ordered_json cases = lathe::test::read_json(argv[1]);
  nlohmann::ordered_json results = nlohmann::ordered_json::array();
  for (const auto& c : cases) {
    nlohmann::ordered_json result = nlohmann::ordered_json::object();
    try {
      result["output"] = lathe::tokenizer::jinja::Template(c.at("template").get<std::string>()).render(c.at("context"));
    } catch (const std::exception& error) {
      result["error"] = error.what();
    }
    results.push_back(result);
  }
  std::cout << results.dump();
  return 0;
}
