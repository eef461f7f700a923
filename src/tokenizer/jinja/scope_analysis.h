#pragma once
// jinja2 decides at compile time how every scope initialises the names it assigns
// (idtracking.py): a name whose first appearance in a scope is an assignment, with no enclosing
// scope referring to it, starts out undefined there - even when the render context has a value
// for it - while a name first read, or first assigned inside an if, reads the enclosing scope or
// the context until assigned. This pass reproduces that analysis and records,
// for the template and each child scope (for body and else, macro body, set/filter block, with,
// generation), the names to bind to undefined on entry.
#include <string>
#include <vector>

#include "tokenizer/jinja/ast.h"

namespace lathe::tokenizer::jinja {

// Fills Stmt::undefined_on_entry / else_undefined_on_entry throughout `body`; returns the list
// for the top-level scope.
std::vector<std::string> analyze_scopes(Body& body);

}  // namespace lathe::tokenizer::jinja
