// Small builders for the cost tests: typed variables, constants and typed op calls.
#pragma once

#include <string>
#include <vector>

#include "anvil/ir/infer_type.h"
#include "anvil/ir/ir.h"
#include "anvil/ir/op.h"

namespace anvil::analysis::testing {

inline ir::Var tensor_var(const std::string& name, std::vector<ir::Dim> shape,
                          DataType dtype = DataType::float32()) {
  return ir::VarNode::make(name, ir::TensorTypeNode::make(std::move(shape), dtype));
}

inline ir::Constant zeros_constant(std::vector<int64_t> shape,
                                   DataType dtype = DataType::float32()) {
  return ir::ConstantNode::make(Tensor::zeros(std::move(shape), dtype));
}

// A call of op on args, typed.
inline ir::Call typed_call(std::string_view op, std::vector<ir::Expr> args,
                           ir::Attrs attrs = nullptr) {
  ir::Call call = ir::call_op(op, std::move(args), std::move(attrs));
  ir::infer_expr_type(call);
  return call;
}

// Fresh attrs of type T with the fields that fill sets.
template <typename T, typename Fill>
ir::Attrs with(Fill fill) {
  Ref<T> attrs = ir::make_attrs<T>();
  fill(*attrs);
  return attrs;
}

}  // namespace anvil::analysis::testing
