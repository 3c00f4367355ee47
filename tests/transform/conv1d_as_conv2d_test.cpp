// Conv1dAsConv2d: which 1-D convolutions become 2-D ones over a row, and a grid of strides,
// dilations and asymmetric paddings on which the 2-D form computes what the 1-D one does.
#include <cstdio>
#include <string>

#include "anvil/transform/passes.h"
#include "transform/pass_test_util.h"

namespace anvil::transform {
namespace {

using testing::count_calls;
using testing::parse;
using testing::print;

struct Conv1dCase {
  int64_t in_channels, out_channels, length, kernel, stride, dilation, pad_left, pad_right, groups;
};

ir::IRModule conv1d_module(const Conv1dCase& c) {
  char text[768];
  std::snprintf(text, sizeof text, R"(
def @main(%%x: Tensor[(2, %lld, %lld), float32], %%w: Tensor[(%lld, %lld, %lld), float32]) {
  nn.conv1d(%%x, %%w, strides=[%lld], padding=[%lld, %lld], dilation=[%lld], groups=%lld)
})",
                (long long)c.in_channels, (long long)c.length, (long long)c.out_channels,
                (long long)(c.in_channels / c.groups), (long long)c.kernel, (long long)c.stride,
                (long long)c.pad_left, (long long)c.pad_right, (long long)c.dilation,
                (long long)c.groups);
  return parse(text);
}

ir::IRModule with_weight(const Conv1dCase& c, uint64_t seed) {
  return bind_params(
      conv1d_module(c),
      {{"w", testing::random_tensor({c.out_channels, c.in_channels / c.groups, c.kernel}, seed)}});
}

TEST(Conv1dAsConv2d, ChannelHeavyConvolutionsBecomeOneRow) {
  ir::IRModule bound = with_weight({16, 24, 37, 3, 2, 1, 1, 1, 1}, 1);
  ir::IRModule after = conv1d_as_conv2d(bound);
  const std::string text = print(after);
  EXPECT_EQ(count_calls(after, "nn.conv1d"), 0) << text;
  EXPECT_EQ(count_calls(after, "nn.conv2d"), 1) << text;
  EXPECT_EQ(count_calls(after, "squeeze"), 1) << text;
  EXPECT_NE(text.find("padding=[0, 1, 0, 1]"), std::string::npos) << text;
  std::vector<Tensor> inputs = {testing::random_tensor({2, 16, 37}, 2)};
  testing::expect_same_outputs(bound, after, inputs, inputs);
}

// Grouped, single-channel and non-constant-weight convolutions stay 1-D.
TEST(Conv1dAsConv2d, LeavesGroupedNarrowAndVariableWeights) {
  for (const Conv1dCase& c :
       {Conv1dCase{16, 16, 40, 31, 1, 1, 15, 15, 4}, Conv1dCase{1, 32, 400, 10, 5, 1, 0, 0, 1},
        Conv1dCase{16, 4, 40, 3, 1, 1, 1, 1, 1}}) {
    ir::IRModule bound = with_weight(c, 3);
    EXPECT_EQ(print(conv1d_as_conv2d(bound)), print(bound));
  }
  ir::IRModule variable = conv1d_module({16, 16, 40, 3, 1, 1, 1, 1, 1});
  EXPECT_EQ(print(conv1d_as_conv2d(variable)), print(variable));
}

class Conv1dAsConv2dGrid : public ::testing::TestWithParam<Conv1dCase> {};

TEST_P(Conv1dAsConv2dGrid, ComputesTheSame) {
  const Conv1dCase& c = GetParam();
  ir::IRModule bound = with_weight(c, 5);
  ir::IRModule after = conv1d_as_conv2d(bound);
  ASSERT_EQ(count_calls(after, "nn.conv1d"), 0) << print(after);
  std::vector<Tensor> inputs = {testing::random_tensor({2, c.in_channels, c.length}, 6)};
  testing::expect_same_outputs(bound, after, inputs, inputs);
}

INSTANTIATE_TEST_SUITE_P(Shapes, Conv1dAsConv2dGrid,
                         ::testing::Values(Conv1dCase{8, 8, 29, 3, 1, 1, 1, 1, 1},
                                           Conv1dCase{12, 20, 53, 5, 3, 1, 2, 0, 1},
                                           Conv1dCase{16, 9, 41, 3, 1, 4, 4, 4, 1},
                                           Conv1dCase{32, 32, 17, 2, 2, 1, 0, 1, 1},
                                           Conv1dCase{10, 16, 64, 7, 1, 2, 0, 5, 1}));

}  // namespace
}  // namespace anvil::transform
