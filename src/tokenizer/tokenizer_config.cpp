#include "tokenizer/tokenizer_config.h"

#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>

#include "core/error.h"

namespace lathe::tokenizer {
namespace {

using nlohmann::json;

std::string read_text_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("cannot open {}", path.string());
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) fail("cannot read {}", path.string());
  return buffer.str();
}

// A special token is written as a string, null, or an AddedToken object {"content": ...}.
std::optional<std::string> token_field(const json& root, const char* field, const std::string& source) {
  auto it = root.find(field);
  if (it == root.end() || it->is_null()) return std::nullopt;
  if (it->is_string()) return it->get<std::string>();
  if (it->is_object()) {
    auto content = it->find("content");
    if (content != it->end() && content->is_string()) return content->get<std::string>();
    fail("{}: field '{}' is an object without a string 'content'", source, field);
  }
  fail("{}: field '{}' must be a string, null or an AddedToken object, got {}", source, field, it->type_name());
}

bool bool_field(const json& root, const char* field, bool fallback, const std::string& source) {
  auto it = root.find(field);
  if (it == root.end() || it->is_null()) return fallback;
  if (!it->is_boolean()) fail("{}: field '{}' must be a boolean, got {}", source, field, it->type_name());
  return it->get<bool>();
}

void read_chat_template(const json& root, const std::string& source, TokenizerConfig& config) {
  auto it = root.find("chat_template");
  if (it == root.end() || it->is_null()) return;
  if (it->is_string()) {
    config.chat_template = it->get<std::string>();
    config.chat_template_source = source + ":chat_template";
    return;
  }
  if (!it->is_array()) {
    fail("{}: field 'chat_template' must be a string or a list of {{name, template}}, got {}", source, it->type_name());
  }
  for (size_t i = 0; i < it->size(); ++i) {
    const json& entry = (*it)[i];
    auto name = entry.is_object() ? entry.find("name") : entry.end();
    auto text = entry.is_object() ? entry.find("template") : entry.end();
    if (!entry.is_object() || name == entry.end() || !name->is_string() || text == entry.end() || !text->is_string()) {
      fail("{}: chat_template[{}] must be an object with string fields 'name' and 'template'", source, i);
    }
    config.named_chat_templates[name->get<std::string>()] = text->get<std::string>();
  }
  auto found = config.named_chat_templates.find("default");
  if (found == config.named_chat_templates.end()) return;  // only named templates
  config.chat_template = found->second;
  config.chat_template_source = source + ":chat_template[default]";
}

}  // namespace

TokenizerConfig TokenizerConfig::parse(const std::string& json_text, const std::string& source) {
  json root;
  try {
    root = json::parse(json_text);
  } catch (const json::parse_error& error) {
    fail("{}: invalid JSON: {}", source, error.what());
  }
  if (!root.is_object()) fail("{}: top level must be a JSON object", source);
  TokenizerConfig config;
  config.bos_token = token_field(root, "bos_token", source);
  config.eos_token = token_field(root, "eos_token", source);
  config.pad_token = token_field(root, "pad_token", source);
  config.unk_token = token_field(root, "unk_token", source);
  config.add_bos_token = bool_field(root, "add_bos_token", false, source);
  config.add_eos_token = bool_field(root, "add_eos_token", false, source);
  read_chat_template(root, source, config);
  return config;
}

TokenizerConfig TokenizerConfig::load(const std::filesystem::path& path) {
  std::filesystem::path config_file = path;
  std::filesystem::path dir = path.parent_path();
  if (std::filesystem::is_directory(path)) {
    config_file = path / "tokenizer_config.json";
    dir = path;
  } else if (!std::filesystem::exists(path)) {
    fail("tokenizer config not found: {}", path.string());
  }
  TokenizerConfig config;
  if (std::filesystem::exists(config_file)) config = parse(read_text_file(config_file), config_file.string());
  // transformers: template files (chat_template.jinja, additional_chat_templates/NAME.jinja)
  // replace every template entry of the JSON.
  std::map<std::string, std::string> file_templates;
  std::filesystem::path jinja = dir / "chat_template.jinja";
  if (std::filesystem::is_regular_file(jinja)) file_templates["default"] = read_text_file(jinja);
  std::filesystem::path extra_dir = dir / "additional_chat_templates";
  if (std::filesystem::is_directory(extra_dir)) {
    for (const auto& entry : std::filesystem::directory_iterator(extra_dir)) {
      if (entry.is_regular_file() && entry.path().extension() == ".jinja") {
        file_templates[entry.path().stem().string()] = read_text_file(entry.path());
      }
    }
  }
  if (!file_templates.empty()) {
    config.chat_template.reset();
    config.chat_template_source.clear();
    config.named_chat_templates.clear();
    if (file_templates.size() > 1) config.named_chat_templates = file_templates;
    auto found = file_templates.find("default");
    if (found != file_templates.end()) {
      config.chat_template = found->second;
      config.chat_template_source = jinja.string();
    }
  }
  return config;
}

}  // namespace lathe::tokenizer
