// Reference kernels of the reduction family on small hand-computed cases:
// axis lists, keepdims, exclude, empty sets, exact integer arithmetic,
// argmax ties, and axes given at run time.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "anvil/ir/attrs/reduce.h"
#include "anvil/ir/infer_type.h"
#include "anvil/ir/op.h"
#include "reference/kernel_util.h"

namespace anvil::reference {
namespace {

using namespace ir;

const DataType f32 = DataType::float32();
const double kInf = std::numeric_limits<double>::infinity();

Tensor tensor_of(std::vector<int64_t> shape, std::vector<double> values, DataType dtype = f32) {
  return from_doubles(values, std::move(shape), dtype);
}

// Types a call of op on constant inputs and runs its reference kernel.
std::vector<Tensor> run_op(std::string_view op, std::vector<Tensor> inputs, Attrs attrs = nullptr) {
  std::vector<Expr> args;
  for (const Tensor& t : inputs) args.push_back(ConstantNode::make(t));
  Call call = call_op(op, args, attrs);
  infer_expr_type(call);
  return evaluate_call(*call, inputs);
}

Tensor run_one(std::string_view op, std::vector<Tensor> inputs, Attrs attrs = nullptr) {
  std::vector<Tensor> out = run_op(op, std::move(inputs), std::move(attrs));
  EXPECT_EQ(out.size(), 1u);
  return out.at(0);
}

Ref<ReduceAttrs> reduce_attrs(std::vector<int64_t> axis, bool keepdims = false,
                              bool exclude = false) {
  auto attrs = make_attrs<ReduceAttrs>();
  attrs->axis = std::move(axis);
  attrs->keepdims = keepdims;
  attrs->exclude = exclude;
  return attrs;
}

Ref<ArgReduceAttrs> arg_attrs(std::vector<int64_t> axis, bool keepdims, bool select_last) {
  auto attrs = make_attrs<ArgReduceAttrs>();
  attrs->axis = std::move(axis);
  attrs->keepdims = keepdims;
  attrs->select_last_index = select_last;
  return attrs;
}

// [[1, 2, 3], [4, 5, 6]]
Tensor two_by_three() { return tensor_of({2, 3}, {1, 2, 3, 4, 5, 6}); }

TEST(ReduceKernels, SumOverListedAxesWithAndWithoutKeepdims) {
  Tensor rows = run_one("sum", {two_by_three()}, reduce_attrs({1}));
  EXPECT_EQ(rows.shape_vector(), (std::vector<int64_t>{2}));
  EXPECT_EQ(to_doubles(rows), (std::vector<double>{6, 15}));
  Tensor cols = run_one("sum", {two_by_three()}, reduce_attrs({-2}, true));
  EXPECT_EQ(cols.shape_vector(), (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(to_doubles(cols), (std::vector<double>{5, 7, 9}));
  Tensor all = run_one("sum", {two_by_three()});
  EXPECT_EQ(all.ndim(), 0);
  EXPECT_EQ(to_doubles(all), (std::vector<double>{21}));
}

TEST(ReduceKernels, ExcludeReducesTheUnlistedAxes) {
  // Shape (2, 2, 2): keep axis 1, reduce axes 0 and 2.
  Tensor x = tensor_of({2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  Tensor out = run_one("sum", {x}, reduce_attrs({1}, false, true));
  EXPECT_EQ(to_doubles(out), (std::vector<double>{1 + 2 + 5 + 6, 3 + 4 + 7 + 8}));
}

TEST(ReduceKernels, MeanMaxMinProdAndNorms) {
  Tensor x = tensor_of({2, 2}, {-3, 4, 2, -0.5});
  EXPECT_EQ(to_doubles(run_one("mean", {x}, reduce_attrs({1}))), (std::vector<double>{0.5, 0.75}));
  EXPECT_EQ(to_doubles(run_one("max", {x}, reduce_attrs({0}))), (std::vector<double>{2, 4}));
  EXPECT_EQ(to_doubles(run_one("min", {x}, reduce_attrs({0}))), (std::vector<double>{-3, -0.5}));
  EXPECT_EQ(to_doubles(run_one("prod", {x}, reduce_attrs({1}))), (std::vector<double>{-12, -1}));
  EXPECT_EQ(to_doubles(run_one("l1_norm", {x}, reduce_attrs({1}))), (std::vector<double>{7, 2.5}));
  EXPECT_EQ(to_doubles(run_one("sum_square", {x}, reduce_attrs({1}))),
            (std::vector<double>{25, 4.25}));
  EXPECT_EQ(to_doubles(run_one("l2_norm", {x}, reduce_attrs({1})))[0], 5.0);
}

TEST(ReduceKernels, LogSumExpIsStableForLargeValues) {
  // log(e^1000 + e^1000) = 1000 + log 2; a naive exp would overflow.
  Tensor x = tensor_of({2}, {1000, 1000}, DataType::float64());
  EXPECT_DOUBLE_EQ(to_doubles(run_one("logsumexp", {x}))[0], 1000 + std::log(2.0));
}

TEST(ReduceKernels, EmptySetsGiveTheIdentityOfEachReduction) {
  // Shape (2, 0, 3) reduced over the empty axis 1, as ONNX opset 18 defines it.
  Tensor x = Tensor::empty({2, 0, 3}, f32);
  auto attrs = reduce_attrs({1}, true);
  auto first = [&](const char* op) {
    Tensor out = run_one(op, {x}, attrs);
    EXPECT_EQ(out.shape_vector(), (std::vector<int64_t>{2, 1, 3})) << op;
    return to_doubles(out)[0];
  };
  EXPECT_EQ(first("sum"), 0);
  EXPECT_EQ(first("prod"), 1);
  EXPECT_EQ(first("max"), -kInf);
  EXPECT_EQ(first("min"), kInf);
  EXPECT_EQ(first("l1_norm"), 0);
  EXPECT_EQ(first("l2_norm"), 0);
  EXPECT_EQ(first("sum_square"), 0);
  EXPECT_EQ(first("logsumexp"), -kInf);
  EXPECT_TRUE(std::isnan(first("mean")));
  // Integers have no infinity: the lowest and highest values of the dtype.
  Tensor ints = Tensor::empty({0, 2}, DataType::int32());
  EXPECT_EQ(to_int64s(run_one("max", {ints}, reduce_attrs({0})))[0],
            std::numeric_limits<int32_t>::min());
  EXPECT_EQ(to_int64s(run_one("min", {ints}, reduce_attrs({0})))[0],
            std::numeric_limits<int32_t>::max());
}

TEST(ReduceKernels, IntegerReductionsAreExact) {
  // 2^53 + 1 is not a double; an int64 sum keeps it.
  int64_t big = (int64_t(1) << 53);
  Tensor x = from_int64s({big, 1}, {2}, DataType::int64());
  EXPECT_EQ(to_int64s(run_one("sum", {x}))[0], big + 1);
  // (2^31 + 1)^2 = 2^62 + 2^32 + 1, again beyond a double's 53 bits.
  Tensor y = from_int64s({2147483649, 2147483649}, {2}, DataType::int64());
  EXPECT_EQ(to_int64s(run_one("prod", {y}))[0], int64_t(4611686022722355201));
  // Integer means truncate toward zero, as numpy's mean(...).astype(int).
  Tensor z = from_int64s({-1, -2, 1, 2}, {2, 2}, DataType::int32());
  Tensor mean = run_one("mean", {z}, reduce_attrs({1}));
  EXPECT_EQ(mean.dtype(), DataType::int32());
  EXPECT_EQ(to_int64s(mean), (std::vector<int64_t>{-1, 1}));
}

TEST(ReduceKernels, BoolReductions) {
  Tensor b = from_int64s({1, 0, 1, 1}, {2, 2}, DataType::boolean());
  EXPECT_EQ(to_int64s(run_one("all", {b}, reduce_attrs({1}))), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(to_int64s(run_one("any", {b}, reduce_attrs({0}))), (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(to_int64s(run_one("max", {b}, reduce_attrs({1}))), (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(to_int64s(run_one("min", {b}, reduce_attrs({1}))), (std::vector<int64_t>{0, 1}));
}

TEST(ReduceKernels, MaxPropagatesNaN) {
  double nan = std::numeric_limits<double>::quiet_NaN();
  Tensor x = tensor_of({3}, {1, nan, 2});
  EXPECT_TRUE(std::isnan(to_doubles(run_one("max", {x}))[0]));
  EXPECT_TRUE(std::isnan(to_doubles(run_one("min", {x}))[0]));
}

TEST(ReduceKernels, ArgMaxAndArgMinBreakTiesFirstOrLast) {
  // [[2, 7, 7], [5, 1, 1]]
  Tensor x = tensor_of({2, 3}, {2, 7, 7, 5, 1, 1});
  Tensor first = run_one("argmax", {x}, arg_attrs({1}, false, false));
  EXPECT_EQ(first.dtype(), DataType::int64());
  EXPECT_EQ(to_int64s(first), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(to_int64s(run_one("argmax", {x}, arg_attrs({1}, false, true))),
            (std::vector<int64_t>{2, 0}));
  EXPECT_EQ(to_int64s(run_one("argmin", {x}, arg_attrs({1}, false, false))),
            (std::vector<int64_t>{0, 1}));
  Tensor last = run_one("argmin", {x}, arg_attrs({-1}, true, true));
  EXPECT_EQ(last.shape_vector(), (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(to_int64s(last), (std::vector<int64_t>{0, 2}));
  EXPECT_EQ(to_int64s(run_one("argmax", {x}, arg_attrs({0}, true, false))),
            (std::vector<int64_t>{1, 0, 0}));
}

TEST(ReduceKernels, ArgMaxOverSeveralAxesGivesTheRowMajorIndex) {
  // The largest of a (2, 2) block sits at (1, 0): row-major index 2.
  Tensor x = tensor_of({2, 2}, {1, 3, 9, 4});
  EXPECT_EQ(to_int64s(run_one("argmax", {x}, arg_attrs({}, false, false))),
            (std::vector<int64_t>{2}));
}

TEST(ReduceKernels, VarianceAndStdTakeTheMean) {
  // Rows [1, 2, 3, 4] and [2, 2, 2, 2]: population variances 1.25 and 0.
  Tensor x = tensor_of({2, 4}, {1, 2, 3, 4, 2, 2, 2, 2});
  Tensor mean = run_one("mean", {x}, reduce_attrs({1}, true));
  auto attrs = make_attrs<VarianceAttrs>();
  attrs->axis = {1};
  EXPECT_EQ(to_doubles(run_one("variance", {x, mean}, attrs)), (std::vector<double>{1.25, 0}));
  attrs->unbiased = true;
  std::vector<double> sd = to_doubles(run_one("std", {x, mean}, attrs));
  EXPECT_NEAR(sd[0], std::sqrt(5.0 / 3.0), 1e-6);
  EXPECT_EQ(sd[1], 0);
}

TEST(ReduceKernels, DynamicAxesComeFromATensor) {
  Tensor axes = from_int64s({-1}, {1}, DataType::int64());
  Tensor out = run_one("dyn.sum", {two_by_three(), axes}, reduce_attrs({}, true));
  EXPECT_EQ(out.shape_vector(), (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(to_doubles(out), (std::vector<double>{6, 15}));
  Tensor both = from_int64s({1, 0}, {2}, DataType::int32());
  EXPECT_EQ(to_doubles(run_one("dyn.max", {two_by_three(), both})), (std::vector<double>{6}));
  Tensor bad = from_int64s({2}, {1}, DataType::int64());
  EXPECT_THROW(run_one("dyn.sum", {two_by_three(), bad}), Error);
  Tensor twice = from_int64s({0, -2}, {2}, DataType::int64());
  EXPECT_THROW(run_one("dyn.sum", {two_by_three(), twice}), Error);
}

TEST(ReduceKernels, EveryReductionOpHasAKernel) {
  for (const char* op : {"sum", "mean", "prod", "max", "min", "all", "any", "logsumexp", "l1_norm",
                         "l2_norm", "sum_square", "argmax", "argmin", "variance", "std", "dyn.sum",
                         "dyn.logsumexp", "dyn.sum_square"})
    EXPECT_NE(find_kernel(op), nullptr) << op;
}

}  // namespace
}  // namespace anvil::reference
