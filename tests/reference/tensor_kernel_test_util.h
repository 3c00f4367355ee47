// Helpers for the transform, index and creation kernel tests: small tensors
// from literal values, and running one op call on them through the kernel
// registry (typed by infer_type first, as the interpreter does).
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "anvil/ir/infer_type.h"
#include "anvil/ir/op.h"
#include "anvil/reference/reference.h"
#include "reference/kernel_util.h"

namespace anvil::reference::testing {

using Fields = std::vector<std::pair<std::string, ir::AttrValue>>;

// A tensor of the given shape and dtype holding the values in row-major order.
inline Tensor make_tensor(std::vector<int64_t> shape, const std::vector<double>& values,
                          DataType dtype = DataType::float32()) {
  return from_doubles(values, std::move(shape), dtype);
}

inline Tensor make_ints(std::vector<int64_t> shape, const std::vector<int64_t>& values,
                        DataType dtype = DataType::int64()) {
  return from_int64s(values, std::move(shape), dtype);
}

// An int64 vector of the values.
inline Tensor ints(const std::vector<int64_t>& values) {
  return make_ints({int64_t(values.size())}, values);
}

// The elements of a tensor in row-major order.
inline std::vector<double> values_of(const Tensor& t) { return to_doubles(t); }
inline std::vector<int64_t> ints_of(const Tensor& t) { return to_int64s(t); }

inline ir::Var var_for(const std::string& name, const Tensor& t) {
  return ir::VarNode::make(name,
                           ir::TensorTypeNode::make(ir::to_dims(t.shape_vector()), t.dtype()));
}

// Runs op on the inputs; with `tuple_argument`, all inputs form the op's one
// tuple argument (concatenate, einsum). Returns one tensor per output.
inline std::vector<Tensor> run_op(std::string_view op, const std::vector<Tensor>& inputs,
                                  const Fields& fields = {}, bool tuple_argument = false) {
  std::vector<ir::Expr> args;
  for (size_t i = 0; i < inputs.size(); ++i)
    args.push_back(var_for("x" + std::to_string(i), inputs[i]));
  if (tuple_argument) args = {ir::TupleNode::make(args)};
  ir::Call call = ir::call_op(op, args, ir::make_op_attrs(op, fields));
  ir::infer_expr_type(call);
  return evaluate_call(*call, inputs);
}

// The single output of run_op.
inline Tensor run1(std::string_view op, const std::vector<Tensor>& inputs,
                   const Fields& fields = {}, bool tuple_argument = false) {
  std::vector<Tensor> outputs = run_op(op, inputs, fields, tuple_argument);
  EXPECT_EQ(outputs.size(), 1u);
  return outputs.at(0);
}

// True when running the op throws anvil::Error whose message contains `word`.
inline ::testing::AssertionResult fails_with(std::string_view op, const std::vector<Tensor>& inputs,
                                             const Fields& fields, const std::string& word) {
  try {
    run_op(op, inputs, fields);
    return ::testing::AssertionFailure() << "no error";
  } catch (const Error& e) {
    std::string message = e.what();
    if (message.find(word) == std::string::npos)
      return ::testing::AssertionFailure() << "message lacks \"" << word << "\": " << message;
    return ::testing::AssertionSuccess();
  }
}

}  // namespace anvil::reference::testing
