#include "tokenizer/jinja/parser.h"

#include "tokenizer/jinja/parser_impl.h"
#include "tokenizer/jinja/scope_analysis.h"

namespace lathe::tokenizer::jinja {
namespace detail {

// Parses statements until "{% name" with name in `ends` (leaving the name as the current
// token) or the end of the template (an error when `ends` is not empty).
Body Parser::parse_body(std::initializer_list<std::string_view> ends) {
  Body body;
  while (true) {
    const Token& token = current();
    switch (token.type) {
      case TokenType::kEof:
        if (ends.size() != 0) fail_here("unexpected end of template, expecting " + describe_ends(ends));
        return body;
      case TokenType::kData: {
        auto stmt = std::make_unique<Stmt>(Stmt::Kind::kText, here());
        stmt->text = advance().text;
        body.push_back(std::move(stmt));
        break;
      }
      case TokenType::kVariableBegin: {
        auto stmt = std::make_unique<Stmt>(Stmt::Kind::kPrint, here());
        advance();
        stmt->expr = parse_tuple(true, {}, false);
        if (current().type != TokenType::kVariableEnd) {
          fail_here(fmt::format("expected end of print statement, got {}", describe(current())));
        }
        advance();
        body.push_back(std::move(stmt));
        break;
      }
      case TokenType::kBlockBegin: {
        const Token& name = peek();
        if (name.type != TokenType::kName) fail_at(name, "expected a tag name, got " + describe(name));
        for (std::string_view end : ends) {
          if (name.text == end) {
            advance();
            return body;
          }
        }
        advance();
        body.push_back(parse_statement(ends));
        break;
      }
      default: fail_here("unexpected " + describe(token));
    }
  }
}

// Current token: the tag name after "{%".
StmtPtr Parser::parse_statement(std::initializer_list<std::string_view> enclosing_ends) {
  DepthGuard depth(*this);
  const Token& tag = current();
  std::string name = tag.text;
  if (name == "if") return parse_if();
  if (name == "for") return parse_for();
  if (name == "set") return parse_set();
  if (name == "macro") return parse_macro();
  if (name == "with") return parse_with();
  if (name == "filter") return parse_filter_block();
  if (name == "generation") return parse_generation();
  if (name == "break" || name == "continue") {
    if (loop_depth_ == 0) fail_at(tag, fmt::format("'{}' outside of a for loop", name));
    auto stmt = std::make_unique<Stmt>(name == "break" ? Stmt::Kind::kBreak : Stmt::Kind::kContinue, here());
    advance();
    expect_block_end();
    return stmt;
  }
  static const char* kUnsupported[] = {"include", "import", "from", "extends", "block", "call", "do",
                                       "autoescape", "trans", "pluralize", "print", "debug"};
  for (const char* unsupported : kUnsupported) {
    if (name == unsupported) fail_at(tag, fmt::format("the '{}' tag is not supported", name));
  }
  std::string message = fmt::format("unknown tag '{}'", name);
  if (enclosing_ends.size() != 0) message += "; expecting " + describe_ends(enclosing_ends);
  fail_at(tag, message);
}

StmtPtr Parser::parse_if() {
  auto stmt = std::make_unique<Stmt>(Stmt::Kind::kIf, here());
  advance();  // if
  SoftScope soft(*this, true);
  while (true) {
    ExprPtr test = parse_tuple(false, {}, false);
    expect_block_end();
    Body body = parse_body({"elif", "else", "endif"});
    stmt->branches.emplace_back(std::move(test), std::move(body));
    std::string end = advance().text;
    if (end == "elif") continue;
    if (end == "else") {
      expect_block_end();
      stmt->else_body = parse_body({"endif"});
      advance();
    }
    expect_block_end();
    return stmt;
  }
}

StmtPtr Parser::parse_for() {
  auto stmt = std::make_unique<Stmt>(Stmt::Kind::kFor, here());
  advance();  // for
  stmt->target = parse_assign_target(false, {"in"});
  expect_name("in");
  stmt->expr = parse_tuple(false, {"recursive"}, false);  // evaluated in the enclosing frame
  SoftScope frame(*this, false);
  if (skip_name("if")) stmt->filter_expr = parse_expression(true);
  if (is_name("recursive")) fail_here("recursive for loops are not supported");
  expect_block_end();
  ++loop_depth_;
  stmt->body = parse_body({"endfor", "else"});
  --loop_depth_;
  if (advance().text == "else") {
    expect_block_end();
    stmt->else_body = parse_body({"endfor"});
    advance();
  }
  expect_block_end();
  return stmt;
}

StmtPtr Parser::parse_set() {
  Location location = here();
  advance();  // set
  Target target = parse_assign_target(true, {});
  if (skip_op("=")) {
    auto stmt = std::make_unique<Stmt>(Stmt::Kind::kSet, location);
    stmt->target = std::move(target);
    stmt->expr = parse_tuple(true, {}, false);
    expect_block_end();
    return stmt;
  }
  auto stmt = std::make_unique<Stmt>(Stmt::Kind::kSetBlock, location);
  stmt->target = std::move(target);
  SoftScope frame(*this, false);
  while (skip_op("|")) stmt->filters.push_back(parse_filter_call());
  expect_block_end();
  stmt->body = parse_body({"endset"});
  advance();
  expect_block_end();
  return stmt;
}

StmtPtr Parser::parse_macro() {
  auto stmt = std::make_unique<Stmt>(Stmt::Kind::kMacro, here());
  advance();  // macro
  stmt->text = expect_name();
  expect_op("(");
  while (!is_op(")")) {
    if (!stmt->params.empty()) expect_op(",");
    MacroParam param;
    param.name = expect_name();
    if (skip_op("=")) param.default_value = parse_expression(true);
    stmt->params.push_back(std::move(param));
  }
  expect_op(")");
  expect_block_end();
  SoftScope frame(*this, false);
  int saved_loop_depth = loop_depth_;
  loop_depth_ = 0;
  macro_reads_.push_back({false, false});
  stmt->body = parse_body({"endmacro"});
  stmt->catch_varargs = macro_reads_.back().first;
  stmt->catch_kwargs = macro_reads_.back().second;
  macro_reads_.pop_back();
  loop_depth_ = saved_loop_depth;
  advance();
  if (current().type == TokenType::kName && current().text == stmt->text) advance();
  expect_block_end();
  return stmt;
}

StmtPtr Parser::parse_with() {
  auto stmt = std::make_unique<Stmt>(Stmt::Kind::kWith, here());
  advance();  // with
  while (current().type != TokenType::kBlockEnd) {
    if (!stmt->assignments.empty()) expect_op(",");
    Target target = parse_assign_target(false, {});
    expect_op("=");
    stmt->assignments.emplace_back(std::move(target), parse_expression(true));
  }
  expect_block_end();
  SoftScope frame(*this, false);
  stmt->body = parse_body({"endwith"});
  advance();
  expect_block_end();
  return stmt;
}

StmtPtr Parser::parse_filter_block() {
  auto stmt = std::make_unique<Stmt>(Stmt::Kind::kFilterBlock, here());
  advance();  // filter
  SoftScope frame(*this, false);
  stmt->filters.push_back(parse_filter_call());
  while (skip_op("|")) stmt->filters.push_back(parse_filter_call());
  expect_block_end();
  stmt->body = parse_body({"endfilter"});
  advance();
  expect_block_end();
  return stmt;
}

StmtPtr Parser::parse_generation() {
  auto stmt = std::make_unique<Stmt>(Stmt::Kind::kScope, here());
  advance();  // generation
  expect_block_end();
  int saved_loop_depth = loop_depth_;  // the body is a caller macro in jinja2: no break/continue
  loop_depth_ = 0;
  stmt->body = parse_body({"endgeneration"});
  loop_depth_ = saved_loop_depth;
  advance();
  expect_block_end();
  return stmt;
}

// jinja2 parse_assign_target: names, tuples of names (with or without parentheses), and with
// `with_namespace` also `ns.attr`.
Target Parser::parse_assign_target(bool with_namespace, std::initializer_list<std::string_view> extra_end) {
  Location location = here();
  std::vector<Target> items;
  bool is_tuple = false;
  while (true) {
    if (!items.empty()) expect_op(",");
    if (is_tuple_end(extra_end)) break;
    items.push_back(parse_single_target(with_namespace));
    if (is_op(",")) {
      is_tuple = true;
    } else {
      break;
    }
  }
  if (!is_tuple) {
    if (items.empty()) fail_here("expected an assignment target, got " + describe(current()));
    return std::move(items[0]);
  }
  Target tuple;
  tuple.kind = Target::Kind::kTuple;
  tuple.items = std::move(items);
  tuple.location = location;
  return tuple;
}

Target Parser::parse_single_target(bool with_namespace) {
  Target target;
  target.location = here();
  if (skip_op("(")) {
    target = parse_assign_target(false, {});
    expect_op(")");
    return target;
  }
  target.name = expect_name();
  if (target.name == "true" || target.name == "false" || target.name == "none" || target.name == "True" ||
      target.name == "False" || target.name == "None") {
    fail_here(fmt::format("cannot assign to '{}'", target.name));
  }
  if (with_namespace && skip_op(".")) {
    target.kind = Target::Kind::kNamespaceAttr;
    target.attribute = expect_name();
  }
  return target;
}

}  // namespace detail

ParsedTemplate parse_template(std::string_view source) {
  ParsedTemplate parsed;
  parsed.body = detail::Parser(tokenize(source)).parse();
  parsed.undefined_on_entry = analyze_scopes(parsed.body);
  return parsed;
}

}  // namespace lathe::tokenizer::jinja
