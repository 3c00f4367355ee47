// Small pieces only the graph passes share: running a mutator over every graph function of a
// module, reading op attrs and counting uses. Helpers that other rooms use to build or read
// graph IR are public, in anvil/ir/builder.h.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <type_traits>
#include <unordered_map>

#include "anvil/ir/attrs/transform.h"
#include "anvil/ir/builder.h"
#include "anvil/ir/functor.h"
#include "anvil/ir/infer_type.h"
#include "anvil/ir/ir.h"
#include "anvil/ir/op.h"

namespace anvil::transform::detail {

// A mutator whose results keep the type of the expression they replace. Every rewrite of the
// passes preserves types, so a pass can read the type of any rewritten node without typing
// the half-built graph again; the module is typed afresh once the pass is done.
class TypedMutator : public ir::ExprMutator {
 public:
  ir::Expr mutate(const ir::Expr& e) override {
    ir::Expr result = ir::ExprMutator::mutate(e);
    if (result && e && !result->checked_type && e->checked_type)
      result->checked_type = e->checked_type;
    return result;
  }
};

// Types the module, rewrites each graph function with a fresh mutator made by make_mutator()
// or, when it takes one, make_mutator(function) (a mutator that looks over the whole function
// first); PrimFuncs pass through; types the result.
template <typename MakeMutator>
ir::IRModule mutate_graph_functions(const ir::IRModule& mod, MakeMutator make_mutator) {
  ir::IRModule typed = ir::infer_type(mod);
  ir::IRModule result;
  for (const auto& [name, func] : typed.functions()) {
    if (func->kind != ir::ExprKind::Function) {
      result.add(name, func);
      continue;
    }
    auto mutator = [&] {
      if constexpr (std::is_invocable_v<MakeMutator, const ir::Expr&>)
        return make_mutator(ir::Expr(func));
      else
        return make_mutator();
    }();
    ir::Expr rewritten = mutator.mutate(ir::Expr(func));
    const auto* fn = ir::as<ir::FunctionNode>(rewritten);
    ANVIL_ICHECK(fn, "a pass turned @", name, " into a ", ir::expr_kind_name(rewritten->kind));
    result.add(name, ir::BaseFunc(fn));
  }
  return ir::infer_type(result);
}

// A rewrite of one op's calls: given the call with its arguments already rewritten and the
// original expression (whose checked_type holds the call's type), the replacement, or nullopt
// to keep the call.
using CallRewrite =
    std::function<std::optional<ir::Expr>(const ir::CallNode& call, const ir::Expr& original)>;

// Rewrites every call of `op` in the module's graph functions, innermost first, by `rewrite`
// (SplitDilatedConv, Conv1dAsConv2d, Conv3dAsConv2d, WinogradConv2D), keeping types.
inline ir::IRModule rewrite_op_calls(const ir::IRModule& mod, std::string op, CallRewrite rewrite) {
  class Rewriter : public TypedMutator {
   public:
    Rewriter(const std::string& op, const CallRewrite& rewrite) : op_(op), rewrite_(rewrite) {}
    ir::Expr mutate_Call(const ir::CallNode* node, const ir::Expr& self) override {
      ir::Expr rewritten = TypedMutator::mutate_Call(node, self);
      const auto* call = ir::as<ir::CallNode>(rewritten);
      if (!call || !ir::op_call(rewritten, op_)) return rewritten;
      std::optional<ir::Expr> replaced = rewrite_(*call, self);
      return replaced ? *replaced : rewritten;
    }

   private:
    const std::string& op_;
    const CallRewrite& rewrite_;
  };
  return mutate_graph_functions(mod, [&] { return Rewriter(op, rewrite); });
}

// The attrs of an op call as T, the op's defaults when the call carries none.
template <typename T>
const T& attrs_or_default(const ir::CallNode& call) {
  const ir::AttrsNode* attrs = call.attrs ? call.attrs.get() : call.op()->def->default_attrs.get();
  const T* typed = dynamic_cast<const T*>(attrs);
  ANVIL_ICHECK(typed, "call of ", call.op()->name, " expects attrs ", T::kTypeKey);
  return *typed;
}

// True when every element of the tensor equals value.
inline bool all_elements_equal(const Tensor& t, double value) {
  for (int64_t i = 0; i < t.numel(); ++i)
    if (t.get_as_double(i) != value) return false;
  return true;
}

// A non-negative axis for rank, or nullopt when out of range.
inline std::optional<int64_t> normalize_axis(int64_t axis, int64_t rank) {
  int64_t wrapped = axis < 0 ? axis + rank : axis;
  if (wrapped < 0 || wrapped >= rank) return std::nullopt;
  return wrapped;
}

// The permutation of a transpose call over rank dims (empty axes reverse them), normalized, or
// nullopt when its axes are not a permutation of rank dims.
inline std::optional<std::vector<int64_t>> transpose_permutation(const ir::CallNode& transpose,
                                                                 int64_t rank) {
  std::vector<int64_t> axes = attrs_or_default<ir::TransposeAttrs>(transpose).axes;
  if (axes.empty())
    for (int64_t i = rank - 1; i >= 0; --i) axes.push_back(i);
  if (int64_t(axes.size()) != rank) return std::nullopt;
  std::vector<bool> seen(size_t(rank), false);
  for (int64_t& axis : axes) {
    std::optional<int64_t> normalized = normalize_axis(axis, rank);
    if (!normalized || seen[size_t(*normalized)]) return std::nullopt;
    axis = *normalized;
    seen[size_t(axis)] = true;
  }
  return axes;
}

// transpose(transpose(a, inner), outer) is transpose(a, composed): the permutation returned.
inline std::vector<int64_t> compose_transposes(const std::vector<int64_t>& inner,
                                               const std::vector<int64_t>& outer) {
  std::vector<int64_t> composed;
  for (int64_t axis : outer) composed.push_back(inner[size_t(axis)]);
  return composed;
}

// How many times each node is referred to from inside root; root itself counts once, as its
// user is outside.
inline std::unordered_map<const ir::ExprNode*, int> count_uses(const ir::Expr& root) {
  std::unordered_map<const ir::ExprNode*, int> uses;
  struct UseCounter : ir::ExprVisitor {
    std::unordered_map<const ir::ExprNode*, int>& uses;
    explicit UseCounter(std::unordered_map<const ir::ExprNode*, int>& u) : uses(u) {}
    void visit(const ir::Expr& e) override {
      if (!e) return;
      ++uses[e.get()];
      ir::ExprVisitor::visit(e);
    }
  } counter(uses);
  counter.visit(root);
  return uses;
}

// True for a fused group (Primitive=1), which the passes leave as it is.
inline bool is_primitive_function(const ir::Expr& e) {
  const auto* fn = ir::as<ir::FunctionNode>(e);
  return fn && fn->is_primitive();
}

}  // namespace anvil::transform::detail
