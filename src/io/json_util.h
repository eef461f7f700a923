#pragma once
// JSON helpers for checkpoint files (config.json, generation_config.json, index files): reading,
// parsing and typed field access whose errors name the file and the field.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace lathe::io {

using Json = nlohmann::json;

// The whole file as bytes; throws lathe::Error naming the path.
std::string read_text_file(const std::filesystem::path& path);
// Throws lathe::Error "<source>: invalid JSON: ..." on a syntax error.
Json parse_json(std::string_view text, std::string_view source);
Json read_json_file(const std::filesystem::path& path);

// "object", "string", "integer", "number", "boolean", "array", "null".
std::string_view json_type_name(const Json& value);

// Typed optional fields of a JSON object. `where` names the object in messages, e.g.
// "config.json" or "config.json: rope_scaling". Absent or null gives nullopt; any other type is
// an error "<where>: field 'key' must be <type>, got <type>".
std::optional<int64_t> json_int(const Json& object, std::string_view key, std::string_view where);
std::optional<double> json_number(const Json& object, std::string_view key, std::string_view where);
std::optional<bool> json_bool(const Json& object, std::string_view key, std::string_view where);
std::optional<std::string> json_string(const Json& object, std::string_view key, std::string_view where);
// The field itself when it is an object / array; nullopt-like nullptr when absent or null.
const Json* json_object(const Json& object, std::string_view key, std::string_view where);
const Json* json_array(const Json& object, std::string_view key, std::string_view where);

}  // namespace lathe::io
