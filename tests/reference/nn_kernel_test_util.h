// Helpers for the tests of the nn reference kernels: build tensors from
// values, run one op call through its reference kernel (typed by the op's
// relation, as the interpreter would see it), and read results back.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string_view>
#include <vector>

#include "anvil/ir/infer_type.h"
#include "anvil/ir/op.h"
#include "anvil/reference/reference.h"

namespace anvil::reference::testing {

using AttrList = std::vector<std::pair<std::string, ir::AttrValue>>;

// A tensor of the shape holding the values, converted to dtype.
inline Tensor make(std::vector<int64_t> shape, const std::vector<double>& values,
                   DataType dtype = DataType::float32()) {
  Tensor t = Tensor::empty(std::move(shape), dtype);
  EXPECT_EQ(t.numel(), int64_t(values.size()));
  for (size_t i = 0; i < values.size(); ++i) t.set_from_double(int64_t(i), values[i]);
  return t;
}

// 0, 1, 2, ... (or from `first`) in the given shape.
inline Tensor iota(std::vector<int64_t> shape, double first = 0,
                   DataType dtype = DataType::float32()) {
  std::vector<double> values(size_t(shape_numel(shape)));
  for (size_t i = 0; i < values.size(); ++i) values[i] = first + double(i);
  return make(std::move(shape), values, dtype);
}

inline std::vector<double> values(const Tensor& t) {
  std::vector<double> out;
  for (int64_t i = 0; i < t.numel(); ++i) out.push_back(t.get_as_double(i));
  return out;
}

// The tensor with its axes permuted: axis i of the result is axis perm[i] of t.
inline Tensor permute(const Tensor& t, const std::vector<size_t>& perm) {
  std::vector<int64_t> in_shape = t.shape_vector(), out_shape;
  for (size_t p : perm) out_shape.push_back(in_shape[p]);
  Tensor out = Tensor::empty(out_shape, t.dtype());
  for (int64_t flat = 0; flat < out.numel(); ++flat) {
    std::vector<int64_t> coord(out_shape.size());
    for (size_t i = out_shape.size(), rest = size_t(flat); i-- > 0;) {
      coord[i] = int64_t(rest % size_t(out_shape[i]));
      rest /= size_t(out_shape[i]);
    }
    int64_t source = 0;
    for (size_t i = 0; i < in_shape.size(); ++i) {
      size_t axis = size_t(std::find(perm.begin(), perm.end(), i) - perm.begin());
      source = source * in_shape[i] + coord[axis];
    }
    out.set_from_double(flat, t.get_as_double(source));
  }
  return out;
}

// Runs the op on the tensors with the given attrs; returns every output.
inline std::vector<Tensor> run_all(std::string_view op, const std::vector<Tensor>& inputs,
                                   const AttrList& attrs = {}) {
  std::vector<ir::Expr> args;
  for (size_t i = 0; i < inputs.size(); ++i)
    args.push_back(ir::VarNode::make(
        "x" + std::to_string(i),
        ir::TensorTypeNode::make(ir::to_dims(inputs[i].shape_vector()), inputs[i].dtype())));
  ir::Call call = ir::call_op(op, args, ir::make_op_attrs(op, attrs));
  ir::infer_expr_type(call);
  return evaluate_call(*call, inputs);
}

// Runs a single-output op.
inline Tensor run(std::string_view op, const std::vector<Tensor>& inputs,
                  const AttrList& attrs = {}) {
  std::vector<Tensor> out = run_all(op, inputs, attrs);
  EXPECT_EQ(out.size(), 1u);
  return out.at(0);
}

// Every element within 1e-5 (relative to the larger magnitude) of the expected value.
inline ::testing::AssertionResult near(const Tensor& got, const std::vector<double>& expected) {
  std::vector<double> v = values(got);
  if (v.size() != expected.size())
    return ::testing::AssertionFailure()
           << "got " << v.size() << " elements, expected " << expected.size();
  for (size_t i = 0; i < v.size(); ++i) {
    double tolerance = 1e-5 * std::max(1.0, std::fabs(expected[i]));
    if (!(std::fabs(v[i] - expected[i]) <= tolerance))
      return ::testing::AssertionFailure()
             << "element " << i << " is " << v[i] << ", expected " << expected[i];
  }
  return ::testing::AssertionSuccess();
}

}  // namespace anvil::reference::testing
