// Type relations of the ops that take shapes, axes or counts as tensors known
// only at run time (dyn.squeeze, dyn.expand_dims, dyn.tile,
// dyn.strided_slice, dyn.one_hot, dyn.cumsum, dyn.full, dyn.col2im), and of
// unique and col2im.
#include <gtest/gtest.h>

#include "anvil/ir/attrs/transform.h"
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
const DataType i64 = DataType::int64();
const Dim any = Dim::any();
const Dim n = Dim::var("n");

Attrs attrs_for(std::string_view op, const std::vector<std::pair<std::string, AttrValue>>& fields) {
  return make_op_attrs(op, fields);
}

TEST(DynamicShapeOps, RankFollowsTheLengthOfTheAxes) {
  auto x = tensor_var("x", {1, 3, 1});
  auto two = tensor_var("axes", {2}, i64);
  EXPECT_TRUE(is_tensor(infer_call("dyn.squeeze", {x, two}), {any}, f32));
  EXPECT_TRUE(is_tensor(infer_call("dyn.expand_dims", {x, two}), {any, any, any, any, any}, f32));
  EXPECT_TRUE(is_tensor(infer_call("dyn.tile", {x, two}), {any, any, any}, f32));
  auto four = tensor_var("reps", {4}, i32);
  EXPECT_TRUE(is_tensor(infer_call("dyn.tile", {x, four}), {any, any, any, any}, f32));
  // A symbolic length leaves the rank unknown.
  Type unknown = infer_call("dyn.expand_dims", {x, tensor_var("axes", {n}, i64)});
  EXPECT_FALSE(as<TensorTypeNode>(unknown)->has_shape());
  // A shape function runs before it, so it is fused with nothing.
  EXPECT_EQ(pattern_of("dyn.squeeze"), OpPattern::Opaque);
}

TEST(DynamicShapeOps, Errors) {
  auto x = tensor_var("x", {1, 3});
  EXPECT_TRUE(type_error_mentions(call_op("dyn.squeeze", {x, tensor_var("a", {3}, i64)}),
                                  {"lists 3 axes", "Tensor[(1, 3), float32]"}));
  EXPECT_TRUE(type_error_mentions(call_op("dyn.tile", {x, tensor_var("r", {2}, f32)}),
                                  {"argument 'reps'", "integer"}));
  EXPECT_TRUE(type_error_mentions(call_op("dyn.expand_dims", {x, tensor_var("a", {1, 2}, i64)}),
                                  {"argument 'axes'"}));
}

TEST(DynamicStridedSlice, KeepsTheRank) {
  auto x = tensor_var("x", {4, n});
  auto v = tensor_var("v", {2}, i64);
  EXPECT_TRUE(is_tensor(infer_call("dyn.strided_slice", {x, v, v, v, v}), {any, any}, f32));
  EXPECT_TRUE(
      type_error_mentions(call_op("dyn.strided_slice", {x, v, v, tensor_var("s", {3}, i64), v}),
                          {"argument 'strides' has 3 entries", "argument 'begin' has 2"}));
  auto long_begin = tensor_var("b", {3}, i64);
  EXPECT_TRUE(type_error_mentions(
      call_op("dyn.strided_slice", {x, long_begin, long_begin, long_begin, long_begin}),
      {"3 entries", "2 dims"}));
}

TEST(DynamicOneHot, DepthIsUnknown) {
  auto indices = tensor_var("i", {2, 3}, i64);
  auto on = tensor_var("on", {}, f32), off = tensor_var("off", {}, f32);
  auto depth = tensor_var("depth", {}, i32);
  EXPECT_TRUE(is_tensor(infer_call("dyn.one_hot", {indices, on, off, depth},
                                   attrs_for("dyn.one_hot", {{"axis", int64_t(1)}})),
                        {2, any, 3}, f32));
  EXPECT_TRUE(
      type_error_mentions(call_op("dyn.one_hot", {indices, on, off, tensor_var("d", {2}, i64)}),
                          {"argument 'depth' must be a scalar"}));
}

TEST(DynamicCumsum, KeepsTheShapeAndTakesTheDtype) {
  auto x = tensor_var("x", {2, n}, i32);
  auto axis = tensor_var("axis", {}, i64);
  EXPECT_TRUE(is_tensor(infer_call("dyn.cumsum", {x, axis}), {2, n}, i32));
  EXPECT_TRUE(is_tensor(
      infer_call("dyn.cumsum", {x, axis}, attrs_for("dyn.cumsum", {{"dtype", DataType::int64()}})),
      {2, n}, i64));
  EXPECT_TRUE(type_error_mentions(call_op("dyn.cumsum", {x, tensor_var("a", {}, f32)}),
                                  {"argument 'axis'"}));
}

TEST(DynamicCumprod, KeepsTheShapeAndNeedsAnIntegerScalarAxis) {
  auto x = tensor_var("x", {2, n}, f32);
  EXPECT_TRUE(is_tensor(infer_call("dyn.cumprod", {x, tensor_var("axis", {}, i32)}), {2, n}, f32));
  EXPECT_TRUE(type_error_mentions(call_op("dyn.cumprod", {x, tensor_var("a", {}, f32)}),
                                  {"argument 'axis'"}));
  EXPECT_TRUE(type_error_mentions(
      call_op("dyn.cumprod", {tensor_var("s", {}, f32), tensor_var("a", {}, i32)}), {"rank >= 1"}));
}

TEST(DynamicFull, RankFromTheShapeLength) {
  auto fill = tensor_var("v", {}, f32);
  EXPECT_TRUE(
      is_tensor(infer_call("dyn.full", {fill, tensor_var("s", {3}, i64)}), {any, any, any}, f32));
  EXPECT_TRUE(is_tensor(infer_call("dyn.full", {fill, tensor_var("s", {1}, i64)},
                                   attrs_for("dyn.full", {{"dtype", DataType::int32()}})),
                        {any}, i32));
  EXPECT_TRUE(type_error_mentions(
      call_op("dyn.full", {tensor_var("v", {2}, f32), tensor_var("s", {1}, i64)}),
      {"argument 'fill_value' must be a scalar"}));
}

TEST(Unique, FourOutputs) {
  auto x = tensor_var("x", {2, 3});
  Type flat = infer_call("unique", {x});
  const auto* tuple = as<TupleTypeNode>(flat);
  ASSERT_NE(tuple, nullptr);
  ASSERT_EQ(tuple->fields.size(), 4u);
  EXPECT_TRUE(is_tensor(tuple->fields[0], {any}, f32));
  EXPECT_TRUE(is_tensor(tuple->fields[1], {any}, i64));
  EXPECT_TRUE(is_tensor(tuple->fields[2], {6}, i64));
  EXPECT_TRUE(is_tensor(tuple->fields[3], {any}, i64));
  Type along = infer_call("unique", {x}, attrs_for("unique", {{"axis", int64_t(-1)}}));
  EXPECT_TRUE(is_tensor(as<TupleTypeNode>(along)->fields[0], {2, any}, f32));
  EXPECT_TRUE(is_tensor(as<TupleTypeNode>(along)->fields[2], {3}, i64));
  EXPECT_TRUE(type_error_mentions(
      call_op("unique", {x}, attrs_for("unique", {{"axis", int64_t(2)}})), {"'axis' = 2"}));
  EXPECT_TRUE(round_trips({x}, call_op("unique", {x}, attrs_for("unique", {{"sorted", false}}))));
}

TEST(Col2Im, StaticAndDynamicShapes) {
  // 2 channels of 2x2 blocks over a 3x3 image: 4 positions.
  auto x = tensor_var("x", {1, 8, 4});
  auto attrs = attrs_for("col2im", {{"image_shape", std::vector<int64_t>{3, 3}},
                                    {"block_shape", std::vector<int64_t>{2, 2}}});
  EXPECT_TRUE(is_tensor(infer_call("col2im", {x}, attrs), {1, 2, 3, 3}, f32));
  auto wrong = tensor_var("w", {1, 8, 5});
  EXPECT_TRUE(type_error_mentions(call_op("col2im", {wrong}, attrs), {"number of blocks, 4"}));
  auto strided = attrs_for("col2im", {{"image_shape", std::vector<int64_t>{3, 3}},
                                      {"block_shape", std::vector<int64_t>{2, 2}},
                                      {"strides", std::vector<int64_t>{2}}});
  EXPECT_TRUE(type_error_mentions(call_op("col2im", {x}, strided), {"'strides'", "2 entries"}));
  auto shape = tensor_var("s", {2}, i64);
  EXPECT_TRUE(is_tensor(infer_call("dyn.col2im", {x, shape, shape}), {1, any, any, any}, f32));
  EXPECT_TRUE(round_trips({x}, call_op("col2im", {x}, attrs)));
}

}  // namespace
}  // namespace anvil::ir
