// Reductions over an empty set of elements (a reduced dim of extent 0) against the reference
// kernels, which follow ONNX opset 18: sums give 0, products 1, max the lowest value (-inf),
// min the highest (+inf), logsumexp -inf, all true and any false; float means are NaN and
// integer means 0.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "anvil/runtime/tensor.h"
#include "topi/topi_test_util.h"

namespace anvil {
namespace {

using topi_test::attrs;
using topi_test::check_op;
using topi_test::random_tensor;
using Axes = std::vector<int64_t>;

// The axis choices that fold nothing into each output element: the empty middle dim (kept and
// dropped), and every dim at once.
std::vector<ir::Attrs> empty_axis_choices(const std::string& op) {
  return {attrs(op, {{"axis", Axes{1}}, {"keepdims", true}}), attrs(op, {{"axis", Axes{-2}}}),
          attrs(op, {})};
}

TEST(ReduceEmpty, FloatFoldsGiveTheirIdentity) {
  Tensor x = random_tensor({2, 0, 5}, DataType::float32(), 1);
  for (const char* op :
       {"sum", "prod", "max", "min", "logsumexp", "mean", "l1_norm", "l2_norm", "sum_square"}) {
    SCOPED_TRACE(op);
    for (const ir::Attrs& a : empty_axis_choices(op)) check_op(op, {x}, a);
  }
}

TEST(ReduceEmpty, Float64AndHalfWidths) {
  for (DataType dtype : {DataType::float64(), DataType::float16(), DataType::bfloat16()}) {
    SCOPED_TRACE(dtype.to_string());
    Tensor x = random_tensor({3, 0}, dtype, 2);
    for (const char* op : {"max", "min", "logsumexp", "sum", "prod"})
      check_op(op, {x}, attrs(op, {{"axis", Axes{1}}}));
  }
}

TEST(ReduceEmpty, IntegerFoldsGiveTheirIdentity) {
  for (DataType dtype : {DataType::int32(), DataType::int8(), DataType::uint8()}) {
    SCOPED_TRACE(dtype.to_string());
    Tensor x = random_tensor({2, 0, 3}, dtype, 3, 0, 9);
    for (const char* op : {"sum", "prod", "max", "min", "mean", "l1_norm", "sum_square"})
      for (const ir::Attrs& a : empty_axis_choices(op)) check_op(op, {x}, a);
  }
}

TEST(ReduceEmpty, BoolFolds) {
  Tensor b = random_tensor({4, 0}, DataType::boolean(), 4);
  for (const char* op : {"all", "any", "max", "min"}) {
    SCOPED_TRACE(op);
    check_op(op, {b}, attrs(op, {{"axis", Axes{1}}}));
    check_op(op, {b}, attrs(op, {}));
  }
}

// Empty sets aside, a NaN in a line still wins: the NaN count is tested for being positive.
TEST(ReduceEmpty, NonEmptyLinesKeepTheirNaN) {
  Tensor x = random_tensor({3, 4}, DataType::float32(), 5);
  x.set_from_double(5, std::numeric_limits<double>::quiet_NaN());
  for (const char* op : {"max", "min", "logsumexp"})
    check_op(op, {x}, attrs(op, {{"axis", Axes{1}}}));
}

}  // namespace
}  // namespace anvil
