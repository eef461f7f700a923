#pragma once
// Python-style argument binding for builtin filters, tests, functions and methods: positional
// arguments fill the parameters in order, keywords by name; too many, unknown, duplicate or
// missing required arguments are a TemplateError naming the function.
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "tokenizer/jinja/value.h"

namespace lathe::tokenizer::jinja {

class BoundArgs {
 public:
  // `names`: the parameters after the input value; the first `required` are mandatory.
  BoundArgs(std::string function, CallArgs& args, std::initializer_list<const char*> names, size_t required = 0);

  bool has(size_t index) const { return values_[index].has_value(); }
  // The argument, or `fallback` when it was not passed.
  const Value& get(size_t index, const Value& fallback) const {
    return values_[index] ? *values_[index] : fallback;
  }
  const Value& get(size_t index) const;  // a required argument

  // Typed accessors with Python's type checks (bool counts as int).
  int64_t get_int(size_t index, int64_t fallback) const;
  bool get_bool(size_t index, bool fallback) const;  // Python truthiness of the argument
  std::optional<std::string> get_string(size_t index) const;  // None/absent -> nullopt

  const std::string& function() const { return function_; }

 private:
  std::string function_;
  std::vector<const char*> names_;
  std::vector<std::optional<Value>> values_;
};

// No arguments allowed.
void expect_no_args(const std::string& function, const CallArgs& args);

}  // namespace lathe::tokenizer::jinja
