#include "tokenizer/jinja/args.h"

#include <cstring>

namespace lathe::tokenizer::jinja {

BoundArgs::BoundArgs(std::string function, CallArgs& args, std::initializer_list<const char*> names, size_t required)
    : function_(std::move(function)), names_(names), values_(names.size()) {
  if (args.positional.size() > names_.size()) {
    template_error("{}() takes at most {} argument(s) ({} given)", function_, names_.size(), args.positional.size());
  }
  for (size_t i = 0; i < args.positional.size(); ++i) values_[i] = args.positional[i];
  for (auto& [key, value] : args.keyword) {
    size_t index = 0;
    while (index < names_.size() && key != names_[index]) ++index;
    if (index == names_.size()) template_error("{}() got an unexpected keyword argument '{}'", function_, key);
    if (values_[index]) template_error("{}() got multiple values for argument '{}'", function_, key);
    values_[index] = value;
  }
  for (size_t i = 0; i < required; ++i) {
    if (!values_[i]) template_error("{}() missing required argument '{}'", function_, names_[i]);
  }
}

const Value& BoundArgs::get(size_t index) const {
  if (!values_[index]) template_error("{}() missing required argument '{}'", function_, names_[index]);
  return *values_[index];
}

int64_t BoundArgs::get_int(size_t index, int64_t fallback) const {
  if (!values_[index]) return fallback;
  const Value& value = *values_[index];
  if (!value.is_int() && !value.is_bool()) {
    template_error("{}(): argument '{}' must be an integer, got {}", function_, names_[index], type_name(value));
  }
  return value.as_int();
}

bool BoundArgs::get_bool(size_t index, bool fallback) const {
  return values_[index] ? truthy(*values_[index]) : fallback;
}

std::optional<std::string> BoundArgs::get_string(size_t index) const {
  if (!values_[index] || values_[index]->is_none()) return std::nullopt;
  const Value& value = *values_[index];
  if (!value.is_string()) {
    template_error("{}(): argument '{}' must be a string, got {}", function_, names_[index], type_name(value));
  }
  return value.as_string();
}

void expect_no_args(const std::string& function, const CallArgs& args) {
  if (!args.positional.empty() || !args.keyword.empty()) template_error("{}() takes no arguments", function);
}

}  // namespace lathe::tokenizer::jinja
