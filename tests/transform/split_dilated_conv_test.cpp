// SplitDilatedConv: region counts on atrous convolutions of segmentation heads, and a grid of
// shapes (strides, dilations, asymmetric padding, weights that are not constants) that must
// compute what the whole convolution computes.
#include <cstdio>
#include <string>

#include "anvil/transform/passes.h"
#include "transform/pass_test_util.h"

namespace anvil::transform {
namespace {

using testing::count_calls;
using testing::parse;
using testing::print;

struct AtrousCase {
  int64_t channels, height, width, kernel, stride, dilation, pad_top, pad_left, pad_bottom,
      pad_right;
  bool constant_weight;
};

ir::IRModule atrous_module(const AtrousCase& c) {
  char text[768];
  std::snprintf(text, sizeof text, R"(
def @main(%%x: Tensor[(1, %lld, %lld, %lld), float32], %%w: Tensor[(3, %lld, %lld, %lld), float32]) {
  nn.conv2d(%%x, %%w, strides=[%lld, %lld], padding=[%lld, %lld, %lld, %lld],
            dilation=[%lld, %lld])
})",
                (long long)c.channels, (long long)c.height, (long long)c.width,
                (long long)c.channels, (long long)c.kernel, (long long)c.kernel,
                (long long)c.stride, (long long)c.stride, (long long)c.pad_top,
                (long long)c.pad_left, (long long)c.pad_bottom, (long long)c.pad_right,
                (long long)c.dilation, (long long)c.dilation);
  return parse(text);
}

// Rate 36 on a 28 x 28 map (DeepLabV3's widest ASPP branch): every off-centre tap lies in the
// padding for every output, so the convolution becomes a 1x1 one without padding.
TEST(SplitDilatedConv, WidestAtrousRateBecomesOneByOne) {
  ir::IRModule mod = atrous_module({4, 28, 28, 3, 1, 36, 36, 36, 36, 36, true});
  ir::IRModule bound = bind_params(mod, {{"w", testing::random_tensor({3, 4, 3, 3}, 1)}});
  ir::IRModule after = split_dilated_conv(bound);
  const std::string text = print(after);
  EXPECT_EQ(count_calls(after, "nn.conv2d"), 1) << text;
  EXPECT_EQ(count_calls(after, "concatenate"), 0) << text;
  EXPECT_EQ(text.find("padding="), std::string::npos) << text;
  EXPECT_EQ(text.find("dilation="), std::string::npos) << text;
  EXPECT_NE(text.find("kernel_size=[1, 1]"), std::string::npos) << text;
  std::vector<Tensor> inputs = {testing::random_tensor({1, 4, 28, 28}, 2)};
  testing::expect_same_outputs(bound, after, inputs, inputs);
}

// Rate 24: the off-centre taps reach the input only for the outer 4 rows and columns: three
// row bands x three column bands, joined by three concatenates along W and one along H.
TEST(SplitDilatedConv, AtrousRate24TakesNineRegions) {
  ir::IRModule mod = atrous_module({4, 28, 28, 3, 1, 24, 24, 24, 24, 24, true});
  ir::IRModule bound = bind_params(mod, {{"w", testing::random_tensor({3, 4, 3, 3}, 3)}});
  ir::IRModule after = split_dilated_conv(bound);
  EXPECT_EQ(count_calls(after, "nn.conv2d"), 9) << print(after);
  EXPECT_EQ(count_calls(after, "concatenate"), 4) << print(after);
  std::vector<Tensor> inputs = {testing::random_tensor({1, 4, 28, 28}, 4)};
  testing::expect_same_outputs(bound, after, inputs, inputs);
}

// Dilation 2 with padding 2 on a 56 x 56 map wastes only its border taps: left whole, as are
// undilated convolutions.
TEST(SplitDilatedConv, LeavesConvolutionsThatReadTheirInput) {
  ir::IRModule dilated = atrous_module({2, 56, 56, 3, 1, 2, 2, 2, 2, 2, false});
  EXPECT_EQ(print(split_dilated_conv(dilated)), print(dilated));
  ir::IRModule plain = atrous_module({2, 3, 3, 3, 1, 1, 1, 1, 1, 1, false});
  EXPECT_EQ(print(split_dilated_conv(plain)), print(plain));
}

class SplitDilatedConvGrid : public ::testing::TestWithParam<AtrousCase> {};

TEST_P(SplitDilatedConvGrid, ComputesTheSame) {
  const AtrousCase& c = GetParam();
  ir::IRModule mod = atrous_module(c);
  Tensor w = testing::random_tensor({3, c.channels, c.kernel, c.kernel}, 5);
  Tensor x = testing::random_tensor({1, c.channels, c.height, c.width}, 6);
  ir::IRModule before = c.constant_weight ? bind_params(mod, {{"w", w}}) : mod;
  ir::IRModule after = split_dilated_conv(before);
  EXPECT_GT(count_calls(after, "nn.conv2d"), 1) << print(after);
  std::vector<Tensor> inputs =
      c.constant_weight ? std::vector<Tensor>{x} : std::vector<Tensor>{x, w};
  testing::expect_same_outputs(before, after, inputs, inputs);
}

INSTANTIATE_TEST_SUITE_P(Shapes, SplitDilatedConvGrid,
                         ::testing::Values(AtrousCase{3, 28, 28, 3, 1, 12, 12, 12, 12, 12, true},
                                           AtrousCase{2, 17, 13, 3, 1, 8, 8, 8, 8, 8, false},
                                           AtrousCase{2, 21, 21, 3, 2, 10, 10, 10, 10, 10, true},
                                           AtrousCase{2, 15, 19, 5, 1, 6, 12, 12, 12, 12, true},
                                           AtrousCase{1, 16, 16, 3, 1, 9, 5, 9, 13, 7, false},
                                           AtrousCase{2, 9, 30, 7, 3, 4, 12, 12, 12, 12, true}));

}  // namespace
}  // namespace anvil::transform
