#pragma once
// Helpers shared by the builtin implementations (not part of the interpreter's interface).
#include <optional>
#include <string>
#include <string_view>

#include "tokenizer/jinja/value.h"

namespace lathe::tokenizer::jinja {

// The bound Python method `receiver.name` of a str, dict or list/tuple; nullopt when the type
// has no such method. Throws TemplateError for methods the immutable sandbox forbids (list.append,
// dict.update, ...) and for Python methods this interpreter does not implement.
std::optional<Value> find_method(const Value& receiver, const std::string& name);

// markupsafe.escape of a str: & < > " ' as HTML entities.
std::string html_escape(std::string_view text);

// Python str.splitlines().
std::vector<std::string> py_splitlines(std::string_view text, bool keep_ends);

// int(text, base) with Python's syntax (whitespace, sign, '_' separators, 0x/0o/0b prefixes when
// base is 0 or matches); nullopt when Python would raise ValueError.
std::optional<int64_t> py_parse_int(std::string_view text, int base);
// float(text) with Python's syntax; nullopt when Python would raise ValueError.
std::optional<double> py_parse_float(std::string_view text);

}  // namespace lathe::tokenizer::jinja
