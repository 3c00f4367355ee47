// SimplifyExpr: identity arithmetic, no-op shape ops, redundant casts and pairs of
// transposes, reshapes and layout transforms removed.
#include "anvil/transform/passes.h"
#include "transform/pass_test_util.h"

namespace anvil::transform {
namespace {

using testing::parse;
using testing::print;

TEST(SimplifyExpr, RemovesIdentityArithmetic) {
  ir::IRModule mod = parse(R"(
def @main(%x: Tensor[(2, 3), float32]) {
  %0 = add(%x, 0f);
  %1 = multiply(1f, %0);
  %2 = subtract(%1, const([0, 0, 0], shape=(3), dtype=float32));
  %3 = divide(%2, 1f);
  %4 = add(0f, %3);
  nn.relu(%4)
}
)");
  ir::IRModule after = simplify_expr(mod);
  EXPECT_EQ(print(after), R"(#[version = "0.0.5"]
def @main(%x: Tensor[(2, 3), float32]) -> Tensor[(2, 3), float32] {
  nn.relu(%x)
}
)");
  std::vector<Tensor> inputs = testing::random_inputs(mod, 4);
  testing::expect_same_outputs(mod, after, inputs, inputs, 0);
}

// A constant that broadcasts x to a larger shape, a subtraction from zero and a constant
// that is not the identity keep their ops.
TEST(SimplifyExpr, KeepsArithmeticThatChangesValuesOrShapes) {
  const char* text = R"(#[version = "0.0.5"]
def @main(%x: Tensor[(3), float32]) -> (Tensor[(2, 3), float32], Tensor[(3), float32], Tensor[(3), float32], Tensor[(3), float32]) {
  %0 = add(%x, const([0, 0, 0, 0, 0, 0], shape=(2, 3), dtype=float32));
  %1 = subtract(0f, %x);
  %2 = multiply(%x, const([1, 2, 1], shape=(3), dtype=float32));
  %3 = divide(1f, %x);
  (%0, %1, %2, %3)
}
)";
  EXPECT_EQ(print(simplify_expr(parse(text))), text);
}

TEST(SimplifyExpr, MergesAndRemovesShapeOps) {
  ir::IRModule mod = parse(R"(
def @main(%x: Tensor[(2, 3, 4), float32]) {
  %0 = reshape(%x, newshape=[6, 4]);
  %1 = reshape(%0, newshape=[4, -1]);
  %2 = reshape(%1, newshape=[3, 8]);
  %3 = expand_dims(%2, axis=0, num_newaxis=0);
  %4 = squeeze(%3, axis=[]);
  %5 = reshape(%4, newshape=[3, 8]);
  %6 = cast(%5, dtype="float32");
  cast(%6, dtype="float16")
}
)");
  ir::IRModule after = simplify_expr(mod);
  EXPECT_EQ(print(after), R"(#[version = "0.0.5"]
def @main(%x: Tensor[(2, 3, 4), float32]) -> Tensor[(3, 8), float16] {
  %0 = reshape(%x, newshape=[3, 8]);
  cast(%0, dtype="float16")
}
)");
  std::vector<Tensor> inputs = testing::random_inputs(mod, 6);
  testing::expect_same_outputs(mod, after, inputs, inputs, 0);
}

// transpose(transpose(x, [1, 2, 0]), [2, 0, 1]) is the identity; a pair that is not becomes
// one transpose with the composed axes (output dim i reads input dim inner[outer[i]]).
TEST(SimplifyExpr, MergesTransposes) {
  ir::IRModule mod = parse(R"(
def @main(%x: Tensor[(2, 3, 4), float32]) {
  %0 = transpose(%x, axes=[1, 2, 0]);
  %1 = transpose(%0, axes=[2, 0, 1]);
  %2 = transpose(%1, axes=[0, 2, 1]);
  %3 = transpose(%2, axes=[1, 0, 2]);
  %4 = transpose(%3, axes=[0, 1, 2]);
  transpose(%4)
}
)");
  ir::IRModule after = simplify_expr(mod);
  // [0, 2, 1] then [1, 0, 2] is [2, 0, 1]; then the reversal [2, 1, 0] gives [1, 0, 2].
  EXPECT_EQ(print(after), R"(#[version = "0.0.5"]
def @main(%x: Tensor[(2, 3, 4), float32]) -> Tensor[(3, 2, 4), float32] {
  transpose(%x, axes=[1, 0, 2])
}
)");
  std::vector<Tensor> inputs = testing::random_inputs(mod, 7);
  testing::expect_same_outputs(mod, after, inputs, inputs, 0);
}

TEST(SimplifyExpr, CancelsLayoutTransformPairs) {
  ir::IRModule mod = parse(R"(
def @main(%x: Tensor[(1, 32, 4, 4), float32]) {
  %0 = layout_transform(%x, src_layout="NCHW", dst_layout="NCHW16c");
  %1 = layout_transform(%0, src_layout="NCHW16c", dst_layout="NCHW");
  %2 = nn.relu(%1);
  %3 = layout_transform(%2, src_layout="NCHW", dst_layout="NCHW8c");
  %4 = layout_transform(%3, src_layout="NCHW8c", dst_layout="NCHW16c");
  layout_transform(%4, src_layout="NCHW16c", dst_layout="NCHW16c")
}
)");
  EXPECT_EQ(print(simplify_expr(mod)), R"(#[version = "0.0.5"]
def @main(%x: Tensor[(1, 32, 4, 4), float32]) -> Tensor[(1, 2, 4, 4, 16), float32] {
  %0 = nn.relu(%x);
  %1 = layout_transform(%0, src_layout="NCHW", dst_layout="NCHW8c");
  layout_transform(%1, src_layout="NCHW8c", dst_layout="NCHW16c")
}
)");
}

// The example of docs/passes.md: NCHW -> NHWC -> NCHW, a cancelling layout pair and a
// multiply by one leave only the relu.
TEST(SimplifyExpr, CollapsesChainsOfCleanUps) {
  ir::IRModule mod = parse(R"(
def @main(%x: Tensor[(1, 16, 2, 2), float32]) {
  %0 = transpose(%x, axes=[0, 2, 3, 1]);
  %1 = transpose(%0, axes=[0, 3, 1, 2]);
  %2 = layout_transform(%1, src_layout="NCHW", dst_layout="NCHW16c");
  %3 = layout_transform(%2, src_layout="NCHW16c", dst_layout="NCHW");
  %4 = multiply(%3, 1f);
  nn.relu(%4)
}
)");
  EXPECT_EQ(print(simplify_expr(mod)), R"(#[version = "0.0.5"]
def @main(%x: Tensor[(1, 16, 2, 2), float32]) -> Tensor[(1, 16, 2, 2), float32] {
  nn.relu(%x)
}
)");
}

}  // namespace
}  // namespace anvil::transform
