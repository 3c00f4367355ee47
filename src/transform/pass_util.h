// Small pieces the graph passes share: running a mutator over every graph function of a
// module, reading constants, and recognizing op calls.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

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
// (PrimFuncs pass through), and types the result.
template <typename MakeMutator>
ir::IRModule mutate_graph_functions(const ir::IRModule& mod, MakeMutator make_mutator) {
  ir::IRModule typed = ir::infer_type(mod);
  ir::IRModule result;
  for (const auto& [name, func] : typed.functions()) {
    if (func->kind != ir::ExprKind::Function) {
      result.add(name, func);
      continue;
    }
    auto mutator = make_mutator();
    ir::Expr rewritten = mutator.mutate(ir::Expr(func));
    const auto* fn = ir::as<ir::FunctionNode>(rewritten);
    ANVIL_ICHECK(fn, "a pass turned @", name, " into a ", ir::expr_kind_name(rewritten->kind));
    result.add(name, ir::BaseFunc(fn));
  }
  return ir::infer_type(result);
}

// The call when e calls the named op, else nullptr.
inline const ir::CallNode* op_call(const ir::Expr& e, std::string_view op_name) {
  const auto* call = ir::as<ir::CallNode>(e);
  if (!call) return nullptr;
  const ir::OpNode* op = call->op();
  return op && op->name == op_name ? call : nullptr;
}

// The attrs of an op call as T, the op's defaults when the call carries none.
template <typename T>
const T& attrs_or_default(const ir::CallNode& call) {
  const ir::AttrsNode* attrs = call.attrs ? call.attrs.get() : call.op()->def->default_attrs.get();
  const T* typed = dynamic_cast<const T*>(attrs);
  ANVIL_ICHECK(typed, "call of ", call.op()->name, " expects attrs ", T::kTypeKey);
  return *typed;
}

// The tensor of a constant, or nullptr.
inline const Tensor* constant_data(const ir::Expr& e) {
  const auto* constant = ir::as<ir::ConstantNode>(e);
  return constant ? &constant->data : nullptr;
}

// The static shape of a tensor-typed expression (from checked_type), or nullopt.
inline std::optional<std::vector<int64_t>> static_shape(const ir::Expr& e) {
  if (const Tensor* data = constant_data(e)) return data->shape_vector();
  const auto* type = e ? ir::as<ir::TensorTypeNode>(e->checked_type) : nullptr;
  if (!type) return std::nullopt;
  return type->static_shape();
}

// The dims of a tensor-typed expression (symbolic ones included), or nullopt when its rank is
// unknown or it is not a tensor.
inline std::optional<std::vector<ir::Dim>> shape_dims(const ir::Expr& e) {
  if (const Tensor* data = constant_data(e)) return ir::to_dims(data->shape_vector());
  const auto* type = e ? ir::as<ir::TensorTypeNode>(e->checked_type) : nullptr;
  if (!type || !type->shape) return std::nullopt;
  return *type->shape;
}

// The dtype of a tensor-typed expression, or nullopt.
inline std::optional<DataType> tensor_dtype(const ir::Expr& e) {
  if (const Tensor* data = constant_data(e)) return data->dtype();
  const auto* type = e ? ir::as<ir::TensorTypeNode>(e->checked_type) : nullptr;
  if (!type) return std::nullopt;
  return type->dtype;
}

// All elements in row-major order, widened to double.
inline std::vector<double> tensor_values(const Tensor& t) {
  std::vector<double> values(size_t(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) values[size_t(i)] = t.get_as_double(i);
  return values;
}

// A new tensor holding values (rounded to dtype).
inline Tensor make_tensor(const std::vector<double>& values, std::vector<int64_t> shape,
                          DataType dtype) {
  Tensor t = Tensor::empty(std::move(shape), dtype);
  ANVIL_ICHECK(size_t(t.numel()) == values.size(), "tensor of ", t.numel(), " elements from ",
               values.size(), " values");
  for (int64_t i = 0; i < t.numel(); ++i) t.set_from_double(i, values[size_t(i)]);
  return t;
}

// A scalar constant of dtype.
inline ir::Expr scalar_constant(double value, DataType dtype) {
  return ir::ConstantNode::make(make_tensor({value}, {}, dtype));
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

// Turns binding blocks and lets into a plain expression DAG: each bound var is replaced by
// its value, so the partition sees the data flow through them.
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

// layout_transform(x, src -> dst): x itself when the layouts are equal, x's source when x is
// itself the inverse transform (so transforms cancel where they meet).
inline ir::Expr transform_layout(const ir::Expr& x, const std::string& src,
                                 const std::string& dst) {
  if (src == dst) return x;
  if (const ir::CallNode* inner = op_call(x, "layout_transform"))
    if (ir::call_string_attr(*inner, "src_layout") == dst &&
        ir::call_string_attr(*inner, "dst_layout") == src)
      return inner->args[0];
  return ir::call_op(
      "layout_transform", {x},
      ir::make_op_attrs("layout_transform", {{"src_layout", src}, {"dst_layout", dst}}));
}

// strided_slice(x) over `axes` from begin to end (exclusive), step 1.
inline ir::Expr slice_axes(const ir::Expr& x, std::vector<int64_t> begin, std::vector<int64_t> end,
                           std::vector<int64_t> axes) {
  std::vector<int64_t> strides(axes.size(), 1);
  return ir::call_op("strided_slice", {x},
                     ir::make_op_attrs("strided_slice", {{"begin", std::move(begin)},
                                                         {"end", std::move(end)},
                                                         {"strides", std::move(strides)},
                                                         {"axes", std::move(axes)}}));
}

// body with every let and binding block inlined (functions it calls keep theirs).
inline ir::Expr inline_bindings(const ir::Expr& body) { return BindingInliner().mutate(body); }

}  // namespace anvil::transform::detail
