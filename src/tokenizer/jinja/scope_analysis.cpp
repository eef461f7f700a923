#include "tokenizer/jinja/scope_analysis.h"

#include <map>
#include <set>

namespace lathe::tokenizer::jinja {
namespace {

// How a scope initialises a name it refers to (jinja2's VAR_LOAD_*).
enum class Load { kParameter, kResolve, kAlias, kUndefined };

// jinja2's Symbols: the names one scope refers to, keyed by name (jinja2 keys by an identifier
// derived from the scope level and the name, which is the same thing within one scope).
struct Symbols {
  const Symbols* parent = nullptr;
  std::map<std::string, Load> refs;
  std::set<std::string> stores;

  bool find_ref(const std::string& name) const {
    for (const Symbols* s = this; s; s = s->parent) {
      if (s->refs.count(name)) return true;
    }
    return false;
  }

  void store(const std::string& name) {
    stores.insert(name);
    if (refs.count(name)) return;
    refs[name] = parent && parent->find_ref(name) ? Load::kAlias : Load::kUndefined;
  }

  void declare_parameter(const std::string& name) {
    stores.insert(name);
    refs[name] = Load::kParameter;
  }

  void load(const std::string& name) {
    if (!find_ref(name)) refs[name] = Load::kResolve;
  }

  // A name first assigned inside an if (any branch) reads the outer scope (or the context)
  // until assigned (jinja2 3.1 branch_update).
  void branch_update(const std::vector<Symbols>& branches) {
    std::set<std::string> branch_stores;
    for (const Symbols& branch : branches) branch_stores.insert(branch.stores.begin(), branch.stores.end());
    for (const std::string& name : stores) branch_stores.erase(name);
    for (const Symbols& branch : branches) {
      for (const auto& [name, load] : branch.refs) refs[name] = load;
      stores.insert(branch.stores.begin(), branch.stores.end());
    }
    for (const std::string& name : branch_stores) {
      refs[name] = parent && parent->find_ref(name) ? Load::kAlias : Load::kResolve;
    }
  }

  std::vector<std::string> undefined_names() const {
    std::vector<std::string> out;
    for (const auto& [name, load] : refs) {
      if (load == Load::kUndefined) out.push_back(name);
    }
    return out;
  }
};

void visit_expr(const Expr* expr, Symbols& symbols);

void visit_filter_call(const FilterCall& call, Symbols& symbols) {
  for (const ExprPtr& arg : call.args) visit_expr(arg.get(), symbols);
  for (const auto& kwarg : call.kwargs) visit_expr(kwarg.second.get(), symbols);
}

// Every name read anywhere in the expression (jinja2's generic visit, in field order).
void visit_expr(const Expr* expr, Symbols& symbols) {
  if (!expr) return;
  if (expr->kind == Expr::Kind::kName) {
    symbols.load(expr->name);
    return;
  }
  if (expr->kind == Expr::Kind::kCondExpr) {  // jinja2 field order: test, expr1, expr2
    visit_expr(expr->test.get(), symbols);
    visit_expr(expr->then_expr.get(), symbols);
    visit_expr(expr->else_expr.get(), symbols);
    return;
  }
  visit_expr(expr->object.get(), symbols);
  visit_expr(expr->left.get(), symbols);
  visit_expr(expr->right.get(), symbols);
  visit_expr(expr->start.get(), symbols);
  visit_expr(expr->stop.get(), symbols);
  visit_expr(expr->step.get(), symbols);
  for (const ExprPtr& item : expr->items) visit_expr(item.get(), symbols);
  for (const auto& pair : expr->pairs) {
    visit_expr(pair.first.get(), symbols);
    visit_expr(pair.second.get(), symbols);
  }
  for (const auto& kwarg : expr->kwargs) visit_expr(kwarg.second.get(), symbols);
  for (const auto& comparison : expr->comparisons) visit_expr(comparison.second.get(), symbols);
  if (expr->kind == Expr::Kind::kFilter || expr->kind == Expr::Kind::kTest) visit_filter_call(expr->filter, symbols);
}

void visit_target(const Target& target, Symbols& symbols, bool as_parameter) {
  switch (target.kind) {
    case Target::Kind::kName:
      if (as_parameter) {
        symbols.declare_parameter(target.name);
      } else {
        symbols.store(target.name);
      }
      return;
    case Target::Kind::kNamespaceAttr: symbols.load(target.name); return;
    case Target::Kind::kTuple:
      for (const Target& item : target.items) visit_target(item, symbols, as_parameter);
      return;
  }
}

void visit_body(const Body& body, Symbols& symbols);

// jinja2 FrameSymbolVisitor.visit_If for `if test: body elif...: ... else: ...`, where each elif
// is an If node of its own (no elif/else of its own).
void visit_if(const Stmt& stmt, size_t branch, bool with_rest, Symbols& symbols) {
  visit_expr(stmt.branches[branch].first.get(), symbols);
  Symbols body = symbols;
  visit_body(stmt.branches[branch].second, body);
  Symbols elifs = symbols;
  Symbols otherwise = symbols;
  if (with_rest) {
    for (size_t i = branch + 1; i < stmt.branches.size(); ++i) visit_if(stmt, i, false, elifs);
    visit_body(stmt.else_body, otherwise);
  }
  symbols.branch_update({body, elifs, otherwise});
}

// What one statement contributes to the symbols of the scope it sits in.
void visit_stmt(const Stmt& stmt, Symbols& symbols) {
  switch (stmt.kind) {
    case Stmt::Kind::kText:
    case Stmt::Kind::kBreak:
    case Stmt::Kind::kContinue:
    case Stmt::Kind::kScope: return;
    case Stmt::Kind::kPrint: visit_expr(stmt.expr.get(), symbols); return;
    case Stmt::Kind::kIf: visit_if(stmt, 0, true, symbols); return;
    case Stmt::Kind::kFor: visit_expr(stmt.expr.get(), symbols); return;
    case Stmt::Kind::kSet:
      visit_expr(stmt.expr.get(), symbols);
      visit_target(stmt.target, symbols, false);
      return;
    case Stmt::Kind::kSetBlock: visit_target(stmt.target, symbols, false); return;
    case Stmt::Kind::kMacro: symbols.store(stmt.text); return;
    case Stmt::Kind::kWith:
      for (const auto& assignment : stmt.assignments) visit_expr(assignment.second.get(), symbols);
      return;
    case Stmt::Kind::kFilterBlock:
      for (const FilterCall& filter : stmt.filters) visit_filter_call(filter, symbols);
      return;
  }
}

void visit_body(const Body& body, Symbols& symbols) {
  for (const StmtPtr& stmt : body) visit_stmt(*stmt, symbols);
}

void analyze_children(Body& body, const Symbols& scope);

// Analyses the child scope(s) a statement opens, with `parent` the complete symbols of the
// scope the statement sits in.
void analyze_child_scope(Stmt& stmt, const Symbols& parent) {
  Symbols symbols;
  symbols.parent = &parent;
  switch (stmt.kind) {
    case Stmt::Kind::kFor: {
      visit_target(stmt.target, symbols, true);
      visit_body(stmt.body, symbols);
      stmt.undefined_on_entry = symbols.undefined_names();
      analyze_children(stmt.body, symbols);
      Symbols else_symbols;
      else_symbols.parent = &parent;
      visit_body(stmt.else_body, else_symbols);
      stmt.else_undefined_on_entry = else_symbols.undefined_names();
      analyze_children(stmt.else_body, else_symbols);
      return;
    }
    case Stmt::Kind::kMacro:
      for (const MacroParam& param : stmt.params) symbols.declare_parameter(param.name);
      for (const MacroParam& param : stmt.params) visit_expr(param.default_value.get(), symbols);
      if (stmt.catch_varargs) symbols.declare_parameter("varargs");
      if (stmt.catch_kwargs) symbols.declare_parameter("kwargs");
      visit_body(stmt.body, symbols);
      break;
    case Stmt::Kind::kWith:
      for (const auto& assignment : stmt.assignments) visit_target(assignment.first, symbols, true);
      visit_body(stmt.body, symbols);
      break;
    case Stmt::Kind::kFilterBlock:
      visit_body(stmt.body, symbols);
      for (const FilterCall& filter : stmt.filters) visit_filter_call(filter, symbols);
      break;
    case Stmt::Kind::kSetBlock:
    case Stmt::Kind::kScope: visit_body(stmt.body, symbols); break;
    default: return;
  }
  stmt.undefined_on_entry = symbols.undefined_names();
  analyze_children(stmt.body, symbols);
}

// Child scopes directly inside a scope's body (if branches belong to the same scope).
void analyze_children(Body& body, const Symbols& scope) {
  for (StmtPtr& stmt : body) {
    if (stmt->kind == Stmt::Kind::kIf) {
      for (auto& branch : stmt->branches) analyze_children(branch.second, scope);
      analyze_children(stmt->else_body, scope);
    } else {
      analyze_child_scope(*stmt, scope);
    }
  }
}

}  // namespace

std::vector<std::string> analyze_scopes(Body& body) {
  Symbols root;
  visit_body(body, root);
  analyze_children(body, root);
  return root.undefined_names();
}

}  // namespace lathe::tokenizer::jinja
