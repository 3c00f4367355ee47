// The reduction computes (sum ... std, argmax/argmin) and the softmax family compiled and run
// against the reference kernels, over the axis / keepdims / exclude combinations of the attrs.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "anvil/ir/op.h"
#include "anvil/support/error.h"
#include "anvil/topi/topi.h"
#include "topi/topi_test_util.h"

namespace anvil {
namespace {

using topi_test::attrs;
using topi_test::check_group;
using topi_test::check_op;
using topi_test::random_tensor;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The axis choices every reduction is checked with: all axes, one (negative) axis, two axes
// kept as dims, and the complement of one axis.
std::vector<ir::Attrs> axis_choices(const std::string& op) {
  using Axes = std::vector<int64_t>;
  return {attrs(op, {}), attrs(op, {{"axis", Axes{-1}}}),
          attrs(op, {{"axis", Axes{0, 2}}, {"keepdims", true}}),
          attrs(op, {{"axis", Axes{1}}, {"exclude", true}})};
}

class ReduceFloat : public ::testing::TestWithParam<const char*> {};

TEST_P(ReduceFloat, AxisChoices) {
  const char* op = GetParam();
  Tensor x = random_tensor({3, 5, 7}, DataType::float32(), 1, 0.2, 2);
  for (const ir::Attrs& a : axis_choices(op)) check_op(op, {x}, a, {1e-5, 1e-5});
  check_op(op, {random_tensor({2, 9}, DataType::float64(), 2, -2, 2)},
           attrs(op, {{"axis", std::vector<int64_t>{1}}}));
}

// Innermost rows of 32 (two vectors of partial folds), 37 (with 5 left over) and 197 are folded
// in lanes, then across the lanes; the first row of the (2, 37) input holds its extreme in the
// tail, the second in the vectors (and its smallest value there too).
TEST_P(ReduceFloat, InnermostRowsFoldedInLanes) {
  const char* op = GetParam();
  using Axes = std::vector<int64_t>;
  check_op(op, {random_tensor({2, 32}, DataType::float32(), 3, 0.5, 1.5)},
           attrs(op, {{"axis", Axes{-1}}}), {1e-5, 1e-5});
  check_op(op, {random_tensor({2, 3, 197}, DataType::float32(), 3, 0.5, 1.5)},
           attrs(op, {{"axis", Axes{2}}, {"keepdims", true}}), {1e-5, 1e-5});
  Tensor peaks = random_tensor({2, 37}, DataType::float32(), 4, 0.5, 1.5);
  static_cast<float*>(peaks.data())[35] = 3;
  static_cast<float*>(peaks.data())[37 + 3] = 3;
  static_cast<float*>(peaks.data())[37 + 20] = 0.1f;
  check_op(op, {peaks}, attrs(op, {{"axis", Axes{1}}}), {1e-5, 1e-5});
}

// Several trailing axes whose innermost is whole vectors (a whole tensor, as
// DynamicQuantizeLinear's min and max, and the last two of three axes) fold in lanes as one
// flattened row; peaks in the second row and the last vector check the flattened positions
// (argmax / argmin report them).
TEST_P(ReduceFloat, TrailingAxesFoldedInLanes) {
  const char* op = GetParam();
  using Axes = std::vector<int64_t>;
  Tensor x = random_tensor({4, 64}, DataType::float32(), 5, 0.5, 1.5);
  static_cast<float*>(x.data())[64 + 17] = 3;
  static_cast<float*>(x.data())[3 * 64 + 63] = 0.1f;
  check_op(op, {x}, attrs(op, {}), {1e-5, 1e-5});
  check_op(op, {random_tensor({2, 3, 32}, DataType::float32(), 6, 0.5, 1.5)},
           attrs(op, {{"axis", Axes{1, 2}}, {"keepdims", true}}), {1e-5, 1e-5});
  // An innermost axis of no whole vectors keeps the plain fold.
  check_op(op, {random_tensor({5, 40}, DataType::float32(), 7, 0.5, 1.5)}, attrs(op, {}),
           {1e-5, 1e-5});
}

INSTANTIATE_TEST_SUITE_P(Reduce, ReduceFloat,
                         ::testing::Values("sum", "mean", "prod", "max", "min", "logsumexp",
                                           "l1_norm", "l2_norm", "sum_square", "argmax", "argmin"),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           return std::string(info.param);
                         });

TEST(ReduceInteger, ExactFolds) {
  Tensor x = random_tensor({3, 5, 7}, DataType::int32(), 3, -20, 20);
  for (const char* op : {"sum", "mean", "max", "min", "l1_norm", "sum_square", "argmax", "argmin"})
    for (const ir::Attrs& a : axis_choices(op)) check_op(op, {x}, a);
  // Narrow and wide integers: an int8 mean sums past int8's range before dividing.
  using Axes = std::vector<int64_t>;
  Tensor narrow = random_tensor({4, 9}, DataType::int8(), 4, -120, 120);
  Tensor wide = random_tensor({4, 9}, DataType::int64(), 5, -1000, 1000);
  for (const char* op : {"sum", "mean", "max", "argmin"}) {
    check_op(op, {narrow}, attrs(op, {{"axis", Axes{1}}}));
    check_op(op, {wide}, attrs(op, {{"axis", Axes{0}}}));
  }
  check_op("prod", {random_tensor({4, 6}, DataType::int32(), 6, -3, 3)},
           attrs("prod", {{"axis", Axes{1}}}));
  check_op("max", {random_tensor({4, 6}, DataType::uint8(), 7, 0, 250)});
}

TEST(ReduceBool, AllAnyMaxMin) {
  Tensor b = random_tensor({3, 5, 7}, DataType::boolean(), 6);
  for (const char* op : {"all", "any", "max", "min"})
    for (const ir::Attrs& a : axis_choices(op)) check_op(op, {b}, a);
}

TEST(ReduceNaN, MaxMinArgAndLogsumexp) {
  Tensor x = random_tensor({4, 6}, DataType::float32(), 7);
  x.set_from_double(3, kNaN);   // row 0
  x.set_from_double(14, kNaN);  // row 2, twice
  x.set_from_double(16, kNaN);
  x.set_from_double(20, std::numeric_limits<double>::infinity());  // row 3
  auto last_axis = std::vector<int64_t>{1};
  for (const char* op : {"max", "min", "logsumexp"})
    check_op(op, {x}, attrs(op, {{"axis", last_axis}}));
  for (const char* op : {"argmax", "argmin"}) {
    check_op(op, {x}, attrs(op, {{"axis", last_axis}}));
    check_op(op, {x}, attrs(op, {{"axis", last_axis}, {"select_last_index", true}}));
  }
}

TEST(ReduceArg, TiesAndSeveralAxes) {
  // Few distinct values so ties are common.
  Tensor x = random_tensor({3, 4, 5}, DataType::int32(), 8, -2, 2);
  using Axes = std::vector<int64_t>;
  for (const char* op : {"argmax", "argmin"}) {
    for (bool last : {false, true}) {
      check_op(op, {x}, attrs(op, {{"axis", Axes{1}}, {"select_last_index", last}}));
      check_op(op, {x}, attrs(op, {{"axis", Axes{0, 2}}, {"select_last_index", last}}));
      check_op(op, {x}, attrs(op, {{"select_last_index", last}, {"keepdims", true}}));
    }
  }
}

TEST(ReduceVariance, BiasedUnbiasedAndStd) {
  Tensor x = random_tensor({3, 5, 7}, DataType::float32(), 9);
  Tensor mean_keep = random_tensor({3, 1, 7}, DataType::float32(), 10);
  Tensor mean_all = random_tensor({1, 1, 1}, DataType::float32(), 11);
  using Axes = std::vector<int64_t>;
  for (const char* op : {"variance", "std"}) {
    check_op(op, {x, mean_keep}, attrs(op, {{"axis", Axes{1}}}));
    check_op(op, {x, mean_keep},
             attrs(op, {{"axis", Axes{1}}, {"unbiased", true}, {"keepdims", true}}));
    check_op(op, {x, mean_all}, attrs(op, {}));
  }
}

TEST(ReduceSoftmax, AlongEachAxis) {
  Tensor x = random_tensor({3, 5, 7}, DataType::float32(), 12, -5, 5);
  for (const char* op : {"nn.softmax", "nn.log_softmax", "nn.hardmax"}) {
    for (int64_t axis : {-1, 0, 1}) check_op(op, {x}, attrs(op, {{"axis", axis}}));
    check_op(op, {random_tensor({1, 17}, DataType::float64(), 13, -5, 5)});
  }
}

TEST(ReduceSoftmax, LongRowsWithATail) {
  // 197 = 12 vectors of partial folds and 5 left over (ViT's attention rows); 64 = 4 vectors.
  Tensor rows = random_tensor({2, 3, 197}, DataType::float32(), 15, -5, 5);
  for (const char* op : {"nn.softmax", "nn.log_softmax", "nn.hardmax"})
    check_op(op, {rows}, attrs(op, {{"axis", int64_t(-1)}}), {1e-5, 1e-6});
  check_op("nn.softmax", {random_tensor({3, 64}, DataType::float32(), 16, -5, 5)});
}

TEST(ReduceFused, LayerNormOverLongRows) {
  check_group(
      "fn (%x: Tensor[(5, 1, 96), float32]) { %0 = mean(%x, axis=[-1], keepdims=True); "
      "%1 = subtract(%x, %0); %2 = power(%1, 2f); %3 = mean(%2, axis=[-1], keepdims=True); "
      "%4 = add(%3, 1e-05f); %5 = sqrt(%4); divide(%1, %5) }",
      {}, {1e-5, 1e-5});
}

TEST(ReduceSoftmax, HardmaxTies) {
  Tensor x = random_tensor({4, 6}, DataType::float32(), 14, -2, 2);
  for (int64_t i = 0; i < x.numel(); ++i) x.set_from_double(i, std::round(x.get_as_double(i)));
  check_op("nn.hardmax", {x});
}

TEST(ReduceFused, WithElementwiseNeighbours) {
  check_group(
      "fn (%x: Tensor[(3, 10), float32], %b: Tensor[(10), float32]) { %0 = add(%x, %b); "
      "nn.softmax(%0) }");
  check_group(
      "fn (%x: Tensor[(4, 5, 6), float32]) { %0 = exp(%x); %1 = sum(%0, axis=[1], keepdims=True); "
      "divide(%0, %1) }");
  check_group(
      "fn (%x: Tensor[(2, 3, 8), float32]) { %0 = mean(%x, axis=[-1], keepdims=True); "
      "%1 = variance(%x, %0, axis=[-1]); sqrt(%1) }");
}

TEST(ReduceErrors, BadAxisNamesTheOp) {
  // The type relation rejects such calls first; the compute checks again for callers that
  // build calls without it.
  const topi::ComputeFn* compute = topi::find_compute("sum");
  ASSERT_NE(compute, nullptr);
  ir::Type type = ir::TensorTypeNode::make(std::vector<ir::Dim>{3, 4}, DataType::float32());
  ir::Call call = ir::call_op("sum", {ir::VarNode::make("x", type)},
                              attrs("sum", {{"axis", std::vector<int64_t>{2}}}));
  std::vector<te::Tensor> inputs = {
      te::placeholder({tir::make_int(3), tir::make_int(4)}, DataType::float32(), "x")};
  ir::Type out_type = ir::TensorTypeNode::make(std::vector<ir::Dim>{}, DataType::float32());
  topi::ComputeArgs args{*call, inputs, out_type};
  try {
    (*compute)(args);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "sum: axis 2 is out of range for rank 2");
  }
}

}  // namespace
}  // namespace anvil
