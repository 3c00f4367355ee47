// Type relations of the reduction family.
#include <gtest/gtest.h>

#include "anvil/ir/attrs/reduce.h"
#include "anvil/ir/printer.h"
#include "relation_test_util.h"

namespace anvil::ir {
namespace {

using testing::infer_call;
using testing::is_tensor;
using testing::pattern_of;
using testing::round_trips;
using testing::tensor_var;
using testing::type_error_mentions;

const DataType f32 = DataType::float32();
const DataType i32 = DataType::int32();
const DataType boolean = DataType::boolean();

Ref<ReduceAttrs> reduce_attrs(std::vector<int64_t> axis, bool keepdims = false,
                              bool exclude = false) {
  auto attrs = make_attrs<ReduceAttrs>();
  attrs->axis = std::move(axis);
  attrs->keepdims = keepdims;
  attrs->exclude = exclude;
  return attrs;
}

// Every op with ReduceAttrs, on a float input.
class ReduceOp : public ::testing::TestWithParam<const char*> {};

TEST_P(ReduceOp, AllAxesByDefault) {
  auto x = tensor_var("x", {2, 3, 4}, f32);
  EXPECT_TRUE(is_tensor(infer_call(GetParam(), {x}), {}, f32));
  EXPECT_TRUE(is_tensor(infer_call(GetParam(), {x}, reduce_attrs({}, true)), {1, 1, 1}, f32));
  EXPECT_EQ(pattern_of(GetParam()), OpPattern::CommReduce);
}

TEST_P(ReduceOp, ListedAxesWithKeepdimsAndNegativeAxes) {
  auto x = tensor_var("x", {2, 3, 4}, f32);
  EXPECT_TRUE(is_tensor(infer_call(GetParam(), {x}, reduce_attrs({1})), {2, 4}, f32));
  EXPECT_TRUE(is_tensor(infer_call(GetParam(), {x}, reduce_attrs({-1}, true)), {2, 3, 1}, f32));
  EXPECT_TRUE(is_tensor(infer_call(GetParam(), {x}, reduce_attrs({2, -3})), {3}, f32));
}

TEST_P(ReduceOp, ExcludeReducesTheOtherAxes) {
  auto x = tensor_var("x", {2, 3, 4}, f32);
  EXPECT_TRUE(is_tensor(infer_call(GetParam(), {x}, reduce_attrs({1}, false, true)), {3}, f32));
  EXPECT_TRUE(
      is_tensor(infer_call(GetParam(), {x}, reduce_attrs({-2}, true, true)), {1, 3, 1}, f32));
}

TEST_P(ReduceOp, SymbolicDimsFlowThrough) {
  Dim n = Dim::var("n"), m = Dim::var("m");
  auto x = tensor_var("x", {n, 3, m * 2}, f32);
  EXPECT_TRUE(is_tensor(infer_call(GetParam(), {x}, reduce_attrs({0})), {3, m * 2}, f32));
  EXPECT_TRUE(is_tensor(infer_call(GetParam(), {x}, reduce_attrs({1}, true)), {n, 1, m * 2}, f32));
}

TEST_P(ReduceOp, AxisErrors) {
  auto x = tensor_var("x", {2, 3, 4}, f32);
  EXPECT_TRUE(type_error_mentions(call_op(GetParam(), {x}, reduce_attrs({3})),
                                  {GetParam(), "axis", "3", "out of range", "rank 3"}));
  EXPECT_TRUE(type_error_mentions(call_op(GetParam(), {x}, reduce_attrs({-4})),
                                  {"axis", "-4", "out of range"}));
  EXPECT_TRUE(type_error_mentions(call_op(GetParam(), {x}, reduce_attrs({1, -2})),
                                  {"axis", "[1, -2]", "twice", "Tensor[(2, 3, 4), float32]"}));
}

INSTANTIATE_TEST_SUITE_P(Reduce, ReduceOp,
                         ::testing::Values("sum", "mean", "prod", "max", "min", "logsumexp",
                                           "l1_norm", "l2_norm", "sum_square"));

TEST(Reduce, PrintsAxesOnlyWhenGiven) {
  auto x = VarNode::make("x");
  PrintOptions options{.show_types = false};
  EXPECT_NE(print_expr(call_op("sum", {x}), options).find("sum(%x)"), std::string::npos);
  std::string text = print_expr(call_op("mean", {x}, reduce_attrs({1}, true)), options);
  EXPECT_NE(text.find("mean(%x, axis=[1], keepdims=True)"), std::string::npos) << text;
}

TEST(Reduce, AttrsRoundTripThroughText) {
  auto x = tensor_var("x", {2, 3, 4});
  EXPECT_TRUE(round_trips({x}, call_op("sum", {x})));
  EXPECT_TRUE(round_trips({x}, call_op("max", {x}, reduce_attrs({0, -1}, true, true))));
  auto arg = make_attrs<ArgReduceAttrs>();
  arg->axis = {1};
  arg->select_last_index = true;
  EXPECT_TRUE(round_trips({x}, call_op("argmin", {x}, arg)));
  auto var = make_attrs<VarianceAttrs>();
  var->axis = {2};
  var->unbiased = true;
  auto mean = tensor_var("mean", {2, 3, 1});
  EXPECT_TRUE(round_trips({x, mean}, call_op("variance", {x, mean}, var)));
}

TEST(Reduce, ScalarInputReducesToScalar) {
  auto s = tensor_var("s", {}, f32);
  EXPECT_TRUE(is_tensor(infer_call("sum", {s}), {}, f32));
}

TEST(Reduce, DtypeRules) {
  auto i = tensor_var("i", {4, 5}, i32);
  auto b = tensor_var("b", {4, 5}, boolean);
  for (const char* op : {"sum", "mean", "prod", "l1_norm", "sum_square"}) {
    EXPECT_TRUE(is_tensor(infer_call(op, {i}, reduce_attrs({0})), {5}, i32)) << op;
    EXPECT_TRUE(type_error_mentions(call_op(op, {b}), {"numeric", "bool"})) << op;
  }
  for (const char* op : {"max", "min"}) {
    EXPECT_TRUE(is_tensor(infer_call(op, {b}, reduce_attrs({1})), {4}, boolean)) << op;
  }
  for (const char* op : {"logsumexp", "l2_norm"}) {
    EXPECT_TRUE(type_error_mentions(call_op(op, {i}), {"floating-point", "int32"})) << op;
  }
}

TEST(Reduce, AllAndAnyNeedBool) {
  auto b = tensor_var("b", {Dim::var("n"), 5}, boolean);
  auto f = tensor_var("f", {5}, f32);
  for (const char* op : {"all", "any"}) {
    EXPECT_TRUE(is_tensor(infer_call(op, {b}, reduce_attrs({-1})), {Dim::var("n")}, boolean));
    EXPECT_TRUE(type_error_mentions(call_op(op, {f}), {"bool", "float32"})) << op;
    EXPECT_EQ(pattern_of(op), OpPattern::CommReduce);
  }
}

TEST(Reduce, RejectsUnknownRank) {
  auto x = VarNode::make("x", TensorTypeNode::make_unknown_rank(f32));
  EXPECT_TRUE(type_error_mentions(call_op("sum", {x}), {"argument 'data'", "known rank"}));
}

// ---------------------------------------------------------------- argmax, argmin

class ArgReduceOp : public ::testing::TestWithParam<const char*> {};

TEST_P(ArgReduceOp, ReturnsInt64Indices) {
  Dim n = Dim::var("n");
  auto x = tensor_var("x", {n, 10}, f32);
  auto attrs = make_attrs<ArgReduceAttrs>();
  attrs->axis = {-1};
  EXPECT_TRUE(is_tensor(infer_call(GetParam(), {x}, attrs), {n}, DataType::int64()));
  auto keep = make_attrs<ArgReduceAttrs>();
  keep->axis = {1};
  keep->keepdims = true;
  keep->select_last_index = true;
  EXPECT_TRUE(is_tensor(infer_call(GetParam(), {x}, keep), {n, 1}, DataType::int64()));
  EXPECT_TRUE(is_tensor(infer_call(GetParam(), {x}), {}, DataType::int64()));
  auto i = tensor_var("i", {3, 4}, DataType::int8());
  auto other = make_attrs<ArgReduceAttrs>();
  other->axis = {0};
  other->exclude = true;
  EXPECT_TRUE(is_tensor(infer_call(GetParam(), {i}, other), {3}, DataType::int64()));
  EXPECT_EQ(pattern_of(GetParam()), OpPattern::CommReduce);
}

TEST_P(ArgReduceOp, Errors) {
  auto x = tensor_var("x", {3, 4}, f32);
  auto attrs = make_attrs<ArgReduceAttrs>();
  attrs->axis = {2};
  EXPECT_TRUE(type_error_mentions(call_op(GetParam(), {x}, attrs), {"axis", "out of range"}));
  attrs = make_attrs<ArgReduceAttrs>();
  attrs->axis = {0, 0};
  EXPECT_TRUE(type_error_mentions(call_op(GetParam(), {x}, attrs), {"axis", "twice"}));
  auto b = tensor_var("b", {3}, boolean);
  EXPECT_TRUE(type_error_mentions(call_op(GetParam(), {b}), {"numeric", "bool"}));
}

INSTANTIATE_TEST_SUITE_P(Reduce, ArgReduceOp, ::testing::Values("argmax", "argmin"));

// ---------------------------------------------------------------- variance, std

class VarianceOp : public ::testing::TestWithParam<const char*> {};

Ref<VarianceAttrs> variance_attrs(std::vector<int64_t> axis, bool keepdims = false) {
  auto attrs = make_attrs<VarianceAttrs>();
  attrs->axis = std::move(axis);
  attrs->keepdims = keepdims;
  attrs->unbiased = true;
  return attrs;
}

TEST_P(VarianceOp, ReducesDataGivenItsMean) {
  auto data = tensor_var("data", {2, 3, 4}, f32);
  auto mean = tensor_var("mean", {2, 1, 4}, f32);
  EXPECT_TRUE(is_tensor(infer_call(GetParam(), {data, mean}, variance_attrs({1})), {2, 4}, f32));
  EXPECT_TRUE(
      is_tensor(infer_call(GetParam(), {data, mean}, variance_attrs({-2}, true)), {2, 1, 4}, f32));
  auto all_mean = tensor_var("all_mean", {}, f32);
  EXPECT_TRUE(is_tensor(infer_call(GetParam(), {data, all_mean}), {}, f32));
  EXPECT_EQ(pattern_of(GetParam()), OpPattern::CommReduce);
}

TEST_P(VarianceOp, SymbolicDims) {
  Dim n = Dim::var("n"), c = Dim::var("c");
  auto data = tensor_var("data", {n, c, 4}, f32);
  auto mean = tensor_var("mean", {n, 1, 1}, f32);
  EXPECT_TRUE(is_tensor(infer_call(GetParam(), {data, mean}, variance_attrs({1, 2})), {n}, f32));
}

TEST_P(VarianceOp, Errors) {
  auto data = tensor_var("data", {2, 3, 4}, f32);
  auto wrong = tensor_var("wrong", {2, 5, 4}, f32);
  EXPECT_TRUE(type_error_mentions(call_op(GetParam(), {data, wrong}, variance_attrs({1})),
                                  {"argument 'mean'", "(2, 5, 4)", "broadcast", "(2, 3, 4)"}));
  auto too_long = tensor_var("too_long", {1, 2, 3, 4}, f32);
  EXPECT_TRUE(type_error_mentions(call_op(GetParam(), {data, too_long}), {"argument 'mean'"}));
  auto half = tensor_var("half", {2, 1, 4}, DataType::float16());
  EXPECT_TRUE(type_error_mentions(call_op(GetParam(), {data, half}),
                                  {"argument 'mean'", "dtype", "float16"}));
  auto idata = tensor_var("idata", {2, 3}, i32);
  auto imean = tensor_var("imean", {2, 1}, i32);
  EXPECT_TRUE(
      type_error_mentions(call_op(GetParam(), {idata, imean}), {"floating-point", "int32"}));
  auto mean = tensor_var("mean", {2, 1, 4}, f32);
  EXPECT_TRUE(type_error_mentions(call_op(GetParam(), {data, mean}, variance_attrs({5})),
                                  {"axis", "out of range"}));
}

INSTANTIATE_TEST_SUITE_P(Reduce, VarianceOp, ::testing::Values("variance", "std"));

// ---------------------------------------------------------------- dyn.* reductions

TEST(DynamicReduce, AxesKnownOnlyAtRunTime) {
  auto x = tensor_var("x", {2, 1, 4}, f32);
  auto two_axes = tensor_var("axes", {2}, DataType::int64());
  // Only the number of axes is known: it fixes the rank, not the dims.
  EXPECT_TRUE(is_tensor(infer_call("dyn.sum", {x, two_axes}), {Dim::any()}, f32));
  // With keepdims a dim is either kept or 1, so only dims already 1 stay known.
  EXPECT_TRUE(is_tensor(infer_call("dyn.max", {x, two_axes}, reduce_attrs({}, true)),
                        {Dim::any(), 1, Dim::any()}, f32));
  auto no_axes = tensor_var("no_axes", {0}, DataType::int64());
  EXPECT_TRUE(is_tensor(infer_call("dyn.mean", {x, no_axes}), {}, f32));
  auto some_axes = tensor_var("some_axes", {Dim::var("k")}, DataType::int32());
  Type unknown = infer_call("dyn.prod", {x, some_axes});
  const auto* t = as<TensorTypeNode>(unknown);
  ASSERT_NE(t, nullptr);
  EXPECT_FALSE(t->has_shape());
  // A shape function runs before it, so it is fused with nothing.
  EXPECT_EQ(pattern_of("dyn.l2_norm"), OpPattern::Opaque);
}

TEST(DynamicReduce, Errors) {
  auto x = tensor_var("x", {2, 3}, f32);
  auto axes = tensor_var("axes", {1}, DataType::int64());
  EXPECT_TRUE(type_error_mentions(call_op("dyn.sum", {x, axes}, reduce_attrs({0})),
                                  {"dyn.sum", "axis", "argument 'axes'"}));
  auto float_axes = tensor_var("float_axes", {1}, f32);
  EXPECT_TRUE(type_error_mentions(call_op("dyn.sum", {x, float_axes}),
                                  {"argument 'axes'", "integer", "float32"}));
  auto matrix_axes = tensor_var("matrix_axes", {1, 1}, DataType::int64());
  EXPECT_TRUE(type_error_mentions(call_op("dyn.sum", {x, matrix_axes}), {"argument 'axes'"}));
  auto many_axes = tensor_var("many_axes", {3}, DataType::int64());
  EXPECT_TRUE(type_error_mentions(call_op("dyn.sum", {x, many_axes}),
                                  {"argument 'axes'", "more axes", "(2, 3)"}));
  auto b = tensor_var("b", {2}, boolean);
  EXPECT_TRUE(type_error_mentions(call_op("dyn.sum", {b, axes}), {"numeric", "bool"}));
}

}  // namespace
}  // namespace anvil::ir
