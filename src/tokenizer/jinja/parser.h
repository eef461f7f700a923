#pragma once
// Parser for lathe's Jinja subset: tokens (lexer.h) to a statement list (ast.h), following
// jinja2's grammar and operator precedence (parser.py): condexpr < or < and < not < comparisons
// (incl. in / not in) < + - < ~ < * / // % < ** < unary - + < primary with postfix . [] () and
// the | filter / is test chain.
//
// Supported tags: if/elif/else, for (tuple targets, `if` filter, else), set (= and block form,
// namespace attributes), macro, with, filter, break/continue, raw, generation (transformers'
// assistant-mask tag, rendered as its body). Other tags (include, import, extends, block, call,
// ...) are a TemplateError naming the line. Unknown filters and tests fail at parse time, except
// inside an if or conditional expression, where jinja2 defers the error to evaluation.
#include <string_view>

#include "tokenizer/jinja/ast.h"

namespace lathe::tokenizer::jinja {

// Parses `source` and runs the scope analysis (scope_analysis.h) over the result.
ParsedTemplate parse_template(std::string_view source);

}  // namespace lathe::tokenizer::jinja
