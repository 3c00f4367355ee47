// Reference kernels of pooling: ceil_mode, padding in averages,
// count_include_pad, dilation, Lp norms, argmax indices, layouts, global and
// adaptive pooling.
#include "nn_kernel_test_util.h"

namespace anvil::reference {
namespace {

using namespace testing;
using ints = std::vector<int64_t>;

TEST(NnPoolKernels, MaxPoolCeilModeAddsAPartialWindow) {
  // Windows of 2 with stride 2 over [1, 5, 2, 4, 3]: {1, 5}, {2, 4}, and with ceil_mode {3}.
  Tensor x = make({1, 1, 5}, {1, 5, 2, 4, 3});
  AttrList window = {{"pool_size", ints{2}}, {"strides", ints{2}}};
  EXPECT_TRUE(near(run("nn.max_pool1d", {x}, window), {5, 4}));
  window.emplace_back("ceil_mode", true);
  EXPECT_TRUE(near(run("nn.max_pool1d", {x}, window), {5, 4, 3}));
}

TEST(NnPoolKernels, AveragePoolPaddingAndCountIncludePad) {
  // Windows of 3 over [2, 4, 6] padded by one each side: {pad, 2, 4}, {2, 4, 6}, {4, 6, pad}.
  Tensor x = make({1, 1, 3}, {2, 4, 6});
  AttrList attrs = {{"pool_size", ints{3}}, {"padding", ints{1, 1}}};
  EXPECT_TRUE(near(run("nn.avg_pool1d", {x}, attrs), {3, 4, 5}));
  attrs.emplace_back("count_include_pad", true);
  EXPECT_TRUE(near(run("nn.avg_pool1d", {x}, attrs), {2, 4, 10.0 / 3}));
}

TEST(NnPoolKernels, DilatedWindowsSkipElements) {
  // 2x2 window with dilation 2 over a 3x3 image 0..8 reads its corners: 0, 2, 6, 8.
  Tensor x = iota({1, 1, 3, 3});
  AttrList attrs = {{"pool_size", ints{2, 2}}, {"dilation", ints{2, 2}}};
  EXPECT_TRUE(near(run("nn.max_pool2d", {x}, attrs), {8}));
  EXPECT_TRUE(near(run("nn.avg_pool2d", {x}, attrs), {4}));
}

TEST(NnPoolKernels, LpPoolIsTheNormOfEachWindow) {
  // |3|^2 + |-4|^2 = 25 -> 5; p = 1 sums magnitudes: 1 + 2 = 3.
  Tensor x = make({1, 1, 4}, {3, -4, 1, -2});
  AttrList attrs = {{"pool_size", ints{2}}, {"strides", ints{2}}};
  EXPECT_TRUE(near(run("nn.lp_pool1d", {x}, attrs), {5, std::sqrt(5.0)}));
  attrs.emplace_back("p_value", 1.0);
  EXPECT_TRUE(near(run("nn.lp_pool1d", {x}, attrs), {7, 3}));
}

TEST(NnPoolKernels, MaxPoolArgmaxGivesFlatIndicesOfTheFirstMaximum) {
  // Two channels of 2x2; indices count across the whole (N, C, H, W) input.
  Tensor x = make({1, 2, 2, 2}, {1, 7, 7, 3, 0, -1, 4, 4});
  std::vector<Tensor> out = run_all("nn.max_pool2d_with_argmax", {x}, {{"pool_size", ints{2, 2}}});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_TRUE(near(out[0], {7, 4}));
  EXPECT_EQ(out[1].dtype(), DataType::int64());
  EXPECT_EQ(values(out[1]), (std::vector<double>{1, 6}));
}

TEST(NnPoolKernels, NhwcMatchesNchw) {
  Tensor x = iota({1, 2, 4, 3}, -5);
  AttrList attrs = {{"pool_size", ints{2, 2}}, {"padding", ints{1, 0, 0, 1}}};
  Tensor expected = run("nn.avg_pool2d", {x}, attrs);
  attrs.emplace_back("layout", std::string("NHWC"));
  Tensor got = run("nn.avg_pool2d", {permute(x, {0, 2, 3, 1})}, attrs);
  EXPECT_TRUE(near(got, values(permute(expected, {0, 2, 3, 1}))));
}

TEST(NnPoolKernels, IntegerMaxPoolIsExact) {
  Tensor x = make({1, 1, 3}, {0, 255, 254}, DataType::uint8());
  Tensor y = run("nn.max_pool1d", {x}, {{"pool_size", ints{2}}});
  EXPECT_EQ(y.dtype(), DataType::uint8());
  EXPECT_EQ(values(y), (std::vector<double>{255, 255}));
}

TEST(NnPoolKernels, GlobalPools) {
  Tensor x = make({1, 2, 2, 2}, {1, 2, 3, 6, -1, -2, -3, -4});
  EXPECT_TRUE(near(run("nn.global_avg_pool2d", {x}), {3, -2.5}));
  EXPECT_TRUE(near(run("nn.global_max_pool2d", {x}), {6, -1}));
}

TEST(NnPoolKernels, AdaptivePoolWindowsOverlapWhenSizesDoNotDivide) {
  // Output i of 2 over 5 inputs covers [floor(5i / 2), ceil(5(i + 1) / 2)): [0, 3) and [2, 5).
  Tensor x = make({1, 1, 5}, {1, 2, 3, 4, 5});
  EXPECT_TRUE(near(run("nn.adaptive_avg_pool1d", {x}, {{"output_size", ints{2}}}), {2, 4}));
  EXPECT_TRUE(near(run("nn.adaptive_max_pool1d", {x}, {{"output_size", ints{2}}}), {3, 5}));
}

TEST(NnPoolKernels, MaxUnpoolScattersToTheIndices) {
  // The ONNX MaxUnpool example: 2x2 values at flat indices 5, 7, 13, 15 of a 4x4 output.
  Tensor x = iota({1, 1, 2, 2}, 1);
  Tensor indices = make({1, 1, 2, 2}, {5, 7, 13, 15}, DataType::int64());
  AttrList attrs = {{"pool_size", ints{2, 2}}, {"strides", ints{2, 2}}};
  Tensor y = run("nn.max_unpool2d", {x, indices}, attrs);
  EXPECT_EQ(y.shape_vector(), (ints{1, 1, 4, 4}));
  EXPECT_EQ(values(y), (std::vector<double>{0, 0, 0, 0, 0, 1, 0, 2, 0, 0, 0, 0, 0, 3, 0, 4}));
  // A larger output keeps that 4x4 block at its start.
  attrs.emplace_back("output_size", ints{5, 5});
  Tensor z = run("nn.max_unpool2d", {x, indices}, attrs);
  EXPECT_EQ(z.shape_vector(), (ints{1, 1, 5, 5}));
  EXPECT_EQ(values(z), (std::vector<double>{0, 0, 0, 0, 0, 0, 1, 0, 2, 0, 0, 0, 0,
                                            0, 0, 0, 3, 0, 4, 0, 0, 0, 0, 0, 0}));
}

}  // namespace
}  // namespace anvil::reference
