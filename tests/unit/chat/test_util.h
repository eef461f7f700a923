#pragma once
// Fixture loading shared by the chat tests.
#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

namespace lathe::test {

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

inline nlohmann::ordered_json read_json(const std::string& path) { return nlohmann::ordered_json::parse(read_file(path)); }

}  // namespace lathe::test
