#include "tokenizer/tokenizer_json.h"

#include <nlohmann/json.hpp>

#include "core/error.h"

namespace lathe::tokenizer {
namespace {

using nlohmann::json;

const json& require(const json& object, const char* field, const std::string& where) {
  auto it = object.find(field);
  if (it == object.end()) fail("{}: missing field '{}'", where, field);
  return *it;
}

std::string type_of(const json& object, const std::string& where) {
  if (!object.is_object()) fail("{}: expected an object, got {}", where, object.type_name());
  const json& type = require(object, "type", where);
  if (!type.is_string()) fail("{}.type: expected a string", where);
  return type.get<std::string>();
}

bool flag(const json& object, const char* field, bool fallback, const std::string& where) {
  auto it = object.find(field);
  if (it == object.end() || it->is_null()) return fallback;
  if (!it->is_boolean()) fail("{}.{}: expected a boolean, got {}", where, field, it->type_name());
  return it->get<bool>();
}

std::string optional_string(const json& object, const char* field, const std::string& where) {
  auto it = object.find(field);
  if (it == object.end() || it->is_null()) return {};
  if (!it->is_string()) fail("{}.{}: expected a string or null, got {}", where, field, it->type_name());
  return it->get<std::string>();
}

void read_model(const json& model, TokenizerSpec& spec) {
  const std::string where = spec.source + ": model";
  std::string type = type_of(model, where);
  if (type != "BPE") fail("{}.type is '{}': lathe implements only byte-level BPE tokenizers", where, type);
  auto dropout = model.find("dropout");
  if (dropout != model.end() && !dropout->is_null() && !(dropout->is_number() && dropout->get<double>() == 0.0)) {
    fail("{}.dropout: BPE dropout is not supported (got {})", where, dropout->dump());
  }
  if (!optional_string(model, "continuing_subword_prefix", where).empty()) {
    fail("{}.continuing_subword_prefix: not supported by byte-level BPE", where);
  }
  if (!optional_string(model, "end_of_word_suffix", where).empty()) {
    fail("{}.end_of_word_suffix: not supported by byte-level BPE", where);
  }
  spec.ignore_merges = flag(model, "ignore_merges", false, where);

  const json& vocab = require(model, "vocab", where);
  if (!vocab.is_object()) fail("{}.vocab: expected an object of token -> id", where);
  spec.vocab.reserve(vocab.size());
  for (auto it = vocab.begin(); it != vocab.end(); ++it) {
    if (!it.value().is_number_integer()) fail("{}.vocab['{}']: id must be an integer", where, it.key());
    int64_t id = it.value().get<int64_t>();
    if (id < 0 || id > INT32_MAX - 1) fail("{}.vocab['{}']: id {} out of range", where, it.key(), id);
    spec.vocab.emplace_back(it.key(), static_cast<int32_t>(id));
  }

  const json& merges = require(model, "merges", where);
  if (!merges.is_array()) fail("{}.merges: expected a list", where);
  spec.merges.reserve(merges.size());
  for (size_t i = 0; i < merges.size(); ++i) {
    const json& merge = merges[i];
    if (merge.is_string()) {
      const std::string& text = merge.get_ref<const std::string&>();
      size_t space = text.find(' ');
      if (space == std::string::npos || space == 0 || space + 1 == text.size() ||
          text.find(' ', space + 1) != std::string::npos) {
        fail("{}.merges[{}]: '{}' is not two tokens separated by one space", where, i, text);
      }
      spec.merges.emplace_back(text.substr(0, space), text.substr(space + 1));
    } else if (merge.is_array() && merge.size() == 2 && merge[0].is_string() && merge[1].is_string()) {
      spec.merges.emplace_back(merge[0].get<std::string>(), merge[1].get<std::string>());
    } else {
      fail("{}.merges[{}]: expected \"a b\" or [\"a\", \"b\"], got {}", where, i, merge.dump());
    }
  }
}

void read_added_tokens(const json& root, TokenizerSpec& spec) {
  auto it = root.find("added_tokens");
  if (it == root.end() || it->is_null()) return;
  if (!it->is_array()) fail("{}: added_tokens: expected a list", spec.source);
  for (size_t i = 0; i < it->size(); ++i) {
    const json& token = (*it)[i];
    const std::string where = fmt::format("{}: added_tokens[{}]", spec.source, i);
    if (!token.is_object()) fail("{}: expected an object", where);
    AddedTokenSpec added;
    const json& id = require(token, "id", where);
    if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() > INT32_MAX - 1) {
      fail("{}.id: expected a non-negative 32-bit integer", where);
    }
    added.id = static_cast<int32_t>(id.get<int64_t>());
    const json& content = require(token, "content", where);
    if (!content.is_string() || content.get_ref<const std::string&>().empty()) {
      fail("{}.content: expected a non-empty string", where);
    }
    added.content = content.get<std::string>();
    added.special = flag(token, "special", false, where);
    added.lstrip = flag(token, "lstrip", false, where);
    added.rstrip = flag(token, "rstrip", false, where);
    added.single_word = flag(token, "single_word", false, where);
    added.normalized = flag(token, "normalized", !added.special, where);
    spec.added_tokens.push_back(std::move(added));
  }
}

void read_normalizer(const json& normalizer, const std::string& where, TokenizerSpec& spec) {
  if (normalizer.is_null()) return;
  std::string type = type_of(normalizer, where);
  if (type == "NFC") {
    spec.normalizers.push_back(NormalForm::kNfc);
  } else if (type == "NFD") {
    spec.normalizers.push_back(NormalForm::kNfd);
  } else if (type == "NFKC") {
    spec.normalizers.push_back(NormalForm::kNfkc);
  } else if (type == "NFKD") {
    spec.normalizers.push_back(NormalForm::kNfkd);
  } else if (type == "Sequence") {
    const json& list = require(normalizer, "normalizers", where);
    if (!list.is_array()) fail("{}.normalizers: expected a list", where);
    for (size_t i = 0; i < list.size(); ++i) read_normalizer(list[i], fmt::format("{}.normalizers[{}]", where, i), spec);
  } else {
    fail("{}.type is '{}': lathe supports only the NFC/NFD/NFKC/NFKD normalizers", where, type);
  }
}

void check_byte_level(const json& byte_level, const std::string& where) {
  if (flag(byte_level, "add_prefix_space", false, where)) fail("{}.add_prefix_space: true is not supported", where);
  if (flag(byte_level, "use_regex", true, where)) {
    fail("{}.use_regex: true (GPT-2's built-in regex) is not supported; use a Split pre-tokenizer", where);
  }
}

void read_pre_tokenizer(const json& pre, TokenizerSpec& spec) {
  const std::string where = spec.source + ": pre_tokenizer";
  if (pre.is_null()) fail("{} is null: a byte-level BPE needs a ByteLevel pre-tokenizer", where);
  std::string type = type_of(pre, where);
  std::vector<std::pair<const json*, std::string>> steps;
  if (type == "Sequence") {
    const json& list = require(pre, "pretokenizers", where);
    if (!list.is_array()) fail("{}.pretokenizers: expected a list", where);
    for (size_t i = 0; i < list.size(); ++i) steps.emplace_back(&list[i], fmt::format("{}.pretokenizers[{}]", where, i));
  } else {
    steps.emplace_back(&pre, where);
  }
  for (size_t i = 0; i < steps.size(); ++i) {
    const json& step = *steps[i].first;
    const std::string& step_where = steps[i].second;
    std::string step_type = type_of(step, step_where);
    bool last = i + 1 == steps.size();
    if (step_type == "ByteLevel") {
      if (!last) fail("{}: ByteLevel must be the last pre-tokenizer", step_where);
      check_byte_level(step, step_where);
    } else if (step_type == "Split") {
      if (last) fail("{}: the last pre-tokenizer must be ByteLevel (byte-level BPE)", step_where);
      const json& pattern = require(step, "pattern", step_where);
      if (!pattern.is_object() || !pattern.contains("Regex") || !pattern["Regex"].is_string()) {
        fail("{}.pattern: only {{\"Regex\": ...}} patterns are supported, got {}", step_where, pattern.dump());
      }
      std::string behavior = optional_string(step, "behavior", step_where);
      if (behavior != "Isolated") fail("{}.behavior is '{}': only Isolated is supported", step_where, behavior);
      if (flag(step, "invert", false, step_where)) fail("{}.invert: true is not supported", step_where);
      spec.split_regexes.push_back(pattern["Regex"].get<std::string>());
    } else {
      fail("{}.type is '{}': lathe supports only Split and ByteLevel pre-tokenizers", step_where, step_type);
    }
  }
  if (type_of(*steps.back().first, steps.back().second) != "ByteLevel") {
    fail("{}: no ByteLevel pre-tokenizer: lathe implements only byte-level BPE", where);
  }
}

void read_decoder(const json& root, TokenizerSpec& spec) {
  auto it = root.find("decoder");
  if (it == root.end() || it->is_null()) return;
  const std::string where = spec.source + ": decoder";
  std::string type = type_of(*it, where);
  if (type != "ByteLevel") fail("{}.type is '{}': only the ByteLevel decoder is supported", where, type);
}

}  // namespace

TokenizerSpec parse_tokenizer_json(std::string_view json_text, const std::string& source) {
  json root;
  try {
    root = json::parse(json_text);
  } catch (const json::parse_error& error) {
    fail("{}: invalid JSON: {}", source, error.what());
  }
  if (!root.is_object()) fail("{}: top level must be a JSON object", source);
  TokenizerSpec spec;
  spec.source = source;
  read_model(require(root, "model", source), spec);
  read_added_tokens(root, spec);
  auto normalizer = root.find("normalizer");
  if (normalizer != root.end()) read_normalizer(*normalizer, source + ": normalizer", spec);
  auto pre = root.find("pre_tokenizer");
  read_pre_tokenizer(pre == root.end() ? json() : *pre, spec);
  read_decoder(root, spec);
  return spec;
}

}  // namespace lathe::tokenizer
