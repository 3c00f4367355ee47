// The convolution computes (nn.conv1d/2d/3d, their transposes, the deformable ones) against the
// reference kernels, naive and under the default schedule, on odd shapes: asymmetric padding,
// strides, dilation, groups (depthwise included), NHWC/HWIO and blocked layouts, int8 into int32;
// the deformable convolutions with offsets reaching past the border.
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

#include "anvil/ir/op.h"
#include "anvil/topi/topi.h"
#include "topi/topi_test_util.h"

namespace anvil {
namespace {

using topi_test::attrs;
using topi_test::check_op;
using topi_test::random_tensor;
using Fields = std::vector<std::pair<std::string, ir::AttrValue>>;

const topi_test::Tolerance kLongSum{1e-4, 1e-5};

Tensor f32(std::vector<int64_t> shape, uint64_t seed) {
  return random_tensor(std::move(shape), DataType::float32(), seed);
}

TEST(NnConv2d, StridedDilatedAsymmetricPadding) {
  // 7 filters 3x3, stride 2, padding (top 1, left 0, bottom 2, right 1), dilation 2.
  check_op("nn.conv2d", {f32({1, 5, 9, 11}, 1), f32({7, 5, 3, 3}, 2)},
           attrs("nn.conv2d", Fields{{"strides", std::vector<int64_t>{2, 2}},
                                     {"padding", std::vector<int64_t>{1, 0, 2, 1}},
                                     {"dilation", std::vector<int64_t>{2, 2}}}),
           kLongSum);
}

TEST(NnConv2d, GroupsOfOneInputChannel) {
  // groups = 5 over 5 channels, two filters each (a depthwise multiplier of 2), same geometry.
  check_op("nn.conv2d", {f32({1, 5, 9, 11}, 3), f32({10, 1, 3, 3}, 4)},
           attrs("nn.conv2d", Fields{{"strides", std::vector<int64_t>{2, 2}},
                                     {"padding", std::vector<int64_t>{1, 0, 2, 1}},
                                     {"dilation", std::vector<int64_t>{2, 2}},
                                     {"groups", int64_t(5)}}),
           kLongSum);
}

TEST(NnConv2d, Depthwise) {
  check_op("nn.conv2d", {f32({2, 6, 8, 7}, 5), f32({6, 1, 3, 3}, 6)},
           attrs("nn.conv2d",
                 Fields{{"padding", std::vector<int64_t>{1, 1, 1, 1}}, {"groups", int64_t(6)}}),
           kLongSum);
}

TEST(NnConv2d, GroupedBatchOfTwo) {
  check_op("nn.conv2d", {f32({2, 6, 7, 5}, 7), f32({9, 2, 3, 2}, 8)},
           attrs("nn.conv2d", Fields{{"padding", std::vector<int64_t>{0, 1, 2, 0}},
                                     {"strides", std::vector<int64_t>{1, 2}},
                                     {"groups", int64_t(3)}}),
           kLongSum);
}

TEST(NnConv2d, NhwcHwio) {
  check_op("nn.conv2d", {f32({1, 7, 6, 4}, 9), f32({3, 2, 4, 5}, 10)},
           attrs("nn.conv2d", Fields{{"padding", std::vector<int64_t>{1, 0, 1, 1}},
                                     {"strides", std::vector<int64_t>{2, 1}},
                                     {"data_layout", std::string("NHWC")},
                                     {"kernel_layout", std::string("HWIO")}}),
           kLongSum);
}

TEST(NnConv2d, NhwcOhwiGrouped) {
  check_op("nn.conv2d", {f32({1, 5, 6, 4}, 11), f32({6, 3, 3, 2}, 12)},
           attrs("nn.conv2d", Fields{{"padding", std::vector<int64_t>{1}},
                                     {"groups", int64_t(2)},
                                     {"data_layout", std::string("NHWC")},
                                     {"kernel_layout", std::string("OHWI")}}),
           kLongSum);
}

TEST(NnConv2d, BlockedLayoutsWithOtherOutputLayout) {
  check_op("nn.conv2d", {f32({1, 2, 5, 6, 4}, 13), f32({3, 2, 3, 3, 4, 2}, 14)},
           attrs("nn.conv2d", Fields{{"padding", std::vector<int64_t>{1}},
                                     {"data_layout", std::string("NCHW4c")},
                                     {"kernel_layout", std::string("OIHW4i2o")},
                                     {"out_layout", std::string("NCHW")}}),
           kLongSum);
}

TEST(NnConv2d, Int8IntoInt32) {
  Tensor data = random_tensor({1, 3, 6, 5}, DataType::int8(), 15, -100, 100);
  Tensor weight = random_tensor({4, 3, 3, 3}, DataType::int8(), 16, -100, 100);
  check_op("nn.conv2d", {data, weight},
           attrs("nn.conv2d",
                 Fields{{"padding", std::vector<int64_t>{1}}, {"out_dtype", DataType::int32()}}));
}

TEST(NnConv1d, StridedDilated) {
  check_op("nn.conv1d", {f32({2, 3, 13}, 17), f32({4, 3, 3}, 18)},
           attrs("nn.conv1d", Fields{{"strides", std::vector<int64_t>{2}},
                                     {"padding", std::vector<int64_t>{2, 1}},
                                     {"dilation", std::vector<int64_t>{2}}}),
           kLongSum);
}

TEST(NnConv1d, NwcGrouped) {
  check_op("nn.conv1d", {f32({1, 9, 4}, 19), f32({2, 2, 6}, 20)},
           attrs("nn.conv1d", Fields{{"padding", std::vector<int64_t>{1, 0}},
                                     {"groups", int64_t(2)},
                                     {"data_layout", std::string("NWC")},
                                     {"kernel_layout", std::string("WIO")}}),
           kLongSum);
}

TEST(NnConv3d, AsymmetricPadding) {
  check_op("nn.conv3d", {f32({1, 2, 5, 6, 7}, 21), f32({3, 2, 2, 3, 2}, 22)},
           attrs("nn.conv3d", Fields{{"strides", std::vector<int64_t>{1, 2, 1}},
                                     {"padding", std::vector<int64_t>{1, 0, 1, 0, 1, 1}},
                                     {"dilation", std::vector<int64_t>{1, 1, 2}}}),
           kLongSum);
}

TEST(NnConv3d, NdhwcDepthwise) {
  check_op("nn.conv3d", {f32({1, 4, 5, 3, 3}, 23), f32({2, 2, 2, 1, 3}, 24)},
           attrs("nn.conv3d", Fields{{"padding", std::vector<int64_t>{1}},
                                     {"groups", int64_t(3)},
                                     {"data_layout", std::string("NDHWC")},
                                     {"kernel_layout", std::string("DHWIO")}}),
           kLongSum);
}

TEST(NnConvTranspose2d, StridedAsymmetricOutputPadding) {
  check_op("nn.conv2d_transpose", {f32({1, 4, 5, 6}, 25), f32({4, 3, 3, 3}, 26)},
           attrs("nn.conv2d_transpose", Fields{{"strides", std::vector<int64_t>{2, 3}},
                                               {"padding", std::vector<int64_t>{1, 0, 1, 2}},
                                               {"output_padding", std::vector<int64_t>{1, 0}}}),
           kLongSum);
}

TEST(NnConvTranspose2d, GroupedDilated) {
  check_op("nn.conv2d_transpose", {f32({2, 4, 4, 3}, 27), f32({4, 3, 2, 3}, 28)},
           attrs("nn.conv2d_transpose", Fields{{"strides", std::vector<int64_t>{2, 1}},
                                               {"dilation", std::vector<int64_t>{2, 2}},
                                               {"padding", std::vector<int64_t>{0, 1, 1, 0}},
                                               {"groups", int64_t(2)}}),
           kLongSum);
}

TEST(NnConvTranspose2d, PaddingBeyondKernelReach) {
  // Padding larger than (kernel - 1) * dilation crops the start of the spread input.
  check_op("nn.conv2d_transpose", {f32({1, 2, 6, 6}, 29), f32({2, 2, 2, 2}, 30)},
           attrs("nn.conv2d_transpose", Fields{{"strides", std::vector<int64_t>{2, 2}},
                                               {"padding", std::vector<int64_t>{2, 3, 2, 1}}}),
           kLongSum);
}

TEST(NnConvTranspose1d, Strided) {
  check_op("nn.conv1d_transpose", {f32({2, 3, 7}, 31), f32({3, 2, 4}, 32)},
           attrs("nn.conv1d_transpose", Fields{{"strides", std::vector<int64_t>{3}},
                                               {"padding", std::vector<int64_t>{1, 2}},
                                               {"output_padding", std::vector<int64_t>{2}}}),
           kLongSum);
}

TEST(NnConvTranspose3d, Grouped) {
  check_op("nn.conv3d_transpose", {f32({1, 4, 3, 4, 3}, 33), f32({4, 1, 2, 2, 3}, 34)},
           attrs("nn.conv3d_transpose", Fields{{"strides", std::vector<int64_t>{2, 1, 2}},
                                               {"padding", std::vector<int64_t>{0, 1, 1, 1, 0, 0}},
                                               {"groups", int64_t(2)}}),
           kLongSum);
}

// The compute has TVM's natural form: a separate pad_temp stage (an if_then_else boundary)
// read by one reduction named conv2d_nchw.
TEST(NnConv2d, NaturalFormWithPadStage) {
  te::Tensor data = te::placeholder({1, 2, 5, 5}, DataType::float32(), "data");
  te::Tensor weight = te::placeholder({3, 2, 3, 3}, DataType::float32(), "weight");
  ir::Attrs a = attrs("nn.conv2d", Fields{{"padding", std::vector<int64_t>{1}}});
  ir::Call call = ir::call_op("nn.conv2d", {}, a);
  std::vector<te::Tensor> inputs = {data, weight};
  ir::Type out = ir::TensorTypeNode::make({1, 3, 5, 5}, DataType::float32());
  std::vector<te::Tensor> outputs = (*topi::find_compute("nn.conv2d"))({*call, inputs, out});
  ASSERT_EQ(outputs.size(), 1u);
  EXPECT_EQ(outputs[0].name(), "conv2d_nchw");
  const auto* reduce = tir::as<tir::ReduceNode>(outputs[0]->body);
  ASSERT_NE(reduce, nullptr);
  EXPECT_EQ(reduce->axis.size(), 3u);
  ASSERT_EQ(outputs[0]->inputs.size(), 2u);
  const te::Tensor& pad =
      outputs[0]->inputs[0].name() == "pad_temp" ? outputs[0]->inputs[0] : outputs[0]->inputs[1];
  EXPECT_EQ(pad.name(), "pad_temp");
  const auto* boundary = tir::as<tir::CallNode>(pad->body);
  ASSERT_NE(boundary, nullptr);
  EXPECT_EQ(boundary->op, "if_then_else");
}

TEST(NnDeformableConv2d, OffsetsAcrossTheBorder) {
  // Offsets up to 2.5 pixels move taps outside the image, where they read 0.
  Tensor data = f32({1, 4, 6, 5}, 40);
  Tensor offset = random_tensor({1, 2 * 2 * 3 * 3, 3, 5}, DataType::float32(), 41, -2.5, 2.5);
  Tensor weight = f32({6, 2, 3, 3}, 42);
  check_op("nn.deformable_conv2d", {data, offset, weight},
           attrs("nn.deformable_conv2d", Fields{{"strides", std::vector<int64_t>{2, 1}},
                                                {"padding", std::vector<int64_t>{1, 1, 1, 1}},
                                                {"deformable_groups", int64_t(2)},
                                                {"groups", int64_t(2)}}),
           kLongSum);
}

TEST(NnDeformableConv2d, ModulatedDilated) {
  Tensor data = f32({2, 3, 5, 5}, 43);
  Tensor offset = random_tensor({2, 2 * 2 * 2, 3, 3}, DataType::float32(), 44, -1.5, 1.5);
  Tensor weight = f32({4, 3, 2, 2}, 45);
  Tensor mask = random_tensor({2, 2 * 2, 3, 3}, DataType::float32(), 46, 0, 1);
  check_op("nn.modulated_deformable_conv2d", {data, offset, weight, mask},
           attrs("nn.modulated_deformable_conv2d",
                 Fields{{"dilation", std::vector<int64_t>{2, 2}},
                        {"padding", std::vector<int64_t>{0, 0, 0, 0}}}),
           kLongSum);
}

TEST(NnConv2d, RejectsBlockedSpatialAxis) {
  // The padded stage reads the spatial axes whole, so a layout splitting H is refused.
  te::Tensor data = te::placeholder({1, 2, 2, 5, 4}, DataType::float32(), "data");
  te::Tensor weight = te::placeholder({3, 2, 3, 3}, DataType::float32(), "weight");
  ir::Attrs a = attrs("nn.conv2d", Fields{{"padding", std::vector<int64_t>{1}},
                                          {"data_layout", std::string("NCHW4h")}});
  ir::Call call = ir::call_op("nn.conv2d", {}, a);
  std::vector<te::Tensor> inputs = {data, weight};
  ir::Type out = ir::TensorTypeNode::make({1, 3, 2, 5, 4}, DataType::float32());
  try {
    (*topi::find_compute("nn.conv2d"))({*call, inputs, out});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("layout \"NCHW4h\" blocks the axis H"), std::string::npos)
        << e.what();
  }
}

TEST(NnConv2d, BiasReluGroup) {
  topi_test::check_group(
      R"(fn (%x: Tensor[(1, 3, 7, 6), float32], %w: Tensor[(4, 3, 3, 3), float32],
      %b: Tensor[(4), float32]) {
    %0 = nn.conv2d(%x, %w, padding=[1, 1, 1, 1]);
    %1 = nn.bias_add(%0, %b);
    nn.relu(%1)
  })",
      {}, kLongSum);
}

TEST(NnComputes, EveryNnOpHasACompute) {
  std::vector<std::string> missing = topi::ops_without_compute();
  std::istringstream ours(R"(
      nn.conv1d nn.conv2d nn.conv3d nn.conv1d_transpose nn.conv2d_transpose nn.conv3d_transpose
      nn.dense nn.matmul nn.batch_matmul matmul
      nn.max_pool1d nn.max_pool2d nn.max_pool3d nn.avg_pool1d nn.avg_pool2d nn.avg_pool3d
      nn.lp_pool1d nn.lp_pool2d nn.lp_pool3d nn.global_avg_pool2d nn.global_max_pool2d
      nn.adaptive_avg_pool1d nn.adaptive_avg_pool2d nn.adaptive_avg_pool3d
      nn.adaptive_max_pool1d nn.adaptive_max_pool2d nn.adaptive_max_pool3d
      nn.max_pool1d_with_argmax nn.max_pool2d_with_argmax nn.max_pool3d_with_argmax
      nn.batch_norm nn.layer_norm nn.instance_norm nn.group_norm nn.lrn nn.dropout nn.nll_loss
      image.resize1d image.resize2d image.resize3d image.grid_sample
      nn.deformable_conv2d nn.modulated_deformable_conv2d)");
  int checked = 0;
  for (std::string op; ours >> op; ++checked) {
    ASSERT_NE(ir::OpTable::global().find(op), nullptr) << op;
    EXPECT_EQ(std::count(missing.begin(), missing.end(), op), 0) << op << " has no compute";
  }
  EXPECT_EQ(checked, 43);
}

}  // namespace
}  // namespace anvil
