// InlineBindings: lets and binding blocks become a plain expression DAG, each bound variable
// replaced by its value. Analyses that follow data flow through calls (the VM compiler's
// region split and fusion) then see every producer directly instead of through a variable.
#include <unordered_map>

#include "anvil/ir/functor.h"
#include "anvil/ir/infer_type.h"
#include "anvil/transform/passes.h"

namespace anvil::transform {
namespace {

// Replaces each bound variable by its (inlined) value; the memoized mutator keeps a value
// used many times as one node.
class BindingInliner : public ir::ExprMutator {
 public:
  ir::Expr mutate_Var(const ir::VarNode* node, const ir::Expr& self) override {
    auto it = bound_.find(node);
    return it == bound_.end() ? self : it->second;
  }
  ir::Expr mutate_Let(const ir::LetNode* node, const ir::Expr&) override {
    bound_[node->var.get()] = mutate(node->value);
    return mutate(node->body);
  }
  ir::Expr mutate_SeqExpr(const ir::SeqExprNode* node, const ir::Expr&) override {
    for (const ir::BindingBlock& block : node->blocks)
      for (const ir::Binding& binding : block.bindings)
        bound_[binding.var.get()] = mutate(binding.value);
    return mutate(node->body);
  }
  ir::Expr mutate_Function(const ir::FunctionNode*, const ir::Expr& self) override {
    return self;  // called functions keep their own bindings
  }

 private:
  std::unordered_map<const ir::ExprNode*, ir::Expr> bound_;
};

}  // namespace

ir::Expr inline_bindings(const ir::Expr& body) { return BindingInliner().mutate(body); }

ir::IRModule inline_bindings(const ir::IRModule& mod) {
  ir::IRModule typed = ir::infer_type(mod);
  ir::IRModule result;
  for (const auto& [name, func] : typed.functions()) {
    const auto* fn = ir::as<ir::FunctionNode>(ir::Expr(func));
    if (!fn) {
      result.add(name, func);
      continue;
    }
    ir::Expr body = inline_bindings(fn->body);
    if (body.get() == fn->body.get()) {
      result.add(name, func);
      continue;
    }
    result.add(name, ir::FunctionNode::make(fn->params, body, fn->ret_type, fn->func_attrs));
  }
  return ir::infer_type(result);
}

}  // namespace anvil::transform
