// Type relations of the creation family.
#include <gtest/gtest.h>

#include <limits>

#include "anvil/ir/attrs/transform.h"
#include "anvil/ir/parser.h"
#include "anvil/ir/printer.h"
#include "anvil/ir/structural_equal.h"
#include "relation_test_util.h"

namespace anvil::ir {
namespace {

using testing::attrs_of;
using testing::infer_call;
using testing::is_tensor;
using testing::pattern_of;
using testing::tensor_var;
using testing::type_error_mentions;

const DataType f32 = DataType::float32();
const DataType f64 = DataType::float64();
const DataType i32 = DataType::int32();
const DataType i64 = DataType::int64();
const Dim n = Dim::var("n");

Ref<ArangeAttrs> arange(double start, double stop, double step, DataType dtype = f32) {
  return attrs_of<ArangeAttrs>([&](ArangeAttrs& a) {
    a.start = start;
    a.stop = stop;
    a.step = step;
    a.dtype = dtype;
  });
}

TEST(CreationArange, LengthIsTheCeilingOfTheSpan) {
  EXPECT_TRUE(is_tensor(infer_call("arange", {}, arange(0, 10, 1, i64)), {10}, i64));
  EXPECT_TRUE(is_tensor(infer_call("arange", {}, arange(0, 10, 3, i32)), {4}, i32));
  EXPECT_TRUE(is_tensor(infer_call("arange", {}, arange(1, 2, 0.25)), {4}, f32));
  EXPECT_TRUE(is_tensor(infer_call("arange", {}, arange(5, 1, -2)), {2}, f32));
  EXPECT_TRUE(is_tensor(infer_call("arange", {}, arange(5, 1, 1)), {0}, f32));
  EXPECT_TRUE(is_tensor(infer_call("arange", {}), {0}, f32));
  EXPECT_EQ(pattern_of("arange"), OpPattern::Injective);
}

TEST(CreationArange, Errors) {
  EXPECT_TRUE(
      type_error_mentions(call_op("arange", {}, arange(0, 10, 0)), {"arange", "step", "0"}));
  double inf = std::numeric_limits<double>::infinity();
  EXPECT_TRUE(type_error_mentions(call_op("arange", {}, arange(0, inf, 1)), {"stop", "finite"}));
  EXPECT_TRUE(
      type_error_mentions(call_op("arange", {}, arange(0, 1e300, 1e-300)), {"too many elements"}));
}

TEST(CreationRange, RuntimeBoundsGiveAnUnknownLength) {
  auto start = tensor_var("start", {}, i64);
  auto limit = tensor_var("limit", {}, i64);
  auto delta = tensor_var("delta", {}, i64);
  EXPECT_TRUE(is_tensor(infer_call("range", {start, limit, delta}), {Dim::any()}, i64));
  EXPECT_TRUE(type_error_mentions(call_op("range", {start, tensor_var("l", {2}, i64), delta}),
                                  {"range", "limit", "scalar", "Tensor[(2), int64]"}));
  EXPECT_TRUE(type_error_mentions(call_op("range", {start, limit, tensor_var("d", {}, f32)}),
                                  {"delta", "float32", "int64"}));
  EXPECT_EQ(pattern_of("range"), OpPattern::Opaque);
}

Ref<InitOpAttrs> init(std::vector<int64_t> shape, std::optional<DataType> dtype = {}) {
  return attrs_of<InitOpAttrs>([&](InitOpAttrs& a) {
    a.shape = std::move(shape);
    a.dtype = dtype;
  });
}

TEST(CreationFull, ShapeFromTheAttrs) {
  auto fill = tensor_var("fill", {}, f64);
  EXPECT_TRUE(is_tensor(infer_call("full", {fill}, init({2, 3})), {2, 3}, f64));
  EXPECT_TRUE(is_tensor(infer_call("full", {fill}, init({2, 3}, i32)), {2, 3}, i32));
  EXPECT_TRUE(is_tensor(infer_call("full", {fill}, init({})), {}, f64));
  EXPECT_TRUE(type_error_mentions(call_op("full", {tensor_var("v", {3})}, init({3})),
                                  {"fill_value", "scalar"}));
  EXPECT_TRUE(type_error_mentions(call_op("full", {fill}, init({2, -3})),
                                  {"shape", "[2, -3]", "negative"}));
  EXPECT_EQ(pattern_of("full"), OpPattern::ElemWise);
}

TEST(CreationZerosOnes, DefaultToFloat32) {
  for (const char* op : {"zeros", "ones"}) {
    EXPECT_TRUE(is_tensor(infer_call(op, {}, init({4, 5})), {4, 5}, f32)) << op;
    EXPECT_TRUE(is_tensor(infer_call(op, {}, init({4}, i64)), {4}, i64)) << op;
    EXPECT_TRUE(type_error_mentions(call_op(op, {}, init({-1})), {op, "shape", "negative"}));
    EXPECT_EQ(pattern_of(op), OpPattern::ElemWise);
  }
}

TEST(CreationLike, TakeTheDataType) {
  auto x = tensor_var("x", {n, 3}, i32);
  auto fill = tensor_var("fill", {}, f32);
  EXPECT_TRUE(is_tensor(infer_call("full_like", {x, fill}), {n, 3}, i32));
  EXPECT_TRUE(is_tensor(infer_call("zeros_like", {x}), {n, 3}, i32));
  EXPECT_TRUE(is_tensor(infer_call("ones_like", {x}), {n, 3}, i32));
  auto u = VarNode::make("u", TensorTypeNode::make_unknown_rank(f32));
  EXPECT_TRUE(types_equal(infer_call("zeros_like", {u}), TensorTypeNode::make_unknown_rank(f32)));
  EXPECT_TRUE(type_error_mentions(call_op("full_like", {x, tensor_var("v", {1, 1})}),
                                  {"fill_value", "scalar", "Tensor[(1, 1), float32]"}));
  auto t = VarNode::make("t", TupleTypeNode::make({}));
  EXPECT_TRUE(type_error_mentions(call_op("ones_like", {t}), {"data", "must be a tensor"}));
  EXPECT_EQ(pattern_of("full_like"), OpPattern::ElemWise);
  EXPECT_EQ(pattern_of("zeros_like"), OpPattern::ElemWise);
}

TEST(CreationShapeOf, RankLongVector) {
  auto x = tensor_var("x", {n, 3, 4});
  EXPECT_TRUE(is_tensor(infer_call("shape_of", {x}), {3}, i64));
  auto as_i32 = attrs_of<ShapeOfAttrs>([](ShapeOfAttrs& a) { a.dtype = i32; });
  EXPECT_TRUE(is_tensor(infer_call("shape_of", {x}, as_i32), {3}, i32));
  EXPECT_TRUE(is_tensor(infer_call("shape_of", {tensor_var("s", {})}), {0}, i64));
  auto u = VarNode::make("u", TensorTypeNode::make_unknown_rank(f32));
  EXPECT_TRUE(is_tensor(infer_call("shape_of", {u}), {Dim::any()}, i64));
  auto as_f32 = attrs_of<ShapeOfAttrs>([](ShapeOfAttrs& a) { a.dtype = f32; });
  EXPECT_TRUE(type_error_mentions(call_op("shape_of", {x}, as_f32), {"dtype", "integer"}));
  EXPECT_EQ(pattern_of("shape_of"), OpPattern::Opaque);
}

TEST(CreationNdarraySize, Scalar) {
  EXPECT_TRUE(is_tensor(infer_call("ndarray_size", {tensor_var("x", {n, 3})}), {}, i64));
  auto as_f32 = attrs_of<NdarraySizeAttrs>([](NdarraySizeAttrs& a) { a.dtype = f32; });
  EXPECT_TRUE(type_error_mentions(call_op("ndarray_size", {tensor_var("y", {2})}, as_f32),
                                  {"dtype", "integer"}));
}

// ---------------------------------------------------------------- text form

// Succeeds when the printed call parses back to an equal call.
::testing::AssertionResult round_trips(const Expr& call) {
  std::string text = print_expr(call);
  Expr back = parse_expr(text);
  if (structural_equal(call, back, true)) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << text << " parses back as " << print_expr(back);
}

TEST(CreationAttrsText, ParseBack) {
  std::vector<Expr> calls = {
      call_op("arange", {}, arange(0.5, 10, 0.25, i64)),
      call_op("zeros", {}, init({2, 3}, DataType::float16())),
      call_op("full", {tensor_var("fill", {}, f32)}, init({4})),
  };
  for (const Expr& call : calls) EXPECT_TRUE(round_trips(call));
}

}  // namespace
}  // namespace anvil::ir
