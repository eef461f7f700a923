#pragma once
// The filters, tests, global functions and Python methods available to templates, with the
// semantics of jinja2 3.1 as transformers configures it (tojson = json.dumps(ensure_ascii=False),
// raise_exception, strftime_now, namespace, dict, range).
#include <string>
#include <string_view>

#include "tokenizer/jinja/value.h"

namespace lathe::tokenizer::jinja {

bool is_known_filter(std::string_view name);
bool is_known_test(std::string_view name);
// A jinja2 builtin filter / test that this interpreter does not implement (for error messages).
bool is_unsupported_jinja_filter(std::string_view name);

// Calls a filter. `args` excludes the input value. Filters that need to call back into the
// interpreter (map/select with a filter or test name) use apply_filter / apply_test themselves.
Value apply_filter(const std::string& name, const Value& input, CallArgs& args);
// Evaluates a test (`value is name(args)`).
bool apply_test(const std::string& name, const Value& input, CallArgs& args);

// The global names every template sees (range, dict, namespace, raise_exception, strftime_now).
Dict make_globals();

// Python attribute access (obj.name) and item access (obj[key]) as jinja2's sandboxed
// environment does them: dict keys, Python methods of str/dict/list (as bound callables), and
// undefined for anything missing. Accessing mutating methods (list.append, dict.pop, ...) is a
// TemplateError as in the immutable sandbox.
Value get_attribute(const Value& object, const std::string& name);
Value get_item(const Value& object, const Value& key);
// Python slicing obj[start:stop:step] of str / list / tuple / range (absent bounds are None).
Value get_slice(const Value& object, const Value& start, const Value& stop, const Value& step);

// Python operators with jinja2's handling of undefined values and markup strings.
Value binary_op(const std::string& op, const Value& left, const Value& right);
// `needle in haystack`
bool contains(const Value& haystack, const Value& needle);

}  // namespace lathe::tokenizer::jinja
