#include "tokenizer/jinja/parser.h"

#include <initializer_list>

#include "tokenizer/jinja/builtins.h"
#include "tokenizer/jinja/lexer.h"
#include "tokenizer/jinja/scope_analysis.h"

namespace lathe::tokenizer::jinja {
namespace {

class Parser {
 public:
  explicit Parser(std::vector<Token> tokens) : tokens_(std::move(tokens)) {}

  Body parse() {
    Body body = parse_body({});
    if (current().type != TokenType::kEof) fail_here("unexpected content");
    return body;
  }

 private:
  // --- token helpers ---------------------------------------------------------------------

  const Token& current() const { return tokens_[index_]; }
  const Token& peek(size_t ahead = 1) const {
    size_t i = index_ + ahead;
    return tokens_[i < tokens_.size() ? i : tokens_.size() - 1];
  }
  const Token& advance() {
    const Token& token = tokens_[index_];
    if (index_ + 1 < tokens_.size()) ++index_;
    return token;
  }
  Location here() const { return {current().line, current().column}; }

  [[noreturn]] void fail_at(const Token& token, const std::string& message) const {
    throw TemplateError(fmt::format("line {} column {}: {}", token.line, token.column, message), true);
  }
  [[noreturn]] void fail_here(const std::string& message) const { fail_at(current(), message); }

  static std::string describe(const Token& token) {
    switch (token.type) {
      case TokenType::kData: return "template data";
      case TokenType::kVariableBegin: return "begin of print statement";
      case TokenType::kVariableEnd: return "end of print statement";
      case TokenType::kBlockBegin: return "begin of statement block";
      case TokenType::kBlockEnd: return "end of statement block";
      case TokenType::kName:
      case TokenType::kOperator: return fmt::format("'{}'", token.text);
      case TokenType::kString: return "string";
      case TokenType::kInteger: return "integer";
      case TokenType::kFloat: return "float";
      case TokenType::kEof: return "end of template";
    }
    return "token";
  }

  bool is_op(std::string_view op) const { return current().type == TokenType::kOperator && current().text == op; }
  bool is_name(std::string_view name) const { return current().type == TokenType::kName && current().text == name; }
  bool skip_op(std::string_view op) {
    if (!is_op(op)) return false;
    advance();
    return true;
  }
  bool skip_name(std::string_view name) {
    if (!is_name(name)) return false;
    advance();
    return true;
  }
  void expect_op(std::string_view op) {
    if (!skip_op(op)) fail_here(fmt::format("expected '{}', got {}", op, describe(current())));
  }
  std::string expect_name() {
    if (current().type != TokenType::kName) fail_here(fmt::format("expected a name, got {}", describe(current())));
    return advance().text;
  }
  void expect_name(std::string_view name) {
    if (!skip_name(name)) fail_here(fmt::format("expected '{}', got {}", name, describe(current())));
  }
  void expect_block_end() {
    if (current().type != TokenType::kBlockEnd) {
      fail_here(fmt::format("expected end of statement block, got {}", describe(current())));
    }
    advance();
  }

  // --- statements --------------------------------------------------------------------------

  // Parses statements until "{% name" with name in `ends` (leaving the name as the current
  // token) or the end of the template (an error when `ends` is not empty).
  Body parse_body(std::initializer_list<std::string_view> ends) {
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

  static std::string describe_ends(std::initializer_list<std::string_view> ends) {
    std::string out;
    for (std::string_view end : ends) {
      if (!out.empty()) out += " or ";
      out += fmt::format("'{}'", end);
    }
    return out;
  }

  // Current token: the tag name after "{%".
  StmtPtr parse_statement(std::initializer_list<std::string_view> enclosing_ends) {
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

  StmtPtr parse_if() {
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

  StmtPtr parse_for() {
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

  StmtPtr parse_set() {
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

  StmtPtr parse_macro() {
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

  StmtPtr parse_with() {
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

  StmtPtr parse_filter_block() {
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

  StmtPtr parse_generation() {
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
  Target parse_assign_target(bool with_namespace, std::initializer_list<std::string_view> extra_end) {
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

  Target parse_single_target(bool with_namespace) {
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

  bool is_tuple_end(std::initializer_list<std::string_view> extra_end) const {
    TokenType type = current().type;
    if (type == TokenType::kVariableEnd || type == TokenType::kBlockEnd || type == TokenType::kEof) return true;
    if (type == TokenType::kName) {
      for (std::string_view end : extra_end) {
        if (current().text == end) return true;
      }
    }
    return false;
  }

  // Bounds the parser's (and so the evaluator's) recursion: deeper nesting of expressions or
  // blocks is a TemplateError rather than a stack overflow.
  struct DepthGuard {
    static constexpr int kMaxDepth = 512;
    explicit DepthGuard(Parser& parser) : parser_(parser) {
      if (++parser_.depth_ > kMaxDepth) {
        --parser_.depth_;
        parser_.fail_here(fmt::format("template nested more than {} levels deep", kMaxDepth));
      }
    }
    ~DepthGuard() { --parser_.depth_; }
    DepthGuard(const DepthGuard&) = delete;
    DepthGuard& operator=(const DepthGuard&) = delete;
    Parser& parser_;
  };

  // Each link of a left-deep chain (a + b + c, x.y.z, v|f|g, a if b else c ...) deepens the tree
  // by one level, so it also counts against kMaxDepth until the chain's parse function returns;
  // this bounds the height of every syntax tree (evaluation and destruction recurse over it).
  void extend_chain(int& links) {
    ++links;
    if (++depth_ > DepthGuard::kMaxDepth) fail_here(fmt::format("template nested more than {} levels deep", DepthGuard::kMaxDepth));
  }
  ExprPtr end_chain(int links, ExprPtr node) {
    depth_ -= links;
    return node;
  }

  // --- expressions ---------------------------------------------------------------------------

  // While parsing the test or body of an if (or a conditional expression), an unknown filter
  // or test is only an error if evaluated; for/macro/set-block/with/filter bodies reset this.
  struct SoftScope {
    SoftScope(Parser& parser, bool soft) : parser_(parser), saved_(parser.soft_) { parser.soft_ = soft; }
    ~SoftScope() { parser_.soft_ = saved_; }
    SoftScope(const SoftScope&) = delete;
    SoftScope& operator=(const SoftScope&) = delete;
    Parser& parser_;
    bool saved_;
  };

  ExprPtr make(Expr::Kind kind, Location location) { return std::make_unique<Expr>(kind, location); }

  ExprPtr parse_tuple(bool with_condexpr, std::initializer_list<std::string_view> extra_end, bool explicit_parens) {
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

  ExprPtr parse_expression(bool with_condexpr) { return with_condexpr ? parse_condexpr() : parse_or(); }

  ExprPtr parse_condexpr() {
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

  ExprPtr binary(const std::string& op, ExprPtr left, ExprPtr right, Location location) {
    auto node = make(Expr::Kind::kBinary, location);
    node->name = op;
    node->left = std::move(left);
    node->right = std::move(right);
    return node;
  }

  ExprPtr parse_or() {
    Location location = here();
    ExprPtr left = parse_and();
    int links = 0;
    while (skip_name("or")) {
      extend_chain(links);
      left = binary("or", std::move(left), parse_and(), location);
    }
    return end_chain(links, std::move(left));
  }

  ExprPtr parse_and() {
    Location location = here();
    ExprPtr left = parse_not();
    int links = 0;
    while (skip_name("and")) {
      extend_chain(links);
      left = binary("and", std::move(left), parse_not(), location);
    }
    return end_chain(links, std::move(left));
  }

  ExprPtr parse_not() {
    DepthGuard depth(*this);
    if (is_name("not")) {
      auto node = make(Expr::Kind::kNot, here());
      advance();
      node->object = parse_not();
      return node;
    }
    return parse_compare();
  }

  ExprPtr parse_compare() {
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

  ExprPtr parse_math1() {
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

  ExprPtr parse_concat() {
    Location location = here();
    ExprPtr first = parse_math2();
    if (!is_op("~")) return first;
    auto node = make(Expr::Kind::kConcat, location);
    node->items.push_back(std::move(first));
    while (skip_op("~")) node->items.push_back(parse_math2());
    return node;
  }

  ExprPtr parse_math2() {
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

  ExprPtr parse_pow() {
    Location location = here();
    ExprPtr left = parse_unary(true);
    int links = 0;
    while (skip_op("**")) {
      extend_chain(links);
      left = binary("**", std::move(left), parse_unary(true), location);
    }
    return end_chain(links, std::move(left));
  }

  ExprPtr parse_unary(bool with_filter) {
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

  ExprPtr parse_primary() {
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

  ExprPtr parse_postfix(ExprPtr node) {
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

  ExprPtr parse_filter_expr(ExprPtr node) {
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

  ExprPtr parse_subscript(ExprPtr node) {
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

  ExprPtr parse_subscribed() {
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

  void parse_call_args(std::vector<ExprPtr>& args, std::vector<std::pair<std::string, ExprPtr>>& kwargs) {
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

  ExprPtr parse_call(ExprPtr callee) {
    auto call = make(Expr::Kind::kCall, here());
    call->object = std::move(callee);
    parse_call_args(call->items, call->kwargs);
    return call;
  }

  // After "|": name(.name)* [(args)].
  FilterCall parse_filter_call() {
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
  ExprPtr parse_test(ExprPtr node) {
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

  std::vector<Token> tokens_;
  size_t index_ = 0;
  bool soft_ = false;
  int loop_depth_ = 0;
  int depth_ = 0;
  std::vector<std::pair<bool, bool>> macro_reads_;  // (reads varargs, reads kwargs) per open macro
};

}  // namespace

ParsedTemplate parse_template(std::string_view source) {
  ParsedTemplate parsed;
  parsed.body = Parser(tokenize(source)).parse();
  parsed.undefined_on_entry = analyze_scopes(parsed.body);
  return parsed;
}

}  // namespace lathe::tokenizer::jinja
