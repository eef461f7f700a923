// Expression half of the parser: jinja2's precedence ladder (parser.h) down to primaries,
// postfix access, calls, filters and tests.
#include "tokenizer/jinja/builtins.h"
#include "tokenizer/jinja/parser_impl.h"

namespace lathe::tokenizer::jinja::detail {

ExprPtr Parser::parse_tuple(bool with_condexpr, std::initializer_list<std::string_view> extra_end, bool explicit_parens) {
  Location location = here();
  std::vector<ExprPtr> items;
  bool is_tuple = false;
  while (true) {
    if (!items.empty()) expect_op(",");
    if (is_tuple_end(extra_end) || (explicit_parens && is_op(")"))) break;
    items.push_back(parse_expression(with_condexpr));
    if (is_op(",")) {
      is_tuple = true;
    } else {
      break;
    }
  }
  if (!is_tuple) {
    if (!items.empty()) return std::move(items[0]);
    if (!explicit_parens) fail_here("expected an expression, got " + describe(current()));
  }
  auto node = make(Expr::Kind::kList, location);
  node->items = std::move(items);
  node->tuple = true;
  return node;
}

ExprPtr Parser::parse_condexpr() {
  Location location = here();
  ExprPtr expr = parse_or();
  int links = 0;
  while (skip_name("if")) {
    extend_chain(links);
    SoftScope soft(*this, true);
    auto node = make(Expr::Kind::kCondExpr, location);
    node->then_expr = std::move(expr);
    node->test = parse_or();
    if (skip_name("else")) node->else_expr = parse_condexpr();
    expr = std::move(node);
  }
  return end_chain(links, std::move(expr));
}

ExprPtr Parser::binary(const std::string& op, ExprPtr left, ExprPtr right, Location location) {
  auto node = make(Expr::Kind::kBinary, location);
  node->name = op;
  node->left = std::move(left);
  node->right = std::move(right);
  return node;
}

ExprPtr Parser::parse_or() {
  Location location = here();
  ExprPtr left = parse_and();
  int links = 0;
  while (skip_name("or")) {
    extend_chain(links);
    left = binary("or", std::move(left), parse_and(), location);
  }
  return end_chain(links, std::move(left));
}

ExprPtr Parser::parse_and() {
  Location location = here();
  ExprPtr left = parse_not();
  int links = 0;
  while (skip_name("and")) {
    extend_chain(links);
    left = binary("and", std::move(left), parse_not(), location);
  }
  return end_chain(links, std::move(left));
}

ExprPtr Parser::parse_not() {
  DepthGuard depth(*this);
  if (is_name("not")) {
    auto node = make(Expr::Kind::kNot, here());
    advance();
    node->object = parse_not();
    return node;
  }
  return parse_compare();
}

ExprPtr Parser::parse_compare() {
  Location location = here();
  ExprPtr expr = parse_math1();
  std::vector<std::pair<std::string, ExprPtr>> ops;
  while (true) {
    const Token& token = current();
    if (token.type == TokenType::kOperator &&
        (token.text == "==" || token.text == "!=" || token.text == "<" || token.text == ">" || token.text == "<=" ||
         token.text == ">=")) {
      std::string op = advance().text;
      ops.emplace_back(op, parse_math1());
    } else if (skip_name("in")) {
      ops.emplace_back("in", parse_math1());
    } else if (is_name("not") && peek().type == TokenType::kName && peek().text == "in") {
      advance();
      advance();
      ops.emplace_back("not in", parse_math1());
    } else {
      break;
    }
  }
  if (ops.empty()) return expr;
  auto node = make(Expr::Kind::kCompare, location);
  node->object = std::move(expr);
  node->comparisons = std::move(ops);
  return node;
}

ExprPtr Parser::parse_math1() {
  Location location = here();
  ExprPtr left = parse_concat();
  int links = 0;
  while (is_op("+") || is_op("-")) {
    extend_chain(links);
    std::string op = advance().text;
    left = binary(op, std::move(left), parse_concat(), location);
  }
  return end_chain(links, std::move(left));
}

ExprPtr Parser::parse_concat() {
  Location location = here();
  ExprPtr first = parse_math2();
  if (!is_op("~")) return first;
  auto node = make(Expr::Kind::kConcat, location);
  node->items.push_back(std::move(first));
  while (skip_op("~")) node->items.push_back(parse_math2());
  return node;
}

ExprPtr Parser::parse_math2() {
  Location location = here();
  ExprPtr left = parse_pow();
  int links = 0;
  while (is_op("*") || is_op("/") || is_op("//") || is_op("%")) {
    extend_chain(links);
    std::string op = advance().text;
    left = binary(op, std::move(left), parse_pow(), location);
  }
  return end_chain(links, std::move(left));
}

ExprPtr Parser::parse_pow() {
  Location location = here();
  ExprPtr left = parse_unary(true);
  int links = 0;
  while (skip_op("**")) {
    extend_chain(links);
    left = binary("**", std::move(left), parse_unary(true), location);
  }
  return end_chain(links, std::move(left));
}

ExprPtr Parser::parse_unary(bool with_filter) {
  DepthGuard depth(*this);
  Location location = here();
  ExprPtr node;
  if (skip_op("-")) {
    node = make(Expr::Kind::kNeg, location);
    node->object = parse_unary(false);
  } else if (skip_op("+")) {
    node = make(Expr::Kind::kPos, location);
    node->object = parse_unary(false);
  } else {
    node = parse_postfix(parse_primary());
  }
  if (with_filter) node = parse_filter_expr(std::move(node));
  return node;
}

ExprPtr Parser::parse_primary() {
  const Token& token = current();
  Location location = here();
  switch (token.type) {
    case TokenType::kName: {
      std::string name = advance().text;
      auto node = make(Expr::Kind::kConst, location);
      if (name == "true" || name == "True") {
        node->value = Value::boolean(true);
      } else if (name == "false" || name == "False") {
        node->value = Value::boolean(false);
      } else if (name == "none" || name == "None") {
        node->value = Value::none();
      } else {
        node->kind = Expr::Kind::kName;
        node->name = name;
        if (!macro_reads_.empty() && name == "varargs") macro_reads_.back().first = true;
        if (!macro_reads_.empty() && name == "kwargs") macro_reads_.back().second = true;
      }
      return node;
    }
    case TokenType::kString: {
      std::string text = advance().text;
      while (current().type == TokenType::kString) text += advance().text;
      auto node = make(Expr::Kind::kConst, location);
      node->value = Value::string(std::move(text));
      return node;
    }
    case TokenType::kInteger: {
      auto node = make(Expr::Kind::kConst, location);
      node->value = Value::integer(advance().integer);
      return node;
    }
    case TokenType::kFloat: {
      auto node = make(Expr::Kind::kConst, location);
      node->value = Value::floating(advance().real);
      return node;
    }
    case TokenType::kOperator:
      if (skip_op("(")) {
        ExprPtr inner = parse_tuple(true, {}, true);
        expect_op(")");
        return inner;
      }
      if (skip_op("[")) {
        auto node = make(Expr::Kind::kList, location);
        while (!is_op("]")) {
          if (!node->items.empty()) expect_op(",");
          if (is_op("]")) break;
          node->items.push_back(parse_expression(true));
        }
        expect_op("]");
        return node;
      }
      if (skip_op("{")) {
        auto node = make(Expr::Kind::kDict, location);
        while (!is_op("}")) {
          if (!node->pairs.empty()) expect_op(",");
          if (is_op("}")) break;
          ExprPtr key = parse_expression(true);
          expect_op(":");
          node->pairs.emplace_back(std::move(key), parse_expression(true));
        }
        expect_op("}");
        return node;
      }
      break;
    default: break;
  }
  fail_here("unexpected " + describe(token));
}

ExprPtr Parser::parse_postfix(ExprPtr node) {
  int links = 0;
  while (true) {
    if (is_op(".") || is_op("[")) {
      extend_chain(links);
      node = parse_subscript(std::move(node));
    } else if (is_op("(")) {
      extend_chain(links);
      node = parse_call(std::move(node));
    } else {
      return end_chain(links, std::move(node));
    }
  }
}

ExprPtr Parser::parse_filter_expr(ExprPtr node) {
  int links = 0;
  while (true) {
    if (is_op("|") || is_name("is") || is_op("(")) extend_chain(links);
    if (is_op("|")) {
      Location location = here();
      advance();
      auto filter = make(Expr::Kind::kFilter, location);
      filter->object = std::move(node);
      filter->filter = parse_filter_call();
      node = std::move(filter);
    } else if (is_name("is")) {
      node = parse_test(std::move(node));
    } else if (is_op("(")) {
      node = parse_call(std::move(node));
    } else {
      return end_chain(links, std::move(node));
    }
  }
}

ExprPtr Parser::parse_subscript(ExprPtr node) {
  Location location = here();
  if (skip_op(".")) {
    const Token& attr = current();
    if (attr.type == TokenType::kName) {
      auto getattr = make(Expr::Kind::kGetattr, location);
      getattr->object = std::move(node);
      getattr->name = advance().text;
      return getattr;
    }
    if (attr.type != TokenType::kInteger) fail_here("expected name or number after '.'");
    auto getitem = make(Expr::Kind::kGetitem, location);
    getitem->object = std::move(node);
    getitem->right = make(Expr::Kind::kConst, here());
    getitem->right->value = Value::integer(advance().integer);
    return getitem;
  }
  expect_op("[");
  std::vector<ExprPtr> args;
  while (!is_op("]")) {
    if (!args.empty()) expect_op(",");
    args.push_back(parse_subscribed());
  }
  expect_op("]");
  auto getitem = make(Expr::Kind::kGetitem, location);
  getitem->object = std::move(node);
  if (args.size() == 1) {
    getitem->right = std::move(args[0]);
  } else {
    auto tuple = make(Expr::Kind::kList, location);
    tuple->items = std::move(args);
    tuple->tuple = true;
    getitem->right = std::move(tuple);
  }
  return getitem;
}

ExprPtr Parser::parse_subscribed() {
  Location location = here();
  ExprPtr start;
  if (!is_op(":")) {
    start = parse_expression(true);
    if (!is_op(":")) return start;
  }
  advance();  // ':'
  auto slice = make(Expr::Kind::kSlice, location);
  slice->start = std::move(start);
  if (!is_op(":") && !is_op("]") && !is_op(",")) slice->stop = parse_expression(true);
  if (skip_op(":")) {
    if (!is_op("]") && !is_op(",")) slice->step = parse_expression(true);
  }
  return slice;
}

void Parser::parse_call_args(std::vector<ExprPtr>& args, std::vector<std::pair<std::string, ExprPtr>>& kwargs) {
  const Token& open = current();
  expect_op("(");
  bool require_comma = false;
  while (!is_op(")")) {
    if (require_comma) {
      expect_op(",");
      if (is_op(")")) break;
    }
    if (is_op("*") || is_op("**")) fail_here("*args and **kwargs in calls are not supported");
    if (current().type == TokenType::kName && peek().type == TokenType::kOperator && peek().text == "=") {
      std::string key = advance().text;
      advance();
      kwargs.emplace_back(key, parse_expression(true));
    } else {
      if (!kwargs.empty()) fail_at(open, "invalid syntax for function call expression");
      args.push_back(parse_expression(true));
    }
    require_comma = true;
  }
  expect_op(")");
}

ExprPtr Parser::parse_call(ExprPtr callee) {
  auto call = make(Expr::Kind::kCall, here());
  call->object = std::move(callee);
  parse_call_args(call->items, call->kwargs);
  return call;
}

// After "|": name(.name)* [(args)].
FilterCall Parser::parse_filter_call() {
  FilterCall call;
  call.location = here();
  const Token& name_token = current();
  call.name = expect_name();
  while (skip_op(".")) call.name += fmt::format(".{}", expect_name());
  if (is_op("(")) parse_call_args(call.args, call.kwargs);
  if (!is_known_filter(call.name)) {
    std::string message = is_unsupported_jinja_filter(call.name)
                              ? fmt::format("the filter '{}' is not supported", call.name)
                              : fmt::format("no filter named '{}'", call.name);
    if (!soft_) fail_at(name_token, message);
    call.deferred_error = message;
  }
  return call;
}

// After the value: "is" ["not"] name(.name)* [(args) | one primary argument].
ExprPtr Parser::parse_test(ExprPtr node) {
  Location location = here();
  advance();  // is
  auto test = make(Expr::Kind::kTest, location);
  test->object = std::move(node);
  test->negated = skip_name("not");
  const Token& name_token = current();
  test->filter.location = here();
  test->filter.name = expect_name();
  while (skip_op(".")) test->filter.name += fmt::format(".{}", expect_name());
  const Token& next = current();
  bool single_arg = next.type == TokenType::kName || next.type == TokenType::kString ||
                    next.type == TokenType::kInteger || next.type == TokenType::kFloat ||
                    (next.type == TokenType::kOperator && (next.text == "(" || next.text == "[" || next.text == "{"));
  if (is_op("(")) {
    parse_call_args(test->filter.args, test->filter.kwargs);
  } else if (single_arg && !is_name("else") && !is_name("or") && !is_name("and")) {
    if (is_name("is")) fail_here("You cannot chain multiple tests with is");
    test->filter.args.push_back(parse_postfix(parse_primary()));
  }
  if (!is_known_test(test->filter.name)) {
    std::string message = fmt::format("no test named '{}'", test->filter.name);
    if (!soft_) fail_at(name_token, message);
    test->filter.deferred_error = message;
  }
  return test;
}

}  // namespace lathe::tokenizer::jinja::detail
