// unroll_loops: a loop marked Unrolled with a constant extent becomes its body
// repeated once per iteration, the loop variable replaced by its value. Each
// copy gets fresh variables and buffers for what it defines (inner loops,
// lets, allocations), so every variable keeps exactly one definition. Loops
// too long to unroll, or with a non-constant extent, become serial loops.
#include <unordered_map>

#include "anvil/support/error.h"
#include "anvil/tir/functor.h"
#include "anvil/tir/transform.h"
#include "tir/transform/fresh_copy.h"

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
      copies.push_back(detail::FreshCopy(std::move(value)).mutate(rebuilt->body));
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
