// Tree-walking evaluation of a parsed template with jinja2's scoping: a for-loop iteration, a
// macro call, a with block and a set/filter block body each get a child scope (assignments there
// do not leak out, which is why templates use namespace()); if blocks share their scope.
#include "tokenizer/jinja/template.h"

#include <algorithm>

#include "tokenizer/jinja/ast.h"
#include "tokenizer/jinja/builtins.h"
#include "tokenizer/jinja/json_value.h"
#include "tokenizer/jinja/parser.h"

namespace lathe::tokenizer::jinja {
namespace {

struct Frame {
  explicit Frame(std::shared_ptr<Frame> parent_frame) : parent(std::move(parent_frame)) {}
  std::shared_ptr<Frame> parent;
  Dict vars;

  const Value* lookup(const std::string& name) const {
    for (const Frame* frame = this; frame; frame = frame->parent.get()) {
      if (const Value* value = frame->vars.find(name)) return value;
    }
    return nullptr;
  }
};
using FramePtr = std::shared_ptr<Frame>;

// A child scope, with the names jinja2 initialises to undefined there (scope_analysis.h).
FramePtr child_frame(const FramePtr& parent, const std::vector<std::string>& undefined_names) {
  auto frame = std::make_shared<Frame>(parent);
  for (const std::string& name : undefined_names) {
    frame->vars.set(name, Value::undefined(fmt::format("'{}' is undefined", name)));
  }
  return frame;
}

enum class Flow { kNormal, kBreak, kContinue };

[[noreturn]] void rethrow_located(const TemplateError& error, Location location) {
  throw TemplateError(fmt::format("line {} column {}: {}", location.line, location.column, error.what()), true);
}

class Interpreter {
 public:
  std::string run(const ParsedTemplate& parsed, const Dict& variables) {
    // The globals never change (assignments land in inner frames), so renders share one frame.
    static const FramePtr globals = [] {
      auto frame = std::make_shared<Frame>(nullptr);
      frame->vars = make_globals();
      return frame;
    }();
    auto context = std::make_shared<Frame>(globals);
    context->vars = variables;
    FramePtr root = child_frame(context, parsed.undefined_on_entry);
    std::string out;
    exec_body(parsed.body, root, out);
    return out;
  }

 private:
  Flow exec_body(const Body& body, const FramePtr& frame, std::string& out) {
    for (const StmtPtr& stmt : body) {
      Flow flow = exec(*stmt, frame, out);
      if (flow != Flow::kNormal) return flow;
    }
    return Flow::kNormal;
  }

  // Nested statements, expressions and macro calls together; bounds the C++ stack (about half
  // a KiB per level) far above what jinja2 itself can evaluate before Python's RecursionError.
  static constexpr int kMaxEvalDepth = 3000;
  struct DepthScope {
    explicit DepthScope(int& depth) : depth_(depth) {
      if (++depth_ > kMaxEvalDepth) {
        --depth_;
        template_error("template evaluation nested more than {} levels deep", kMaxEvalDepth);
      }
    }
    ~DepthScope() { --depth_; }
    DepthScope(const DepthScope&) = delete;
    DepthScope& operator=(const DepthScope&) = delete;
    int& depth_;
  };

  Flow exec(const Stmt& stmt, const FramePtr& frame, std::string& out) {
    try {
      DepthScope depth(eval_depth_);
      return exec_inner(stmt, frame, out);
    } catch (const TemplateError& error) {
      if (error.located()) throw;
      rethrow_located(error, stmt.location);
    }
  }

  Flow exec_inner(const Stmt& stmt, const FramePtr& frame, std::string& out) {
    switch (stmt.kind) {
      case Stmt::Kind::kText: out += stmt.text; return Flow::kNormal;
      case Stmt::Kind::kPrint: out += to_str(eval(*stmt.expr, frame)); return Flow::kNormal;
      case Stmt::Kind::kIf:
        for (const auto& [test, body] : stmt.branches) {
          if (truthy(eval(*test, frame))) return exec_body(body, frame, out);
        }
        return exec_body(stmt.else_body, frame, out);
      case Stmt::Kind::kFor: return exec_for(stmt, frame, out);
      case Stmt::Kind::kSet: assign(stmt.target, eval(*stmt.expr, frame), frame); return Flow::kNormal;
      // A break/continue inside a set or filter block leaves it as jinja2's compiled Python
      // does: before the assignment / before the filtered text is written.
      case Stmt::Kind::kSetBlock: {
        FramePtr inner = child_frame(frame, stmt.undefined_on_entry);
        std::string captured;
        Flow flow = exec_body(stmt.body, inner, captured);
        if (flow != Flow::kNormal) return flow;
        assign(stmt.target, apply_filters(stmt.filters, Value::string(std::move(captured)), frame), frame);
        return Flow::kNormal;
      }
      case Stmt::Kind::kFilterBlock: {
        FramePtr inner = child_frame(frame, stmt.undefined_on_entry);
        std::string captured;
        Flow flow = exec_body(stmt.body, inner, captured);
        if (flow != Flow::kNormal) return flow;
        out += to_str(apply_filters(stmt.filters, Value::string(std::move(captured)), frame));
        return Flow::kNormal;
      }
      case Stmt::Kind::kMacro: define_macro(stmt, frame); return Flow::kNormal;
      case Stmt::Kind::kBreak: return Flow::kBreak;
      case Stmt::Kind::kContinue: return Flow::kContinue;
      case Stmt::Kind::kWith: {
        std::vector<Value> values;
        for (const auto& assignment : stmt.assignments) values.push_back(eval(*assignment.second, frame));
        FramePtr inner = child_frame(frame, stmt.undefined_on_entry);
        for (size_t i = 0; i < values.size(); ++i) assign(stmt.assignments[i].first, values[i], inner);
        return exec_body(stmt.body, inner, out);
      }
      case Stmt::Kind::kScope: return exec_body(stmt.body, child_frame(frame, stmt.undefined_on_entry), out);
    }
    return Flow::kNormal;
  }

  Flow exec_for(const Stmt& stmt, const FramePtr& frame, std::string& out) {
    ValueList items = iterate(eval(*stmt.expr, frame));
    if (stmt.filter_expr) {
      ValueList kept;
      for (Value& item : items) {
        auto probe = std::make_shared<Frame>(frame);
        assign(stmt.target, item, probe);
        if (truthy(eval(*stmt.filter_expr, probe))) kept.push_back(std::move(item));
      }
      items = std::move(kept);
    }
    // jinja2 runs the else block unless some iteration reached the end of the loop body: an
    // iteration left by break or continue does not count (its compiled loop clears the "no
    // iteration" flag as the body's last statement).
    bool completed_an_iteration = false;
    const int64_t length = static_cast<int64_t>(items.size());
    for (int64_t i = 0; i < length; ++i) {
      FramePtr inner = child_frame(frame, stmt.undefined_on_entry);
      assign(stmt.target, items[static_cast<size_t>(i)], inner);
      inner->vars.set("loop", make_loop(items, i));
      Flow flow = exec_body(stmt.body, inner, out);
      if (flow == Flow::kNormal) completed_an_iteration = true;
      if (flow == Flow::kBreak) break;
    }
    // The else block sits outside the loop: a break/continue there belongs to an enclosing loop.
    if (!completed_an_iteration) {
      return exec_body(stmt.else_body, child_frame(frame, stmt.else_undefined_on_entry), out);
    }
    return Flow::kNormal;
  }

  // jinja2's LoopContext as a dict (depth is 1: recursive loops are not supported).
  static Value make_loop(const ValueList& items, int64_t i) {
    const int64_t length = static_cast<int64_t>(items.size());
    Dict loop;
    loop.items.reserve(12);
    auto add = [&](const char* key, Value value) { loop.items.emplace_back(key, std::move(value)); };
    add("index0", Value::integer(i));
    add("index", Value::integer(i + 1));
    add("revindex0", Value::integer(length - i - 1));
    add("revindex", Value::integer(length - i));
    add("first", Value::boolean(i == 0));
    add("last", Value::boolean(i == length - 1));
    add("length", Value::integer(length));
    add("depth", Value::integer(1));
    add("depth0", Value::integer(0));
    add("previtem", i > 0 ? items[static_cast<size_t>(i - 1)] : Value::undefined("there is no previous item"));
    add("nextitem", i + 1 < length ? items[static_cast<size_t>(i + 1)] : Value::undefined("there is no next item"));
    add("cycle", Value::callable("loop.cycle", [i](CallArgs& args) {
          if (args.positional.empty() || !args.keyword.empty()) template_error("no items for cycling given");
          return args.positional[static_cast<size_t>(i) % args.positional.size()];
        }));
    return Value::dict(std::move(loop));
  }

  void assign(const Target& target, const Value& value, const FramePtr& frame) {
    switch (target.kind) {
      case Target::Kind::kName: frame->vars.set(target.name, value); return;
      case Target::Kind::kNamespaceAttr: {
        const Value* ns = frame->lookup(target.name);
        if (!ns || !ns->is_namespace()) template_error("cannot assign attribute on non-namespace object");
        if (!target.attribute.empty() && target.attribute[0] == '_') {
          template_error("Chat templates cannot store underscore-prefixed attributes on a namespace, but got '{}'.",
                         target.attribute);
        }
        Dict& attributes = ns->namespace_attributes();
        if (value.depth() + 1 > NestingGuard::kMaxNesting) {
          template_error("values nested more than {} levels deep", NestingGuard::kMaxNesting);
        }
        attributes.depth = std::max(attributes.depth, value.depth() + 1);
        attributes.set(target.attribute, value);
        return;
      }
      case Target::Kind::kTuple: {
        ValueList items = iterate(value);
        if (items.size() < target.items.size()) {
          template_error("not enough values to unpack (expected {}, got {})", target.items.size(), items.size());
        }
        if (items.size() > target.items.size()) {
          template_error("too many values to unpack (expected {})", target.items.size());
        }
        for (size_t i = 0; i < items.size(); ++i) assign(target.items[i], items[i], frame);
        return;
      }
    }
  }

  void define_macro(const Stmt& macro, const FramePtr& frame) {
    // A weak reference: the macro lives in the frame it closes over (a strong one would leak).
    std::weak_ptr<Frame> closure = frame;
    frame->vars.set(macro.text, Value::callable(macro.text, [this, &macro, closure](CallArgs& args) {
                      FramePtr scope = closure.lock();
                      if (!scope) template_error("macro '{}' called after its defining scope ended", macro.text);
                      return call_macro(macro, scope, args);
                    }));
  }

  // jinja2 (Python) raises RecursionError somewhere below 200 nested macro calls.
  static constexpr int kMaxMacroDepth = 250;

  Value call_macro(const Stmt& macro, const FramePtr& closure, CallArgs& args) {
    if (macro_depth_ >= kMaxMacroDepth) {
      template_error("macro '{}': more than {} nested macro calls (runaway recursion?)", macro.text, kMaxMacroDepth);
    }
    ++macro_depth_;
    struct Exit {
      int& depth;
      ~Exit() { --depth; }
    } exit{macro_depth_};
    FramePtr frame = child_frame(closure, macro.undefined_on_entry);
    const size_t count = macro.params.size();
    if (args.positional.size() > count && !macro.catch_varargs) {
      template_error("macro '{}' takes not more than {} argument(s)", macro.text, count);
    }
    std::vector<bool> bound(count, false);
    for (size_t i = 0; i < count && i < args.positional.size(); ++i) {
      frame->vars.set(macro.params[i].name, args.positional[i]);
      bound[i] = true;
    }
    Dict extra_kwargs;
    for (auto& [key, value] : args.keyword) {
      size_t index = 0;
      while (index < count && macro.params[index].name != key) ++index;
      if (index < count) {
        if (bound[index]) template_error("macro '{}' got multiple values for argument '{}'", macro.text, key);
        frame->vars.set(key, value);
        bound[index] = true;
      } else if (macro.catch_kwargs) {
        extra_kwargs.set(key, value);
      } else {
        template_error("macro '{}' takes no keyword argument '{}'", macro.text, key);
      }
    }
    for (size_t i = 0; i < count; ++i) {
      if (bound[i]) continue;
      const MacroParam& param = macro.params[i];
      frame->vars.set(param.name, param.default_value
                                      ? eval(*param.default_value, frame)
                                      : Value::undefined(fmt::format("parameter '{}' was not provided", param.name)));
    }
    if (macro.catch_varargs) {
      ValueList rest;
      for (size_t i = count; i < args.positional.size(); ++i) rest.push_back(args.positional[i]);
      frame->vars.set("varargs", Value::list(std::move(rest), Value::Flavor::kTuple));
    }
    if (macro.catch_kwargs) frame->vars.set("kwargs", Value::dict(std::move(extra_kwargs)));
    std::string out;
    exec_body(macro.body, frame, out);
    return Value::string(std::move(out));
  }

  CallArgs eval_args(const std::vector<ExprPtr>& positional, const std::vector<std::pair<std::string, ExprPtr>>& keyword,
                     const FramePtr& frame) {
    CallArgs args;
    for (const ExprPtr& arg : positional) args.positional.push_back(eval(*arg, frame));
    for (const auto& [key, arg] : keyword) args.keyword.emplace_back(key, eval(*arg, frame));
    return args;
  }

  Value apply_filter_call(const FilterCall& filter, const Value& input, const FramePtr& frame) {
    if (!filter.deferred_error.empty()) template_error("{}", filter.deferred_error);
    CallArgs args = eval_args(filter.args, filter.kwargs, frame);
    return apply_filter(filter.name, input, args);
  }

  Value apply_filters(const std::vector<FilterCall>& filters, Value value, const FramePtr& frame) {
    for (const FilterCall& filter : filters) value = apply_filter_call(filter, value, frame);
    return value;
  }

  Value eval(const Expr& expr, const FramePtr& frame) {
    try {
      DepthScope depth(eval_depth_);
      return eval_inner(expr, frame);
    } catch (const TemplateError& error) {
      if (error.located()) throw;
      rethrow_located(error, expr.location);
    }
  }

  bool compare_op(const std::string& op, const Value& left, const Value& right) {
    if (op == "==") return equals(left, right);
    if (op == "!=") return !equals(left, right);
    if (op == "in") return contains(right, left);
    if (op == "not in") return !contains(right, left);
    std::partial_ordering order = compare(left, right);
    if (op == "<") return order == std::partial_ordering::less;
    if (op == ">") return order == std::partial_ordering::greater;
    if (op == "<=") return order == std::partial_ordering::less || order == std::partial_ordering::equivalent;
    return order == std::partial_ordering::greater || order == std::partial_ordering::equivalent;  // ">="
  }

  Value eval_inner(const Expr& expr, const FramePtr& frame) {
    switch (expr.kind) {
      case Expr::Kind::kConst: return expr.value;
      case Expr::Kind::kName: {
        if (const Value* value = frame->lookup(expr.name)) return *value;
        return Value::undefined(fmt::format("'{}' is undefined", expr.name));
      }
      case Expr::Kind::kList: {
        ValueList items;
        for (const ExprPtr& item : expr.items) items.push_back(eval(*item, frame));
        return Value::list(std::move(items), expr.tuple ? Value::Flavor::kTuple : Value::Flavor::kList);
      }
      case Expr::Kind::kDict: {
        Dict dict;
        for (const auto& [key_expr, value_expr] : expr.pairs) {
          Value key = eval(*key_expr, frame);
          if (!key.is_string()) template_error("dict keys other than strings are not supported (got {})", type_name(key));
          dict.set(key.as_string(), eval(*value_expr, frame));
        }
        return Value::dict(std::move(dict));
      }
      case Expr::Kind::kGetattr: return get_attribute(eval(*expr.object, frame), expr.name);
      case Expr::Kind::kGetitem: {
        Value object = eval(*expr.object, frame);
        const Expr& index = *expr.right;
        if (index.kind == Expr::Kind::kSlice) {
          auto bound = [&](const ExprPtr& e) { return e ? eval(*e, frame) : Value::none(); };
          return get_slice(object, bound(index.start), bound(index.stop), bound(index.step));
        }
        return get_item(object, eval(index, frame));
      }
      case Expr::Kind::kSlice: template_error("a slice is only valid inside []");
      case Expr::Kind::kCall: {
        Value callee = eval(*expr.object, frame);
        require_defined(callee);
        if (!callee.is_callable()) template_error("'{}' object is not callable", type_name(callee));
        CallArgs args = eval_args(expr.items, expr.kwargs, frame);
        return callee.as_callable().function(args);
      }
      case Expr::Kind::kFilter: return apply_filter_call(expr.filter, eval(*expr.object, frame), frame);
      case Expr::Kind::kTest: {
        if (!expr.filter.deferred_error.empty()) template_error("{}", expr.filter.deferred_error);
        Value input = eval(*expr.object, frame);
        CallArgs args = eval_args(expr.filter.args, expr.filter.kwargs, frame);
        bool result = apply_test(expr.filter.name, input, args);
        return Value::boolean(expr.negated ? !result : result);
      }
      case Expr::Kind::kNot: return Value::boolean(!truthy(eval(*expr.object, frame)));
      case Expr::Kind::kNeg:
      case Expr::Kind::kPos: {
        Value operand = eval(*expr.object, frame);
        require_defined(operand);
        bool negate = expr.kind == Expr::Kind::kNeg;
        if (operand.is_float()) return Value::floating(negate ? -operand.as_double() : operand.as_double());
        if (operand.is_int() || operand.is_bool()) {
          if (!negate) return Value::integer(operand.as_int());
          if (operand.as_int() == std::numeric_limits<int64_t>::min()) template_error("integer overflow");
          return Value::integer(-operand.as_int());
        }
        template_error("bad operand type for unary {}: '{}'", negate ? "-" : "+", type_name(operand));
      }
      case Expr::Kind::kBinary: {
        if (expr.name == "and" || expr.name == "or") {
          Value left = eval(*expr.left, frame);
          bool short_circuit = expr.name == "and" ? !truthy(left) : truthy(left);
          return short_circuit ? left : eval(*expr.right, frame);
        }
        Value left = eval(*expr.left, frame);
        return binary_op(expr.name, left, eval(*expr.right, frame));
      }
      case Expr::Kind::kConcat: {
        std::string out;
        for (const ExprPtr& item : expr.items) out += to_str(eval(*item, frame));
        return Value::string(std::move(out));
      }
      case Expr::Kind::kCompare: {
        Value left = eval(*expr.object, frame);
        for (const auto& [op, right_expr] : expr.comparisons) {
          Value right = eval(*right_expr, frame);
          if (!compare_op(op, left, right)) return Value::boolean(false);
          left = std::move(right);
        }
        return Value::boolean(true);
      }
      case Expr::Kind::kCondExpr: {
        if (truthy(eval(*expr.test, frame))) return eval(*expr.then_expr, frame);
        if (expr.else_expr) return eval(*expr.else_expr, frame);
        return Value::undefined(fmt::format(
            "the inline if-expression on line {} evaluated to false and no else section was defined.",
            expr.location.line));
      }
    }
    template_error("internal: unknown expression kind");
  }

  int macro_depth_ = 0;
  int eval_depth_ = 0;
};

}  // namespace

Template::Template(std::string_view source) : parsed_(std::make_shared<const ParsedTemplate>(parse_template(source))) {}

std::string Template::render(const Dict& variables) const { return Interpreter().run(*parsed_, variables); }

std::string Template::render(const nlohmann::ordered_json& variables) const {
  if (!variables.is_object()) template_error("template variables must be a JSON object");
  Dict dict;
  for (const auto& [key, value] : variables.items()) dict.set(key, from_json(value));
  return render(dict);
}

}  // namespace lathe::tokenizer::jinja
