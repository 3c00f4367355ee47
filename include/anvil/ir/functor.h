// Visitor and mutator over graph IR expressions. Both walk a DAG: each node
// is handled once however many users it has. One virtual per expression kind,
// generated from expr_kinds.def.
#pragma once

#include <functional>
#include <unordered_map>
#include <unordered_set>

#include "anvil/ir/ir.h"

namespace anvil::ir {

struct PrimFuncNode;  // the tensor IR's function; a leaf to the graph IR

// Walks an expression, children before parents. Override visit_<Kind> and
// call the base version to keep walking below.
class ExprVisitor {
 public:
  virtual ~ExprVisitor() = default;
  // Visits e unless it was visited before.
  virtual void visit(const Expr& e);
#define ANVIL_EXPR_KIND(Name) virtual void visit_##Name(const Name##Node* node);
#include "anvil/ir/expr_kinds.def"
  virtual void visit_binding(const Binding& binding);
  virtual void visit_block(const BindingBlock& block);

 protected:
  std::unordered_set<const ExprNode*> visited_;
};

// Rebuilds an expression bottom-up. A node whose children all come back
// unchanged is returned as the very same node. Override mutate_<Kind>; `self`
// is the node as an Expr, to return when nothing changes.
class ExprMutator {
 public:
  virtual ~ExprMutator() = default;
  // The mutated form of e, computed once per node.
  virtual Expr mutate(const Expr& e);
#define ANVIL_EXPR_KIND(Name) virtual Expr mutate_##Name(const Name##Node* node, const Expr& self);
#include "anvil/ir/expr_kinds.def"
  // Mutates a block; sets changed when any binding changed.
  virtual BindingBlock mutate_block(const BindingBlock& block, bool& changed);

 protected:
  // Mutates every expression of a list; sets changed when any changed.
  std::vector<Expr> mutate_all(const std::vector<Expr>& items, bool& changed);
  std::unordered_map<const ExprNode*, Expr> memo_;
};

// Calls fn on every node reachable from e, children first, each once.
void post_order_visit(const Expr& e, const std::function<void(const Expr&)>& fn);

}  // namespace anvil::ir
