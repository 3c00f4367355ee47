// FoldScaleAxis: per-output-channel scales folded into constant conv2d / dense weights.
#include "anvil/testing/workloads.h"
#include "anvil/transform/passes.h"
#include "transform/pass_test_util.h"

namespace anvil::transform {
namespace {

using testing::parse;
using testing::print;

// Weight rows (output channels) [1, 2] and [3, 4] scaled by [2, 0.5]: [2, 4] and [1.5, 2];
// the bias [1, -2] by the same scales: [2, -1].
TEST(FoldScaleAxis, DenseWithBiasTakesTheScale) {
  ir::IRModule mod = parse(R"(
def @main(%x: Tensor[(3, 2), float32]) {
  %0 = nn.dense(%x, const([1, 2, 3, 4], shape=(2, 2), dtype=float32));
  %1 = nn.bias_add(%0, const([1, -2], shape=(2), dtype=float32), axis=-1);
  multiply(%1, const([2, 0.5], shape=(2), dtype=float32))
}
)");
  ir::IRModule after = fold_scale_axis(mod);
  EXPECT_EQ(print(after), R"(#[version = "0.0.5"]
def @main(%x: Tensor[(3, 2), float32]) -> Tensor[(3, 2), float32] {
  %0 = nn.dense(%x, const([2, 4, 1.5, 2], shape=(2, 2), dtype=float32));
  nn.bias_add(%0, const([2, -1], shape=(2), dtype=float32), axis=-1)
}
)");
  std::vector<Tensor> inputs = testing::random_inputs(mod, 1);
  testing::expect_same_outputs(mod, after, inputs, inputs);
}

// A (C, 1, 1) scale after conv2d scales the weight's output channels, through an add of a
// per-channel constant and a relu (every scale positive), and merges with an inner scale.
TEST(FoldScaleAxis, ConvThroughAddReluAndInnerScale) {
  ir::IRModule mod = parse(R"(
def @main(%x: Tensor[(1, 1, 3, 3), float32]) {
  %0 = nn.conv2d(%x, const([1, 2], shape=(2, 1, 1, 1), dtype=float32), channels=2, kernel_size=[1, 1]);
  %1 = multiply(%0, const([3, 0.5], shape=(2, 1, 1), dtype=float32));
  %2 = add(%1, const([1, 1], shape=(2, 1, 1), dtype=float32));
  %3 = nn.relu(%2);
  multiply(%3, const([2, 4], shape=(2, 1, 1), dtype=float32))
}
)");
  ir::IRModule after = fold_scale_axis(mod);
  // Channel 0: 1 * 3 * 2 = 6 and shift 1 * 2; channel 1: 2 * 0.5 * 4 = 4 and shift 1 * 4.
  EXPECT_EQ(print(after), R"(#[version = "0.0.5"]
def @main(%x: Tensor[(1, 1, 3, 3), float32]) -> Tensor[(1, 2, 3, 3), float32] {
  %0 = nn.conv2d(%x, const([6, 4], shape=(2, 1, 1, 1), dtype=float32), channels=2, kernel_size=[1, 1]);
  %1 = add(%0, const([2, 4], shape=(2, 1, 1), dtype=float32));
  nn.relu(%1)
}
)");
  std::vector<Tensor> inputs = testing::random_inputs(mod, 2);
  testing::expect_same_outputs(mod, after, inputs, inputs);
}

// Nothing folds when a scale is negative across a relu, when it varies along a spatial axis,
// when the weight is not a constant, or when the convolution has another user.
TEST(FoldScaleAxis, LeavesUnsafeScalesAlone) {
  const char* text = R"(#[version = "0.0.5"]
def @main(%x: Tensor[(1, 1, 2, 2), float32], %w: Tensor[(2, 1, 1, 1), float32]) -> (Tensor[(1, 2, 2, 2), float32], Tensor[(1, 2, 2, 2), float32], Tensor[(1, 2, 2, 2), float32], Tensor[(1, 2, 2, 2), float32], Tensor[(1, 2, 2, 2), float32]) {
  %0 = nn.conv2d(%x, const([1, 2], shape=(2, 1, 1, 1), dtype=float32), channels=2, kernel_size=[1, 1]);
  %1 = nn.relu(%0);
  %2 = multiply(%1, const([-1, 2], shape=(2, 1, 1), dtype=float32));
  %3 = nn.conv2d(%x, const([3, 4], shape=(2, 1, 1, 1), dtype=float32), channels=2, kernel_size=[1, 1]);
  %4 = multiply(%3, const([1, 2], shape=(2, 1), dtype=float32));
  %5 = nn.conv2d(%x, %w, channels=2, kernel_size=[1, 1]);
  %6 = multiply(%5, const([1, 2], shape=(2, 1, 1), dtype=float32));
  %7 = nn.conv2d(%x, const([5, 6], shape=(2, 1, 1, 1), dtype=float32), channels=2, kernel_size=[1, 1]);
  %8 = multiply(%7, const([1, 2], shape=(2, 1, 1), dtype=float32));
  (%2, %4, %6, %7, %8)
}
)";
  EXPECT_EQ(print(fold_scale_axis(parse(text))), text);

  // Before a convolution: a negative scale under a relu, a zero scale under an add, and a
  // scaled value that something other than a convolution reads.
  const char* input_side = R"(#[version = "0.0.5"]
def @main(%x: Tensor[(1, 2, 2, 2), float32]) -> (Tensor[(1, 1, 2, 2), float32], Tensor[(1, 1, 2, 2), float32], Tensor[(1, 1, 2, 2), float32], Tensor[(1, 2, 2, 2), float32]) {
  %0 = multiply(%x, const([-1, 2], shape=(2, 1, 1), dtype=float32));
  %1 = nn.relu(%0);
  %2 = nn.conv2d(%1, const([1, 1], shape=(1, 2, 1, 1), dtype=float32), channels=1, kernel_size=[1, 1]);
  %3 = multiply(%x, const([0, 2], shape=(2, 1, 1), dtype=float32));
  %4 = add(%3, 1f);
  %5 = nn.conv2d(%4, const([1, 1], shape=(1, 2, 1, 1), dtype=float32), channels=1, kernel_size=[1, 1]);
  %6 = multiply(%x, const([3, 2], shape=(2, 1, 1), dtype=float32));
  %7 = nn.conv2d(%6, const([1, 1], shape=(1, 2, 1, 1), dtype=float32), channels=1, kernel_size=[1, 1]);
  (%2, %5, %7, %6)
}
)";
  EXPECT_EQ(print(fold_scale_axis(parse(input_side))), input_side);
}

// A scale before convolutions, through an add and a relu (every scale positive), moves into
// the input channels of every convolution that reads it; the added constant is divided by
// the scale: [1, 2] / [2, 4] = [0.5, 0.5].
TEST(FoldScaleAxis, InputScaleMovesIntoEveryReadingConv) {
  ir::IRModule mod = parse(R"(
def @main(%x: Tensor[(1, 2, 2, 2), float32]) {
  %0 = multiply(%x, const([2, 4], shape=(2, 1, 1), dtype=float32));
  %1 = add(%0, const([1, 2], shape=(2, 1, 1), dtype=float32));
  %2 = nn.relu(%1);
  %3 = nn.conv2d(%2, const([1, 1], shape=(1, 2, 1, 1), dtype=float32), channels=1, kernel_size=[1, 1]);
  %4 = nn.conv2d(%2, const([1, 2, 3, 4], shape=(2, 2, 1, 1), dtype=float32), channels=2, kernel_size=[1, 1]);
  (%3, %4)
}
)");
  ir::IRModule after = fold_scale_axis(mod);
  EXPECT_EQ(print(after), R"(#[version = "0.0.5"]
def @main(%x: Tensor[(1, 2, 2, 2), float32]) -> (Tensor[(1, 1, 2, 2), float32], Tensor[(1, 2, 2, 2), float32]) {
  %0 = add(%x, const([0.5, 0.5], shape=(2, 1, 1), dtype=float32));
  %1 = nn.relu(%0);
  %2 = nn.conv2d(%1, const([2, 4], shape=(1, 2, 1, 1), dtype=float32), channels=1, kernel_size=[1, 1]);
  %3 = nn.conv2d(%1, const([2, 8, 6, 16], shape=(2, 2, 1, 1), dtype=float32), channels=2, kernel_size=[1, 1]);
  (%2, %3)
}
)");
  std::vector<Tensor> inputs = testing::random_inputs(mod, 3);
  testing::expect_same_outputs(mod, after, inputs, inputs);
}

// Zero padding of a 3x3 convolution sees the same zeros before and after the scale moves
// into its weights; a scale on both sides of one convolution folds into both weight axes.
TEST(FoldScaleAxis, PaddedConvWithScalesOnBothSides) {
  ir::IRModule mod = parse(R"(
def @main(%x: Tensor[(1, 3, 5, 5), float32], %w: Tensor[(4, 3, 3, 3), float32]) {
  %0 = multiply(%x, const([0.5, 2, 3], shape=(3, 1, 1), dtype=float32));
  %1 = add(%0, const([1, -1, 0.25], shape=(3, 1, 1), dtype=float32));
  %2 = nn.conv2d(%1, %w, padding=[1, 1, 1, 1], channels=4, kernel_size=[3, 3]);
  multiply(%2, const([1.5, -2, 0.5, 3], shape=(4, 1, 1), dtype=float32))
}
)");
  Tensor w = testing::random_tensor({4, 3, 3, 3}, 17);
  ir::IRModule bound = bind_params(mod, {{"w", w}});
  ir::IRModule after = fold_scale_axis(bound);
  std::string text = print(after);
  EXPECT_EQ(text.find("multiply"), std::string::npos) << text;
  Tensor x = testing::random_tensor({1, 3, 5, 5}, 18);
  testing::expect_same_outputs(mod, after, {x, w}, {x});
}

// ResNet-18 (small images) after the inference passes: every batch norm that follows a
// convolution leaves no multiply behind, and the network computes what it computed before.
TEST(FoldScaleAxis, ResNet18AfterInferencePassesMatchesTheOriginal) {
  anvil::testing::Workload w = anvil::testing::resnet(18, 1, {3, 16, 16}, 10);
  ir::IRModule bound = bind_params(w.mod, w.params);
  ir::IRModule simplified = fold_constant(simplify_inference(bound));
  ir::IRModule folded = fold_constant(fold_scale_axis(simplified));

  auto count = [](const ir::IRModule& mod, const std::string& needle) {
    std::string text = print(mod);
    size_t n = 0;
    for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1))
      ++n;
    return n;
  };
  EXPECT_EQ(count(folded, "nn.batch_norm"), 0u);
  // Of the 18 batch norms, those right after a convolution fold into its output channels and
  // those before one (after a residual add) into its input channels; only the last one,
  // which feeds the pooling, stays.
  EXPECT_EQ(count(simplified, "multiply("), 18u);
  EXPECT_EQ(count(folded, "multiply("), 1u);

  Tensor data = testing::random_tensor({1, 3, 16, 16}, 42);
  std::vector<Tensor> before_inputs = {data};
  for (const auto& [name, t] : w.params) before_inputs.push_back(t);
  testing::expect_same_outputs(w.mod, folded, before_inputs, {data}, 1e-4);
}

// MobileNet's depthwise convolutions (one group per channel) take the scale that follows
// them along their output channels; the whole level-3 sequence of these passes keeps the
// outputs.
TEST(FoldScaleAxis, MobileNetThroughAllPassesMatchesTheOriginal) {
  anvil::testing::Workload w = anvil::testing::mobilenet(1, 10, {3, 32, 32});
  ir::IRModule mod = bind_params(w.mod, w.params);
  mod = fold_constant(simplify_inference(mod));
  mod = eliminate_common_subexpr(mod);
  mod = fold_constant(fold_scale_axis(mod));
  mod = simplify_expr(mod);
  // Every batch norm follows a convolution.
  EXPECT_EQ(print(mod).find("multiply("), std::string::npos);

  Tensor data = testing::random_tensor({1, 3, 32, 32}, 7);
  std::vector<Tensor> before_inputs = {data};
  for (const auto& [name, t] : w.params) before_inputs.push_back(t);
  testing::expect_same_outputs(w.mod, mod, before_inputs, {data}, 1e-4);
}

}  // namespace
}  // namespace anvil::transform
