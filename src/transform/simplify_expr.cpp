// SimplifyExpr: local algebraic clean-ups that leave every value the same. Arithmetic with
// an identity constant, shape ops that do not change the shape, casts to the same dtype and
// pairs of transposes, reshapes or layout transforms collapse into fewer ops. Earlier passes
// (layout alteration above all) leave such pairs behind where they meet.
#include <algorithm>
#include <numeric>

#include "anvil/ir/attrs/transform.h"
#include "anvil/ir/builder.h"
#include "anvil/transform/passes.h"
#include "transform/pass_util.h"

namespace anvil::transform {
namespace {

using ir::Expr;

bool same_type(const Expr& a, const Expr& b) {
  return a->checked_type && b->checked_type && ir::types_equal(a->checked_type, b->checked_type);
}

bool is_constant_filled_with(const Expr& e, double value) {
  const Tensor* data = ir::constant_data(e);
  return data && detail::all_elements_equal(*data, value);
}

class ExprSimplifier : public detail::TypedMutator {
 public:
  Expr mutate_Call(const ir::CallNode* node, const Expr& self) override {
    Expr current = TypedMutator::mutate_Call(node, self);
    // A rewrite may expose another (a merged transpose that is the identity): repeat until
    // nothing applies. Each step removes an op or keeps the count, so this ends.
    for (int step = 0; step < 8; ++step) {
      const auto* call = ir::as<ir::CallNode>(current);
      if (!call) break;
      if (!call->checked_type) call->checked_type = node->checked_type;
      Expr next = simplify(*call, current);
      if (next == current) break;
      if (!next->checked_type) next->checked_type = node->checked_type;
      current = next;
    }
    return current;
  }

  Expr mutate_Function(const ir::FunctionNode* node, const Expr& self) override {
    if (node->is_primitive()) return self;
    return TypedMutator::mutate_Function(node, self);
  }

 private:
  static Expr simplify(const ir::CallNode& call, const Expr& self) {
    const ir::OpNode* op = call.op();
    if (!op || call.args.empty()) return self;
    const std::string& name = op->name;
    const Expr& arg = call.args[0];
    if (name == "add" || name == "subtract" || name == "multiply" || name == "divide")
      return drop_identity_operand(call, self);
    if (name == "reshape" || name == "squeeze" || name == "expand_dims") {
      if (same_type(self, arg)) return arg;
      if (name == "reshape" && ir::op_call(arg, "reshape")) return merge_reshapes(call, self);
      return self;
    }
    if (name == "transpose") return simplify_transpose(call, self);
    if (name == "cast") {
      DataType target = detail::attrs_or_default<ir::CastAttrs>(call).dtype;
      return ir::tensor_dtype(arg) == target ? arg : self;
    }
    if (name == "layout_transform") return cancel_layout_transforms(call, self);
    return self;
  }

  // x + 0, 0 + x, x - 0, x * 1, 1 * x, x / 1 -> x, when x already has the result's shape
  // and dtype (a constant that broadcasts x to a larger shape must stay).
  static Expr drop_identity_operand(const ir::CallNode& call, const Expr& self) {
    if (call.args.size() != 2) return self;
    const std::string& name = call.op()->name;
    const Expr& lhs = call.args[0];
    const Expr& rhs = call.args[1];
    double identity = (name == "add" || name == "subtract") ? 0.0 : 1.0;
    bool commutative = name == "add" || name == "multiply";
    if (is_constant_filled_with(rhs, identity) && same_type(self, lhs)) return lhs;
    if (commutative && is_constant_filled_with(lhs, identity) && same_type(self, rhs)) return rhs;
    return self;
  }

  // reshape(reshape(x)) -> reshape(x) to the final shape, when that shape is static.
  static Expr merge_reshapes(const ir::CallNode& call, const Expr& self) {
    std::optional<std::vector<int64_t>> shape = ir::static_shape(self);
    if (!shape) return self;
    const ir::CallNode& inner = *ir::op_call(call.args[0], "reshape");
    auto attrs = ir::make_attrs<ir::ReshapeAttrs>();
    attrs->newshape = *shape;
    // A literal 0 in the target shape would otherwise mean "copy the input dim".
    attrs->allowzero = std::find(shape->begin(), shape->end(), 0) != shape->end();
    return ir::call_op("reshape", {inner.args[0]}, attrs);
  }

  // transpose(transpose(x, p), q) -> transpose(x, p after q); identity transposes vanish.
  static Expr simplify_transpose(const ir::CallNode& call, const Expr& self) {
    const auto* in_type = ir::as<ir::TensorTypeNode>(call.args[0]->checked_type);
    if (!in_type || !in_type->has_shape()) return self;
    int64_t rank = in_type->ndim();
    std::optional<std::vector<int64_t>> outer = detail::transpose_permutation(call, rank);
    if (!outer) return self;
    std::vector<int64_t> identity(static_cast<size_t>(rank));
    std::iota(identity.begin(), identity.end(), 0);
    if (*outer == identity) return call.args[0];
    const ir::CallNode* inner_call = ir::op_call(call.args[0], "transpose");
    if (!inner_call) return self;
    std::optional<std::vector<int64_t>> inner = detail::transpose_permutation(*inner_call, rank);
    if (!inner) return self;
    std::vector<int64_t> composed = detail::compose_transposes(*inner, *outer);
    if (composed == identity) return inner_call->args[0];
    return ir::transpose(inner_call->args[0], std::move(composed));
  }

  // layout_transform(A -> A) and layout_transform(layout_transform(x, A -> B), B -> A) -> x.
  static Expr cancel_layout_transforms(const ir::CallNode& call, const Expr& self) {
    const auto& outer = detail::attrs_or_default<ir::LayoutTransformAttrs>(call);
    if (outer.src_layout == outer.dst_layout && same_type(self, call.args[0])) return call.args[0];
    const ir::CallNode* inner_call = ir::op_call(call.args[0], "layout_transform");
    if (!inner_call) return self;
    const auto& inner = detail::attrs_or_default<ir::LayoutTransformAttrs>(*inner_call);
    bool cancel = inner.dst_layout == outer.src_layout && inner.src_layout == outer.dst_layout;
    if (cancel && same_type(self, inner_call->args[0])) return inner_call->args[0];
    return self;
  }
};

}  // namespace

ir::IRModule simplify_expr(const ir::IRModule& mod) {
  return detail::mutate_graph_functions(mod, [] { return ExprSimplifier(); });
}

}  // namespace anvil::transform
