#pragma once
// lathe's Jinja interpreter: the subset of jinja2 that chat templates use, rendering exactly as
// transformers' jinja2 environment does (ImmutableSandboxedEnvironment with trim_blocks and
// lstrip_blocks, jinja2's default Undefined, loopcontrols, tojson = json.dumps with
// ensure_ascii=False, raise_exception, strftime_now, namespace). Anything outside the subset is
// a TemplateError naming the line, never silently different output.
//
//   jinja::Template tmpl(source);                  // parse once (throws on syntax errors)
//   std::string text = tmpl.render(variables);     // render many times; thread-safe
#include <nlohmann/json.hpp>

#include <memory>
#include <string>
#include <string_view>

#include "tokenizer/jinja/value.h"

namespace lathe::tokenizer::jinja {

struct ParsedTemplate;

class Template {
 public:
  // Parses `source`. Throws TemplateError ("line L column C: ...") on a syntax error or an
  // unsupported construct.
  explicit Template(std::string_view source);

  // Renders with `variables` as the context (they shadow the globals range, dict, namespace,
  // raise_exception, strftime_now). Throws TemplateError naming the line and column of the
  // failing expression, or RaisedError (what() is exactly the message) for raise_exception().
  std::string render(const Dict& variables) const;
  // Same, from a JSON object (key order preserved).
  std::string render(const nlohmann::ordered_json& variables) const;

 private:
  std::shared_ptr<const ParsedTemplate> parsed_;
};

}  // namespace lathe::tokenizer::jinja
