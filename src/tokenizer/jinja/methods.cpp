// Python methods of str, dict and list as templates call them (message.content.startswith(...),
// tool.items(), ...), and Python's int()/float() string parsing.
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <limits>

#include "tokenizer/jinja/args.h"
#include "tokenizer/jinja/internal.h"
#include "tokenizer/jinja/unicode.h"

namespace lathe::tokenizer::jinja {
namespace {

using Method = std::function<Value(CallArgs&)>;

Value bound(const std::string& type, const std::string& name, Method method) {
  return Value::callable(type + "." + name, std::move(method));
}

// Python str.split / str.rsplit.
ValueList split_string(const std::string& text, const std::optional<std::string>& sep, int64_t maxsplit, bool from_right) {
  std::vector<std::string> parts;
  int64_t remaining = maxsplit < 0 ? std::numeric_limits<int64_t>::max() : maxsplit;
  if (sep) {
    if (sep->empty()) template_error("empty separator");
    if (!from_right) {
      size_t i = 0;
      while (remaining-- > 0) {
        size_t pos = text.find(*sep, i);
        if (pos == std::string::npos) break;
        parts.push_back(text.substr(i, pos - i));
        i = pos + sep->size();
      }
      parts.push_back(text.substr(i));
    } else {
      size_t end = text.size();
      while (remaining-- > 0 && end >= sep->size()) {
        size_t pos = text.rfind(*sep, end - sep->size());
        if (pos == std::string::npos) break;
        parts.push_back(text.substr(pos + sep->size(), end - pos - sep->size()));
        end = pos;
      }
      parts.push_back(text.substr(0, end));
      std::reverse(parts.begin(), parts.end());
    }
  } else {
    std::u32string s = utf8_decode(text);
    int64_t n = static_cast<int64_t>(s.size());
    auto space = [&](int64_t k) { return py_is_space(s[static_cast<size_t>(k)]); };
    auto piece = [&](int64_t a, int64_t b) {
      return utf8_encode(std::u32string_view(s).substr(static_cast<size_t>(a), static_cast<size_t>(b - a)));
    };
    if (!from_right) {
      int64_t i = 0;
      while (remaining-- > 0) {
        while (i < n && space(i)) ++i;
        if (i == n) break;
        int64_t j = i++;
        while (i < n && !space(i)) ++i;
        parts.push_back(piece(j, i));
      }
      if (i < n) {
        while (i < n && space(i)) ++i;
        if (i != n) parts.push_back(piece(i, n));
      }
    } else {
      int64_t i = n - 1;
      while (remaining-- > 0) {
        while (i >= 0 && space(i)) --i;
        if (i < 0) break;
        int64_t j = i--;
        while (i >= 0 && !space(i)) --i;
        parts.push_back(piece(i + 1, j + 1));
      }
      if (i >= 0) {
        while (i >= 0 && space(i)) --i;
        if (i >= 0) parts.push_back(piece(0, i + 1));
      }
      std::reverse(parts.begin(), parts.end());
    }
  }
  ValueList out;
  for (auto& part : parts) out.push_back(Value::string(std::move(part)));
  return out;
}

std::string replace_string(const std::string& text, const std::string& old_text, const std::string& new_text,
                           int64_t count) {
  if (count < 0) count = std::numeric_limits<int64_t>::max();
  std::string out;
  if (old_text.empty()) {
    std::u32string chars = utf8_decode(text);
    int64_t done = 0;
    for (char32_t c : chars) {
      if (done < count) {
        out += new_text;
        ++done;
      }
      utf8_append(out, c);
    }
    if (done < count) out += new_text;
    return out;
  }
  size_t i = 0;
  while (count-- > 0) {
    size_t pos = text.find(old_text, i);
    if (pos == std::string::npos) break;
    out.append(text, i, pos - i);
    out += new_text;
    i = pos + old_text.size();
  }
  out.append(text, i, std::string::npos);
  return out;
}

// startswith / endswith argument: a str or a tuple of str.
std::vector<std::string> affixes(const std::string& method, const Value& arg) {
  if (arg.is_string()) return {arg.as_string()};
  if (arg.is_list() && arg.flavor() == Value::Flavor::kTuple) {
    std::vector<std::string> out;
    for (const Value& item : arg.items()) {
      if (!item.is_string()) template_error("tuple for {} must only contain str, not {}", method, type_name(item));
      out.push_back(item.as_string());
    }
    return out;
  }
  template_error("{} first arg must be str or a tuple of str, not {}", method, type_name(arg));
}

std::optional<Value> string_method(const Value& receiver, const std::string& name) {
  const std::string text = receiver.as_string();
  auto str_method = [&](Method method) { return bound("str", name, std::move(method)); };
  auto no_args = [&](std::function<Value()> body) {
    return str_method([name, body](CallArgs& args) {
      expect_no_args("str." + name, args);
      return body();
    });
  };
  if (name == "startswith" || name == "endswith") {
    bool starts = name == "startswith";
    return str_method([text, name, starts](CallArgs& args) {
      BoundArgs a("str." + name, args, {"prefix", "start", "end"}, 1);
      if (a.has(1) || a.has(2)) template_error("str.{}() with start/end is not supported", name);
      for (const std::string& affix : affixes(name, a.get(0))) {
        bool hit = starts ? text.starts_with(affix) : text.ends_with(affix);
        if (hit) return Value::boolean(true);
      }
      return Value::boolean(false);
    });
  }
  if (name == "split" || name == "rsplit") {
    bool right = name == "rsplit";
    return str_method([text, name, right](CallArgs& args) {
      BoundArgs a("str." + name, args, {"sep", "maxsplit"});
      return Value::list(split_string(text, a.get_string(0), a.get_int(1, -1), right));
    });
  }
  if (name == "strip" || name == "lstrip" || name == "rstrip") {
    bool left = name != "rstrip";
    bool right = name != "lstrip";
    return str_method([text, name, left, right](CallArgs& args) {
      BoundArgs a("str." + name, args, {"chars"});
      std::optional<std::string> chars = a.get_string(0);
      return Value::string(py_strip(text, chars ? &*chars : nullptr, left, right));
    });
  }
  if (name == "replace") {
    return str_method([text](CallArgs& args) {
      BoundArgs a("str.replace", args, {"old", "new", "count"}, 2);
      std::optional<std::string> old_text = a.get_string(0);
      std::optional<std::string> new_text = a.get_string(1);
      if (!old_text || !new_text) template_error("str.replace() arguments must be str");
      return Value::string(replace_string(text, *old_text, *new_text, a.get_int(2, -1)));
    });
  }
  if (name == "find" || name == "rfind" || name == "index" || name == "rindex" || name == "count") {
    return str_method([text, name](CallArgs& args) {
      BoundArgs a("str." + name, args, {"sub", "start", "end"}, 1);
      if (a.has(1) || a.has(2)) template_error("str.{}() with start/end is not supported", name);
      std::optional<std::string> sub = a.get_string(0);
      if (!sub) template_error("str.{}() argument must be str", name);
      if (name == "count") {
        if (sub->empty()) return Value::integer(static_cast<int64_t>(utf8_length(text)) + 1);
        int64_t n = 0;
        for (size_t pos = text.find(*sub); pos != std::string::npos; pos = text.find(*sub, pos + sub->size())) ++n;
        return Value::integer(n);
      }
      size_t pos = name[0] == 'r' ? text.rfind(*sub) : text.find(*sub);
      if (pos == std::string::npos) {
        if (name == "index" || name == "rindex") template_error("substring not found");
        return Value::integer(-1);
      }
      return Value::integer(static_cast<int64_t>(utf8_index_of_byte(text, pos)));
    });
  }
  if (name == "join") {
    return str_method([text](CallArgs& args) {
      BoundArgs a("str.join", args, {"iterable"}, 1);
      std::string out;
      ValueList items = iterate(a.get(0));
      for (size_t i = 0; i < items.size(); ++i) {
        if (!items[i].is_string()) {
          template_error("sequence item {}: expected str instance, {} found", i, type_name(items[i]));
        }
        if (i) out += text;
        out += items[i].as_string();
      }
      return Value::string(std::move(out));
    });
  }
  if (name == "splitlines") {
    return str_method([text](CallArgs& args) {
      BoundArgs a("str.splitlines", args, {"keepends"});
      ValueList out;
      for (auto& line : py_splitlines(text, a.get_bool(0, false))) out.push_back(Value::string(std::move(line)));
      return Value::list(std::move(out));
    });
  }
  if (name == "removeprefix" || name == "removesuffix") {
    bool prefix = name == "removeprefix";
    return str_method([text, name, prefix](CallArgs& args) {
      BoundArgs a("str." + name, args, {"affix"}, 1);
      std::optional<std::string> affix = a.get_string(0);
      if (!affix) template_error("str.{}() argument must be str", name);
      if (prefix && text.starts_with(*affix)) return Value::string(text.substr(affix->size()));
      if (!prefix && text.ends_with(*affix)) return Value::string(text.substr(0, text.size() - affix->size()));
      return Value::string(text);
    });
  }
  if (name == "upper") return no_args([text] { return Value::string(py_upper(text)); });
  if (name == "lower") return no_args([text] { return Value::string(py_lower(text)); });
  if (name == "title") return no_args([text] { return Value::string(py_title(text)); });
  if (name == "capitalize") return no_args([text] { return Value::string(py_capitalize(text)); });
  if (name == "isupper") return no_args([text] { return Value::boolean(py_is_upper(text)); });
  if (name == "islower") return no_args([text] { return Value::boolean(py_is_lower(text)); });
  if (name == "isalpha") return no_args([text] { return Value::boolean(py_is_alpha(text)); });
  if (name == "isdigit") return no_args([text] { return Value::boolean(py_is_digit(text)); });
  if (name == "isalnum") return no_args([text] { return Value::boolean(py_is_alnum(text)); });
  if (name == "isspace") return no_args([text] { return Value::boolean(py_is_space_str(text)); });
  static const char* kUnsupported[] = {"format", "format_map", "zfill", "center", "ljust", "rjust", "partition",
                                       "rpartition", "expandtabs", "encode", "casefold", "swapcase", "istitle",
                                       "isdecimal", "isnumeric", "isidentifier", "isprintable", "isascii",
                                       "translate", "maketrans"};
  for (const char* unsupported : kUnsupported) {
    if (name == unsupported) template_error("the string method '{}' is not supported", name);
  }
  return std::nullopt;
}

std::optional<Value> dict_method(const Value& receiver, const std::string& name) {
  const Dict& dict = receiver.as_dict();
  auto method = [&](Method body) { return bound("dict", name, std::move(body)); };
  if (name == "items" || name == "keys" || name == "values") {
    Value::Flavor flavor = name == "items" ? Value::Flavor::kItemsView
                           : name == "keys" ? Value::Flavor::kKeysView
                                            : Value::Flavor::kValuesView;
    return method([receiver, name, flavor](CallArgs& args) {
      expect_no_args("dict." + name, args);
      ValueList out;
      for (const auto& [key, value] : receiver.as_dict().items) {
        if (flavor == Value::Flavor::kItemsView) {
          out.push_back(Value::list({Value::string(key), value}, Value::Flavor::kTuple));
        } else {
          out.push_back(flavor == Value::Flavor::kKeysView ? Value::string(key) : value);
        }
      }
      return Value::list(std::move(out), flavor);
    });
  }
  if (name == "get") {
    return method([receiver](CallArgs& args) {
      BoundArgs a("dict.get", args, {"key", "default"}, 1);
      const Value& key = a.get(0);
      if (key.is_string()) {
        if (const Value* found = receiver.as_dict().find(key.as_string())) return *found;
      } else if (key.is_list() || key.is_dict()) {
        template_error("unhashable type: '{}'", type_name(key));
      }
      return a.get(1, Value::none());
    });
  }
  if (name == "copy") {
    return method([receiver](CallArgs& args) {
      expect_no_args("dict.copy", args);
      return Value::dict(receiver.as_dict());
    });
  }
  static const char* kUnsafe[] = {"clear", "pop", "popitem", "setdefault", "update"};
  for (const char* unsafe : kUnsafe) {
    if (name == unsafe) template_error("access to attribute '{}' of 'dict' object is unsafe.", name);
  }
  if (name == "fromkeys") template_error("dict.fromkeys is not supported");
  (void)dict;
  return std::nullopt;
}

std::optional<Value> list_method(const Value& receiver, const std::string& name) {
  std::string type = type_name(receiver);
  if (name == "count" || name == "index") {
    return bound(type, name, [receiver, name, type](CallArgs& args) {
      BoundArgs a(type + "." + name, args, {"value"}, 1);
      const ValueList& items = receiver.items();
      int64_t n = 0;
      for (size_t i = 0; i < items.size(); ++i) {
        if (!equals(items[i], a.get(0))) continue;
        if (name == "index") return Value::integer(static_cast<int64_t>(i));
        ++n;
      }
      if (name == "index") template_error("{} is not in {}", repr(a.get(0)), type);
      return Value::integer(n);
    });
  }
  if (receiver.flavor() == Value::Flavor::kList) {
    if (name == "copy") {
      return bound(type, name, [receiver](CallArgs& args) {
        expect_no_args("list.copy", args);
        return receiver;
      });
    }
    static const char* kUnsafe[] = {"append", "clear", "extend", "insert", "pop", "remove", "reverse", "sort"};
    for (const char* unsafe : kUnsafe) {
      if (name == unsafe) template_error("access to attribute '{}' of 'list' object is unsafe.", name);
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<Value> find_method(const Value& receiver, const std::string& name) {
  if (receiver.is_string()) return string_method(receiver, name);
  if (receiver.is_dict()) return dict_method(receiver, name);
  if (receiver.is_list() && (receiver.flavor() == Value::Flavor::kList || receiver.flavor() == Value::Flavor::kTuple)) {
    return list_method(receiver, name);
  }
  return std::nullopt;
}

std::string html_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&#34;"; break;
      case '\'': out += "&#39;"; break;
      default: out.push_back(c);
    }
  }
  return out;
}

std::vector<std::string> py_splitlines(std::string_view text, bool keep_ends) {
  std::u32string s = utf8_decode(text);
  std::vector<std::string> lines;
  size_t start = 0;
  size_t i = 0;
  while (i < s.size()) {
    char32_t c = s[i];
    bool boundary = c == U'\n' || c == U'\r' || c == 0x0B || c == 0x0C || c == 0x1C || c == 0x1D || c == 0x1E ||
                    c == 0x85 || c == 0x2028 || c == 0x2029;
    if (!boundary) {
      ++i;
      continue;
    }
    size_t end = i;
    size_t next = i + 1;
    if (c == U'\r' && next < s.size() && s[next] == U'\n') ++next;
    lines.push_back(utf8_encode(std::u32string_view(s).substr(start, (keep_ends ? next : end) - start)));
    start = i = next;
  }
  if (start < s.size()) lines.push_back(utf8_encode(std::u32string_view(s).substr(start)));
  return lines;
}

std::optional<int64_t> py_parse_int(std::string_view text, int base) {
  std::string s = py_strip(text, nullptr, true, true);
  size_t i = 0;
  bool negative = false;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) negative = s[i++] == '-';
  bool prefixed = false;
  if (i + 1 < s.size() && s[i] == '0') {
    char p = static_cast<char>(s[i + 1] | 0x20);
    int prefix_base = p == 'x' ? 16 : p == 'o' ? 8 : p == 'b' ? 2 : 0;
    if (prefix_base && (base == 0 || base == prefix_base)) {
      base = prefix_base;
      i += 2;
      prefixed = true;
    }
  }
  if (base == 0) {
    base = 10;
    // Python rejects leading zeros in base 0 ("007"), except for zero itself.
    if (i + 1 < s.size() && s[i] == '0') {
      for (size_t k = i; k < s.size(); ++k) {
        if (s[k] != '0' && s[k] != '_') return std::nullopt;
      }
    }
  }
  if (base < 2 || base > 36) template_error("int() base must be >= 2 and <= 36, or 0");
  std::string digits;
  bool underscore_allowed = prefixed;  // '_' may follow a base prefix or a digit, once
  bool last_underscore = false;
  for (; i < s.size(); ++i) {
    char c = s[i];
    if (c == '_') {
      if (!underscore_allowed) return std::nullopt;
      underscore_allowed = false;
      last_underscore = true;
      continue;
    }
    int v = (c >= '0' && c <= '9') ? c - '0' : ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') ? (c | 0x20) - 'a' + 10 : 99;
    if (v >= base) return std::nullopt;
    digits.push_back(c);
    underscore_allowed = true;
    last_underscore = false;
  }
  if (digits.empty() || last_underscore) return std::nullopt;
  errno = 0;
  unsigned long long magnitude = std::strtoull(digits.c_str(), nullptr, base);
  uint64_t limit = negative ? static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) + 1
                            : static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  if (errno == ERANGE || magnitude > limit) template_error("integer {} is out of the supported range (int64)", s);
  return negative ? static_cast<int64_t>(0 - magnitude) : static_cast<int64_t>(magnitude);
}

std::optional<double> py_parse_float(std::string_view text) {
  std::string s = py_strip(text, nullptr, true, true);
  std::string lower = py_lower(s);
  std::string body = lower;
  double sign = 1.0;
  if (!body.empty() && (body[0] == '+' || body[0] == '-')) {
    sign = body[0] == '-' ? -1.0 : 1.0;
    body.erase(0, 1);
  }
  if (body == "inf" || body == "infinity") return sign * std::numeric_limits<double>::infinity();
  if (body == "nan") return std::numeric_limits<double>::quiet_NaN();
  // [digits][.digits][e[+-]digits] with single '_' only between digits.
  std::string clean;
  bool any_digit = false;
  bool seen_dot = false;
  bool seen_exp = false;
  for (size_t i = 0; i < body.size(); ++i) {
    char c = body[i];
    if (c >= '0' && c <= '9') {
      any_digit = true;
      clean.push_back(c);
    } else if (c == '_') {
      bool between = i > 0 && i + 1 < body.size() && std::isdigit(static_cast<unsigned char>(body[i - 1])) &&
                     std::isdigit(static_cast<unsigned char>(body[i + 1]));
      if (!between) return std::nullopt;
    } else if (c == '.' && !seen_dot && !seen_exp) {
      seen_dot = true;
      clean.push_back(c);
    } else if (c == 'e' && !seen_exp && any_digit) {
      seen_exp = true;
      clean.push_back(c);
      if (i + 1 < body.size() && (body[i + 1] == '+' || body[i + 1] == '-')) clean.push_back(body[++i]);
      if (i + 1 >= body.size()) return std::nullopt;
    } else {
      return std::nullopt;
    }
  }
  if (!any_digit) return std::nullopt;
  return sign * std::strtod(clean.c_str(), nullptr);
}

}  // namespace lathe::tokenizer::jinja
