#pragma once
// Syntax tree of a parsed template. Expressions and statements carry the line and column of the
// token that starts them, for error messages. Node kinds follow jinja2's (nodes.py) closely so
// that evaluation can follow jinja2's semantics case by case.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tokenizer/jinja/value.h"

namespace lathe::tokenizer::jinja {

struct Location {
  int line = 0;
  int column = 0;
};

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

// A filter application `| name(args, key=value)`; `deferred_error` is set when the filter is
// unknown inside an if/conditional expression: jinja2 then fails only when it is evaluated.
struct FilterCall {
  std::string name;
  std::vector<ExprPtr> args;
  std::vector<std::pair<std::string, ExprPtr>> kwargs;
  std::string deferred_error;
  Location location;
};

struct Expr {
  enum class Kind {
    kConst,      // value
    kName,       // name
    kList,       // items (tuple: a tuple literal)
    kDict,       // pairs
    kGetattr,    // object.name
    kGetitem,    // object[index]
    kSlice,      // start:stop:step (children may be null), only as a Getitem index
    kCall,       // callee(args, kwargs)
    kFilter,     // object | filter
    kTest,       // object is [not] name(args, kwargs); `filter` holds the name and arguments
    kNot,        // not object
    kNeg,        // -object
    kPos,        // +object
    kBinary,     // left op right: + - * / // % ** and or in "not in"
    kConcat,     // items joined with ~
    kCompare,    // object op1 right1 op2 right2 ... (Python chained comparison)
    kCondExpr,   // then_expr if test else else_expr (else_expr may be null)
  };

  Kind kind;
  Location location;
  Value value;                   // kConst
  std::string name;              // kName, kGetattr attribute, kBinary operator
  ExprPtr object;                // kGetattr/kGetitem/kCall/kFilter/kTest/kNot/kNeg/kPos/kCompare first
  ExprPtr left, right;           // kBinary operands; kGetitem: right is the index
  ExprPtr start, stop, step;     // kSlice
  ExprPtr test, then_expr, else_expr;  // kCondExpr
  std::vector<ExprPtr> items;    // kList, kConcat, kCall positional arguments
  std::vector<std::pair<ExprPtr, ExprPtr>> pairs;                 // kDict
  std::vector<std::pair<std::string, ExprPtr>> kwargs;            // kCall keyword arguments
  std::vector<std::pair<std::string, ExprPtr>> comparisons;       // kCompare: (op, operand)
  FilterCall filter;             // kFilter, kTest
  bool tuple = false;            // kList written as a tuple
  bool negated = false;          // kTest: "is not"

  Expr(Kind k, Location loc) : kind(k), location(loc) {}
};

// An assignment target: a name, a namespace attribute (`ns.attr`) or a tuple of targets.
struct Target {
  enum class Kind { kName, kNamespaceAttr, kTuple };
  Kind kind = Kind::kName;
  std::string name;
  std::string attribute;
  std::vector<Target> items;
  Location location;
};

struct Stmt;
using StmtPtr = std::unique_ptr<Stmt>;
using Body = std::vector<StmtPtr>;

struct MacroParam {
  std::string name;
  ExprPtr default_value;  // may be null
};

struct Stmt {
  enum class Kind {
    kText,         // text
    kPrint,        // {{ expr }}
    kIf,           // branches (test, body), else_body
    kFor,          // target in expr [if filter_expr]: body, else_body
    kSet,          // target = expr
    kSetBlock,     // {% set target | filters %} body {% endset %}
    kMacro,        // {% macro name(params) %} body
    kBreak,
    kContinue,
    kWith,         // {% with assignments %} body
    kFilterBlock,  // {% filter filters %} body
    kScope,        // body in a child scope ({% generation %}: a call block in jinja2)
  };

  Kind kind;
  Location location;
  std::string text;                          // kText; kMacro name
  ExprPtr expr;                              // kPrint, kFor iterable, kSet value
  ExprPtr filter_expr;                       // kFor loop filter
  Target target;                             // kFor, kSet, kSetBlock
  std::vector<std::pair<ExprPtr, Body>> branches;  // kIf
  Body body;
  Body else_body;
  std::vector<FilterCall> filters;           // kSetBlock, kFilterBlock
  std::vector<MacroParam> params;            // kMacro
  bool catch_varargs = false;                // kMacro body reads `varargs`
  bool catch_kwargs = false;                 // kMacro body reads `kwargs`
  std::vector<std::pair<Target, ExprPtr>> assignments;  // kWith

  // Names this statement's child scope (for body / macro body / set or filter block / with /
  // generation) binds to undefined on entry, shadowing same-named context variables, as jinja2's
  // compile-time symbol analysis does (scope_analysis.h); else_undefined_on_entry for a for's else.
  std::vector<std::string> undefined_on_entry;
  std::vector<std::string> else_undefined_on_entry;

  Stmt(Kind k, Location loc) : kind(k), location(loc) {}
};

struct ParsedTemplate {
  Body body;
  std::vector<std::string> undefined_on_entry;  // of the template's top-level scope
};

}  // namespace lathe::tokenizer::jinja
