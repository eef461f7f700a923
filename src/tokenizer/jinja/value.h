#pragma once
// The value type of lathe's Jinja interpreter. It models the Python objects that chat templates
// see when transformers renders them with jinja2: None, bool, int, float, str (optionally marked
// safe, i.e. markupsafe.Markup), list/tuple (and the dict views and range, which print
// differently), dict (insertion-ordered, string keys), jinja2's Namespace (mutable, shared), a
// callable (builtin, bound method or macro), a one-shot iterator (what jinja2 filters such as
// map/select return: generators) and jinja2's Undefined (with the hint its errors print).
//
// Lists and dicts are shared and never mutated after construction (the sandbox transformers uses
// forbids mutating them); a namespace is shared and mutable through `set ns.attr = ...`.
#include <compare>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "core/error.h"

namespace lathe::tokenizer::jinja {

// An error raised while parsing or rendering a template. `located` is set once the message
// carries the template line (and column); the interpreter adds the location of the innermost
// node being evaluated.
class TemplateError : public lathe::Error {
 public:
  explicit TemplateError(const std::string& message, bool located = false)
      : lathe::Error(message), located_(located) {}
  bool located() const { return located_; }

 private:
  bool located_;
};

// raise_exception(message) from a template: what() is exactly the template's message.
class RaisedError : public lathe::Error {
 public:
  explicit RaisedError(const std::string& message) : lathe::Error(message) {}
};

template <typename... Args>
[[noreturn]] void template_error(fmt::format_string<Args...> format, Args&&... args) {
  throw TemplateError(fmt::format(format, std::forward<Args>(args)...));
}

class Value;
using ValueList = std::vector<Value>;

// An insertion-ordered mapping from string keys (Python dict order).
struct Dict {
  std::vector<std::pair<std::string, Value>> items;
  // Nesting depth of the dict as a value (1 + its deepest item), set when it becomes a Value; a
  // namespace raises it as attributes are assigned.
  int depth = 1;

  const Value* find(std::string_view key) const;
  Value* find(std::string_view key);
  // Replaces the value of an existing key in place, or appends a new key.
  void set(const std::string& key, Value value);
};

// Positional and keyword arguments of a call, in source order.
struct CallArgs {
  ValueList positional;
  std::vector<std::pair<std::string, Value>> keyword;
};

struct Callable {
  std::string name;
  std::function<Value(CallArgs&)> function;
};

// A one-shot iterator: iterating consumes items from `position` on (a Python generator).
struct IteratorState {
  ValueList items;
  size_t position = 0;
};

class Value {
 public:
  enum class Kind : uint8_t {
    kUndefined, kNone, kBool, kInt, kFloat, kString, kList, kDict, kNamespace, kCallable, kIterator
  };
  // How a list prints and whether it can be indexed: list [..], tuple (..), dict views
  // dict_items([..]) (not subscriptable), range (printing unsupported).
  enum class Flavor : uint8_t { kList, kTuple, kItemsView, kKeysView, kValuesView, kRange };

  Value() : kind_(Kind::kUndefined) {}
  static Value undefined(std::string hint);
  static Value none();
  static Value boolean(bool value);
  static Value integer(int64_t value);
  static Value floating(double value);
  static Value string(std::string value, bool markup = false);
  static Value list(ValueList items, Flavor flavor = Flavor::kList);
  static Value dict(Dict dict);
  static Value namespace_object(Dict attributes);
  static Value callable(std::string name, std::function<Value(CallArgs&)> function);
  static Value iterator(ValueList items);

  Kind kind() const { return kind_; }
  bool is_undefined() const { return kind_ == Kind::kUndefined; }
  bool is_none() const { return kind_ == Kind::kNone; }
  bool is_bool() const { return kind_ == Kind::kBool; }
  bool is_int() const { return kind_ == Kind::kInt; }
  bool is_float() const { return kind_ == Kind::kFloat; }
  // int, float or bool (Python's bool is an int).
  bool is_number() const { return kind_ == Kind::kInt || kind_ == Kind::kFloat || kind_ == Kind::kBool; }
  bool is_string() const { return kind_ == Kind::kString; }
  bool is_list() const { return kind_ == Kind::kList; }
  bool is_dict() const { return kind_ == Kind::kDict; }
  bool is_namespace() const { return kind_ == Kind::kNamespace; }
  bool is_callable() const { return kind_ == Kind::kCallable; }
  bool is_iterator() const { return kind_ == Kind::kIterator; }

  bool as_bool() const { return std::get<bool>(data_); }
  int64_t as_int() const;  // int or bool
  double as_double() const;  // int, float or bool
  const std::string& as_string() const { return std::get<std::string>(data_); }
  bool markup() const { return markup_; }
  const ValueList& items() const { return *std::get<std::shared_ptr<ValueList>>(data_); }
  Flavor flavor() const { return flavor_; }
  const Dict& as_dict() const { return *std::get<std::shared_ptr<Dict>>(data_); }
  Dict& namespace_attributes() const { return *std::get<std::shared_ptr<Dict>>(data_); }
  const Callable& as_callable() const { return *std::get<std::shared_ptr<Callable>>(data_); }
  IteratorState& iterator_state() const { return *std::get<std::shared_ptr<IteratorState>>(data_); }
  // The message an undefined value's errors print, e.g. "'x' is undefined".
  const std::string& undefined_hint() const { return std::get<std::string>(data_); }
  // Container nesting depth: 0 for scalars, 1 + the deepest element for lists, dicts,
  // namespaces and iterators. Building a value deeper than NestingGuard::kMaxNesting is a
  // TemplateError, which keeps every recursion over values (printing, tojson, comparison,
  // destruction) within the stack.
  int depth() const;

 private:
  static int depth_of(const ValueList& items);
  static int depth_of(const Dict& dict);

  Kind kind_;
  int list_depth_ = 0;
  Flavor flavor_ = Flavor::kList;
  bool markup_ = false;
  std::variant<std::monostate, bool, int64_t, double, std::string, std::shared_ptr<ValueList>, std::shared_ptr<Dict>,
               std::shared_ptr<Callable>, std::shared_ptr<IteratorState>>
      data_;
};

// Bounds recursion over nested values (lists in lists ...): past kMaxNesting levels a
// TemplateError is thrown instead of exhausting the stack (Python raises RecursionError near
// 1000 levels). One guard per recursion level, thread-local count.
class NestingGuard {
 public:
  static constexpr int kMaxNesting = 1000;
  NestingGuard();
  ~NestingGuard();
  NestingGuard(const NestingGuard&) = delete;
  NestingGuard& operator=(const NestingGuard&) = delete;
};

// Python's type name of a value, as in error messages ("str", "dict", "NoneType", ...).
std::string type_name(const Value& value);
// jinja2's description of an object in undefined-attribute hints ("dict object", "None").
std::string object_description(const Value& value);

// Python truthiness (undefined is false; an iterator is always true).
bool truthy(const Value& value);
// Python str(value): what {{ value }} prints. Undefined prints ''. Throws TemplateError for
// values whose Python str() is an address (functions, generators).
std::string to_str(const Value& value);
// Python repr(value).
std::string repr(const Value& value);
// Python ==.
bool equals(const Value& a, const Value& b);
// Python ordering for < <= > >=; unordered for NaN; TemplateError for incomparable types.
std::partial_ordering compare(const Value& a, const Value& b);
// Throws the undefined value's error ("'x' is undefined") when `value` is undefined.
void require_defined(const Value& value);

// The items a for loop / list() / join see: list elements, dict keys, string code points, the
// remaining items of an iterator (consuming it); undefined iterates as empty. TemplateError for
// values that are not iterable.
ValueList iterate(const Value& value);
// Python len(); TemplateError for values without a length.
int64_t length(const Value& value);

}  // namespace lathe::tokenizer::jinja
