// Python operators, attribute/item access and slicing with jinja2's sandboxed semantics.
#include <cmath>
#include <limits>

#include "tokenizer/jinja/builtins.h"
#include "tokenizer/jinja/internal.h"
#include "tokenizer/jinja/unicode.h"

namespace lathe::tokenizer::jinja {
namespace {

[[noreturn]] void unsupported_operands(const std::string& op, const Value& left, const Value& right) {
  template_error("unsupported operand type(s) for {}: '{}' and '{}'", op, type_name(left), type_name(right));
}

bool is_sequence_list(const Value& value) {
  return value.is_list() && (value.flavor() == Value::Flavor::kList || value.flavor() == Value::Flavor::kTuple);
}

[[noreturn]] void integer_overflow() { template_error("integer overflow (lathe's Jinja integers are 64-bit)"); }

int64_t checked_add(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) integer_overflow();
  return r;
}

int64_t checked_sub(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_sub_overflow(a, b, &r)) integer_overflow();
  return r;
}

int64_t checked_mul(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) integer_overflow();
  return r;
}

// CPython's float floor division and modulo (float_divmod).
std::pair<double, double> float_divmod(double vx, double wx) {
  if (wx == 0.0) template_error("float division by zero");
  double mod = std::fmod(vx, wx);
  double div = (vx - mod) / wx;
  if (mod != 0.0) {
    if ((wx < 0) != (mod < 0)) {
      mod += wx;
      div -= 1.0;
    }
  } else {
    mod = std::copysign(0.0, wx);
  }
  double floordiv;
  if (div != 0.0) {
    floordiv = std::floor(div);
    if (div - floordiv > 0.5) floordiv += 1.0;
  } else {
    floordiv = std::copysign(0.0, vx / wx);
  }
  return {floordiv, mod};
}

std::pair<int64_t, int64_t> int_divmod(int64_t a, int64_t b) {
  if (b == 0) template_error("integer division or modulo by zero");
  if (a == std::numeric_limits<int64_t>::min() && b == -1) template_error("integer overflow");
  int64_t q = a / b;
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) {
    q -= 1;
    r += b;
  }
  return {q, r};
}

Value repeat(const Value& sequence, int64_t times) {
  if (sequence.is_string()) {
    std::string out;
    for (int64_t i = 0; i < times; ++i) out += sequence.as_string();
    return Value::string(std::move(out), sequence.markup());
  }
  ValueList out;
  for (int64_t i = 0; i < times; ++i) out.insert(out.end(), sequence.items().begin(), sequence.items().end());
  return Value::list(std::move(out), sequence.flavor());
}

Value power(const Value& left, const Value& right) {
  if (!left.is_float() && !right.is_float() && right.as_int() >= 0) {
    int64_t base = left.as_int();
    int64_t exponent = right.as_int();
    int64_t result = 1;
    while (exponent > 0) {
      if (exponent & 1) result = checked_mul(result, base);
      exponent >>= 1;
      if (exponent > 0) base = checked_mul(base, base);
    }
    return Value::integer(result);
  }
  double x = left.as_double();
  double y = right.as_double();
  if (x == 0.0 && y < 0) template_error("0.0 cannot be raised to a negative power");
  if (x < 0 && y != std::floor(y)) template_error("a negative number raised to a fractional power is complex");
  return Value::floating(std::pow(x, y));
}

}  // namespace

Value binary_op(const std::string& op, const Value& left, const Value& right) {
  require_defined(left);
  require_defined(right);
  bool numbers = left.is_number() && right.is_number();
  bool any_float = left.is_float() || right.is_float();
  if (op == "+") {
    if (numbers) {
      if (any_float) return Value::floating(left.as_double() + right.as_double());
      return Value::integer(checked_add(left.as_int(), right.as_int()));
    }
    if (left.is_string() && right.is_string()) {
      // markupsafe: adding to a Markup escapes the plain operand and yields Markup.
      if (left.markup() || right.markup()) {
        std::string a = left.markup() ? left.as_string() : html_escape(left.as_string());
        std::string b = right.markup() ? right.as_string() : html_escape(right.as_string());
        return Value::string(a + b, true);
      }
      return Value::string(left.as_string() + right.as_string());
    }
    if (is_sequence_list(left) && is_sequence_list(right) && left.flavor() == right.flavor()) {
      ValueList out = left.items();
      out.insert(out.end(), right.items().begin(), right.items().end());
      return Value::list(std::move(out), left.flavor());
    }
    if (left.is_string()) template_error("can only concatenate str (not \"{}\") to str", type_name(right));
    if (left.is_list() && left.flavor() == Value::Flavor::kList) {
      template_error("can only concatenate list (not \"{}\") to list", type_name(right));
    }
    unsupported_operands(op, left, right);
  }
  if (op == "-") {
    if (!numbers) unsupported_operands(op, left, right);
    if (any_float) return Value::floating(left.as_double() - right.as_double());
    return Value::integer(checked_sub(left.as_int(), right.as_int()));
  }
  if (op == "*") {
    if (numbers) {
      if (any_float) return Value::floating(left.as_double() * right.as_double());
      return Value::integer(checked_mul(left.as_int(), right.as_int()));
    }
    bool left_seq = left.is_string() || is_sequence_list(left);
    bool right_seq = right.is_string() || is_sequence_list(right);
    if (left_seq && (right.is_int() || right.is_bool())) return repeat(left, right.as_int());
    if (right_seq && (left.is_int() || left.is_bool())) return repeat(right, left.as_int());
    unsupported_operands(op, left, right);
  }
  if (op == "/") {
    if (!numbers) unsupported_operands(op, left, right);
    if (right.as_double() == 0.0) template_error("division by zero");
    return Value::floating(left.as_double() / right.as_double());
  }
  if (op == "//" || op == "%") {
    if (left.is_string() && op == "%") template_error("printf-style string formatting ('%') is not supported");
    if (!numbers) unsupported_operands(op, left, right);
    if (any_float) {
      auto [quotient, remainder] = float_divmod(left.as_double(), right.as_double());
      return Value::floating(op == "//" ? quotient : remainder);
    }
    auto [quotient, remainder] = int_divmod(left.as_int(), right.as_int());
    return Value::integer(op == "//" ? quotient : remainder);
  }
  if (op == "**") {
    if (!numbers) unsupported_operands(op, left, right);
    return power(left, right);
  }
  template_error("unknown operator '{}'", op);
}

bool contains(const Value& haystack, const Value& needle) {
  switch (haystack.kind()) {
    case Value::Kind::kUndefined: return false;
    case Value::Kind::kString:
      if (!needle.is_string()) {
        template_error("'in <string>' requires string as left operand, not {}", type_name(needle));
      }
      return haystack.as_string().find(needle.as_string()) != std::string::npos;
    case Value::Kind::kList:
      for (const Value& item : haystack.items()) {
        if (equals(item, needle)) return true;
      }
      return false;
    case Value::Kind::kDict:
      if (needle.is_list() || needle.is_dict() || needle.is_namespace()) {
        template_error("unhashable type: '{}'", type_name(needle));
      }
      return needle.is_string() && haystack.as_dict().find(needle.as_string()) != nullptr;
    case Value::Kind::kIterator: {
      IteratorState& state = haystack.iterator_state();
      while (state.position < state.items.size()) {
        if (equals(state.items[state.position++], needle)) return true;
      }
      return false;
    }
    default: template_error("argument of type '{}' is not iterable", type_name(haystack));
  }
}

Value get_attribute(const Value& object, const std::string& name) {
  require_defined(object);
  auto missing = [&]() {
    return Value::undefined(fmt::format("'{}' has no attribute '{}'", object_description(object), name));
  };
  if (name.size() > 4 && name.starts_with("__") && name.ends_with("__")) {
    template_error("access to attribute '{}' of '{}' object is unsafe.", name, type_name(object));
  }
  if (object.is_namespace()) {
    const Value* found = object.namespace_attributes().find(name);
    return found ? *found : missing();
  }
  if (std::optional<Value> method = find_method(object, name)) return *method;
  if (object.is_dict()) {
    const Value* found = object.as_dict().find(name);
    return found ? *found : missing();
  }
  return missing();
}

Value get_item(const Value& object, const Value& key) {
  require_defined(object);
  if (object.is_dict()) {
    if (key.is_string()) {
      if (const Value* found = object.as_dict().find(key.as_string())) return *found;
    }
  } else if (key.is_int() || key.is_bool()) {
    int64_t index = key.as_int();
    if (object.is_list() && (is_sequence_list(object) || object.flavor() == Value::Flavor::kRange)) {
      int64_t size = static_cast<int64_t>(object.items().size());
      if (index < 0) index += size;
      if (index >= 0 && index < size) return object.items()[static_cast<size_t>(index)];
    } else if (object.is_string()) {
      std::u32string chars = utf8_decode(object.as_string());
      int64_t size = static_cast<int64_t>(chars.size());
      if (index < 0) index += size;
      if (index >= 0 && index < size) {
        std::string one;
        utf8_append(one, chars[static_cast<size_t>(index)]);
        return Value::string(std::move(one), object.markup());
      }
    }
    return Value::undefined(fmt::format("{} has no element {}", object_description(object), key.as_int()));
  }
  // jinja2 falls back to attribute lookup for string keys (methods, namespace attributes).
  if (key.is_string()) {
    if (object.is_namespace()) {
      const Value* found = object.namespace_attributes().find(key.as_string());
      if (found) return *found;
    } else if (std::optional<Value> method = find_method(object, key.as_string())) {
      return *method;
    }
    return Value::undefined(fmt::format("'{}' has no attribute '{}'", object_description(object), key.as_string()));
  }
  return Value::undefined(fmt::format("{} has no element {}", object_description(object), repr(key)));
}

Value get_slice(const Value& object, const Value& start_value, const Value& stop_value, const Value& step_value) {
  require_defined(object);
  // jinja2 compiles slicing to a plain Python subscript (not environment.getitem), so every
  // failure is an error rather than an undefined value.
  bool sliceable = object.is_string() || is_sequence_list(object) ||
                   (object.is_list() && object.flavor() == Value::Flavor::kRange);
  if (object.is_dict()) template_error("unhashable type: 'slice'");
  if (!sliceable) template_error("'{}' object is not subscriptable", type_name(object));
  for (const Value* bound : {&start_value, &stop_value, &step_value}) {
    if (!bound->is_none() && !bound->is_int() && !bound->is_bool()) {
      template_error("slice indices must be integers or None or have an __index__ method");
    }
  }
  auto given = [](const Value& v) { return v.is_int() || v.is_bool(); };
  int64_t step = given(step_value) ? step_value.as_int() : 1;
  if (step == 0) template_error("slice step cannot be zero");
  std::u32string chars;
  int64_t length = 0;
  if (object.is_string()) {
    chars = utf8_decode(object.as_string());
    length = static_cast<int64_t>(chars.size());
  } else {
    length = static_cast<int64_t>(object.items().size());
  }
  // CPython PySlice_AdjustIndices.
  int64_t lower = step < 0 ? -1 : 0;
  int64_t upper = step < 0 ? length - 1 : length;
  auto adjust = [&](const Value& v, int64_t fallback) {
    if (!given(v)) return fallback;
    int64_t index = v.as_int();
    if (index < 0) {
      index += length;
      if (index < lower) index = lower;
    } else if (index > upper) {
      index = upper;
    }
    return index;
  };
  int64_t start = adjust(start_value, step < 0 ? upper : lower);
  int64_t stop = adjust(stop_value, step < 0 ? lower : upper);
  std::vector<size_t> picked;
  for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) picked.push_back(static_cast<size_t>(i));
  if (object.is_string()) {
    std::u32string out;
    for (size_t i : picked) out.push_back(chars[i]);
    return Value::string(utf8_encode(out), object.markup());
  }
  ValueList out;
  for (size_t i : picked) out.push_back(object.items()[i]);
  return Value::list(std::move(out), object.flavor());
}

}  // namespace lathe::tokenizer::jinja
