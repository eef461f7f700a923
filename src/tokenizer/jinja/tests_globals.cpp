// jinja2's builtin tests (tests.py) and the globals transformers gives chat templates.
#include <algorithm>
#include <ctime>
#include <unordered_map>

#include "tokenizer/jinja/args.h"
#include "tokenizer/jinja/builtins.h"
#include "tokenizer/jinja/unicode.h"

namespace lathe::tokenizer::jinja {
namespace {

using TestFn = bool (*)(const Value& input, CallArgs& args);

const Value& one_arg(const char* test, CallArgs& args) {
  if (args.positional.size() != 1 || !args.keyword.empty()) template_error("the test '{}' takes one argument", test);
  return args.positional[0];
}

bool no_arg(const char* test, CallArgs& args) {
  if (!args.positional.empty() || !args.keyword.empty()) template_error("the test '{}' takes no arguments", test);
  return true;
}

bool ordered(const Value& a, const Value& b, bool (*accept)(std::partial_ordering)) { return accept(compare(a, b)); }

// `value % divisor == expected` as jinja2's odd/even/divisibleby tests compute it.
bool remainder_is(const Value& input, const Value& divisor, int64_t expected) {
  return equals(binary_op("%", input, divisor), Value::integer(expected));
}

const std::unordered_map<std::string, TestFn>& test_table() {
  static const std::unordered_map<std::string, TestFn> table = {
      {"boolean", [](const Value& v, CallArgs& a) { return no_arg("boolean", a) && v.is_bool(); }},
      // jinja2's Undefined defines __call__ (to raise), so Python's callable() is true for it.
      {"callable",
       [](const Value& v, CallArgs& a) { return no_arg("callable", a) && (v.is_callable() || v.is_undefined()); }},
      {"defined", [](const Value& v, CallArgs& a) { return no_arg("defined", a) && !v.is_undefined(); }},
      {"undefined", [](const Value& v, CallArgs& a) { return no_arg("undefined", a) && v.is_undefined(); }},
      {"none", [](const Value& v, CallArgs& a) { return no_arg("none", a) && v.is_none(); }},
      {"true", [](const Value& v, CallArgs& a) { return no_arg("true", a) && v.is_bool() && v.as_bool(); }},
      {"false", [](const Value& v, CallArgs& a) { return no_arg("false", a) && v.is_bool() && !v.as_bool(); }},
      {"integer", [](const Value& v, CallArgs& a) { return no_arg("integer", a) && v.is_int(); }},
      {"float", [](const Value& v, CallArgs& a) { return no_arg("float", a) && v.is_float(); }},
      {"number", [](const Value& v, CallArgs& a) { return no_arg("number", a) && v.is_number(); }},
      {"string", [](const Value& v, CallArgs& a) { return no_arg("string", a) && v.is_string(); }},
      {"mapping", [](const Value& v, CallArgs& a) { return no_arg("mapping", a) && v.is_dict(); }},
      {"escaped", [](const Value& v, CallArgs& a) { return no_arg("escaped", a) && v.is_string() && v.markup(); }},
      {"iterable",
       [](const Value& v, CallArgs& a) {
         no_arg("iterable", a);
         return v.is_undefined() || v.is_string() || v.is_list() || v.is_dict() || v.is_iterator();
       }},
      {"sequence",
       [](const Value& v, CallArgs& a) {
         no_arg("sequence", a);
         bool list_like = v.is_list() && (v.flavor() == Value::Flavor::kList || v.flavor() == Value::Flavor::kTuple ||
                                          v.flavor() == Value::Flavor::kRange);
         return v.is_undefined() || v.is_string() || v.is_dict() || list_like;
       }},
      {"lower", [](const Value& v, CallArgs& a) { return no_arg("lower", a) && py_is_lower(to_str(v)); }},
      {"upper", [](const Value& v, CallArgs& a) { return no_arg("upper", a) && py_is_upper(to_str(v)); }},
      {"odd", [](const Value& v, CallArgs& a) { return no_arg("odd", a) && remainder_is(v, Value::integer(2), 1); }},
      {"even", [](const Value& v, CallArgs& a) { return no_arg("even", a) && remainder_is(v, Value::integer(2), 0); }},
      {"divisibleby", [](const Value& v, CallArgs& a) { return remainder_is(v, one_arg("divisibleby", a), 0); }},
      {"eq", [](const Value& v, CallArgs& a) { return equals(v, one_arg("eq", a)); }},
      {"equalto", [](const Value& v, CallArgs& a) { return equals(v, one_arg("equalto", a)); }},
      {"==", [](const Value& v, CallArgs& a) { return equals(v, one_arg("==", a)); }},
      {"ne", [](const Value& v, CallArgs& a) { return !equals(v, one_arg("ne", a)); }},
      {"!=", [](const Value& v, CallArgs& a) { return !equals(v, one_arg("!=", a)); }},
      {"lt", [](const Value& v, CallArgs& a) { return ordered(v, one_arg("lt", a), std::is_lt); }},
      {"lessthan", [](const Value& v, CallArgs& a) { return ordered(v, one_arg("lessthan", a), std::is_lt); }},
      {"<", [](const Value& v, CallArgs& a) { return ordered(v, one_arg("<", a), std::is_lt); }},
      {"le", [](const Value& v, CallArgs& a) { return ordered(v, one_arg("le", a), std::is_lteq); }},
      {"<=", [](const Value& v, CallArgs& a) { return ordered(v, one_arg("<=", a), std::is_lteq); }},
      {"gt", [](const Value& v, CallArgs& a) { return ordered(v, one_arg("gt", a), std::is_gt); }},
      {"greaterthan", [](const Value& v, CallArgs& a) { return ordered(v, one_arg("greaterthan", a), std::is_gt); }},
      {">", [](const Value& v, CallArgs& a) { return ordered(v, one_arg(">", a), std::is_gt); }},
      {"ge", [](const Value& v, CallArgs& a) { return ordered(v, one_arg("ge", a), std::is_gteq); }},
      {">=", [](const Value& v, CallArgs& a) { return ordered(v, one_arg(">=", a), std::is_gteq); }},
      {"in", [](const Value& v, CallArgs& a) { return contains(one_arg("in", a), v); }},
      {"sameas",
       [](const Value& v, CallArgs& a) {
         const Value& other = one_arg("sameas", a);
         bool singleton = v.is_none() || v.is_bool() || other.is_none() || other.is_bool();
         if (!singleton) template_error("'sameas' is only supported against None, True or False");
         if (v.is_none() || other.is_none()) return v.is_none() && other.is_none();
         return v.is_bool() && other.is_bool() && v.as_bool() == other.as_bool();
       }},
      {"filter",
       [](const Value& v, CallArgs& a) { return no_arg("filter", a) && v.is_string() && is_known_filter(v.as_string()); }},
      {"test",
       [](const Value& v, CallArgs& a) { return no_arg("test", a) && v.is_string() && is_known_test(v.as_string()); }},
  };
  return table;
}

Value global_range(CallArgs& args) {
  if (!args.keyword.empty() || args.positional.empty() || args.positional.size() > 3) {
    template_error("range expected 1 to 3 integer arguments");
  }
  for (const Value& arg : args.positional) {
    if (!arg.is_int() && !arg.is_bool()) template_error("'{}' object cannot be interpreted as an integer", type_name(arg));
  }
  int64_t start = 0;
  int64_t stop = 0;
  int64_t step = 1;
  if (args.positional.size() == 1) {
    stop = args.positional[0].as_int();
  } else {
    start = args.positional[0].as_int();
    stop = args.positional[1].as_int();
    if (args.positional.size() == 3) step = args.positional[2].as_int();
  }
  if (step == 0) template_error("range() arg 3 must not be zero");
  ValueList items;
  for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) {
    if (items.size() >= 100000) {
      template_error("Range too big. The sandbox blocks ranges larger than MAX_RANGE (100000).");
    }
    items.push_back(Value::integer(i));
  }
  return Value::list(std::move(items), Value::Flavor::kRange);
}

// dict(mapping_or_pairs?, **kwargs) as Python builds it.
Dict build_dict(const std::string& function, CallArgs& args) {
  Dict dict;
  if (args.positional.size() > 1) template_error("{} expected at most 1 positional argument", function);
  if (!args.positional.empty()) {
    const Value& source = args.positional[0];
    if (source.is_dict() || source.is_namespace()) {
      dict = source.is_dict() ? source.as_dict() : source.namespace_attributes();
    } else {
      for (const Value& pair : iterate(source)) {
        if (!pair.is_list() || pair.items().size() != 2 || !pair.items()[0].is_string()) {
          template_error("{}: positional argument must be a mapping or (str key, value) pairs", function);
        }
        dict.set(pair.items()[0].as_string(), pair.items()[1]);
      }
    }
  }
  for (auto& [key, value] : args.keyword) dict.set(key, value);
  return dict;
}

Value global_namespace(CallArgs& args) {
  Dict attributes = build_dict("namespace", args);
  for (const auto& item : attributes.items) {
    if (!item.first.empty() && item.first[0] == '_') {
      template_error("Chat templates cannot store underscore-prefixed attributes on a namespace, but got '{}'.",
                     item.first);
    }
  }
  return Value::namespace_object(std::move(attributes));
}

Value global_raise_exception(CallArgs& args) {
  if (args.positional.size() != 1 || !args.keyword.empty()) template_error("raise_exception takes one argument");
  throw RaisedError(to_str(args.positional[0]));
}

Value global_strftime_now(CallArgs& args) {
  if (args.positional.size() != 1 || !args.positional[0].is_string() || !args.keyword.empty()) {
    template_error("strftime_now takes one string argument");
  }
  std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  std::string format = args.positional[0].as_string();
  if (format.empty()) return Value::string("");
  std::string buffer(256 + format.size() * 16, '\0');
  size_t written = std::strftime(buffer.data(), buffer.size(), format.c_str(), &local);
  if (written == 0) template_error("strftime_now: the format '{}' produced no output or is too long", format);
  buffer.resize(written);
  return Value::string(std::move(buffer));
}

}  // namespace

bool is_known_test(std::string_view name) { return test_table().count(std::string(name)) != 0; }

bool apply_test(const std::string& name, const Value& input, CallArgs& args) {
  auto it = test_table().find(name);
  if (it == test_table().end()) template_error("no test named '{}'", name);
  return it->second(input, args);
}

Dict make_globals() {
  Dict globals;
  globals.set("range", Value::callable("range", global_range));
  globals.set("dict", Value::callable("dict", [](CallArgs& args) { return Value::dict(build_dict("dict", args)); }));
  globals.set("namespace", Value::callable("namespace", global_namespace));
  globals.set("raise_exception", Value::callable("raise_exception", global_raise_exception));
  globals.set("strftime_now", Value::callable("strftime_now", global_strftime_now));
  return globals;
}

}  // namespace lathe::tokenizer::jinja
