// unroll_loops: a loop marked Unrolled with a constant extent becomes its body
// repeated once per iteration, the loop variable replaced by its value. Each
// copy gets fresh variables and buffers for what it defines (inner loops,
// lets, allocations), so every variable keeps exactly one definition. Loops
// too long to unroll, or with a non-constant extent, become serial loops.
#include <unordered_map>

#include "anvil/support/error.h"
#include "anvil/tir/functor.h"
#include "anvil/tir/transform.h"

namespace anvil::tir::transform {

namespace {

// Beyond these the code grows more than unrolling can win back.
constexpr int64_t kMaxUnrollExtent = 64;
constexpr int64_t kMaxUnrolledStmts = 4096;

int64_t count_stmts(const Stmt& s) {
  int64_t count = 0;
  pre_order_visit(s, nullptr, [&](const Stmt&) { ++count; });
  return count;
}

// A copy of a statement with given variables replaced and everything it
// defines renamed.
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

class Unroller : public Mutator {
 public:
  Stmt mutate_For(const ForNode* node, const Stmt& self) override {
    Stmt loop = Mutator::mutate_For(node, self);
    if (node->for_kind != ForKind::Unrolled) return loop;
    const auto* rebuilt = as<ForNode>(loop);
    std::optional<int64_t> extent = as_const_int(rebuilt->extent);
    if (!extent || *extent > kMaxUnrollExtent ||
        *extent * count_stmts(rebuilt->body) > kMaxUnrolledStmts)
      return ForNode::make(rebuilt->loop_var, rebuilt->min, rebuilt->extent, ForKind::Serial,
                           rebuilt->body, rebuilt->annotations);
    std::vector<Stmt> copies;
    for (int64_t i = 0; i < *extent; ++i) {
      VarMap value{{rebuilt->loop_var.get(), rebuilt->min + make_int(i, rebuilt->loop_var->dtype)}};
      copies.push_back(FreshCopy(std::move(value)).mutate(rebuilt->body));
    }
    return seq_stmt(std::move(copies));
  }
};

}  // namespace

PrimFunc unroll_loops(const PrimFunc& func) {
  Stmt body = Unroller().mutate(func->body);
  return body.get() == func->body.get() ? func : func->with_body(body);
}

}  // namespace anvil::tir::transform
