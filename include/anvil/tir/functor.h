// Visitor and mutator over tensor-IR statements and expressions, one virtual
// per node kind (generated from node_kinds.def), plus substitution helpers.
// The tensor IR is a tree in practice, so neither memoizes.
#pragma once

#include <functional>
#include <unordered_map>

#include "anvil/tir/tir.h"

namespace anvil::tir {

// Walks statements and expressions, parents before children. Override
// visit_<Kind> and call the base version to keep walking below. Buffers seen
// in loads, stores, regions and allocations go through visit_buffer (which by
// default visits nothing: shapes are not walked).
class Visitor {
 public:
  virtual ~Visitor() = default;
  virtual void visit(const PrimExpr& e);
  virtual void visit(const Stmt& s);
#define ANVIL_TIR_EXPR(Name) virtual void visit_##Name(const Name##Node* node);
#define ANVIL_TIR_STMT(Name) virtual void visit_##Name(const Name##Node* node);
#include "anvil/tir/node_kinds.def"
  virtual void visit_buffer(const Buffer& buffer);
  void visit_region(const BufferRegion& region);
};

// Rebuilds statements and expressions bottom-up; a node whose children all
// come back unchanged is returned as the very same node (`self`).
// mutate_buffer is applied to every buffer reference (loads, stores, regions,
// allocations, block alloc_buffers) and by default returns it unchanged.
class Mutator {
 public:
  virtual ~Mutator() = default;
  virtual PrimExpr mutate(const PrimExpr& e);
  virtual Stmt mutate(const Stmt& s);
#define ANVIL_TIR_EXPR(Name) \
  virtual PrimExpr mutate_##Name(const Name##Node* node, const PrimExpr& self);
#define ANVIL_TIR_STMT(Name) virtual Stmt mutate_##Name(const Name##Node* node, const Stmt& self);
#include "anvil/tir/node_kinds.def"
  virtual Buffer mutate_buffer(const Buffer& buffer);

 protected:
  // Mutates each element; sets changed when any element changed.
  std::vector<PrimExpr> mutate_all(const std::vector<PrimExpr>& items, bool& changed);
  std::vector<Stmt> mutate_all(const std::vector<Stmt>& items, bool& changed);
  Range mutate_range(const Range& range, bool& changed);
  IterVar mutate_iter_var(const IterVar& iv, bool& changed);
  BufferRegion mutate_region(const BufferRegion& region, bool& changed);
};

// Vars to replace, by identity.
using VarMap = std::unordered_map<const VarNode*, PrimExpr>;

// e (or s) with every occurrence of a mapped Var replaced; buffer shapes are
// left alone.
PrimExpr substitute(const PrimExpr& e, const VarMap& map);
Stmt substitute(const Stmt& s, const VarMap& map);

// Calls fn on every expression node (pre-order) below e / s.
void pre_order_visit(const PrimExpr& e, const std::function<void(const PrimExpr&)>& fn);
void pre_order_visit(const Stmt& s, const std::function<void(const PrimExpr&)>& on_expr,
                     const std::function<void(const Stmt&)>& on_stmt);

// True when any Var for which pred holds occurs in e.
bool uses_var(const PrimExpr& e, const std::function<bool(const VarNode*)>& pred);
bool uses_var(const Stmt& s, const std::function<bool(const VarNode*)>& pred);

}  // namespace anvil::tir
