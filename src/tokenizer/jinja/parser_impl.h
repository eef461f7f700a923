#pragma once
// The parser's class, shared by parser.cpp (token helpers, statements) and
// parser_expressions.cpp (expressions). Internal to the Jinja interpreter; see parser.h.
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tokenizer/jinja/ast.h"
#include "tokenizer/jinja/lexer.h"

namespace lathe::tokenizer::jinja::detail {

// Recursive-descent parser over the lexer's tokens. One Parser parses one template; it keeps
// the nesting depth (DepthGuard), whether unknown filters/tests are deferred (SoftScope), the
// enclosing loop depth (break/continue) and which macros read varargs/kwargs.
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

  Body parse_body(std::initializer_list<std::string_view> ends);

  static std::string describe_ends(std::initializer_list<std::string_view> ends) {
    std::string out;
    for (std::string_view end : ends) {
      if (!out.empty()) out += " or ";
      out += fmt::format("'{}'", end);
    }
    return out;
  }

  StmtPtr parse_statement(std::initializer_list<std::string_view> enclosing_ends);

  StmtPtr parse_if();

  StmtPtr parse_for();

  StmtPtr parse_set();

  StmtPtr parse_macro();

  StmtPtr parse_with();

  StmtPtr parse_filter_block();

  StmtPtr parse_generation();

  Target parse_assign_target(bool with_namespace, std::initializer_list<std::string_view> extra_end);

  Target parse_single_target(bool with_namespace);

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

  ExprPtr parse_tuple(bool with_condexpr, std::initializer_list<std::string_view> extra_end, bool explicit_parens);

  ExprPtr parse_expression(bool with_condexpr) { return with_condexpr ? parse_condexpr() : parse_or(); }

  ExprPtr parse_condexpr();

  ExprPtr binary(const std::string& op, ExprPtr left, ExprPtr right, Location location);

  ExprPtr parse_or();

  ExprPtr parse_and();

  ExprPtr parse_not();

  ExprPtr parse_compare();

  ExprPtr parse_math1();

  ExprPtr parse_concat();

  ExprPtr parse_math2();

  ExprPtr parse_pow();

  ExprPtr parse_unary(bool with_filter);

  ExprPtr parse_primary();

  ExprPtr parse_postfix(ExprPtr node);

  ExprPtr parse_filter_expr(ExprPtr node);

  ExprPtr parse_subscript(ExprPtr node);

  ExprPtr parse_subscribed();

  void parse_call_args(std::vector<ExprPtr>& args, std::vector<std::pair<std::string, ExprPtr>>& kwargs);

  ExprPtr parse_call(ExprPtr callee);

  FilterCall parse_filter_call();

  ExprPtr parse_test(ExprPtr node);

  std::vector<Token> tokens_;
  size_t index_ = 0;
  bool soft_ = false;
  int loop_depth_ = 0;
  int depth_ = 0;
  std::vector<std::pair<bool, bool>> macro_reads_;  // (reads varargs, reads kwargs) per open macro
};

}  // namespace lathe::tokenizer::jinja::detail
