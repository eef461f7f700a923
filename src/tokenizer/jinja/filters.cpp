// jinja2's builtin filters (filters.py) with transformers' tojson, on interpreter values.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <unordered_map>

#include "tokenizer/jinja/args.h"
#include "tokenizer/jinja/builtins.h"
#include "tokenizer/jinja/internal.h"
#include "tokenizer/jinja/json_value.h"
#include "tokenizer/jinja/unicode.h"

namespace lathe::tokenizer::jinja {
namespace {

using FilterFn = Value (*)(const Value& input, CallArgs& args);

// A string result that keeps the input's markup flag (markupsafe methods return Markup).
Value like(const Value& input, std::string text) { return Value::string(std::move(text), input.is_string() && input.markup()); }

// jinja2 make_attrgetter: "a.b.0" walks getitem (item first, then attribute) per part.
Value lookup_attribute_path(const Value& item, const Value& attribute, const Value* fallback) {
  std::vector<Value> parts;
  if (attribute.is_string()) {
    std::string path = attribute.as_string();
    size_t start = 0;
    while (true) {
      size_t dot = path.find('.', start);
      std::string part = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
      bool digits = !part.empty() && std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; });
      parts.push_back(digits ? Value::integer(std::stoll(part)) : Value::string(part));
      if (dot == std::string::npos) break;
      start = dot + 1;
    }
  } else {
    parts.push_back(attribute);
  }
  Value current = item;
  for (const Value& part : parts) {
    current = get_item(current, part);
    if (fallback && current.is_undefined()) current = *fallback;
  }
  return current;
}

Value lower_if_string(const Value& value) {
  return value.is_string() ? Value::string(py_lower(value.as_string())) : value;
}

bool key_less(const Value& a, const Value& b) { return compare(a, b) == std::partial_ordering::less; }

Value filter_abs(const Value& input, CallArgs& args) {
  expect_no_args("abs", args);
  if (input.is_float()) return Value::floating(std::fabs(input.as_double()));
  if (input.is_int() || input.is_bool()) {
    if (input.as_int() == std::numeric_limits<int64_t>::min()) template_error("integer overflow");
    return Value::integer(std::llabs(input.as_int()));
  }
  require_defined(input);
  template_error("bad operand type for abs(): '{}'", type_name(input));
}

Value filter_attr(const Value& input, CallArgs& args) {
  BoundArgs a("attr", args, {"name"}, 1);
  std::string name = to_str(a.get(0));
  if (input.is_namespace()) {
    if (const Value* found = input.namespace_attributes().find(name)) return *found;
  } else if (!input.is_undefined()) {
    if (std::optional<Value> method = find_method(input, name)) return *method;
  }
  return Value::undefined(fmt::format("'{}' has no attribute '{}'", object_description(input), name));
}

// Python str.center: the extra space goes left when the padding is odd and the width is odd.
Value filter_center(const Value& input, CallArgs& args) {
  BoundArgs a("center", args, {"width"});
  int64_t width = a.get_int(0, 80);
  std::string text = to_str(input);
  int64_t length = static_cast<int64_t>(utf8_length(text));
  if (width <= length) return like(input, text);
  int64_t margin = width - length;
  int64_t left = margin / 2 + (margin & width & 1);
  std::string out(static_cast<size_t>(left), ' ');
  out += text;
  out.append(static_cast<size_t>(margin - left), ' ');
  return like(input, std::move(out));
}

// jinja2 batch: lists of `linecount` items, the last padded with fill_with when given.
Value filter_batch(const Value& input, CallArgs& args) {
  BoundArgs a("batch", args, {"linecount", "fill_with"}, 1);
  int64_t count = a.get_int(0, 1);
  if (count <= 0) template_error("batch: linecount must be positive");
  ValueList batches;
  ValueList current;
  for (const Value& item : iterate(input)) {
    current.push_back(item);
    if (static_cast<int64_t>(current.size()) == count) {
      batches.push_back(Value::list(std::move(current)));
      current.clear();
    }
  }
  if (!current.empty()) {
    if (a.has(1) && !a.get(1).is_none()) {
      while (static_cast<int64_t>(current.size()) < count) current.push_back(a.get(1));
    }
    batches.push_back(Value::list(std::move(current)));
  }
  return Value::iterator(std::move(batches));
}

Value filter_capitalize(const Value& input, CallArgs& args) {
  expect_no_args("capitalize", args);
  return like(input, py_capitalize(to_str(input)));
}

Value filter_length(const Value& input, CallArgs& args) {
  expect_no_args("length", args);
  return Value::integer(length(input));
}

Value filter_default(const Value& input, CallArgs& args) {
  BoundArgs a("default", args, {"default_value", "boolean"});
  bool use_default = input.is_undefined() || (a.get_bool(1, false) && !truthy(input));
  return use_default ? a.get(0, Value::string("")) : input;
}

Value filter_dictsort(const Value& input, CallArgs& args) {
  BoundArgs a("dictsort", args, {"case_sensitive", "by", "reverse"});
  if (!input.is_dict()) template_error("dictsort: you can only sort a dict, got {}", type_name(input));
  bool case_sensitive = a.get_bool(0, false);
  std::string by = a.get_string(1).value_or("key");
  if (by != "key" && by != "value") template_error("dictsort: You can only sort by either \"key\" or \"value\"");
  size_t position = by == "key" ? 0 : 1;
  bool reverse = a.get_bool(2, false);
  ValueList pairs;
  for (const auto& [key, value] : input.as_dict().items) {
    pairs.push_back(Value::list({Value::string(key), value}, Value::Flavor::kTuple));
  }
  auto key_of = [&](const Value& pair) {
    const Value& v = pair.items()[position];
    return case_sensitive ? v : lower_if_string(v);
  };
  std::stable_sort(pairs.begin(), pairs.end(), [&](const Value& x, const Value& y) {
    return reverse ? key_less(key_of(y), key_of(x)) : key_less(key_of(x), key_of(y));
  });
  return Value::list(std::move(pairs));
}

Value filter_escape(const Value& input, CallArgs& args) {
  expect_no_args("escape", args);
  if (input.is_string() && input.markup()) return input;
  return Value::string(html_escape(to_str(input)), true);
}

Value filter_forceescape(const Value& input, CallArgs& args) {
  expect_no_args("forceescape", args);
  return Value::string(html_escape(to_str(input)), true);
}

Value filter_first(const Value& input, CallArgs& args) {
  expect_no_args("first", args);
  if (input.is_iterator()) {
    IteratorState& state = input.iterator_state();
    if (state.position < state.items.size()) return state.items[state.position++];
  } else {
    ValueList items = iterate(input);
    if (!items.empty()) return items.front();
  }
  return Value::undefined("No first item, sequence was empty.");
}

Value filter_last(const Value& input, CallArgs& args) {
  expect_no_args("last", args);
  if (input.is_iterator()) template_error("'generator' object is not reversible");
  ValueList items = iterate(input);
  if (items.empty()) return Value::undefined("No last item, sequence was empty.");
  return items.back();
}

Value filter_float(const Value& input, CallArgs& args) {
  BoundArgs a("float", args, {"default"});
  Value fallback = a.get(0, Value::floating(0.0));
  require_defined(input);  // float(Undefined) raises in jinja2
  if (input.is_number()) return Value::floating(input.as_double());
  if (input.is_string()) {
    if (std::optional<double> parsed = py_parse_float(input.as_string())) return Value::floating(*parsed);
  }
  return fallback;
}

Value filter_indent(const Value& input, CallArgs& args) {
  BoundArgs a("indent", args, {"width", "first", "blank"});
  require_defined(input);
  if (!input.is_string()) template_error("unsupported operand type(s) for +=: '{}' and 'str'", type_name(input));
  std::string indention;
  Value width = a.get(0, Value::integer(4));
  if (width.is_string()) {
    indention = width.as_string();
  } else {
    int64_t n = a.get_int(0, 4);
    indention = std::string(static_cast<size_t>(std::max<int64_t>(n, 0)), ' ');
  }
  std::string text = to_str(input) + "\n";  // jinja2 appends a newline that splitlines drops
  std::vector<std::string> lines = py_splitlines(text, false);
  std::string out;
  if (a.get_bool(2, false)) {
    for (size_t i = 0; i < lines.size(); ++i) {
      if (i) out += "\n" + indention;
      out += lines[i];
    }
  } else {
    out = lines.empty() ? "" : lines[0];
    for (size_t i = 1; i < lines.size(); ++i) {
      out += "\n";
      if (!lines[i].empty()) out += indention;
      out += lines[i];
    }
  }
  if (a.get_bool(1, false)) out = indention + out;
  return like(input, std::move(out));
}

Value filter_int(const Value& input, CallArgs& args) {
  BoundArgs a("int", args, {"default", "base"});
  Value fallback = a.get(0, Value::integer(0));
  int64_t base = a.get_int(1, 10);
  require_defined(input);  // int(Undefined) raises in jinja2
  auto from_double = [&](double v) -> Value {
    if (std::isnan(v) || std::isinf(v)) return fallback;
    double truncated = std::trunc(v);
    if (truncated >= 9.2233720368547758e18 || truncated < -9.2233720368547758e18) {
      template_error("int(): {} is out of the supported range (int64)", py_repr_float(v));
    }
    return Value::integer(static_cast<int64_t>(truncated));
  };
  if (input.is_int() || input.is_bool()) return Value::integer(input.as_int());
  if (input.is_float()) return from_double(input.as_double());
  if (input.is_string()) {
    if (std::optional<int64_t> parsed = py_parse_int(input.as_string(), static_cast<int>(base))) {
      return Value::integer(*parsed);
    }
    if (std::optional<double> parsed = py_parse_float(input.as_string())) return from_double(*parsed);
  }
  return fallback;
}

Value filter_items(const Value& input, CallArgs& args) {
  expect_no_args("items", args);
  if (input.is_undefined()) return Value::iterator({});
  if (!input.is_dict()) template_error("Can only get item pairs from a mapping.");
  ValueList pairs;
  for (const auto& [key, value] : input.as_dict().items) {
    pairs.push_back(Value::list({Value::string(key), value}, Value::Flavor::kTuple));
  }
  return Value::iterator(std::move(pairs));
}

Value filter_join(const Value& input, CallArgs& args) {
  BoundArgs a("join", args, {"d", "attribute"});
  std::string separator = to_str(a.get(0, Value::string("")));
  ValueList items = iterate(input);
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) out += separator;
    out += to_str(a.has(1) && !a.get(1).is_none() ? lookup_attribute_path(items[i], a.get(1), nullptr) : items[i]);
  }
  return Value::string(std::move(out));
}

Value filter_list(const Value& input, CallArgs& args) {
  expect_no_args("list", args);
  return Value::list(iterate(input));
}

Value filter_lower(const Value& input, CallArgs& args) {
  expect_no_args("lower", args);
  return like(input, py_lower(to_str(input)));
}

Value filter_upper(const Value& input, CallArgs& args) {
  expect_no_args("upper", args);
  return like(input, py_upper(to_str(input)));
}

Value filter_map(const Value& input, CallArgs& args) {
  ValueList out;
  if (!truthy(input)) return Value::iterator({});
  if (args.positional.empty()) {
    const Value* attribute = nullptr;
    const Value* fallback = nullptr;
    for (const auto& [key, value] : args.keyword) {
      if (key == "attribute") {
        attribute = &value;
      } else if (key == "default") {
        fallback = &value;
      } else {
        template_error("map: unexpected keyword argument '{}'", key);
      }
    }
    if (!attribute) template_error("map requires a filter name or attribute=");
    const Value* default_value = fallback && !fallback->is_none() ? fallback : nullptr;
    for (const Value& item : iterate(input)) out.push_back(lookup_attribute_path(item, *attribute, default_value));
    return Value::iterator(std::move(out));
  }
  if (!args.positional[0].is_string()) template_error("map: the filter name must be a string");
  std::string filter = args.positional[0].as_string();
  if (!is_known_filter(filter)) template_error("no filter named '{}'", filter);
  for (const Value& item : iterate(input)) {
    CallArgs rest{ValueList(args.positional.begin() + 1, args.positional.end()), args.keyword};
    out.push_back(apply_filter(filter, item, rest));
  }
  return Value::iterator(std::move(out));
}

Value min_or_max(const Value& input, CallArgs& args, bool want_max) {
  BoundArgs a(want_max ? "max" : "min", args, {"case_sensitive", "attribute"});
  ValueList items = iterate(input);
  if (items.empty()) return Value::undefined("No aggregated item, sequence was empty.");
  bool case_sensitive = a.get_bool(0, false);
  auto key_of = [&](const Value& item) {
    Value key = a.has(1) && !a.get(1).is_none() ? lookup_attribute_path(item, a.get(1), nullptr) : item;
    return case_sensitive ? key : lower_if_string(key);
  };
  size_t best = 0;
  Value best_key = key_of(items[0]);
  for (size_t i = 1; i < items.size(); ++i) {
    Value key = key_of(items[i]);
    if (want_max ? key_less(best_key, key) : key_less(key, best_key)) {
      best = i;
      best_key = key;
    }
  }
  return items[best];
}

Value filter_max(const Value& input, CallArgs& args) { return min_or_max(input, args, true); }
Value filter_min(const Value& input, CallArgs& args) { return min_or_max(input, args, false); }

Value select_or_reject(const Value& input, CallArgs& args, bool select, bool by_attribute) {
  if (!truthy(input)) return Value::iterator({});
  size_t offset = 0;
  Value attribute;
  if (by_attribute) {
    if (args.positional.empty()) template_error("Missing parameter for attribute name");
    attribute = args.positional[0];
    offset = 1;
  }
  std::optional<std::string> test;
  ValueList test_args;
  if (args.positional.size() > offset) {
    if (!args.positional[offset].is_string()) template_error("the test name must be a string");
    test = args.positional[offset].as_string();
    if (!is_known_test(*test)) template_error("no test named '{}'", *test);
    test_args.assign(args.positional.begin() + static_cast<std::ptrdiff_t>(offset + 1), args.positional.end());
  }
  ValueList out;
  for (const Value& item : iterate(input)) {
    Value subject = by_attribute ? lookup_attribute_path(item, attribute, nullptr) : item;
    bool passed;
    if (test) {
      CallArgs call{test_args, args.keyword};
      passed = apply_test(*test, subject, call);
    } else {
      passed = truthy(subject);
    }
    if (passed == select) out.push_back(item);
  }
  return Value::iterator(std::move(out));
}

Value filter_select(const Value& input, CallArgs& args) { return select_or_reject(input, args, true, false); }
Value filter_reject(const Value& input, CallArgs& args) { return select_or_reject(input, args, false, false); }
Value filter_selectattr(const Value& input, CallArgs& args) { return select_or_reject(input, args, true, true); }
Value filter_rejectattr(const Value& input, CallArgs& args) { return select_or_reject(input, args, false, true); }

Value filter_replace(const Value& input, CallArgs& args) {
  BoundArgs a("replace", args, {"old", "new", "count"}, 2);
  CallArgs call{{Value::string(to_str(a.get(0))), Value::string(to_str(a.get(1)))}, {}};
  if (a.has(2) && !a.get(2).is_none()) call.positional.push_back(Value::integer(a.get_int(2, -1)));
  std::optional<Value> method = find_method(Value::string(to_str(input)), "replace");
  return method->as_callable().function(call);
}

Value filter_reverse(const Value& input, CallArgs& args) {
  expect_no_args("reverse", args);
  if (input.is_undefined()) return Value::iterator({});
  if (input.is_string()) {
    std::u32string chars = utf8_decode(input.as_string());
    std::reverse(chars.begin(), chars.end());
    return like(input, utf8_encode(chars));
  }
  if (input.is_iterator()) {
    ValueList items = iterate(input);
    std::reverse(items.begin(), items.end());
    return Value::list(std::move(items));
  }
  if (input.is_list() || input.is_dict()) {
    ValueList items = iterate(input);
    std::reverse(items.begin(), items.end());
    return Value::iterator(std::move(items));
  }
  require_defined(input);
  template_error("argument to reversed() must be a sequence, got {}", type_name(input));
}

// Python round(x, ndigits) for a float: the correctly rounded decimal, ties to even.
double py_round(double value, int64_t ndigits) {
  if (std::isnan(value) || std::isinf(value)) return value;
  if (ndigits > 300) return value;
  if (ndigits < 0) {
    double scale = std::pow(10.0, static_cast<double>(-ndigits));
    return std::nearbyint(value / scale) * scale;
  }
  char buffer[512];
  std::snprintf(buffer, sizeof(buffer), "%.*f", static_cast<int>(ndigits), value);
  return std::strtod(buffer, nullptr);
}

Value filter_round(const Value& input, CallArgs& args) {
  BoundArgs a("round", args, {"precision", "method"});
  int64_t precision = a.get_int(0, 0);
  std::string method = a.get_string(1).value_or("common");
  require_defined(input);
  if (!input.is_number()) template_error("type {} doesn't define __round__ method", type_name(input));
  if (method == "common") {
    if (!input.is_float()) return Value::integer(input.as_int());
    return Value::floating(py_round(input.as_double(), precision));
  }
  if (method != "ceil" && method != "floor") template_error("method must be common, ceil or floor");
  double scale = std::pow(10.0, static_cast<double>(precision));
  double scaled = input.as_double() * scale;
  return Value::floating((method == "ceil" ? std::ceil(scaled) : std::floor(scaled)) / scale);
}

Value filter_safe(const Value& input, CallArgs& args) {
  expect_no_args("safe", args);
  return Value::string(to_str(input), true);
}

Value filter_sort(const Value& input, CallArgs& args) {
  BoundArgs a("sort", args, {"reverse", "case_sensitive", "attribute"});
  bool reverse = a.get_bool(0, false);
  bool case_sensitive = a.get_bool(1, false);
  ValueList items = iterate(input);
  std::vector<Value> keys;
  for (const Value& item : items) {
    Value key = a.has(2) && !a.get(2).is_none() ? lookup_attribute_path(item, a.get(2), nullptr) : item;
    keys.push_back(case_sensitive ? key : lower_if_string(key));
  }
  std::vector<size_t> order(items.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) {
    return reverse ? key_less(keys[y], keys[x]) : key_less(keys[x], keys[y]);
  });
  ValueList out;
  for (size_t i : order) out.push_back(items[i]);
  return Value::list(std::move(out));
}

Value filter_string(const Value& input, CallArgs& args) {
  expect_no_args("string", args);
  if (input.is_string()) return input;
  return Value::string(to_str(input));
}

Value filter_sum(const Value& input, CallArgs& args) {
  BoundArgs a("sum", args, {"attribute", "start"});
  Value total = a.get(1, Value::integer(0));
  for (const Value& item : iterate(input)) {
    Value term = a.has(0) && !a.get(0).is_none() ? lookup_attribute_path(item, a.get(0), nullptr) : item;
    total = binary_op("+", total, term);
  }
  return total;
}

// jinja2's title: words start after runs of "-", whitespace, "(", "{", "[" or "<".
Value filter_title(const Value& input, CallArgs& args) {
  expect_no_args("title", args);
  std::u32string chars = utf8_decode(to_str(input));
  auto separator = [](char32_t c) { return c == U'-' || c == U'(' || c == U'{' || c == U'[' || c == U'<' || py_is_space(c); };
  std::string out;
  size_t i = 0;
  while (i < chars.size()) {
    size_t j = i;
    bool sep = separator(chars[i]);
    while (j < chars.size() && separator(chars[j]) == sep) ++j;
    std::u32string_view item(chars.data() + i, j - i);
    out += py_upper(utf8_encode(item.substr(0, 1)));
    out += py_lower(utf8_encode(item.substr(1)));
    i = j;
  }
  return like(input, std::move(out));
}

// transformers: json.dumps(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False).
Value filter_tojson(const Value& input, CallArgs& args) {
  BoundArgs a("tojson", args, {"ensure_ascii", "indent", "separators", "sort_keys"});
  JsonDumpOptions options;
  options.ensure_ascii = a.get_bool(0, false);
  if (a.has(1) && !a.get(1).is_none()) {
    const Value& indent = a.get(1);
    if (indent.is_string()) {
      options.indent = indent.as_string();
    } else {
      options.indent = std::string(static_cast<size_t>(std::max<int64_t>(a.get_int(1, 0), 0)), ' ');
    }
  }
  if (a.has(2) && !a.get(2).is_none()) {
    const Value& separators = a.get(2);
    bool ok = separators.is_list() && separators.items().size() == 2 && separators.items()[0].is_string() &&
              separators.items()[1].is_string();
    if (!ok) template_error("tojson: separators must be a pair of strings");
    options.separators = std::make_pair(separators.items()[0].as_string(), separators.items()[1].as_string());
  }
  options.sort_keys = a.get_bool(3, false);
  return Value::string(dump_json(input, options));
}

Value filter_trim(const Value& input, CallArgs& args) {
  BoundArgs a("trim", args, {"chars"});
  std::optional<std::string> chars = a.get_string(0);
  return like(input, py_strip(to_str(input), chars ? &*chars : nullptr, true, true));
}

Value filter_unique(const Value& input, CallArgs& args) {
  BoundArgs a("unique", args, {"case_sensitive", "attribute"});
  bool case_sensitive = a.get_bool(0, false);
  ValueList out;
  ValueList seen;
  for (const Value& item : iterate(input)) {
    Value key = a.has(1) && !a.get(1).is_none() ? lookup_attribute_path(item, a.get(1), nullptr) : item;
    if (!case_sensitive) key = lower_if_string(key);
    if (key.is_list() || key.is_dict()) template_error("unhashable type: '{}'", type_name(key));
    bool duplicate = std::any_of(seen.begin(), seen.end(), [&](const Value& s) { return equals(s, key); });
    if (duplicate) continue;
    seen.push_back(key);
    out.push_back(item);
  }
  return Value::iterator(std::move(out));
}

Value filter_wordcount(const Value& input, CallArgs& args) {
  expect_no_args("wordcount", args);
  int64_t words = 0;
  bool in_word = false;
  for (char32_t c : utf8_decode(to_str(input))) {
    std::string one;
    utf8_append(one, c);
    bool word_char = c == U'_' || py_is_alnum(one);
    if (word_char && !in_word) ++words;
    in_word = word_char;
  }
  return Value::integer(words);
}

const std::unordered_map<std::string, FilterFn>& filter_table() {
  static const std::unordered_map<std::string, FilterFn> table = {
      {"abs", filter_abs},         {"attr", filter_attr},           {"capitalize", filter_capitalize},
      {"batch", filter_batch},     {"center", filter_center},
      {"count", filter_length},    {"d", filter_default},           {"default", filter_default},
      {"dictsort", filter_dictsort}, {"e", filter_escape},          {"escape", filter_escape},
      {"first", filter_first},     {"float", filter_float},         {"forceescape", filter_forceescape},
      {"indent", filter_indent},   {"int", filter_int},             {"items", filter_items},
      {"join", filter_join},       {"last", filter_last},           {"length", filter_length},
      {"list", filter_list},       {"lower", filter_lower},         {"map", filter_map},
      {"max", filter_max},         {"min", filter_min},             {"reject", filter_reject},
      {"rejectattr", filter_rejectattr}, {"replace", filter_replace}, {"reverse", filter_reverse},
      {"round", filter_round},     {"safe", filter_safe},           {"select", filter_select},
      {"selectattr", filter_selectattr}, {"sort", filter_sort},     {"string", filter_string},
      {"sum", filter_sum},         {"title", filter_title},         {"tojson", filter_tojson},
      {"trim", filter_trim},       {"unique", filter_unique},       {"upper", filter_upper},
      {"wordcount", filter_wordcount},
  };
  return table;
}

}  // namespace

bool is_known_filter(std::string_view name) { return filter_table().count(std::string(name)) != 0; }

bool is_unsupported_jinja_filter(std::string_view name) {
  static const char* kNames[] = {"filesizeformat", "format", "groupby", "pprint", "random",
                                 "slice", "striptags", "truncate", "urlencode", "urlize", "wordwrap", "xmlattr"};
  return std::any_of(std::begin(kNames), std::end(kNames), [&](const char* n) { return name == n; });
}

Value apply_filter(const std::string& name, const Value& input, CallArgs& args) {
  auto it = filter_table().find(name);
  if (it == filter_table().end()) template_error("no filter named '{}'", name);
  return it->second(input, args);
}

}  // namespace lathe::tokenizer::jinja
