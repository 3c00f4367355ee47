// Conv3dAsConv2d: which 3-D convolutions become sums of 2-D ones over depth taps, and a grid of
// kernels, strides, dilations and asymmetric paddings on which the sum computes what the 3-D
// convolution does.
#include <cstdio>
#include <string>

#include "anvil/transform/passes.h"
#include "transform/pass_test_util.h"

namespace anvil::transform {
namespace {

using testing::count_calls;
using testing::parse;
using testing::print;

struct Conv3dCase {
  int64_t in_channels, out_channels, depth, height, width;
  int64_t kd, kh, kw;
  int64_t stride_d, stride_hw, dilation_d;
  int64_t pad_front, pad_back, pad_hw;
};

ir::IRModule conv3d_module(const Conv3dCase& c) {
  char text[1024];
  std::snprintf(text, sizeof text, R"(
def @main(%%x: Tensor[(2, %lld, %lld, %lld, %lld), float32],
          %%w: Tensor[(%lld, %lld, %lld, %lld, %lld), float32]) {
  nn.conv3d(%%x, %%w, strides=[%lld, %lld, %lld], padding=[%lld, %lld, %lld, %lld, %lld, %lld],
            dilation=[%lld, 1, 1])
})",
                (long long)c.in_channels, (long long)c.depth, (long long)c.height,
                (long long)c.width, (long long)c.out_channels, (long long)c.in_channels,
                (long long)c.kd, (long long)c.kh, (long long)c.kw, (long long)c.stride_d,
                (long long)c.stride_hw, (long long)c.stride_hw, (long long)c.pad_front,
                (long long)c.pad_hw, (long long)c.pad_hw, (long long)c.pad_back,
                (long long)c.pad_hw, (long long)c.pad_hw, (long long)c.dilation_d);
  return parse(text);
}

ir::IRModule with_weight(const Conv3dCase& c, uint64_t seed) {
  return bind_params(
      conv3d_module(c),
      {{"w", testing::random_tensor({c.out_channels, c.in_channels, c.kd, c.kh, c.kw}, seed)}});
}

std::vector<Tensor> input_of(const Conv3dCase& c, uint64_t seed) {
  return {testing::random_tensor({2, c.in_channels, c.depth, c.height, c.width}, seed)};
}

TEST(Conv3dAsConv2d, OneConvolutionPerDepthTap) {
  const Conv3dCase c{8, 12, 5, 6, 7, 3, 3, 3, 1, 1, 1, 1, 1, 1};
  ir::IRModule bound = with_weight(c, 1);
  ir::IRModule after = conv3d_as_conv2d(bound);
  const std::string text = print(after);
  EXPECT_EQ(count_calls(after, "nn.conv3d"), 0) << text;
  EXPECT_EQ(count_calls(after, "nn.conv2d"), 3) << text;
  EXPECT_EQ(count_calls(after, "add"), 2) << text;
  EXPECT_EQ(count_calls(after, "nn.pad"), 1) << text;
  testing::expect_same_outputs(bound, after, input_of(c, 2), input_of(c, 2));
}

// A stem over three channels, and a weight that is not a constant, stay 3-D.
TEST(Conv3dAsConv2d, LeavesNarrowAndVariableWeights) {
  ir::IRModule stem = with_weight({3, 16, 4, 9, 9, 3, 7, 7, 1, 2, 1, 1, 1, 3}, 3);
  EXPECT_EQ(print(conv3d_as_conv2d(stem)), print(stem));
  ir::IRModule variable = conv3d_module({8, 8, 4, 5, 5, 3, 3, 3, 1, 1, 1, 1, 1, 1});
  EXPECT_EQ(print(conv3d_as_conv2d(variable)), print(variable));
}

class Conv3dAsConv2dGrid : public ::testing::TestWithParam<Conv3dCase> {};

TEST_P(Conv3dAsConv2dGrid, ComputesTheSame) {
  const Conv3dCase& c = GetParam();
  ir::IRModule bound = with_weight(c, 5);
  ir::IRModule after = conv3d_as_conv2d(bound);
  ASSERT_EQ(count_calls(after, "nn.conv3d"), 0) << print(after);
  testing::expect_same_outputs(bound, after, input_of(c, 6), input_of(c, 6));
}

// (2+1)-D factors (1x3x3 and 3x1x1), depth strides and dilations, front and back padding that
// differ, and a depth kernel as deep as the input.
INSTANTIATE_TEST_SUITE_P(Shapes, Conv3dAsConv2dGrid,
                         ::testing::Values(Conv3dCase{8, 8, 4, 7, 5, 1, 3, 3, 1, 1, 1, 0, 0, 1},
                                           Conv3dCase{9, 8, 7, 3, 4, 3, 1, 1, 1, 1, 1, 1, 1, 0},
                                           Conv3dCase{8, 10, 9, 5, 5, 3, 3, 3, 2, 2, 1, 1, 0, 1},
                                           Conv3dCase{12, 8, 8, 4, 6, 2, 3, 1, 1, 1, 3, 2, 1, 1},
                                           Conv3dCase{8, 16, 3, 5, 5, 3, 3, 3, 1, 1, 1, 0, 0, 0}));

}  // namespace
}  // namespace anvil::transform
