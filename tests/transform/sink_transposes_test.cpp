// SinkTransposes: transposes move below elementwise ops and pads until they meet their inverse,
// the values stay the same, and a function that would transpose more keeps its transposes.
#include <string>

#include "anvil/transform/passes.h"
#include "transform/pass_test_util.h"

namespace anvil::transform {
namespace {

using testing::count_calls;
using testing::parse;
using testing::print;

// NHWC <-> NCHW pairs around biases (a broadcast add and a bias_add), a clip and a pad with a
// different width on every side, as a channels-last export leaves them: the pair cancels and the
// ops take the NHWC layout.
TEST(SinkTransposes, PairsAroundElementwiseOpsAndPadsCancel) {
  ir::IRModule before = bind_params(parse(R"(
def @main(%x: Tensor[(2, 5, 6, 3), float32], %b: Tensor[(3, 1, 1), float32],
          %s: Tensor[(6), float32], %c: Tensor[(5), float32]) {
  %0 = transpose(%x, axes=[0, 3, 1, 2]);
  %1 = add(%0, %b);
  %2 = clip(%1, a_min=-0.5f, a_max=0.5f);
  %3 = nn.bias_add(%2, %c, axis=2);
  %4 = multiply(%3, %s);
  %5 = nn.pad(%4, 0.25f, pad_width=[0, 1, 2, 0, 1, 3, 0, 2]);
  %6 = multiply(%5, 2f);
  transpose(%6, axes=[0, 2, 3, 1])
})"),
                                    {{"b", testing::random_tensor({3, 1, 1}, 1)},
                                     {"s", testing::random_tensor({6}, 2)},
                                     {"c", testing::random_tensor({5}, 9)}});
  ir::IRModule after = sink_transposes(before);
  EXPECT_EQ(count_calls(after, "transpose"), 0) << print(after);
  EXPECT_EQ(count_calls(after, "nn.pad"), 1) << print(after);
  std::vector<Tensor> x = {testing::random_tensor({2, 5, 6, 3}, 3)};
  testing::expect_same_outputs(before, after, x, x);
}

// Two 3-D convolutions with a residual add, the layers of a video ResNet: after
// Conv3dAsConv2d each moves depth next to the batch and back; sunk, only the first move in
// and the last move out remain.
TEST(SinkTransposes, ConsecutiveConv3dLayersKeepDepthMajor) {
  ir::IRModule before = bind_params(parse(R"(
def @main(%x: Tensor[(1, 8, 4, 5, 6), float32], %w1: Tensor[(8, 8, 3, 3, 3), float32],
          %w2: Tensor[(8, 8, 3, 1, 1), float32], %b: Tensor[(8, 1, 1, 1), float32]) {
  %0 = nn.conv3d(%x, %w1, padding=[1, 1, 1, 1, 1, 1]);
  %1 = add(%0, %b);
  %2 = nn.relu(%1);
  %3 = nn.conv3d(%2, %w2, padding=[1, 0, 0, 1, 0, 0]);
  %4 = add(%3, %2);
  nn.relu(%4)
})"),
                                    {{"w1", testing::random_tensor({8, 8, 3, 3, 3}, 4)},
                                     {"w2", testing::random_tensor({8, 8, 3, 1, 1}, 5)},
                                     {"b", testing::random_tensor({8, 1, 1, 1}, 6)}});
  ir::IRModule split = conv3d_as_conv2d(before);
  ASSERT_EQ(count_calls(split, "transpose"), 4) << print(split);
  ir::IRModule after = sink_transposes(split);
  EXPECT_EQ(count_calls(after, "transpose"), 2) << print(after);
  std::vector<Tensor> x = {testing::random_tensor({1, 8, 4, 5, 6}, 7)};
  testing::expect_same_outputs(before, after, x, x, 1e-4);
}

// One transpose read by two consumers that cannot undo it: sinking would make it two, so the
// function stays as it was. A reduction does not take a transpose either.
TEST(SinkTransposes, KeepsFunctionsThatWouldTransposeMore) {
  ir::IRModule fan_out = parse(R"(
def @main(%x: Tensor[(2, 3, 4), float32]) {
  %0 = transpose(%x, axes=[2, 0, 1]);
  %1 = nn.relu(%0);
  %2 = exp(%0);
  (%1, %2)
})");
  EXPECT_EQ(print(sink_transposes(fan_out)), print(fan_out));
  ir::IRModule reduce = parse(R"(
def @main(%x: Tensor[(2, 3, 4), float32]) {
  %0 = transpose(%x, axes=[2, 0, 1]);
  %1 = sum(%0, axis=[1]);
  transpose(%1, axes=[1, 0])
})");
  EXPECT_EQ(print(sink_transposes(reduce)), print(reduce));
}

// Operands transposed differently, and a non-constant operand of lower rank, stop the sinking;
// a scalar operand does not.
TEST(SinkTransposes, StopsAtOperandsItCannotLayOut) {
  ir::IRModule mixed = parse(R"(
def @main(%x: Tensor[(3, 4, 5), float32], %y: Tensor[(5, 3, 4), float32], %v: Tensor[(4), float32]) {
  %0 = transpose(%x, axes=[2, 0, 1]);
  %1 = add(%0, %y);
  %2 = transpose(%1, axes=[1, 2, 0]);
  %3 = transpose(%x, axes=[0, 2, 1]);
  %4 = multiply(%3, %v);
  %5 = transpose(%4, axes=[0, 2, 1]);
  (%2, %5)
})");
  EXPECT_EQ(print(sink_transposes(mixed)), print(mixed));
  ir::IRModule scalar = parse(R"(
def @main(%x: Tensor[(3, 4, 5), float32], %k: Tensor[(), float32]) {
  %0 = transpose(%x, axes=[2, 0, 1]);
  %1 = maximum(%0, %k);
  transpose(%1, axes=[1, 2, 0])
})");
  ir::IRModule after = sink_transposes(scalar);
  EXPECT_EQ(count_calls(after, "transpose"), 0) << print(after);
  testing::expect_same_outputs(scalar, after, testing::random_inputs(scalar, 8),
                               testing::random_inputs(scalar, 8));
}

}  // namespace
}  // namespace anvil::transform
