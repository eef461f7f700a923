#include "io/json_util.h"

#include <fstream>
#include <limits>
#include <sstream>

#include "core/error.h"

namespace lathe::io {

std::string read_text_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("{}: cannot open for reading", path.string());
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) fail("{}: read error", path.string());
  return text.str();
}

Json parse_json(std::string_view text, std::string_view source) {
  try {
    return Json::parse(text.begin(), text.end());
  } catch (const Json::exception& error) {
    fail("{}: invalid JSON: {}", source, error.what());
  }
}

Json read_json_file(const std::filesystem::path& path) { return parse_json(read_text_file(path), path.string()); }

std::string_view json_type_name(const Json& value) {
  switch (value.type()) {
    case Json::value_t::object:
      return "object";
    case Json::value_t::array:
      return "array";
    case Json::value_t::string:
      return "string";
    case Json::value_t::boolean:
      return "boolean";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
      return "integer";
    case Json::value_t::number_float:
      return "number";
    case Json::value_t::null:
      return "null";
    default:
      return "binary";
  }
}

namespace {

// The field's value, or null when the object lacks it or holds null.
const Json* field(const Json& object, std::string_view key, std::string_view where) {
  if (!object.is_object()) fail("{}: expected a JSON object, got {}", where, json_type_name(object));
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return nullptr;
  return &*it;
}

[[noreturn]] void mistyped(const Json& value, std::string_view key, std::string_view where, std::string_view want) {
  std::string shown = value.dump(-1, ' ', true);  // ASCII-only, so cutting it is safe
  if (shown.size() > 60) shown = shown.substr(0, 57) + "...";
  fail("{}: field '{}' must be {}, got {} {}", where, key, want, json_type_name(value), shown);
}

}  // namespace

std::optional<int64_t> json_int(const Json& object, std::string_view key, std::string_view where) {
  const Json* value = field(object, key, where);
  if (value == nullptr) return std::nullopt;
  if (value->is_number_unsigned()) {
    const uint64_t v = value->get<uint64_t>();
    if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) mistyped(*value, key, where, "a 64-bit integer");
    return static_cast<int64_t>(v);
  }
  if (value->is_number_integer()) return value->get<int64_t>();
  mistyped(*value, key, where, "an integer");
}

std::optional<double> json_number(const Json& object, std::string_view key, std::string_view where) {
  const Json* value = field(object, key, where);
  if (value == nullptr) return std::nullopt;
  if (!value->is_number()) mistyped(*value, key, where, "a number");
  return value->get<double>();
}

std::optional<bool> json_bool(const Json& object, std::string_view key, std::string_view where) {
  const Json* value = field(object, key, where);
  if (value == nullptr) return std::nullopt;
  if (!value->is_boolean()) mistyped(*value, key, where, "a boolean");
  return value->get<bool>();
}

std::optional<std::string> json_string(const Json& object, std::string_view key, std::string_view where) {
  const Json* value = field(object, key, where);
  if (value == nullptr) return std::nullopt;
  if (!value->is_string()) mistyped(*value, key, where, "a string");
  return value->get<std::string>();
}

const Json* json_object(const Json& object, std::string_view key, std::string_view where) {
  const Json* value = field(object, key, where);
  if (value != nullptr && !value->is_object()) mistyped(*value, key, where, "an object");
  return value;
}

const Json* json_array(const Json& object, std::string_view key, std::string_view where) {
  const Json* value = field(object, key, where);
  if (value != nullptr && !value->is_array()) mistyped(*value, key, where, "an array");
  return value;
}

}  // namespace lathe::io
