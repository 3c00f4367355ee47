// DynamicToStatic: dyn.* calls whose shape operands fold to constants become the static ops
// with the same meaning; operands that depend on graph inputs keep the call dynamic.
#include "anvil/transform/passes.h"
#include "transform/pass_test_util.h"

namespace anvil::transform {
namespace {

using testing::parse;
using testing::print;

// Runs both modules on the same random inputs with the reference interpreter.
void expect_same_values(const ir::IRModule& before, const ir::IRModule& after, uint64_t seed) {
  std::vector<Tensor> inputs = testing::random_inputs(before, seed);
  testing::expect_same_outputs(before, after, inputs, inputs, 0);
}

// The new shape is computed from shape_of of a static tensor: the subgraph folds first.
TEST(DynamicToStatic, ReshapeBroadcastAndTileFromFoldedShapes) {
  ir::IRModule mod = parse(R"(
def @main(%x: Tensor[(2, 3, 4), float32], %y: Tensor[(3, 1), float32]) {
  %0 = shape_of(%x);
  %1 = strided_slice(%0, begin=[0], end=[1], strides=[1], axes=[0]);
  %2 = concatenate((%1, const([-1], shape=(1), dtype=int64)));
  %3 = dyn.reshape(%x, %2);
  %4 = dyn.broadcast_to(%y, const([2, 3, 4], shape=(3), dtype=int64));
  %5 = dyn.tile(%y, const([2, 1], shape=(2), dtype=int32));
  (%3, %4, %5)
}
)");
  ir::IRModule after = dynamic_to_static(mod);
  EXPECT_EQ(print(after), R"(#[version = "0.0.5"]
def @main(%x: Tensor[(2, 3, 4), float32], %y: Tensor[(3, 1), float32]) -> (Tensor[(2, 12), float32], Tensor[(2, 3, 4), float32], Tensor[(6, 1), float32]) {
  %0 = reshape(%x, newshape=[2, -1]);
  %1 = broadcast_to(%y, shape=[2, 3, 4]);
  %2 = tile(%y, reps=[2, 1]);
  (%0, %1, %2)
}
)");
  expect_same_values(mod, after, 1);
}

// Squeeze without axes names the unit dims; Unsqueeze's output positions become one
// expand_dims per position, in ascending order.
TEST(DynamicToStatic, SqueezeExpandDimsAndFull) {
  ir::IRModule mod = parse(R"(
def @main(%x: Tensor[(1, 3, 1), float32], %v: Tensor[(), float32]) {
  %0 = dyn.squeeze(%x, const([], shape=(0), dtype=int64));
  %1 = dyn.squeeze(%x, const([-1], shape=(1), dtype=int64));
  %2 = dyn.expand_dims(%x, const([4, 0], shape=(2), dtype=int64));
  %3 = dyn.full(%v, const([2, 2], shape=(2), dtype=int64));
  (%0, %1, %2, %3)
}
)");
  ir::IRModule after = dynamic_to_static(mod);
  EXPECT_EQ(print(after), R"(#[version = "0.0.5"]
def @main(%x: Tensor[(1, 3, 1), float32], %v: float32) -> (Tensor[(3), float32], Tensor[(1, 3), float32], Tensor[(1, 1, 3, 1, 1), float32], Tensor[(2, 2), float32]) {
  %0 = squeeze(%x, axis=[0, 2]);
  %1 = squeeze(%x, axis=[-1]);
  %2 = expand_dims(%x);
  %3 = expand_dims(%2, axis=4);
  %4 = full(%v, shape=[2, 2]);
  (%0, %1, %3, %4)
}
)");
  expect_same_values(mod, after, 2);
}

// The slice keeps INT64_MAX ("to the end") exactly. pads lists the befores of axes [1, 0],
// then their afters; cropping (a negative pad) has no nn.pad form and stays dynamic.
TEST(DynamicToStatic, StridedSliceAndPad) {
  ir::IRModule mod = parse(R"(
def @main(%x: Tensor[(4, 5), float32]) {
  %0 = dyn.strided_slice(%x, const([1, -1], shape=(2), dtype=int64), const([9223372036854775807, 0], shape=(2), dtype=int64), const([1, -2], shape=(2), dtype=int64), const([0, 1], shape=(2), dtype=int64));
  %1 = dyn.nn.pad(%x, const([1, 0, 2, 3], shape=(4), dtype=int64), 0f, const([1, 0], shape=(2), dtype=int64), pad_mode="reflect");
  %2 = dyn.nn.pad(%x, const([0, -1], shape=(2), dtype=int64), 0f, const([1], shape=(1), dtype=int64));
  (%0, %1, %2)
}
)");
  ir::IRModule after = dynamic_to_static(mod);
  EXPECT_EQ(print(after), R"(#[version = "0.0.5"]
def @main(%x: Tensor[(4, 5), float32]) -> (Tensor[(3, 2), float32], Tensor[(7, 8), float32], Tensor[(?, ?), float32]) {
  %0 = strided_slice(%x, begin=[1, -1], end=[9223372036854775807, 0], strides=[1, -2], axes=[0, 1]);
  %1 = nn.pad(%x, 0f, pad_width=[0, 3, 1, 2], pad_mode="reflect");
  %2 = dyn.nn.pad(%x, const([0, -1], shape=(2), dtype=int64), 0f, const([1], shape=(1), dtype=int64));
  (%0, %1, %2)
}
)");
  expect_same_values(mod, after, 3);
}

// ONNX TopK's k = 0 (nothing selected) has no static form; k = 2 does.
TEST(DynamicToStatic, ReductionTopkCumsumOneHot) {
  ir::IRModule mod = parse(R"(
def @main(%x: Tensor[(2, 3, 4), float32]) {
  %0 = dyn.sum(%x, const([0, -1], shape=(2), dtype=int64), keepdims=True);
  %1 = dyn.max(%x, const([1], shape=(1), dtype=int32));
  %2 = dyn.topk(%x, 2i64, axis=1);
  %3 = %2.0;
  %4 = dyn.topk(%x, 0i64, axis=1);
  %5 = %4.1;
  %6 = dyn.cumsum(%x, 1i32, exclusive=True);
  %7 = dyn.one_hot(const([0, 2, -1], shape=(3), dtype=int64), 1f, 0f, 4i64, axis=0);
  (%0, %1, %3, %5, %6, %7)
}
)");
  ir::IRModule after = dynamic_to_static(mod);
  EXPECT_EQ(print(after), R"(#[version = "0.0.5"]
def @main(%x: Tensor[(2, 3, 4), float32]) -> (Tensor[(1, 3, 1), float32], Tensor[(2, 4), float32], Tensor[(2, 2, 4), float32], Tensor[(2, ?, 4), int64], Tensor[(2, 3, 4), float32], Tensor[(4, 3), float32]) {
  %0 = sum(%x, axis=[0, -1], keepdims=True);
  %1 = max(%x, axis=[1]);
  %2 = topk(%x, k=2, axis=1);
  %3 = %2.0;
  %4 = dyn.topk(%x, 0i64, axis=1);
  %5 = %4.1;
  %6 = cumsum(%x, axis=1, exclusive=True);
  %7 = one_hot(const([0, 2, -1], shape=(3), dtype=int64), 1f, 0f, depth=4, axis=0);
  (%0, %1, %3, %5, %6, %7)
}
)");
  expect_same_values(mod, after, 4);
}

// Resize of the spatial axes by scales or sizes becomes image.resize2d (the dyn op's cubic_alpha
// carries over); max_unpool's whole output shape becomes the spatial output_size.
TEST(DynamicToStatic, ResizeCol2ImAndMaxUnpool) {
  ir::IRModule mod = parse(R"(
def @main(%x: Tensor[(1, 2, 3, 4), float32], %c: Tensor[(1, 4, 4), float32], %u: Tensor[(1, 2, 2, 2), float32]) {
  %0 = dyn.image.resize(%x, const([], shape=(0), dtype=float32), const([1, 1, 2, 0.5], shape=(4), dtype=float32), target="scales", method="nearest_neighbor", coordinate_transformation_mode="asymmetric", rounding_method="floor");
  %1 = dyn.image.resize(%x, const([], shape=(0), dtype=float32), const([5, 2], shape=(2), dtype=int64), target="sizes", axes=[2, 3]);
  %2 = dyn.col2im(%c, const([3, 3], shape=(2), dtype=int64), const([2, 2], shape=(2), dtype=int64));
  %3 = dyn.nn.max_unpool2d(%u, const([0, 3, 8, 15, 17, 18, 20, 31], shape=(1, 2, 2, 2), dtype=int64), const([1, 2, 4, 4], shape=(4), dtype=int64), pool_size=[2, 2], strides=[2, 2]);
  (%0, %1, %2, %3)
}
)");
  ir::IRModule after = dynamic_to_static(mod);
  EXPECT_EQ(print(after), R"(#[version = "0.0.5"]
def @main(%x: Tensor[(1, 2, 3, 4), float32], %c: Tensor[(1, 4, 4), float32], %u: Tensor[(1, 2, 2, 2), float32]) -> (Tensor[(1, 2, 6, 2), float32], Tensor[(1, 2, 5, 2), float32], Tensor[(1, 1, 3, 3), float32], Tensor[(1, 2, 4, 4), float32]) {
  %0 = image.resize2d(%x, scales=[2f, 0.5f], method="nearest_neighbor", coordinate_transformation_mode="asymmetric", rounding_method="floor", cubic_alpha=-0.75f);
  %1 = image.resize2d(%x, size=[5, 2], cubic_alpha=-0.75f);
  %2 = col2im(%c, image_shape=[3, 3], block_shape=[2, 2]);
  %3 = nn.max_unpool2d(%u, const([0, 3, 8, 15, 17, 18, 20, 31], shape=(1, 2, 2, 2), dtype=int64), pool_size=[2, 2], strides=[2, 2], output_size=[4, 4]);
  (%0, %1, %2, %3)
}
)");
  expect_same_values(mod, after, 5);
}

// The static reshape's type makes shape_of of its output a constant, which the next round
// turns into full's shape.
TEST(DynamicToStatic, RepeatsUntilNothingChanges) {
  ir::IRModule mod = parse(R"(
def @main(%x: Tensor[(2, 6), float32]) {
  %0 = dyn.reshape(%x, const([3, 4], shape=(2), dtype=int64));
  %1 = shape_of(%0);
  %2 = dyn.full(0.5f, %1);
  add(%0, %2)
}
)");
  ir::IRModule after = dynamic_to_static(mod);
  EXPECT_EQ(print(after), R"(#[version = "0.0.5"]
def @main(%x: Tensor[(2, 6), float32]) -> Tensor[(3, 4), float32] {
  %0 = reshape(%x, newshape=[3, 4]);
  %1 = full(0.5f, shape=[3, 4]);
  add(%0, %1)
}
)");
  expect_same_values(mod, after, 6);
}

// Part of the shape comes from a graph input: the constant part folds, the reshape stays.
TEST(DynamicToStatic, OperandFromGraphInputStaysDynamic) {
  ir::IRModule mod = parse(R"(
def @main(%x: Tensor[(2, 6), float32], %s: Tensor[(1), int64]) {
  %0 = shape_of(%x);
  %1 = strided_slice(%0, begin=[0], end=[1], strides=[1], axes=[0]);
  %2 = concatenate((%1, %s));
  dyn.reshape(%x, %2)
}
)");
  ir::IRModule after = dynamic_to_static(mod);
  EXPECT_EQ(print(after), R"(#[version = "0.0.5"]
def @main(%x: Tensor[(2, 6), float32], %s: Tensor[(1), int64]) -> Tensor[(?, ?), float32] {
  %0 = (const([2], shape=(1), dtype=int64), %s);
  %1 = concatenate(%0);
  dyn.reshape(%x, %1)
}
)");
  Tensor x = testing::random_tensor({2, 6}, 7);
  Tensor s = Tensor::empty({1}, DataType::int64());
  s.data_as<int64_t>()[0] = -1;
  testing::expect_same_outputs(mod, after, {x, s}, {x, s}, 0);
}

// Values the static op rejects (a shape the data does not broadcast to) leave the call for
// run time, which reports the problem.
TEST(DynamicToStatic, KeepsCallsTheStaticOpRejects) {
  const char* text = R"(#[version = "0.0.5"]
def @main(%x: Tensor[(3, 2), float32]) -> Tensor[(3, 2), float32] {
  dyn.broadcast_to(%x, const([4, 4], shape=(2), dtype=int64))
}
)";
  EXPECT_EQ(print(dynamic_to_static(parse(text))), text);
}

}  // namespace
}  // namespace anvil::transform
