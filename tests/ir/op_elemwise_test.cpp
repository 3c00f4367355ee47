// Type relations of the elementwise family: unary math, broadcasting binary
// ops, where and clip.
#include <gtest/gtest.h>

#include "anvil/ir/attrs/elemwise.h"
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

// ---------------------------------------------------------------- unary

class FloatUnaryOp : public ::testing::TestWithParam<const char*> {};

TEST_P(FloatUnaryOp, KeepsShapeAndDtype) {
  auto x = tensor_var("x", {Dim::var("n"), 3, 4}, f32);
  EXPECT_TRUE(is_tensor(infer_call(GetParam(), {x}), {Dim::var("n"), 3, 4}, f32));
  auto h = tensor_var("h", {2}, DataType::float16());
  EXPECT_TRUE(is_tensor(infer_call(GetParam(), {h}), {2}, DataType::float16()));
  EXPECT_EQ(pattern_of(GetParam()), OpPattern::ElemWise);
}

TEST_P(FloatUnaryOp, RejectsIntegers) {
  auto x = tensor_var("x", {2, 3}, i32);
  EXPECT_TRUE(type_error_mentions(call_op(GetParam(), {x}),
                                  {GetParam(), "argument 'data'", "floating-point", "int32"}));
}

INSTANTIATE_TEST_SUITE_P(Elemwise, FloatUnaryOp,
                         ::testing::Values("exp", "log", "sqrt", "rsqrt", "sigmoid", "tanh", "erf",
                                           "floor", "ceil", "round", "trunc", "sin", "cos", "tan",
                                           "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh",
                                           "atanh", "reciprocal"));

class NumericUnaryOp : public ::testing::TestWithParam<const char*> {};

TEST_P(NumericUnaryOp, TakesIntegersAndFloatsNotBool) {
  auto x = tensor_var("x", {Dim::var("n")}, i32);
  EXPECT_TRUE(is_tensor(infer_call(GetParam(), {x}), {Dim::var("n")}, i32));
  auto f = tensor_var("f", {2, 2}, f32);
  EXPECT_TRUE(is_tensor(infer_call(GetParam(), {f}), {2, 2}, f32));
  auto b = tensor_var("b", {2}, boolean);
  EXPECT_TRUE(type_error_mentions(call_op(GetParam(), {b}), {"numeric", "bool"}));
  EXPECT_EQ(pattern_of(GetParam()), OpPattern::ElemWise);
}

INSTANTIATE_TEST_SUITE_P(Elemwise, NumericUnaryOp, ::testing::Values("abs", "negative", "sign"));

class PredicateUnaryOp : public ::testing::TestWithParam<const char*> {};

TEST_P(PredicateUnaryOp, ReturnsBoolOfSameShape) {
  auto x = tensor_var("x", {Dim::var("batch"), 5}, f32);
  EXPECT_TRUE(is_tensor(infer_call(GetParam(), {x}), {Dim::var("batch"), 5}, boolean));
  auto i = tensor_var("i", {5}, i32);
  EXPECT_TRUE(type_error_mentions(call_op(GetParam(), {i}), {"floating-point", "int32"}));
}

INSTANTIATE_TEST_SUITE_P(Elemwise, PredicateUnaryOp,
                         ::testing::Values("isnan", "isinf", "isfinite"));

TEST(ElemwiseUnary, LogicalNotNeedsBool) {
  auto b = tensor_var("b", {Dim::var("n"), 2}, boolean);
  EXPECT_TRUE(is_tensor(infer_call("logical_not", {b}), {Dim::var("n"), 2}, boolean));
  auto f = tensor_var("f", {2}, f32);
  EXPECT_TRUE(type_error_mentions(call_op("logical_not", {f}), {"bool", "float32"}));
}

TEST(ElemwiseUnary, BitwiseNotTakesIntegersAndBool) {
  auto i = tensor_var("i", {3}, DataType::uint8());
  EXPECT_TRUE(is_tensor(infer_call("bitwise_not", {i}), {3}, DataType::uint8()));
  auto b = tensor_var("b", {3}, boolean);
  EXPECT_TRUE(is_tensor(infer_call("bitwise_not", {b}), {3}, boolean));
  auto f = tensor_var("f", {3}, f32);
  EXPECT_TRUE(type_error_mentions(call_op("bitwise_not", {f}), {"integer or bool", "float32"}));
}

TEST(ElemwiseUnary, CopyTakesAnyDtype) {
  for (DataType dtype : {f32, i32, boolean, DataType::bfloat16()}) {
    auto x = tensor_var("x", {Dim::var("n") + 1}, dtype);
    EXPECT_TRUE(is_tensor(infer_call("copy", {x}), {Dim::var("n") + 1}, dtype));
  }
}

TEST(ElemwiseUnary, UnknownRankPassesThrough) {
  auto x = VarNode::make("x", TensorTypeNode::make_unknown_rank(f32));
  Type exp_type = infer_call("exp", {x});
  const auto* exp = as<TensorTypeNode>(exp_type);
  ASSERT_NE(exp, nullptr);
  EXPECT_FALSE(exp->has_shape());
  Type nan_type = infer_call("isnan", {x});
  const auto* nan = as<TensorTypeNode>(nan_type);
  ASSERT_NE(nan, nullptr);
  EXPECT_FALSE(nan->has_shape());
  EXPECT_EQ(nan->dtype, boolean);
}

TEST(ElemwiseUnary, ScalarsAndBfloat16) {
  auto s = tensor_var("s", {}, DataType::bfloat16());
  EXPECT_TRUE(is_tensor(infer_call("tanh", {s}), {}, DataType::bfloat16()));
}

TEST(ElemwiseUnary, RejectsTupleArgumentAndWrongArity) {
  auto x = tensor_var("x", {2}, f32);
  EXPECT_TRUE(type_error_mentions(call_op("exp", {TupleNode::make({x, x})}),
                                  {"exp", "argument 'data'", "tensor"}));
  EXPECT_TRUE(type_error_mentions(call_op("exp", {x, x}), {"exp", "1", "2"}));
}

// ---------------------------------------------------------------- binary

class ArithmeticBinaryOp : public ::testing::TestWithParam<const char*> {};

TEST_P(ArithmeticBinaryOp, BroadcastsLikeNumpy) {
  auto a = tensor_var("a", {2, 1, 4}, f32);
  auto b = tensor_var("b", {3, 1}, f32);
  EXPECT_TRUE(is_tensor(infer_call(GetParam(), {a, b}), {2, 3, 4}, f32));
  auto s = tensor_var("s", {}, f32);
  EXPECT_TRUE(is_tensor(infer_call(GetParam(), {s, a}), {2, 1, 4}, f32));
  EXPECT_EQ(pattern_of(GetParam()), OpPattern::Broadcast);
}

TEST_P(ArithmeticBinaryOp, SymbolicDimsFlowThrough) {
  Dim n = Dim::var("n");
  auto a = tensor_var("a", {n, 1}, i32);
  auto b = tensor_var("b", {1, 4}, i32);
  EXPECT_TRUE(is_tensor(infer_call(GetParam(), {a, b}), {n, 4}, i32));
  auto c = tensor_var("c", {n + 1, 4}, i32);
  auto d = tensor_var("d", {n + 1, 4}, i32);
  EXPECT_TRUE(is_tensor(infer_call(GetParam(), {c, d}), {n + 1, 4}, i32));
  // A symbolic dim against a static one must equal it for the program to be valid.
  auto e = tensor_var("e", {n}, i32);
  auto f = tensor_var("f", {7}, i32);
  EXPECT_TRUE(is_tensor(infer_call(GetParam(), {e, f}), {7}, i32));
  // Two different size variables broadcast to broadcast(n, m), checked when it is computed.
  Dim m = Dim::var("m");
  auto g = tensor_var("g", {m, n}, i32);
  auto h = tensor_var("h", {n, m}, i32);
  EXPECT_TRUE(is_tensor(infer_call(GetParam(), {g, h}), {broadcast(m, n), broadcast(m, n)}, i32));
}

TEST_P(ArithmeticBinaryOp, IncompatibleShapesNameBothShapes) {
  auto a = tensor_var("a", {2, 3}, f32);
  auto b = tensor_var("b", {4}, f32);
  EXPECT_TRUE(
      type_error_mentions(call_op(GetParam(), {a, b}), {GetParam(), "broadcast", "(2, 3)", "(4)"}));
}

TEST_P(ArithmeticBinaryOp, DtypeMismatchNamesBothDtypes) {
  auto a = tensor_var("a", {2, 3}, f32);
  auto b = tensor_var("b", {3}, i32);
  EXPECT_TRUE(type_error_mentions(call_op(GetParam(), {a, b}),
                                  {"'lhs'", "'rhs'", "same dtype", "float32", "int32"}));
}

TEST_P(ArithmeticBinaryOp, RejectsBool) {
  auto a = tensor_var("a", {2}, boolean);
  EXPECT_TRUE(type_error_mentions(call_op(GetParam(), {a, a}), {"numeric", "bool"}));
}

INSTANTIATE_TEST_SUITE_P(Elemwise, ArithmeticBinaryOp,
                         ::testing::Values("add", "subtract", "multiply", "divide", "power",
                                           "maximum", "minimum", "mod", "floor_mod",
                                           "floor_divide"));

class ComparisonOp : public ::testing::TestWithParam<const char*> {};

TEST_P(ComparisonOp, ReturnsBoolOfBroadcastShape) {
  auto a = tensor_var("a", {Dim::var("n"), 3}, i32);
  auto b = tensor_var("b", {3}, i32);
  EXPECT_TRUE(is_tensor(infer_call(GetParam(), {a, b}), {Dim::var("n"), 3}, boolean));
  auto p = tensor_var("p", {2}, boolean);
  EXPECT_TRUE(is_tensor(infer_call(GetParam(), {p, p}), {2}, boolean));
  EXPECT_EQ(pattern_of(GetParam()), OpPattern::Broadcast);
}

TEST_P(ComparisonOp, Errors) {
  auto a = tensor_var("a", {2, 3}, f32);
  auto b = tensor_var("b", {3}, DataType::float16());
  EXPECT_TRUE(type_error_mentions(call_op(GetParam(), {a, b}), {"same dtype", "float16"}));
  auto c = tensor_var("c", {5}, f32);
  EXPECT_TRUE(type_error_mentions(call_op(GetParam(), {a, c}), {"(2, 3)", "(5)"}));
}

INSTANTIATE_TEST_SUITE_P(Elemwise, ComparisonOp,
                         ::testing::Values("equal", "not_equal", "less", "less_equal", "greater",
                                           "greater_equal"));

class LogicalBinaryOp : public ::testing::TestWithParam<const char*> {};

TEST_P(LogicalBinaryOp, NeedsBool) {
  auto a = tensor_var("a", {Dim::var("n"), 1}, boolean);
  auto b = tensor_var("b", {4}, boolean);
  EXPECT_TRUE(is_tensor(infer_call(GetParam(), {a, b}), {Dim::var("n"), 4}, boolean));
  auto i = tensor_var("i", {4}, i32);
  EXPECT_TRUE(type_error_mentions(call_op(GetParam(), {b, i}), {"'rhs'", "bool", "int32"}));
}

INSTANTIATE_TEST_SUITE_P(Elemwise, LogicalBinaryOp,
                         ::testing::Values("logical_and", "logical_or", "logical_xor"));

class BitwiseBinaryOp : public ::testing::TestWithParam<const char*> {};

TEST_P(BitwiseBinaryOp, TakesIntegersAndBool) {
  auto a = tensor_var("a", {2, 3}, DataType::int64());
  auto b = tensor_var("b", {1, 3}, DataType::int64());
  EXPECT_TRUE(is_tensor(infer_call(GetParam(), {a, b}), {2, 3}, DataType::int64()));
  auto p = tensor_var("p", {3}, boolean);
  EXPECT_TRUE(is_tensor(infer_call(GetParam(), {p, p}), {3}, boolean));
  auto f = tensor_var("f", {3}, f32);
  EXPECT_TRUE(type_error_mentions(call_op(GetParam(), {f, f}), {"integer or bool", "float32"}));
}

INSTANTIATE_TEST_SUITE_P(Elemwise, BitwiseBinaryOp,
                         ::testing::Values("bitwise_and", "bitwise_or", "bitwise_xor"));

class ShiftOp : public ::testing::TestWithParam<const char*> {};

TEST_P(ShiftOp, TakesIntegersOnly) {
  auto a = tensor_var("a", {Dim::var("n")}, DataType::uint32());
  auto s = tensor_var("s", {}, DataType::uint32());
  EXPECT_TRUE(is_tensor(infer_call(GetParam(), {a, s}), {Dim::var("n")}, DataType::uint32()));
  auto p = tensor_var("p", {3}, boolean);
  EXPECT_TRUE(type_error_mentions(call_op(GetParam(), {p, p}), {"integer", "bool"}));
  auto f = tensor_var("f", {3}, f32);
  EXPECT_TRUE(type_error_mentions(call_op(GetParam(), {f, f}), {"integer", "float32"}));
}

INSTANTIATE_TEST_SUITE_P(Elemwise, ShiftOp, ::testing::Values("left_shift", "right_shift"));

TEST(ElemwiseBinary, UnknownRankGivesUnknownRank) {
  auto a = VarNode::make("a", TensorTypeNode::make_unknown_rank(f32));
  auto b = tensor_var("b", {3}, f32);
  Type sum_type = infer_call("add", {a, b});
  const auto* sum = as<TensorTypeNode>(sum_type);
  ASSERT_NE(sum, nullptr);
  EXPECT_FALSE(sum->has_shape());
  EXPECT_EQ(sum->dtype, f32);
  Type less_type = infer_call("less", {b, a});
  const auto* less = as<TensorTypeNode>(less_type);
  ASSERT_NE(less, nullptr);
  EXPECT_FALSE(less->has_shape());
  EXPECT_EQ(less->dtype, boolean);
}

// ---------------------------------------------------------------- where, clip

TEST(Where, BroadcastsAllThree) {
  Dim n = Dim::var("n");
  auto cond = tensor_var("cond", {n, 1, 1}, boolean);
  auto x = tensor_var("x", {1, 3, 1}, f32);
  auto y = tensor_var("y", {4}, f32);
  EXPECT_TRUE(is_tensor(infer_call("where", {cond, x, y}), {n, 3, 4}, f32));
  EXPECT_EQ(pattern_of("where"), OpPattern::Broadcast);
}

TEST(Where, Errors) {
  auto cond = tensor_var("cond", {2, 3}, boolean);
  auto x = tensor_var("x", {2, 3}, f32);
  auto y = tensor_var("y", {2, 3}, i32);
  auto fcond = tensor_var("fcond", {2, 3}, f32);
  auto wide = tensor_var("wide", {5}, f32);
  EXPECT_TRUE(type_error_mentions(call_op("where", {fcond, x, x}),
                                  {"argument 'condition'", "bool", "float32"}));
  EXPECT_TRUE(type_error_mentions(call_op("where", {cond, x, y}),
                                  {"argument 'x'", "argument 'y'", "same dtype", "int32"}));
  EXPECT_TRUE(type_error_mentions(call_op("where", {cond, x, wide}), {"(2, 3)", "(5)"}));
}

TEST(Clip, KeepsTypeAndChecksBounds) {
  auto x = tensor_var("x", {Dim::var("n"), 8}, f32);
  auto attrs = make_attrs<ClipAttrs>();
  attrs->a_min = 0;
  attrs->a_max = 6;
  EXPECT_TRUE(is_tensor(infer_call("clip", {x}, attrs), {Dim::var("n"), 8}, f32));
  auto i = tensor_var("i", {3}, DataType::int8());
  EXPECT_TRUE(is_tensor(infer_call("clip", {i}, attrs), {3}, DataType::int8()));
  EXPECT_TRUE(is_tensor(infer_call("clip", {x}), {Dim::var("n"), 8}, f32));  // open bounds
  EXPECT_EQ(pattern_of("clip"), OpPattern::ElemWise);

  std::string text =
      print_expr(call_op("clip", {VarNode::make("x")}, attrs), {.show_types = false});
  EXPECT_NE(text.find("clip(%x, a_min=0f, a_max=6f)"), std::string::npos) << text;

  EXPECT_TRUE(round_trips({x}, call_op("clip", {x}, attrs)));
  auto lower = make_attrs<ClipAttrs>();
  lower->a_min = -1.5;  // a_max stays open
  EXPECT_TRUE(round_trips({x}, call_op("clip", {x}, lower)));

  auto bad = make_attrs<ClipAttrs>();
  bad->a_min = 6;
  bad->a_max = 0;
  EXPECT_TRUE(type_error_mentions(call_op("clip", {x}, bad), {"clip", "a_min", "a_max", "6"}));
  auto b = tensor_var("b", {3}, boolean);
  EXPECT_TRUE(type_error_mentions(call_op("clip", {b}, attrs), {"numeric", "bool"}));
}

}  // namespace
}  // namespace anvil::ir
