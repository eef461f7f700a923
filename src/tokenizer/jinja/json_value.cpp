#include "tokenizer/jinja/json_value.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "tokenizer/jinja/unicode.h"

namespace lathe::tokenizer::jinja {

Value from_json(const nlohmann::ordered_json& json) {
  NestingGuard guard;
  switch (json.type()) {
    case nlohmann::ordered_json::value_t::null: return Value::none();
    case nlohmann::ordered_json::value_t::boolean: return Value::boolean(json.get<bool>());
    case nlohmann::ordered_json::value_t::number_integer: return Value::integer(json.get<int64_t>());
    case nlohmann::ordered_json::value_t::number_unsigned: {
      uint64_t value = json.get<uint64_t>();
      if (value > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        template_error("integer {} is out of the supported range (int64)", value);
      }
      return Value::integer(static_cast<int64_t>(value));
    }
    case nlohmann::ordered_json::value_t::number_float: return Value::floating(json.get<double>());
    case nlohmann::ordered_json::value_t::string: return Value::string(json.get<std::string>());
    case nlohmann::ordered_json::value_t::array: {
      ValueList items;
      items.reserve(json.size());
      for (const auto& item : json) items.push_back(from_json(item));
      return Value::list(std::move(items));
    }
    case nlohmann::ordered_json::value_t::object: {
      Dict dict;
      dict.items.reserve(json.size());
      for (const auto& [key, item] : json.items()) dict.set(key, from_json(item));
      return Value::dict(std::move(dict));
    }
    default: template_error("unsupported JSON value of type {}", json.type_name());
  }
}

namespace {

void append_json_string(std::string& out, const std::string& text, bool ensure_ascii) {
  out.push_back('"');
  char buffer[16];
  for (char32_t c : utf8_decode(text)) {
    switch (c) {
      case U'"': out += "\\\""; continue;
      case U'\\': out += "\\\\"; continue;
      case U'\n': out += "\\n"; continue;
      case U'\r': out += "\\r"; continue;
      case U'\t': out += "\\t"; continue;
      case U'\b': out += "\\b"; continue;
      case U'\f': out += "\\f"; continue;
      default: break;
    }
    if (c < 0x20 || (ensure_ascii && c >= 0x7F)) {
      if (c > 0xFFFF) {
        char32_t v = c - 0x10000;
        std::snprintf(buffer, sizeof(buffer), "\\u%04x\\u%04x", static_cast<unsigned>(0xD800 | (v >> 10)),
                      static_cast<unsigned>(0xDC00 | (v & 0x3FF)));
      } else {
        std::snprintf(buffer, sizeof(buffer), "\\u%04x", static_cast<unsigned>(c));
      }
      out += buffer;
    } else {
      utf8_append(out, c);
    }
  }
  out.push_back('"');
}

class JsonWriter {
 public:
  explicit JsonWriter(const JsonDumpOptions& options) : options_(options) {
    if (options.separators) {
      item_separator_ = options.separators->first;
      key_separator_ = options.separators->second;
    } else {
      item_separator_ = options.indent ? "," : ", ";
      key_separator_ = ": ";
    }
  }

  void write(const Value& value, int depth) {
    NestingGuard guard;
    switch (value.kind()) {
      case Value::Kind::kNone: out_ += "null"; return;
      case Value::Kind::kBool: out_ += value.as_bool() ? "true" : "false"; return;
      case Value::Kind::kInt: out_ += std::to_string(value.as_int()); return;
      case Value::Kind::kFloat: write_float(value.as_double()); return;
      case Value::Kind::kString: append_json_string(out_, value.as_string(), options_.ensure_ascii); return;
      case Value::Kind::kList:
        if (value.flavor() == Value::Flavor::kList || value.flavor() == Value::Flavor::kTuple) {
          write_list(value.items(), depth);
          return;
        }
        break;
      case Value::Kind::kDict: write_dict(value.as_dict(), depth); return;
      default: break;
    }
    template_error("Object of type {} is not JSON serializable", type_name(value));
  }

  std::string take() { return std::move(out_); }

 private:
  void write_float(double v) {
    if (std::isnan(v)) {
      out_ += "NaN";
    } else if (std::isinf(v)) {
      out_ += v > 0 ? "Infinity" : "-Infinity";
    } else {
      out_ += py_repr_float(v);
    }
  }

  void newline(int depth) {
    if (!options_.indent) return;
    out_.push_back('\n');
    for (int i = 0; i < depth; ++i) out_ += *options_.indent;
  }

  void write_list(const ValueList& items, int depth) {
    if (items.empty()) {
      out_ += "[]";
      return;
    }
    out_.push_back('[');
    for (size_t i = 0; i < items.size(); ++i) {
      if (i) out_ += item_separator_;
      newline(depth + 1);
      write(items[i], depth + 1);
    }
    newline(depth);
    out_.push_back(']');
  }

  void write_dict(const Dict& dict, int depth) {
    if (dict.items.empty()) {
      out_ += "{}";
      return;
    }
    std::vector<const std::pair<std::string, Value>*> entries;
    for (const auto& entry : dict.items) entries.push_back(&entry);
    if (options_.sort_keys) {
      std::stable_sort(entries.begin(), entries.end(), [](auto* a, auto* b) { return a->first < b->first; });
    }
    out_.push_back('{');
    for (size_t i = 0; i < entries.size(); ++i) {
      if (i) out_ += item_separator_;
      newline(depth + 1);
      append_json_string(out_, entries[i]->first, options_.ensure_ascii);
      out_ += key_separator_;
      write(entries[i]->second, depth + 1);
    }
    newline(depth);
    out_.push_back('}');
  }

  const JsonDumpOptions& options_;
  std::string item_separator_;
  std::string key_separator_;
  std::string out_;
};

}  // namespace

std::string dump_json(const Value& value, const JsonDumpOptions& options) {
  JsonWriter writer(options);
  writer.write(value, 0);
  return writer.take();
}

}  // namespace lathe::tokenizer::jinja
