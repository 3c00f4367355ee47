// SinkTransposes: a transpose moves below the elementwise ops and pads that read it, towards a
// consumer that undoes it, where the two cancel.
//
//   f(transpose(a, p), c)  ->  transpose(f(a, c'), p)      c' = c laid out as a is (constants)
//   pad(transpose(a, p))   ->  transpose(pad'(a), p)       pad' = the widths in a's axis order
//   bias_add(transpose(a, p), b, axis k)  ->  transpose(bias_add(a, b, axis p[k]), p)
//   transpose(transpose(a, p), q)  ->  transpose(a, p after q), nothing when that is the identity
//
// Passes that change an op's layout leave a transpose after it and the inverse before the next
// one: Conv3dAsConv2d moves depth next to the batch and back around every 3-D convolution, and
// graphs exported from channels-last frameworks carry NHWC <-> NCHW pairs around each layer.
// Between the two sit a bias, an activation, a residual add or a pad, each a full pass over the
// tensor that the transposes double. Once sunk, the pairs meet and vanish, and the ops between
// run in the first op's layout.
//
// A transpose of a value with several consumers moves into each consumer that takes it; one
// that cannot (a reduction, a reshape) keeps reading the original. That can leave more
// transposed elements than before (two consumers that cannot absorb theirs), so a function
// keeps the rewrite only when it transposes fewer elements than it did.
#include <optional>
#include <vector>

#include "anvil/ir/attrs/nn.h"
#include "anvil/ir/builder.h"
#include "anvil/reference/reference.h"
#include "anvil/transform/passes.h"
#include "transform/pass_util.h"

namespace anvil::transform {
namespace {

using ir::Expr;
using Permutation = std::vector<int64_t>;

// The permutation of a transpose call, or nullopt when its input's rank is unknown or its
// axes are not a permutation.
std::optional<Permutation> permutation_of(const ir::CallNode& call) {
  const auto* in = ir::as<ir::TensorTypeNode>(call.args[0]->checked_type);
  if (!in || !in->has_shape()) return std::nullopt;
  return detail::transpose_permutation(call, in->ndim());
}

Permutation inverse(const Permutation& p) {
  Permutation inv(p.size());
  for (size_t k = 0; k < p.size(); ++k) inv[size_t(p[k])] = int64_t(k);
  return inv;
}

bool is_identity(const Permutation& p) {
  for (size_t k = 0; k < p.size(); ++k)
    if (p[k] != int64_t(k)) return false;
  return true;
}

// The data of `in` transposed by q (out's axis k is in's axis q[k]), by the reference kernel of
// transpose, as constant folding would.
Tensor transposed_data(const Tensor& in, const Permutation& q) {
  std::vector<ir::Dim> dims;
  for (int64_t axis : q) dims.push_back(ir::Dim(in.shape()[size_t(axis)]));
  Expr call = ir::transpose(ir::ConstantNode::make(in), q);
  call->checked_type = ir::TensorTypeNode::make(std::move(dims), in.dtype());
  return reference::evaluate_call(*ir::as<ir::CallNode>(call), {&in, 1})[0];
}

// The elementwise ops a transpose passes through: the table's elementwise and broadcast ops
// whose attrs (if any) name no axis.
bool commutes_with_transpose(const ir::OpNode& op) {
  const ir::OpDef& def = *op.def;
  if (def.pattern != ir::OpPattern::ElemWise && def.pattern != ir::OpPattern::Broadcast)
    return false;
  if (!def.default_attrs) return true;
  return op.name == "cast" || op.name == "clip" || op.name == "nn.leaky_relu";
}

// `shape` (the transposed value's) in the untransposed order.
ir::Type untransposed_type(const ir::Type& transposed, const Permutation& p) {
  const auto* t = ir::as<ir::TensorTypeNode>(transposed);
  if (!t || !t->has_shape()) return {};
  const Permutation inv = inverse(p);
  std::vector<ir::Dim> dims;
  for (size_t k = 0; k < p.size(); ++k) dims.push_back((*t->shape)[size_t(inv[k])]);
  return ir::TensorTypeNode::make(std::move(dims), t->dtype);
}

class TransposeSinker : public detail::TypedMutator {
 public:
  Expr mutate_Call(const ir::CallNode* node, const Expr& self) override {
    Expr rewritten = TypedMutator::mutate_Call(node, self);
    const auto* call = ir::as<ir::CallNode>(rewritten);
    if (!call || !call->op() || call->args.empty()) return rewritten;
    if (!rewritten->checked_type) rewritten->checked_type = node->checked_type;
    const std::string& name = call->op()->name;
    if (name == "transpose") return merge_transposes(*call, rewritten);
    if (name == "nn.pad") return sink_through_pad(*call, rewritten);
    if (name == "nn.bias_add") return sink_through_bias_add(*call, rewritten);
    if (commutes_with_transpose(*call->op())) return sink_through_elementwise(*call, rewritten);
    return rewritten;
  }

  Expr mutate_Function(const ir::FunctionNode* node, const Expr& self) override {
    if (node->is_primitive()) return self;
    return TypedMutator::mutate_Function(node, self);
  }

 private:
  // The transpose behind e, with its permutation, when e is one.
  std::optional<std::pair<const ir::CallNode*, Permutation>> transpose_behind(const Expr& e) {
    const ir::CallNode* t = ir::op_call(e, "transpose");
    if (!t) return std::nullopt;
    std::optional<Permutation> p = permutation_of(*t);
    if (!p) return std::nullopt;
    return std::make_pair(t, *p);
  }

  Expr typed_transpose(const Expr& x, const Permutation& p, const ir::Type& type) {
    Expr t = ir::transpose(x, p);
    t->checked_type = type;
    return t;
  }

  Expr merge_transposes(const ir::CallNode& call, const Expr& self) {
    auto outer = transpose_behind(self);
    auto inner = outer ? transpose_behind(call.args[0]) : std::nullopt;
    if (!inner) return self;
    const Permutation composed = detail::compose_transposes(inner->second, outer->second);
    const Expr& source = inner->first->args[0];
    if (is_identity(composed)) return source;
    return typed_transpose(source, composed, self->checked_type);
  }

  Expr sink_through_pad(const ir::CallNode& call, const Expr& self) {
    auto t = transpose_behind(call.args[0]);
    if (!t) return self;
    const auto& a = detail::attrs_or_default<ir::PadAttrs>(call);
    const Permutation& p = t->second;
    if (a.pad_width.size() != 2 * p.size()) return self;
    auto attrs = ir::make_attrs<ir::PadAttrs>();
    attrs->pad_width = a.pad_width;
    attrs->pad_mode = a.pad_mode;
    for (size_t k = 0; k < p.size(); ++k) {
      attrs->pad_width[2 * size_t(p[k])] = a.pad_width[2 * k];
      attrs->pad_width[2 * size_t(p[k]) + 1] = a.pad_width[2 * k + 1];
    }
    std::vector<Expr> args = call.args;
    args[0] = t->first->args[0];
    Expr padded = ir::call_op("nn.pad", args, ir::Attrs(attrs));
    padded->checked_type = untransposed_type(self->checked_type, p);
    return typed_transpose(padded, p, self->checked_type);
  }

  // bias_add(transpose(a, p), b, axis k) -> transpose(bias_add(a, b, axis p[k]), p): the bias
  // is one vector along a single axis, wherever that axis sits.
  Expr sink_through_bias_add(const ir::CallNode& call, const Expr& self) {
    auto t = transpose_behind(call.args[0]);
    if (!t || call.args.size() != 2) return self;
    const Permutation& p = t->second;
    std::optional<int64_t> axis = detail::normalize_axis(
        detail::attrs_or_default<ir::BiasAddAttrs>(call).axis, int64_t(p.size()));
    if (!axis) return self;
    auto attrs = ir::make_attrs<ir::BiasAddAttrs>();
    attrs->axis = p[size_t(*axis)];
    Expr added = ir::call_op("nn.bias_add", {t->first->args[0], call.args[1]}, ir::Attrs(attrs));
    added->checked_type = untransposed_type(self->checked_type, p);
    return typed_transpose(added, p, self->checked_type);
  }

  // f(transpose(a, p), ..., c, ...) with every operand of the output's rank a transpose by
  // the same p, and every other one a constant (laid out anew) or a scalar.
  Expr sink_through_elementwise(const ir::CallNode& call, const Expr& self) {
    const auto* out = ir::as<ir::TensorTypeNode>(self->checked_type);
    if (!out || !out->has_shape()) return self;
    const size_t rank = size_t(out->ndim());
    std::optional<Permutation> p;
    for (const Expr& arg : call.args) {
      auto t = transpose_behind(arg);
      if (!t) continue;
      if (p && *p != t->second) return self;
      p = t->second;
    }
    if (!p || p->size() != rank) return self;
    const Permutation inv = inverse(*p);
    std::vector<Expr> args;
    for (const Expr& arg : call.args) {
      if (auto t = transpose_behind(arg)) {
        args.push_back(t->first->args[0]);
        continue;
      }
      const auto* type = ir::as<ir::TensorTypeNode>(arg->checked_type);
      if (!type || !type->has_shape()) return self;
      if (type->ndim() == 0) {
        args.push_back(arg);
        continue;
      }
      const Tensor* data = ir::constant_data(arg);
      if (!data || size_t(type->ndim()) > rank) return self;
      // Broadcasting aligns trailing axes: lead with ones up to the output's rank first.
      std::vector<int64_t> shape = data->shape_vector();
      shape.insert(shape.begin(), rank - shape.size(), 1);
      args.push_back(ir::ConstantNode::make(transposed_data(data->view(shape), inv)));
    }
    Expr inner = ir::call_op(call.op()->name, args, call.attrs);
    inner->checked_type = untransposed_type(self->checked_type, *p);
    return typed_transpose(inner, *p, self->checked_type);
  }
};

// Elements moved by the transposes of a function (symbolic ones count their static dims).
int64_t transposed_elements(const Expr& body) {
  int64_t total = 0;
  ir::post_order_visit(body, [&](const Expr& e) {
    if (!ir::op_call(e, "transpose")) return;
    const auto* t = ir::as<ir::TensorTypeNode>(e->checked_type);
    if (!t || !t->has_shape()) return;
    int64_t n = 1;
    for (const ir::Dim& d : *t->shape) n *= d.is_static() ? d.int_value() : 1;
    total += n;
  });
  return total;
}

}  // namespace

ir::IRModule sink_transposes(const ir::IRModule& mod) {
  ir::IRModule typed = ir::infer_type(mod);
  ir::IRModule sunk = detail::mutate_graph_functions(typed, [] { return TransposeSinker(); });
  ir::IRModule result;
  for (const auto& [name, func] : typed.functions()) {
    const auto* before = ir::as<ir::FunctionNode>(Expr(func));
    const auto* after = ir::as<ir::FunctionNode>(Expr(sunk.find(name)));
    const bool better =
        before && after && transposed_elements(after->body) < transposed_elements(before->body);
    result.add(name, better ? sunk.find(name) : func);
  }
  return ir::infer_type(result);
}

}  // namespace anvil::transform
