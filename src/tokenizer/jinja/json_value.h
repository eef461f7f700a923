#pragma once
// Conversions between JSON (nlohmann::ordered_json, so object key order survives as it does in
// Python dicts) and interpreter values, and the JSON text of `tojson` exactly as Python's
// json.dumps writes it (transformers installs json.dumps as the tojson filter).
#include <nlohmann/json.hpp>

#include <optional>
#include <string>

#include "tokenizer/jinja/value.h"

namespace lathe::tokenizer::jinja {

// JSON null -> None, integers -> int (TemplateError beyond int64), floats -> float, objects ->
// dict in document order.
Value from_json(const nlohmann::ordered_json& json);

// The arguments of json.dumps that transformers' tojson exposes.
struct JsonDumpOptions {
  bool ensure_ascii = false;
  // json.dumps indent: unset = one line; an int n = n spaces (n <= 0: newlines only); a string
  // is used as is.
  std::optional<std::string> indent;
  // json.dumps separators; unset = (", ", ": ") on one line, (",", ": ") with an indent.
  std::optional<std::pair<std::string, std::string>> separators;
  bool sort_keys = false;
};

// json.dumps(value, ...). TemplateError for values JSON cannot hold (undefined, functions,
// namespaces, generators, dict views), naming their type as Python does.
std::string dump_json(const Value& value, const JsonDumpOptions& options);

}  // namespace lathe::tokenizer::jinja
