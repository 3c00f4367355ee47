// Type relations of the transform family: reshaping, layout and einsum ops
// (joining and slicing ops are in op_transform_slice_test.cpp).
#include <gtest/gtest.h>

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
const DataType f16 = DataType::float16();
const DataType i32 = DataType::int32();
const DataType i64 = DataType::int64();
const Dim n = Dim::var("n");
const Dim m = Dim::var("m");

Ref<ReshapeAttrs> reshape_to(std::vector<int64_t> newshape, bool allowzero = false) {
  return attrs_of<ReshapeAttrs>([&](ReshapeAttrs& a) {
    a.newshape = std::move(newshape);
    a.allowzero = allowzero;
  });
}

Expr tuple_of(std::vector<Expr> fields) { return TupleNode::make(std::move(fields)); }

// ---------------------------------------------------------------- reshape

TEST(TransformReshape, PositiveCopyAndInferredEntries) {
  auto x = tensor_var("x", {2, 3, 4});
  EXPECT_TRUE(is_tensor(infer_call("reshape", {x}, reshape_to({6, 4})), {6, 4}, f32));
  EXPECT_TRUE(is_tensor(infer_call("reshape", {x}, reshape_to({0, -1})), {2, 12}, f32));
  EXPECT_TRUE(is_tensor(infer_call("reshape", {x}, reshape_to({-1})), {24}, f32));
  EXPECT_TRUE(is_tensor(infer_call("reshape", {x}, reshape_to({4, 0, -1})), {4, 3, 2}, f32));
  EXPECT_EQ(pattern_of("reshape"), OpPattern::Injective);
}

TEST(TransformReshape, TvmSpecialValues) {
  auto x = tensor_var("x", {2, 3, 4, 5});
  EXPECT_TRUE(is_tensor(infer_call("reshape", {x}, reshape_to({-2})), {2, 3, 4, 5}, f32));
  EXPECT_TRUE(is_tensor(infer_call("reshape", {x}, reshape_to({0, -2})), {2, 3, 4, 5}, f32));
  EXPECT_TRUE(is_tensor(infer_call("reshape", {x}, reshape_to({-3, -2})), {6, 4, 5}, f32));
  EXPECT_TRUE(
      is_tensor(infer_call("reshape", {x}, reshape_to({-4, 1, 2, -2})), {1, 2, 3, 4, 5}, f32));
  EXPECT_TRUE(is_tensor(infer_call("reshape", {x}, reshape_to({0, 0, -4, -1, 2, 5})),
                        {2, 3, 2, 2, 5}, f32));
}

TEST(TransformReshape, AllowzeroKeepsLiteralZeros) {
  auto x = tensor_var("x", {0, 4});
  EXPECT_TRUE(is_tensor(infer_call("reshape", {x}, reshape_to({4, 0}, true)), {4, 0}, f32));
  auto y = tensor_var("y", {3, 4});
  EXPECT_TRUE(is_tensor(infer_call("reshape", {y}, reshape_to({0, 4})), {3, 4}, f32));
}

TEST(TransformReshape, SymbolicDims) {
  auto x = tensor_var("x", {n, 4});
  EXPECT_TRUE(is_tensor(infer_call("reshape", {x}, reshape_to({-1, 2})), {n * 2, 2}, f32));
  EXPECT_TRUE(is_tensor(infer_call("reshape", {x}, reshape_to({0, 2, 2})), {n, 2, 2}, f32));
  auto y = tensor_var("y", {n, m, 3});
  EXPECT_TRUE(is_tensor(infer_call("reshape", {y}, reshape_to({-1, 3})), {n * m, 3}, f32));
  EXPECT_TRUE(is_tensor(infer_call("reshape", {y}, reshape_to({-3, 0})), {n * m, 3}, f32));
  auto a = tensor_var("a", {Dim::any(), 4});
  EXPECT_TRUE(is_tensor(infer_call("reshape", {a}, reshape_to({-1, 2})), {Dim::any(), 2}, f32));
}

// The -1 of a reshape splitting heads off symbolic dims: the element count divided by the other
// entries' product is exact (seq * batch * 384 / (seq * 64) = batch * 6), as is merging back.
TEST(TransformReshape, SymbolicInferredDimDividesExactly) {
  const Dim batch = Dim::var("batch"), seq = Dim::var("seq");
  auto x = tensor_var("x", {seq, batch, 384});
  EXPECT_TRUE(
      is_tensor(infer_call("reshape", {x}, reshape_to({0, -1, 64})), {seq, batch * 6, 64}, f32));
  auto mask = tensor_var("mask", {batch, seq});
  EXPECT_TRUE(
      is_tensor(infer_call("reshape", {mask}, reshape_to({0, 1, 1, -1})), {batch, 1, 1, seq}, f32));
  auto heads = tensor_var("heads", {batch, 6, 1, seq});
  EXPECT_TRUE(
      is_tensor(infer_call("reshape", {heads}, reshape_to({-3, 1, -1})), {batch * 6, 1, seq}, f32));
  // Not a multiple of the known entries: the -1 stays an opaque quotient.
  auto y = tensor_var("y", {n, 6});
  EXPECT_TRUE(
      is_tensor(infer_call("reshape", {y}, reshape_to({4, -1})), {4, floordiv(n * 6, 4)}, f32));
}

// reshape_like takes a run of shape_like's dims in place of a run of the data's (TVM's form):
// the whole shape by default.
TEST(TransformReshapeLike, SymbolicDimsFromTheLikeTensor) {
  const Dim batch = Dim::var("batch"), seq = Dim::var("seq");
  auto flat = tensor_var("flat", {batch * seq, 768});
  auto like = tensor_var("like", {batch, seq, 256}, i32);
  auto whole = tensor_var("whole", {seq, batch, 384});
  auto flat384 = tensor_var("flat384", {batch * seq, 384});
  EXPECT_TRUE(is_tensor(infer_call("reshape_like", {flat384, whole}), {seq, batch, 384}, f32));
  auto split = attrs_of<ReshapeLikeAttrs>([](ReshapeLikeAttrs& a) {
    a.lhs_end = 1;
    a.rhs_end = 2;
  });
  EXPECT_TRUE(is_tensor(infer_call("reshape_like", {flat, like}, split), {batch, seq, 768}, f32));
  auto negative = attrs_of<ReshapeLikeAttrs>([](ReshapeLikeAttrs& a) {
    a.lhs_begin = -2;
    a.lhs_end = -1;
    a.rhs_begin = -3;
    a.rhs_end = -1;
  });
  EXPECT_TRUE(
      is_tensor(infer_call("reshape_like", {flat, like}, negative), {batch, seq, 768}, f32));
  EXPECT_EQ(pattern_of("reshape_like"), OpPattern::Injective);
  // Element counts that differ by a symbolic amount might agree at run time; static ones not.
  EXPECT_TRUE(is_tensor(infer_call("reshape_like", {flat, whole}), {seq, batch, 384}, f32));
  EXPECT_TRUE(
      type_error_mentions(call_op("reshape_like", {tensor_var("a", {6, 4}), tensor_var("b", {5})}),
                          {"cannot reshape", "24", "5"}));
  auto bad = attrs_of<ReshapeLikeAttrs>([](ReshapeLikeAttrs& a) { a.rhs_begin = 4; });
  EXPECT_TRUE(type_error_mentions(call_op("reshape_like", {flat, like}, bad),
                                  {"rhs_begin", "not a range"}));
}

TEST(TransformReshape, UnknownRankInput) {
  auto x = VarNode::make("x", TensorTypeNode::make_unknown_rank(f32));
  EXPECT_TRUE(is_tensor(infer_call("reshape", {x}, reshape_to({2, -1})), {2, Dim::any()}, f32));
  EXPECT_TRUE(type_error_mentions(call_op("reshape", {x}, reshape_to({0, -1})),
                                  {"newshape", "rank is unknown"}));
}

TEST(TransformReshape, Errors) {
  auto x = tensor_var("x", {4, 4});
  EXPECT_TRUE(type_error_mentions(
      call_op("reshape", {x}, reshape_to({3, 5})),
      {"reshape", "newshape", "[3, 5]", "15", "16", "Tensor[(4, 4), float32]"}));
  EXPECT_TRUE(type_error_mentions(call_op("reshape", {x}, reshape_to({3, -1})),
                                  {"newshape", "[3, -1]", "not divisible by 3"}));
  EXPECT_TRUE(type_error_mentions(call_op("reshape", {x}, reshape_to({-1, -1})),
                                  {"newshape", "more than one -1"}));
  EXPECT_TRUE(type_error_mentions(call_op("reshape", {x}, reshape_to({0, 0, 0})),
                                  {"newshape", "entry 2", "past the last"}));
  EXPECT_TRUE(type_error_mentions(call_op("reshape", {x}, reshape_to({-5, 16})),
                                  {"newshape", "entry 0", "-5"}));
  EXPECT_TRUE(type_error_mentions(call_op("reshape", {x}, reshape_to({-4, 3, 2, 4})),
                                  {"newshape", "cannot be split", "(3, 2)"}));
  EXPECT_TRUE(type_error_mentions(call_op("reshape", {x}, reshape_to({-4, -1, -1, 4})),
                                  {"newshape", "after -4"}));
  EXPECT_TRUE(type_error_mentions(call_op("reshape", {x}, reshape_to({4, -4})),
                                  {"newshape", "followed by"}));
  EXPECT_TRUE(type_error_mentions(call_op("reshape", {x}, reshape_to({-3, -3})),
                                  {"newshape", "entry 1", "past the last"}));
  auto z = tensor_var("z", {0, 4});
  EXPECT_TRUE(type_error_mentions(call_op("reshape", {z}, reshape_to({0, -1}, true)),
                                  {"newshape", "zero size", "-1"}));
}

TEST(TransformReshape, DynamicShapeTensor) {
  auto x = tensor_var("x", {n, 4});
  auto s = tensor_var("s", {3}, i64);
  EXPECT_TRUE(
      is_tensor(infer_call("dyn.reshape", {x, s}), {Dim::any(), Dim::any(), Dim::any()}, f32));
  auto t = tensor_var("t", {m}, i64);
  Type unknown = infer_call("dyn.reshape", {x, t});
  ASSERT_NE(as<TensorTypeNode>(unknown), nullptr);
  EXPECT_FALSE(as<TensorTypeNode>(unknown)->has_shape());
  EXPECT_TRUE(type_error_mentions(call_op("dyn.reshape", {x, tensor_var("f", {3}, f32)}),
                                  {"newshape", "integer"}));
  EXPECT_TRUE(type_error_mentions(call_op("dyn.reshape", {x, tensor_var("q", {3, 1}, i64)}),
                                  {"newshape", "rank 1"}));
}

// ---------------------------------------------------------------- transpose, squeeze, expand_dims

Ref<TransposeAttrs> axes_order(std::vector<int64_t> axes) {
  return attrs_of<TransposeAttrs>([&](TransposeAttrs& a) { a.axes = std::move(axes); });
}

TEST(TransformTranspose, PermutesAndReverses) {
  auto x = tensor_var("x", {n, 3, 4});
  EXPECT_TRUE(is_tensor(infer_call("transpose", {x}), {4, 3, n}, f32));
  EXPECT_TRUE(is_tensor(infer_call("transpose", {x}, axes_order({0, 2, 1})), {n, 4, 3}, f32));
  EXPECT_TRUE(is_tensor(infer_call("transpose", {x}, axes_order({-1, 0, -2})), {4, n, 3}, f32));
  EXPECT_EQ(pattern_of("transpose"), OpPattern::Injective);
}

TEST(TransformTranspose, Errors) {
  auto x = tensor_var("x", {2, 3, 4});
  EXPECT_TRUE(type_error_mentions(call_op("transpose", {x}, axes_order({0, 1})),
                                  {"axes", "[0, 1]", "each of the 3", "Tensor[(2, 3, 4)"}));
  EXPECT_TRUE(type_error_mentions(call_op("transpose", {x}, axes_order({0, 1, 3})),
                                  {"axes", "3", "out of range"}));
  EXPECT_TRUE(type_error_mentions(call_op("transpose", {x}, axes_order({0, 1, -3})),
                                  {"axes", "[0, 1, -3]", "twice"}));
}

Ref<SqueezeAttrs> squeeze_axes(std::vector<int64_t> axis) {
  return attrs_of<SqueezeAttrs>([&](SqueezeAttrs& a) { a.axis = std::move(axis); });
}

TEST(TransformSqueeze, AllUnitDimsOrListedOnes) {
  auto x = tensor_var("x", {1, n, 1, 3});
  EXPECT_TRUE(is_tensor(infer_call("squeeze", {x}), {n, 3}, f32));
  EXPECT_TRUE(is_tensor(infer_call("squeeze", {x}, squeeze_axes({2})), {1, n, 3}, f32));
  EXPECT_TRUE(is_tensor(infer_call("squeeze", {x}, squeeze_axes({-4, -2})), {n, 3}, f32));
  // A symbolic dim may be 1 at run time; squeezing it is the user's promise.
  EXPECT_TRUE(is_tensor(infer_call("squeeze", {x}, squeeze_axes({1})), {1, 1, 3}, f32));
  EXPECT_EQ(pattern_of("squeeze"), OpPattern::Injective);
}

TEST(TransformSqueeze, Errors) {
  auto x = tensor_var("x", {1, 2, 1});
  EXPECT_TRUE(type_error_mentions(call_op("squeeze", {x}, squeeze_axes({1})),
                                  {"axis", "axis 1", "size 2", "not 1"}));
  EXPECT_TRUE(
      type_error_mentions(call_op("squeeze", {x}, squeeze_axes({3})), {"axis", "out of range"}));
  EXPECT_TRUE(
      type_error_mentions(call_op("squeeze", {x}, squeeze_axes({0, -3})), {"axis", "twice"}));
}

Ref<ExpandDimsAttrs> expand_at(int64_t axis, int64_t num_newaxis = 1) {
  return attrs_of<ExpandDimsAttrs>([&](ExpandDimsAttrs& a) {
    a.axis = axis;
    a.num_newaxis = num_newaxis;
  });
}

TEST(TransformExpandDims, InsertsUnitDims) {
  auto x = tensor_var("x", {n, 3});
  EXPECT_TRUE(is_tensor(infer_call("expand_dims", {x}, expand_at(0)), {1, n, 3}, f32));
  EXPECT_TRUE(is_tensor(infer_call("expand_dims", {x}, expand_at(2)), {n, 3, 1}, f32));
  EXPECT_TRUE(is_tensor(infer_call("expand_dims", {x}, expand_at(-1)), {n, 3, 1}, f32));
  EXPECT_TRUE(is_tensor(infer_call("expand_dims", {x}, expand_at(-3, 2)), {1, 1, n, 3}, f32));
  EXPECT_TRUE(is_tensor(infer_call("expand_dims", {x}, expand_at(1, 0)), {n, 3}, f32));
  EXPECT_EQ(pattern_of("expand_dims"), OpPattern::Broadcast);
}

TEST(TransformExpandDims, Errors) {
  auto x = tensor_var("x", {2, 3});
  EXPECT_TRUE(type_error_mentions(call_op("expand_dims", {x}, expand_at(3)),
                                  {"axis", "3", "out of range", "-3 to 2"}));
  EXPECT_TRUE(type_error_mentions(call_op("expand_dims", {x}, expand_at(-4)),
                                  {"axis", "-4", "out of range"}));
  EXPECT_TRUE(
      type_error_mentions(call_op("expand_dims", {x}, expand_at(0, -1)), {"num_newaxis", "-1"}));
}

// ---------------------------------------------------------------- broadcast_to, flatten

TEST(TransformBroadcastTo, BroadcastsToTheGivenShape) {
  auto x = tensor_var("x", {3, 1});
  auto to = [](std::vector<int64_t> shape) {
    return attrs_of<BroadcastToAttrs>([&](BroadcastToAttrs& a) { a.shape = shape; });
  };
  EXPECT_TRUE(is_tensor(infer_call("broadcast_to", {x}, to({2, 3, 4})), {2, 3, 4}, f32));
  auto s = tensor_var("s", {n, 1});
  EXPECT_TRUE(is_tensor(infer_call("broadcast_to", {s}, to({5, 6})), {5, 6}, f32));
  EXPECT_TRUE(type_error_mentions(call_op("broadcast_to", {x}, to({2, 4, 4})),
                                  {"shape", "[2, 4, 4]", "dim 0 is 3", "expected 1 or 4"}));
  EXPECT_TRUE(
      type_error_mentions(call_op("broadcast_to", {x}, to({3})), {"shape", "[3]", "more dims"}));
  EXPECT_TRUE(
      type_error_mentions(call_op("broadcast_to", {x}, to({3, -1})), {"shape", "negative"}));
  EXPECT_EQ(pattern_of("broadcast_to"), OpPattern::Broadcast);
  // A static input dim other than 1 fixes the target's dim; the rest are unknown.
  auto shape = tensor_var("shape", {4}, i64);
  EXPECT_TRUE(is_tensor(infer_call("dyn.broadcast_to", {x, shape}),
                        {Dim::any(), Dim::any(), 3, Dim::any()}, f32));
  EXPECT_TRUE(type_error_mentions(call_op("dyn.broadcast_to", {x, tensor_var("s1", {1}, i64)}),
                                  {"more dims"}));
}

TEST(TransformFlatten, TwoDimensionalResult) {
  auto flat = [](int64_t axis) {
    return attrs_of<FlattenAttrs>([&](FlattenAttrs& a) { a.axis = axis; });
  };
  auto x = tensor_var("x", {n, 3, 4, 5});
  EXPECT_TRUE(is_tensor(infer_call("flatten", {x}), {n, 60}, f32));
  EXPECT_TRUE(is_tensor(infer_call("flatten", {x}, flat(0)), {1, n * 60}, f32));
  EXPECT_TRUE(is_tensor(infer_call("flatten", {x}, flat(4)), {n * 60, 1}, f32));
  EXPECT_TRUE(is_tensor(infer_call("flatten", {x}, flat(-2)), {n * 3, 20}, f32));
  EXPECT_TRUE(type_error_mentions(call_op("flatten", {x}, flat(5)),
                                  {"axis", "5", "out of range", "-4 to 4"}));
  EXPECT_TRUE(type_error_mentions(call_op("flatten", {x}, flat(-5)), {"axis", "-5"}));
}

// ---------------------------------------------------------------- tile, repeat, reverse, cast

TEST(TransformTile, NumpyPadding) {
  auto tile = [](std::vector<int64_t> reps) {
    return attrs_of<TileAttrs>([&](TileAttrs& a) { a.reps = reps; });
  };
  auto x = tensor_var("x", {n, 3});
  EXPECT_TRUE(is_tensor(infer_call("tile", {x}, tile({2, 2})), {n * 2, 6}, f32));
  EXPECT_TRUE(is_tensor(infer_call("tile", {x}, tile({4})), {n, 12}, f32));
  EXPECT_TRUE(is_tensor(infer_call("tile", {x}, tile({2, 1, 1})), {2, n, 3}, f32));
  EXPECT_TRUE(
      type_error_mentions(call_op("tile", {x}, tile({1, -2})), {"reps", "[1, -2]", "negative"}));
}

TEST(TransformRepeat, RepeatsAlongAxis) {
  auto repeat = [](int64_t repeats, int64_t axis) {
    return attrs_of<RepeatAttrs>([&](RepeatAttrs& a) {
      a.repeats = repeats;
      a.axis = axis;
    });
  };
  auto x = tensor_var("x", {n, 3});
  EXPECT_TRUE(is_tensor(infer_call("repeat", {x}, repeat(2, 0)), {n * 2, 3}, f32));
  EXPECT_TRUE(is_tensor(infer_call("repeat", {x}, repeat(3, -1)), {n, 9}, f32));
  EXPECT_TRUE(
      type_error_mentions(call_op("repeat", {x}, repeat(2, 2)), {"axis", "2", "out of range"}));
  EXPECT_TRUE(
      type_error_mentions(call_op("repeat", {x}, repeat(-1, 0)), {"repeats", "-1", ">= 0"}));
}

TEST(TransformReverse, KeepsTheType) {
  auto rev = [](int64_t axis) {
    return attrs_of<ReverseAttrs>([&](ReverseAttrs& a) { a.axis = axis; });
  };
  auto x = tensor_var("x", {n, 3});
  EXPECT_TRUE(is_tensor(infer_call("reverse", {x}, rev(-1)), {n, 3}, f32));
  EXPECT_TRUE(
      type_error_mentions(call_op("reverse", {x}, rev(-3)), {"axis", "-3", "out of range"}));
  EXPECT_EQ(pattern_of("reverse"), OpPattern::Injective);
}

TEST(TransformCast, ChangesOnlyTheDtype) {
  auto to = [](DataType dtype) {
    return attrs_of<CastAttrs>([&](CastAttrs& a) { a.dtype = dtype; });
  };
  auto x = tensor_var("x", {n, 3}, f32);
  EXPECT_TRUE(is_tensor(infer_call("cast", {x}, to(f16)), {n, 3}, f16));
  auto u = VarNode::make("u", TensorTypeNode::make_unknown_rank(f32));
  EXPECT_TRUE(
      types_equal(infer_call("cast", {u}, to(i32)), TensorTypeNode::make_unknown_rank(i32)));
  auto t = VarNode::make("t", TupleTypeNode::make({TensorTypeNode::make({2}, f32)}));
  EXPECT_TRUE(type_error_mentions(call_op("cast", {t}, to(i32)), {"data", "must be a tensor"}));
  EXPECT_EQ(pattern_of("cast"), OpPattern::ElemWise);
}

TEST(TransformReinterpret, KeepsTheShapeAndNeedsTheSameWidth) {
  auto to = [](DataType dtype) {
    return attrs_of<CastAttrs>([&](CastAttrs& a) { a.dtype = dtype; });
  };
  auto x = tensor_var("x", {n, 3}, f32);
  EXPECT_TRUE(is_tensor(infer_call("reinterpret", {x}, to(i32)), {n, 3}, i32));
  EXPECT_TRUE(is_tensor(
      infer_call("reinterpret", {tensor_var("b", {2}, DataType::boolean())}, to(DataType::uint8())),
      {2}, DataType::uint8()));
  EXPECT_TRUE(type_error_mentions(call_op("reinterpret", {x}, to(i64)),
                                  {"float32", "int64", "widths differ"}));
  EXPECT_TRUE(type_error_mentions(call_op("reinterpret", {x}, to(f16)), {"widths differ"}));
  EXPECT_EQ(pattern_of("reinterpret"), OpPattern::ElemWise);
}

// ---------------------------------------------------------------- layout_transform

Ref<LayoutTransformAttrs> layouts(std::string src, std::string dst) {
  return attrs_of<LayoutTransformAttrs>([&](LayoutTransformAttrs& a) {
    a.src_layout = std::move(src);
    a.dst_layout = std::move(dst);
  });
}

TEST(TransformLayoutTransform, BlockedLayouts) {
  auto x = tensor_var("x", {1, 64, 56, 56});
  EXPECT_TRUE(is_tensor(infer_call("layout_transform", {x}, layouts("NCHW", "NCHW16c")),
                        {1, 4, 56, 56, 16}, f32));
  EXPECT_TRUE(is_tensor(infer_call("layout_transform", {x}, layouts("NCHW", "NHWC")),
                        {1, 56, 56, 64}, f32));
  auto b = tensor_var("b", {1, 4, 56, 56, 16});
  EXPECT_TRUE(is_tensor(infer_call("layout_transform", {b}, layouts("NCHW16c", "NCHW")),
                        {1, 64, 56, 56}, f32));
  EXPECT_TRUE(is_tensor(infer_call("layout_transform", {b}, layouts("NCHW16c", "NCHW8c")),
                        {1, 8, 56, 56, 8}, f32));
  auto w = tensor_var("w", {64, 32, 3, 3});
  EXPECT_TRUE(is_tensor(infer_call("layout_transform", {w}, layouts("OIHW", "OIHW16i16o")),
                        {4, 2, 3, 3, 16, 16}, f32));
  EXPECT_EQ(pattern_of("layout_transform"), OpPattern::Injective);
}

TEST(TransformLayoutTransform, SymbolicDims) {
  auto x = tensor_var("x", {n, m * 16, 7, 7});
  EXPECT_TRUE(is_tensor(infer_call("layout_transform", {x}, layouts("NCHW", "NCHW16c")),
                        {n, m, 7, 7, 16}, f32));
  auto c = Dim::var("c");
  auto y = tensor_var("y", {n, c, 7, 7});
  EXPECT_TRUE(is_tensor(infer_call("layout_transform", {y}, layouts("NCHW", "NCHW4c")),
                        {n, floordiv(c, 4), 7, 7, 4}, f32));
  auto b = tensor_var("b", {n, c, 7, 7, 8});
  EXPECT_TRUE(is_tensor(infer_call("layout_transform", {b}, layouts("NCHW8c", "NHWC")),
                        {n, 7, 7, c * 8}, f32));
}

TEST(TransformLayoutTransform, Errors) {
  auto x = tensor_var("x", {1, 24, 5, 5});
  EXPECT_TRUE(type_error_mentions(call_op("layout_transform", {x}, layouts("NCHW", "NCHW16c")),
                                  {"dst_layout", "NCHW16c", "24", "blocks of 16"}));
  EXPECT_TRUE(type_error_mentions(call_op("layout_transform", {x}, layouts("NCH", "NHC")),
                                  {"src_layout", "\"NCH\"", "3 axes", "rank 4"}));
  EXPECT_TRUE(type_error_mentions(call_op("layout_transform", {x}, layouts("NCHW", "NCDW")),
                                  {"src_layout", "dst_layout", "same axes"}));
  EXPECT_TRUE(type_error_mentions(call_op("layout_transform", {x}, layouts("NCHW", "NCHWc")),
                                  {"dst_layout", "block size", "'c'"}));
  EXPECT_TRUE(type_error_mentions(call_op("layout_transform", {x}, layouts("NCHW", "NCHW16")),
                                  {"dst_layout", "ends in a block size"}));
  EXPECT_TRUE(type_error_mentions(call_op("layout_transform", {x}, layouts("NCHW", "NCH4hW4h")),
                                  {"dst_layout", "twice"}));
  EXPECT_TRUE(type_error_mentions(call_op("layout_transform", {x}, layouts("NCHW", "NHW4c")),
                                  {"dst_layout", "no axis 'C'"}));
  EXPECT_TRUE(type_error_mentions(call_op("layout_transform", {x}, layouts("NC-W", "NCHW")),
                                  {"src_layout", "'-'"}));
  EXPECT_TRUE(type_error_mentions(call_op("layout_transform", {x}, layouts("", "NCHW")),
                                  {"src_layout", "empty"}));
  EXPECT_TRUE(type_error_mentions(call_op("layout_transform", {x}, layouts("NC4hW", "NCHW")),
                                  {"src_layout", "no axis 'H'"}));
  auto b = tensor_var("b", {1, 2, 5, 5, 8});
  EXPECT_TRUE(type_error_mentions(call_op("layout_transform", {b}, layouts("NCHW16c", "NCHW")),
                                  {"src_layout", "block of 16", "has 8"}));
}

// ---------------------------------------------------------------- einsum

Ref<EinsumAttrs> equation(std::string eq) {
  return attrs_of<EinsumAttrs>([&](EinsumAttrs& a) { a.equation = std::move(eq); });
}

TEST(TransformEinsum, ExplicitAndImplicitOutputs) {
  auto a = tensor_var("a", {n, 3, 4});
  auto b = tensor_var("b", {n, 4, 5});
  EXPECT_TRUE(is_tensor(infer_call("einsum", {tuple_of({a, b})}, equation("bij,bjk->bik")),
                        {n, 3, 5}, f32));
  EXPECT_TRUE(
      is_tensor(infer_call("einsum", {tuple_of({a, b})}, equation("bij, bjk")), {3, 5}, f32));
  EXPECT_TRUE(is_tensor(infer_call("einsum", {tuple_of({a})}, equation("bij->")), {}, f32));
  auto sq = tensor_var("sq", {4, 4});
  EXPECT_TRUE(is_tensor(infer_call("einsum", {tuple_of({sq})}, equation("ii->i")), {4}, f32));
  EXPECT_TRUE(is_tensor(infer_call("einsum", {tuple_of({sq})}, equation("ji")), {4, 4}, f32));
  EXPECT_EQ(pattern_of("einsum"), OpPattern::Injective);
}

TEST(TransformEinsum, EllipsisBroadcasts) {
  auto a = tensor_var("a", {2, 1, 3, 4});
  auto b = tensor_var("b", {m, 4, 5});
  EXPECT_TRUE(is_tensor(infer_call("einsum", {tuple_of({a, b})}, equation("...ij,...jk->...ik")),
                        {2, m, 3, 5}, f32));
  EXPECT_TRUE(is_tensor(infer_call("einsum", {tuple_of({a, b})}, equation("...ij,...jk")),
                        {2, m, 3, 5}, f32));
  auto ones = tensor_var("ones", {1, 4});
  EXPECT_TRUE(is_tensor(
      infer_call("einsum", {tuple_of({ones, tensor_var("c", {3, 4})})}, equation("ij,ij->ij")),
      {3, 4}, f32));
}

TEST(TransformEinsum, Errors) {
  auto a = tensor_var("a", {3, 4});
  auto b = tensor_var("b", {5, 6});
  EXPECT_TRUE(type_error_mentions(call_op("einsum", {tuple_of({a, b})}, equation("ij,jk->ik")),
                                  {"equation", "label 'j'", "4", "5"}));
  EXPECT_TRUE(type_error_mentions(call_op("einsum", {tuple_of({a})}, equation("ij,jk->ik")),
                                  {"equation", "2 operands", "1 tensors"}));
  EXPECT_TRUE(type_error_mentions(call_op("einsum", {tuple_of({a})}, equation("ijk->i")),
                                  {"equation", "3 labels", "Tensor[(3, 4), float32]"}));
  EXPECT_TRUE(type_error_mentions(call_op("einsum", {tuple_of({a})}, equation("ij->iz")),
                                  {"equation", "'z'", "no operand"}));
  EXPECT_TRUE(type_error_mentions(call_op("einsum", {tuple_of({a})}, equation("ij->ii")),
                                  {"equation", "'i'", "twice"}));
  EXPECT_TRUE(type_error_mentions(call_op("einsum", {tuple_of({a})}, equation("i1->i")),
                                  {"equation", "'1'"}));
  EXPECT_TRUE(type_error_mentions(call_op("einsum", {tuple_of({a})}, equation("ij->i->j")),
                                  {"equation", "more than one"}));
  EXPECT_TRUE(type_error_mentions(
      call_op("einsum", {tuple_of({a, tensor_var("c", {4, 2}, f16)})}, equation("ij,jk->ik")),
      {"field 1", "float16"}));
}

// ---------------------------------------------------------------- text form

// Succeeds when the printed call parses back to an equal call.
::testing::AssertionResult round_trips(const Expr& call) {
  std::string text = print_expr(call);
  Expr back = parse_expr(text);
  if (structural_equal(call, back, true)) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << text << " parses back as " << print_expr(back);
}

TEST(TransformAttrsText, PrintOnlyNonDefaultsAndParseBack) {
  auto x = tensor_var("x", {n, 4, 6});
  Expr reshape = call_op("reshape", {x}, reshape_to({0, -1}, true));
  EXPECT_NE(print_expr(reshape).find("newshape=[0, -1], allowzero=True"), std::string::npos)
      << print_expr(reshape);
  auto to_f16 = attrs_of<CastAttrs>([](CastAttrs& a) { a.dtype = f16; });
  std::vector<Expr> calls = {
      reshape,
      call_op("cast", {x}, to_f16),
      call_op("transpose", {x}, axes_order({2, 0, 1})),
      call_op("layout_transform", {tensor_var("d", {1, 32, 7, 7})}, layouts("NCHW", "NCHW8c")),
      call_op("einsum", {tuple_of({x, x})}, equation("bij,bkj->bik")),
      call_op("expand_dims", {x}, expand_at(-1, 2)),
  };
  for (const Expr& call : calls) EXPECT_TRUE(round_trips(call));
}

}  // namespace
}  // namespace anvil::ir
