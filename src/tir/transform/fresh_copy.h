// A copy of a statement with some variables replaced and everything it defines (loop variables,
// lets, allocations) renamed, so that a statement can appear twice in a function while every
// variable keeps exactly one definition. Unrolling and loop partitioning duplicate bodies with
// it.
#pragma once

#include <unordered_map>

#include "anvil/tir/functor.h"

namespace anvil::tir::transform::detail {

class FreshCopy : public Mutator {
 public:
  explicit FreshCopy(VarMap replacements) : vars_(std::move(replacements)) {}

  PrimExpr mutate_Var(const VarNode* node, const PrimExpr& self) override {
    auto it = vars_.find(node);
    return it == vars_.end() ? self : it->second;
  }
  Buffer mutate_buffer(const Buffer& buffer) override {
    auto it = buffers_.find(buffer.get());
    return it == buffers_.end() ? buffer : it->second;
  }

  Stmt mutate_For(const ForNode* node, const Stmt&) override {
    Var loop_var = rename(node->loop_var);
    return ForNode::make(loop_var, mutate(node->min), mutate(node->extent), node->for_kind,
                         mutate(node->body), node->annotations);
  }
  Stmt mutate_LetStmt(const LetStmtNode* node, const Stmt&) override {
    PrimExpr value = mutate(node->value);
    Var var = rename(node->var);
    return LetStmtNode::make(var, value, mutate(node->body));
  }
  PrimExpr mutate_Let(const LetNode* node, const PrimExpr&) override {
    PrimExpr value = mutate(node->value);
    Var var = rename(node->var);
    return let(var, value, mutate(node->body));
  }
  Stmt mutate_Allocate(const AllocateNode* node, const Stmt&) override {
    const Buffer& old = node->buffer;
    std::vector<PrimExpr> shape;
    for (const PrimExpr& d : old->shape) shape.push_back(mutate(d));
    Buffer fresh =
        BufferNode::make_full(rename(old->data), old->dtype, std::move(shape), old->strides,
                              old->elem_offset, old->name, old->scope, old->data_alignment);
    buffers_[old.get()] = fresh;
    return AllocateNode::make(fresh, mutate(node->body));
  }

 private:
  Var rename(const Var& var) {
    Var fresh = VarNode::make(var->name, var->dtype);
    vars_[var.get()] = fresh;
    return fresh;
  }

  VarMap vars_;
  std::unordered_map<const BufferNode*, Buffer> buffers_;
};

}  // namespace anvil::tir::transform::detail
