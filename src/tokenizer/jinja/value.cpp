#include "tokenizer/jinja/value.h"

#include <algorithm>
#include <cmath>

#include "tokenizer/jinja/unicode.h"

namespace lathe::tokenizer::jinja {

const Value* Dict::find(std::string_view key) const {
  for (const auto& [name, value] : items) {
    if (name == key) return &value;
  }
  return nullptr;
}

Value* Dict::find(std::string_view key) {
  for (auto& [name, value] : items) {
    if (name == key) return &value;
  }
  return nullptr;
}

void Dict::set(const std::string& key, Value value) {
  if (Value* existing = find(key)) {
    *existing = std::move(value);
  } else {
    items.emplace_back(key, std::move(value));
  }
}

Value Value::undefined(std::string hint) {
  Value v;
  v.data_ = std::move(hint);
  return v;
}

Value Value::none() {
  Value v;
  v.kind_ = Kind::kNone;
  return v;
}

Value Value::boolean(bool value) {
  Value v;
  v.kind_ = Kind::kBool;
  v.data_ = value;
  return v;
}

Value Value::integer(int64_t value) {
  Value v;
  v.kind_ = Kind::kInt;
  v.data_ = value;
  return v;
}

Value Value::floating(double value) {
  Value v;
  v.kind_ = Kind::kFloat;
  v.data_ = value;
  return v;
}

Value Value::string(std::string value, bool markup) {
  Value v;
  v.kind_ = Kind::kString;
  v.markup_ = markup;
  v.data_ = std::move(value);
  return v;
}

int Value::depth_of(const ValueList& items) {
  int deepest = 0;
  for (const Value& item : items) deepest = std::max(deepest, item.depth());
  if (deepest + 1 > NestingGuard::kMaxNesting) {
    template_error("values nested more than {} levels deep", NestingGuard::kMaxNesting);
  }
  return deepest + 1;
}

int Value::depth_of(const Dict& dict) {
  int deepest = 0;
  for (const auto& item : dict.items) deepest = std::max(deepest, item.second.depth());
  if (deepest + 1 > NestingGuard::kMaxNesting) {
    template_error("values nested more than {} levels deep", NestingGuard::kMaxNesting);
  }
  return deepest + 1;
}

int Value::depth() const {
  switch (kind_) {
    case Kind::kList:
    case Kind::kIterator: return list_depth_;
    case Kind::kDict:
    case Kind::kNamespace: return std::get<std::shared_ptr<Dict>>(data_)->depth;
    default: return 0;
  }
}

Value Value::list(ValueList items, Flavor flavor) {
  Value v;
  v.kind_ = Kind::kList;
  v.flavor_ = flavor;
  v.list_depth_ = depth_of(items);
  v.data_ = std::make_shared<ValueList>(std::move(items));
  return v;
}

Value Value::dict(Dict dict) {
  dict.depth = depth_of(dict);
  Value v;
  v.kind_ = Kind::kDict;
  v.data_ = std::make_shared<Dict>(std::move(dict));
  return v;
}

Value Value::namespace_object(Dict attributes) {
  attributes.depth = depth_of(attributes);
  Value v;
  v.kind_ = Kind::kNamespace;
  v.data_ = std::make_shared<Dict>(std::move(attributes));
  return v;
}

Value Value::callable(std::string name, std::function<Value(CallArgs&)> function) {
  Value v;
  v.kind_ = Kind::kCallable;
  v.data_ = std::make_shared<Callable>(Callable{std::move(name), std::move(function)});
  return v;
}

Value Value::iterator(ValueList items) {
  Value v;
  v.kind_ = Kind::kIterator;
  v.list_depth_ = depth_of(items);
  v.data_ = std::make_shared<IteratorState>(IteratorState{std::move(items), 0});
  return v;
}

int64_t Value::as_int() const {
  if (kind_ == Kind::kBool) return std::get<bool>(data_) ? 1 : 0;
  return std::get<int64_t>(data_);
}

double Value::as_double() const {
  if (kind_ == Kind::kFloat) return std::get<double>(data_);
  return static_cast<double>(as_int());
}

namespace {
thread_local int g_nesting = 0;
}  // namespace

NestingGuard::NestingGuard() {
  if (++g_nesting > kMaxNesting) {
    --g_nesting;
    template_error("values nested more than {} levels deep", kMaxNesting);
  }
}

NestingGuard::~NestingGuard() { --g_nesting; }

std::string type_name(const Value& value) {
  switch (value.kind()) {
    case Value::Kind::kUndefined: return "Undefined";
    case Value::Kind::kNone: return "NoneType";
    case Value::Kind::kBool: return "bool";
    case Value::Kind::kInt: return "int";
    case Value::Kind::kFloat: return "float";
    case Value::Kind::kString: return value.markup() ? "Markup" : "str";
    case Value::Kind::kList:
      switch (value.flavor()) {
        case Value::Flavor::kList: return "list";
        case Value::Flavor::kTuple: return "tuple";
        case Value::Flavor::kItemsView: return "dict_items";
        case Value::Flavor::kKeysView: return "dict_keys";
        case Value::Flavor::kValuesView: return "dict_values";
        case Value::Flavor::kRange: return "range";
      }
      return "list";
    case Value::Kind::kDict: return "dict";
    case Value::Kind::kNamespace: return "Namespace";
    case Value::Kind::kCallable: return "function";
    case Value::Kind::kIterator: return "generator";
  }
  return "object";
}

std::string object_description(const Value& value) {
  if (value.is_none()) return "None";
  return type_name(value) + " object";
}

void require_defined(const Value& value) {
  if (value.is_undefined()) throw TemplateError(value.undefined_hint());
}

bool truthy(const Value& value) {
  switch (value.kind()) {
    case Value::Kind::kUndefined:
    case Value::Kind::kNone: return false;
    case Value::Kind::kBool: return value.as_bool();
    case Value::Kind::kInt: return value.as_int() != 0;
    case Value::Kind::kFloat: return value.as_double() != 0.0;
    case Value::Kind::kString: return !value.as_string().empty();
    case Value::Kind::kList: return !value.items().empty();
    case Value::Kind::kDict: return !value.as_dict().items.empty();
    case Value::Kind::kNamespace:
    case Value::Kind::kCallable:
    case Value::Kind::kIterator: return true;
  }
  return false;
}

namespace {

std::string repr_sequence(const ValueList& items, const char* open, const char* close, bool tuple) {
  std::string out = open;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) out += ", ";
    out += repr(items[i]);
  }
  if (tuple && items.size() == 1) out += ",";
  return out + close;
}

std::string repr_dict(const Dict& dict) {
  std::string out = "{";
  bool first = true;
  for (const auto& [key, item] : dict.items) {
    if (!first) out += ", ";
    first = false;
    out += py_repr_string(key) + ": " + repr(item);
  }
  return out + "}";
}

std::string repr_list(const Value& value) {
  const ValueList& items = value.items();
  switch (value.flavor()) {
    case Value::Flavor::kList: return repr_sequence(items, "[", "]", false);
    case Value::Flavor::kTuple: return repr_sequence(items, "(", ")", true);
    case Value::Flavor::kItemsView: return "dict_items(" + repr_sequence(items, "[", "]", false) + ")";
    case Value::Flavor::kKeysView: return "dict_keys(" + repr_sequence(items, "[", "]", false) + ")";
    case Value::Flavor::kValuesView: return "dict_values(" + repr_sequence(items, "[", "]", false) + ")";
    case Value::Flavor::kRange: break;
  }
  template_error("printing a range object is not supported (use |list)");
}

}  // namespace

std::string to_str(const Value& value) {
  switch (value.kind()) {
    case Value::Kind::kUndefined: return "";
    case Value::Kind::kString: return value.as_string();
    default: return repr(value);
  }
}

std::string repr(const Value& value) {
  NestingGuard guard;
  switch (value.kind()) {
    case Value::Kind::kUndefined: return "Undefined";
    case Value::Kind::kNone: return "None";
    case Value::Kind::kBool: return value.as_bool() ? "True" : "False";
    case Value::Kind::kInt: return std::to_string(value.as_int());
    case Value::Kind::kFloat: return py_repr_float(value.as_double());
    case Value::Kind::kString:
      return value.markup() ? "Markup(" + py_repr_string(value.as_string()) + ")" : py_repr_string(value.as_string());
    case Value::Kind::kList: return repr_list(value);
    case Value::Kind::kDict: return repr_dict(value.as_dict());
    case Value::Kind::kNamespace: return "<Namespace " + repr_dict(value.namespace_attributes()) + ">";
    case Value::Kind::kCallable:
      template_error("cannot print the function '{}' (its Python str() is an address)", value.as_callable().name);
    case Value::Kind::kIterator:
      template_error("cannot print a generator (its Python str() is an address); convert it with |list");
  }
  return "";
}

bool equals(const Value& a, const Value& b) {
  NestingGuard guard;
  if (a.is_number() && b.is_number()) {
    if (a.is_float() || b.is_float()) return a.as_double() == b.as_double();
    return a.as_int() == b.as_int();
  }
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case Value::Kind::kUndefined:
    case Value::Kind::kNone: return true;
    case Value::Kind::kString: return a.as_string() == b.as_string();
    case Value::Kind::kList: {
      if (a.flavor() != b.flavor()) return false;
      const ValueList& x = a.items();
      const ValueList& y = b.items();
      if (x.size() != y.size()) return false;
      for (size_t i = 0; i < x.size(); ++i) {
        if (!equals(x[i], y[i])) return false;
      }
      return true;
    }
    case Value::Kind::kDict: {
      const Dict& x = a.as_dict();
      const Dict& y = b.as_dict();
      if (x.items.size() != y.items.size()) return false;
      for (const auto& [key, item] : x.items) {
        const Value* other = y.find(key);
        if (!other || !equals(item, *other)) return false;
      }
      return true;
    }
    case Value::Kind::kNamespace: return &a.namespace_attributes() == &b.namespace_attributes();
    case Value::Kind::kCallable: return &a.as_callable() == &b.as_callable();
    case Value::Kind::kIterator: return &a.iterator_state() == &b.iterator_state();
    default: return false;
  }
}

std::partial_ordering compare(const Value& a, const Value& b) {
  NestingGuard guard;
  require_defined(a);
  require_defined(b);
  if (a.is_number() && b.is_number()) {
    if (a.is_float() || b.is_float()) return a.as_double() <=> b.as_double();
    return a.as_int() <=> b.as_int();
  }
  if (a.is_string() && b.is_string()) {
    int c = a.as_string().compare(b.as_string());  // UTF-8 byte order is code point order
    return c < 0 ? std::partial_ordering::less : c > 0 ? std::partial_ordering::greater : std::partial_ordering::equivalent;
  }
  bool sequences = a.is_list() && b.is_list() && a.flavor() == b.flavor() &&
                   (a.flavor() == Value::Flavor::kList || a.flavor() == Value::Flavor::kTuple);
  if (sequences) {
    const ValueList& x = a.items();
    const ValueList& y = b.items();
    for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
      if (!equals(x[i], y[i])) return compare(x[i], y[i]);
    }
    return x.size() <=> y.size();
  }
  template_error("'<' not supported between instances of '{}' and '{}'", type_name(a), type_name(b));
}

ValueList iterate(const Value& value) {
  switch (value.kind()) {
    case Value::Kind::kUndefined: return {};
    case Value::Kind::kList: return value.items();
    case Value::Kind::kDict: {
      ValueList keys;
      for (const auto& item : value.as_dict().items) keys.push_back(Value::string(item.first));
      return keys;
    }
    case Value::Kind::kString: {
      ValueList chars;
      for (char32_t c : utf8_decode(value.as_string())) {
        std::string one;
        utf8_append(one, c);
        chars.push_back(Value::string(std::move(one)));
      }
      return chars;
    }
    case Value::Kind::kIterator: {
      IteratorState& state = value.iterator_state();
      ValueList rest(state.items.begin() + static_cast<std::ptrdiff_t>(state.position), state.items.end());
      state.position = state.items.size();
      return rest;
    }
    default: template_error("'{}' object is not iterable", type_name(value));
  }
}

int64_t length(const Value& value) {
  switch (value.kind()) {
    case Value::Kind::kUndefined: return 0;
    case Value::Kind::kString: return static_cast<int64_t>(utf8_length(value.as_string()));
    case Value::Kind::kList: return static_cast<int64_t>(value.items().size());
    case Value::Kind::kDict: return static_cast<int64_t>(value.as_dict().items.size());
    default: template_error("object of type '{}' has no len()", type_name(value));
  }
}

}  // namespace lathe::tokenizer::jinja
