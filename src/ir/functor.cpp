#include "anvil/ir/functor.h"

namespace anvil::ir {
namespace {

// PrimFunc's struct is not visible here; the graph IR treats it as a leaf and
// never looks inside, so the pointer is passed through without a checked cast.
template <typename T>
const T* node_cast(const ExprNode* node) {
  return static_cast<const T*>(node);
}
template <>
const PrimFuncNode* node_cast<PrimFuncNode>(const ExprNode* node) {
  return reinterpret_cast<const PrimFuncNode*>(node);
}

}  // namespace

// ---------------------------------------------------------------- visitor

void ExprVisitor::visit(const Expr& e) {
  if (!e || !visited_.insert(e.get()).second) return;
  switch (e->kind) {
#define ANVIL_EXPR_KIND(Name)                     \
  case ExprKind::Name:                            \
    visit_##Name(node_cast<Name##Node>(e.get())); \
    break;
#include "anvil/ir/expr_kinds.def"
  }
}

void ExprVisitor::visit_Var(const VarNode*) {}
void ExprVisitor::visit_GlobalVar(const GlobalVarNode*) {}
void ExprVisitor::visit_Constant(const ConstantNode*) {}
void ExprVisitor::visit_Op(const OpNode*) {}
void ExprVisitor::visit_ExternFunc(const ExternFuncNode*) {}
void ExprVisitor::visit_PrimFunc(const PrimFuncNode*) {}

void ExprVisitor::visit_Call(const CallNode* node) {
  visit(node->callee);
  for (const Expr& arg : node->args) visit(arg);
}

void ExprVisitor::visit_Tuple(const TupleNode* node) {
  for (const Expr& field : node->fields) visit(field);
}

void ExprVisitor::visit_TupleGetItem(const TupleGetItemNode* node) { visit(node->tuple); }

void ExprVisitor::visit_Function(const FunctionNode* node) {
  for (const Var& p : node->params) visit(p);
  visit(node->body);
}

void ExprVisitor::visit_If(const IfNode* node) {
  visit(node->cond);
  visit(node->then_branch);
  visit(node->else_branch);
}

void ExprVisitor::visit_While(const WhileNode* node) {
  for (const Expr& value : node->init) visit(value);
  for (const Var& var : node->vars) visit(var);
  visit(node->cond);
  visit(node->body);
}

void ExprVisitor::visit_Let(const LetNode* node) {
  visit(node->var);
  visit(node->value);
  visit(node->body);
}

void ExprVisitor::visit_SeqExpr(const SeqExprNode* node) {
  for (const BindingBlock& block : node->blocks) visit_block(block);
  visit(node->body);
}

void ExprVisitor::visit_block(const BindingBlock& block) {
  for (const Binding& b : block.bindings) visit_binding(b);
}

void ExprVisitor::visit_binding(const Binding& binding) {
  visit(binding.value);
  visit(binding.var);
}

void post_order_visit(const Expr& e, const std::function<void(const Expr&)>& fn) {
  struct PostOrder : ExprVisitor {
    const std::function<void(const Expr&)>& fn;
    explicit PostOrder(const std::function<void(const Expr&)>& f) : fn(f) {}
    void visit(const Expr& e) override {
      if (!e || visited_.count(e.get())) return;
      ExprVisitor::visit(e);
      fn(e);
    }
  } visitor(fn);
  visitor.visit(e);
}

// ---------------------------------------------------------------- mutator

Expr ExprMutator::mutate(const Expr& e) {
  if (!e) return e;
  auto it = memo_.find(e.get());
  if (it != memo_.end()) return it->second;
  Expr result;
  switch (e->kind) {
#define ANVIL_EXPR_KIND(Name)                                  \
  case ExprKind::Name:                                         \
    result = mutate_##Name(node_cast<Name##Node>(e.get()), e); \
    break;
#include "anvil/ir/expr_kinds.def"
  }
  memo_.emplace(e.get(), result);
  return result;
}

std::vector<Expr> ExprMutator::mutate_all(const std::vector<Expr>& items, bool& changed) {
  std::vector<Expr> result;
  result.reserve(items.size());
  for (const Expr& item : items) {
    result.push_back(mutate(item));
    changed |= result.back() != item;
  }
  return result;
}

Expr ExprMutator::mutate_Var(const VarNode*, const Expr& self) { return self; }
Expr ExprMutator::mutate_GlobalVar(const GlobalVarNode*, const Expr& self) { return self; }
Expr ExprMutator::mutate_Constant(const ConstantNode*, const Expr& self) { return self; }
Expr ExprMutator::mutate_Op(const OpNode*, const Expr& self) { return self; }
Expr ExprMutator::mutate_ExternFunc(const ExternFuncNode*, const Expr& self) { return self; }
Expr ExprMutator::mutate_PrimFunc(const PrimFuncNode*, const Expr& self) { return self; }

Expr ExprMutator::mutate_Call(const CallNode* node, const Expr& self) {
  bool changed = false;
  Expr callee = mutate(node->callee);
  changed |= callee != node->callee;
  std::vector<Expr> args = mutate_all(node->args, changed);
  if (!changed) return self;
  return CallNode::make(callee, std::move(args), node->attrs, node->type_args);
}

Expr ExprMutator::mutate_Tuple(const TupleNode* node, const Expr& self) {
  bool changed = false;
  std::vector<Expr> fields = mutate_all(node->fields, changed);
  return changed ? Expr(TupleNode::make(std::move(fields))) : self;
}

Expr ExprMutator::mutate_TupleGetItem(const TupleGetItemNode* node, const Expr& self) {
  Expr tuple = mutate(node->tuple);
  return tuple == node->tuple ? self : Expr(TupleGetItemNode::make(tuple, node->index));
}

Expr ExprMutator::mutate_Function(const FunctionNode* node, const Expr& self) {
  bool changed = false;
  std::vector<Var> params;
  for (const Var& p : node->params) {
    Expr mutated = mutate(p);
    const auto* var = as<VarNode>(mutated);
    ANVIL_ICHECK(var, "a function parameter must stay a variable");
    params.push_back(Var(var));
    changed |= mutated != Expr(p);
  }
  Expr body = mutate(node->body);
  changed |= body != node->body;
  if (!changed) return self;
  return FunctionNode::make(std::move(params), body, node->ret_type, node->func_attrs);
}

Expr ExprMutator::mutate_If(const IfNode* node, const Expr& self) {
  Expr c = mutate(node->cond), t = mutate(node->then_branch), e = mutate(node->else_branch);
  if (c == node->cond && t == node->then_branch && e == node->else_branch) return self;
  return IfNode::make(c, t, e);
}

Expr ExprMutator::mutate_While(const WhileNode* node, const Expr& self) {
  bool changed = false;
  std::vector<Expr> init = mutate_all(node->init, changed);
  std::vector<Var> vars;
  for (const Var& v : node->vars) {
    Expr mutated = mutate(v);
    const auto* var = as<VarNode>(mutated);
    ANVIL_ICHECK(var, "a loop variable must stay a variable");
    vars.push_back(Var(var));
    changed |= mutated != Expr(v);
  }
  Expr cond = mutate(node->cond), body = mutate(node->body);
  changed |= cond != node->cond || body != node->body;
  if (!changed) return self;
  return WhileNode::make(std::move(vars), std::move(init), cond, body);
}

Expr ExprMutator::mutate_Let(const LetNode* node, const Expr& self) {
  Expr var = mutate(node->var);
  Expr value = mutate(node->value), body = mutate(node->body);
  if (var == Expr(node->var) && value == node->value && body == node->body) return self;
  const auto* v = as<VarNode>(var);
  ANVIL_ICHECK(v, "a let variable must stay a variable");
  return LetNode::make(Var(v), value, body);
}

BindingBlock ExprMutator::mutate_block(const BindingBlock& block, bool& changed) {
  BindingBlock result;
  result.is_dataflow = block.is_dataflow;
  for (const Binding& b : block.bindings) {
    Expr value = mutate(b.value);
    Expr var = mutate(b.var);
    const auto* v = as<VarNode>(var);
    ANVIL_ICHECK(v, "a binding variable must stay a variable");
    changed |= value != b.value || var != Expr(b.var);
    result.bindings.push_back({Var(v), value});
  }
  return result;
}

Expr ExprMutator::mutate_SeqExpr(const SeqExprNode* node, const Expr& self) {
  bool changed = false;
  std::vector<BindingBlock> blocks;
  for (const BindingBlock& block : node->blocks) blocks.push_back(mutate_block(block, changed));
  Expr body = mutate(node->body);
  changed |= body != node->body;
  if (!changed) return self;
  return SeqExprNode::make(std::move(blocks), body);
}

}  // namespace anvil::ir
