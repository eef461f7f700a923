#pragma once
// The fields of a Hugging Face tokenizer_config.json (and chat_template.jinja) that the rest of
// lathe needs: the special-token strings the chat template and stop rules refer to, and the
// chat template text. Token ids are NOT resolved here; use Tokenizer::token_id(text).
#include <filesystem>
#include <map>
#include <optional>
#include <string>

namespace lathe::tokenizer {

struct TokenizerConfig {
  // Special-token strings. tokenizer_config.json writes each either as a plain string, as null,
  // or as an AddedToken object {"content": "...", ...}; all three are accepted (null or absent
  // leaves the field empty).
  std::optional<std::string> bos_token;
  std::optional<std::string> eos_token;
  std::optional<std::string> pad_token;
  std::optional<std::string> unk_token;

  // Whether HF prepends BOS / appends EOS when encoding with add_special_tokens (Qwen3: false).
  bool add_bos_token = false;
  bool add_eos_token = false;

  // The default chat template, if the checkpoint has one. Sources, as transformers reads them:
  //   1. template files beside tokenizer_config.json: chat_template.jinja is the default and
  //      additional_chat_templates/NAME.jinja are named ones; when any file exists, the files
  //      replace every template of the JSON;
  //   2. otherwise tokenizer_config.json "chat_template" as a string (the default), or as a list
  //      [{"name": N, "template": T}, ...] whose entry "default" (if any) is the default.
  std::optional<std::string> chat_template;
  // Every named template (including "default") when there are several: the JSON list form or
  // more than one template file. Empty for a single template.
  std::map<std::string, std::string> named_chat_templates;
  // Where chat_template came from (a file path, or "path:chat_template"), for error messages.
  std::string chat_template_source;

  // Reads `path`: a checkpoint directory (tokenizer_config.json and/or chat_template.jinja inside;
  // a directory with neither gives an all-empty config) or a tokenizer_config.json file. Malformed
  // JSON or a field of the wrong type throws lathe::Error naming the file and the field.
  static TokenizerConfig load(const std::filesystem::path& path);

  // Parses the text of a tokenizer_config.json; `source` names it in error messages.
  static TokenizerConfig parse(const std::string& json_text, const std::string& source);
};

}  // namespace lathe::tokenizer
