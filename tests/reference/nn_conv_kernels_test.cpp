// Reference kernels of the convolutions: groups, dilation, asymmetric padding,
// layouts (NHWC, blocked NCHWc), transposes and exact integer arithmetic.
#include "nn_kernel_test_util.h"

namespace anvil::reference {
namespace {

using namespace testing;
using ints = std::vector<int64_t>;

TEST(NnConvKernels, Conv2dSumsEachWindow) {
  // 3x3 input 0..8 under a 2x2 kernel of ones: each output is its window's sum.
  Tensor y = run("nn.conv2d", {iota({1, 1, 3, 3}), make({1, 1, 2, 2}, {1, 1, 1, 1})});
  EXPECT_EQ(y.shape_vector(), (ints{1, 1, 2, 2}));
  EXPECT_TRUE(near(y, {8, 12, 20, 24}));
}

TEST(NnConvKernels, GroupsDilationStridesAndAsymmetricPadding) {
  // Expected values computed with onnx.reference's Conv (group=2, dilations
  // [2, 1], pads [1, 0, 0, 1], strides [1, 2]) on the same inputs.
  Tensor x = iota({1, 2, 4, 4}, 1);
  Tensor w = make({2, 1, 2, 2}, {1, -1, 2, 0, 0, 1, -1, 3});
  Tensor y = run("nn.conv2d", {x, w},
                 {{"groups", int64_t(2)},
                  {"dilation", ints{2, 1}},
                  {"padding", ints{1, 0, 0, 1}},
                  {"strides", ints{1, 2}}});
  EXPECT_EQ(y.shape_vector(), (ints{1, 2, 3, 2}));
  EXPECT_TRUE(near(y, {10, 14, 17, 21, 25, 29, 45, 49, 71, 77, 83, 89}));
}

TEST(NnConvKernels, NhwcWithHwioMatchesNchw) {
  Tensor x = iota({1, 3, 4, 5}, -7);
  Tensor w = iota({2, 3, 3, 2}, -9);
  AttrList common = {{"padding", ints{1, 0, 2, 1}}, {"strides", ints{2, 1}}};
  Tensor expected = run("nn.conv2d", {x, w}, common);
  AttrList nhwc = common;
  nhwc.emplace_back("data_layout", std::string("NHWC"));
  nhwc.emplace_back("kernel_layout", std::string("HWIO"));
  Tensor got = run("nn.conv2d", {permute(x, {0, 2, 3, 1}), permute(w, {2, 3, 1, 0})}, nhwc);
  EXPECT_TRUE(near(got, values(permute(expected, {0, 2, 3, 1}))));
}

TEST(NnConvKernels, Conv3dWithPaddingOnSomeAxes) {
  // Expected values computed with onnx.reference's Conv, pads [0, 1, 0, 0, 0, 1].
  Tensor x = iota({1, 2, 3, 3, 3}, 1);
  Tensor w = make({1, 2, 2, 2, 1}, {1, 0, -1, 2, 2, 0, 0, 2});
  Tensor y = run("nn.conv3d", {x, w}, {{"padding", ints{0, 1, 0, 0, 0, 1}}});
  EXPECT_EQ(y.shape_vector(), (ints{1, 1, 2, 3, 4}));
  EXPECT_TRUE(near(y, {94,  98,  102, 0, 153, 159, 165, 0, 171, 177, 183, 0,
                       130, 134, 138, 0, 207, 213, 219, 0, 225, 231, 237, 0}));
}

TEST(NnConvKernels, Conv1dTransposeWithOutputPadding) {
  // x0 lands on outputs 0..2 and x1 (stride 2) on 2..4; output_padding adds a 0 at the end.
  Tensor y = run("nn.conv1d_transpose", {make({1, 1, 2}, {1, 2}), make({1, 1, 3}, {1, 1, 1})},
                 {{"strides", ints{2}}, {"output_padding", ints{1}}});
  EXPECT_EQ(y.shape_vector(), (ints{1, 1, 6}));
  EXPECT_TRUE(near(y, {1, 1, 3, 2, 2, 0}));
}

TEST(NnConvKernels, Conv2dTransposeGroupsKeepChannelsApart) {
  // With 2 groups, channel 0 only sees input 0 (value 1) and channel 1 input 1 (value 2).
  Tensor y = run("nn.conv2d_transpose",
                 {make({1, 2, 1, 1}, {1, 2}), make({2, 1, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8})},
                 {{"groups", int64_t(2)}});
  EXPECT_EQ(y.shape_vector(), (ints{1, 2, 2, 2}));
  EXPECT_TRUE(near(y, {1, 2, 3, 4, 10, 12, 14, 16}));
}

TEST(NnConvKernels, Conv2dTransposePaddingCropsTheFullOutput) {
  // The full transposed output of [[1, 2], [3, 4]] under ones(2, 2) is
  // [[1, 3, 2], [4, 10, 6], [3, 7, 4]]; after-padding 1 drops the last row and column.
  Tensor y = run("nn.conv2d_transpose", {iota({1, 1, 2, 2}, 1), make({1, 1, 2, 2}, {1, 1, 1, 1})},
                 {{"padding", ints{0, 0, 1, 1}}});
  EXPECT_EQ(y.shape_vector(), (ints{1, 1, 2, 2}));
  EXPECT_TRUE(near(y, {1, 3, 4, 10}));
}

TEST(NnConvKernels, BlockedNchwcMatchesPlainConv) {
  Tensor x = iota({1, 4, 3, 3}, -10);
  Tensor w = iota({4, 4, 2, 2}, -30);
  Tensor plain = run("nn.conv2d", {x, w}, {{"padding", ints{1, 1, 0, 0}}});
  // NCHW2c: [n, c / 2, h, w, c % 2]; OIHW2i2o: [o / 2, i / 2, kh, kw, i % 2, o % 2].
  Tensor xb = Tensor::empty({1, 2, 3, 3, 2}, DataType::float32());
  for (int64_t c = 0; c < 4; ++c)
    for (int64_t p = 0; p < 9; ++p)
      xb.set_from_double(((c / 2) * 9 + p) * 2 + c % 2, x.get_as_double(c * 9 + p));
  Tensor wb = Tensor::empty({2, 2, 2, 2, 2, 2}, DataType::float32());
  for (int64_t o = 0; o < 4; ++o)
    for (int64_t i = 0; i < 4; ++i)
      for (int64_t k = 0; k < 4; ++k)
        wb.set_from_double((((o / 2) * 2 + i / 2) * 4 + k) * 4 + (i % 2) * 2 + o % 2,
                           w.get_as_double((o * 4 + i) * 4 + k));
  Tensor blocked = run("nn.contrib_conv2d_NCHWc", {xb, wb},
                       {{"padding", ints{1, 1, 0, 0}},
                        {"data_layout", std::string("NCHW2c")},
                        {"kernel_layout", std::string("OIHW2i2o")}});
  ASSERT_EQ(blocked.shape_vector(), (ints{1, 2, 3, 3, 2}));
  for (int64_t c = 0; c < 4; ++c)
    for (int64_t p = 0; p < 9; ++p)
      EXPECT_DOUBLE_EQ(blocked.get_as_double(((c / 2) * 9 + p) * 2 + c % 2),
                       plain.get_as_double(c * 9 + p));
}

TEST(NnConvKernels, IntegerConvolutionIsExact) {
  // 100000 * 100000 + 3 * 7 = 10000000021, beyond float precision.
  Tensor y = run("nn.conv2d",
                 {make({1, 1, 1, 2}, {100000, 3}, DataType::int32()),
                  make({1, 1, 1, 2}, {100000, 7}, DataType::int32())},
                 {{"out_dtype", DataType::int64()}});
  EXPECT_EQ(y.dtype(), DataType::int64());
  EXPECT_EQ(y.data_as<int64_t>()[0], 10000000021);
}

TEST(NnConvKernels, DeformableConvolutionSamplesAtOffsets) {
  // Expected values computed with onnx.reference's DeformConv: 3x3 image 0..8,
  // 2x2 kernel; tap 0 moves down by 0.5 everywhere, tap 1 left by 0.25, and
  // tap 3 right by 1.5 at output (1, 1) (offset channels are (dy, dx) per tap).
  Tensor x = iota({1, 1, 3, 3});
  Tensor w = make({1, 1, 2, 2}, {1, 2, -1, 0.5});
  std::vector<double> offsets(32, 0.0);
  for (int p = 0; p < 4; ++p) {
    offsets[size_t(0 * 4 + p)] = 0.5;
    offsets[size_t(3 * 4 + p)] = -0.25;
  }
  offsets[7 * 4 + 3] = 1.5;
  Tensor offset = make({1, 8, 2, 2}, offsets);
  EXPECT_TRUE(near(run("nn.deformable_conv2d", {x, offset, w}), {2, 4.5, 9.5, 8}));
  // The modulated form scales each sample by the mask (16 values from 0.5 to 1.2).
  std::vector<double> mask(16);
  for (size_t i = 0; i < 16; ++i) mask[i] = 0.5 + 0.7 * double(i) / 15;
  EXPECT_TRUE(near(run("nn.modulated_deformable_conv2d", {x, offset, w, make({1, 4, 2, 2}, mask)}),
                   {1.28, 3.02, 6.75666618347168, 4.28}));
}

}  // namespace
}  // namespace anvil::reference
