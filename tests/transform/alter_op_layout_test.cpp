// AlterOpLayout: golden texts on small graphs (weights re-packed by hand in the comments) and
// ResNet-18 with bound parameters, which must compute the same after the pass.
#include <functional>
#include <string>

#include "anvil/ir/functor.h"
#include "anvil/testing/workloads.h"
#include "anvil/transform/passes.h"
#include "transform/pass_test_util.h"

namespace anvil::transform {
namespace {

using testing::count_calls;
using testing::parse;
using testing::print;

// Two 1x1 convs with a per-channel bias, relu and residual adds between them stay blocked;
// the add of a plain input brings that input in, the softmax takes the result back to NCHW.
// Weights with 2 lanes: OIHW [[1, 2], [3, 4]] becomes OIHW2i2o w'[i][o] = w[o][i] = [1, 3, 2, 4].
TEST(AlterOpLayout, ConvChainStaysBlocked) {
  ir::IRModule mod = parse(R"(
def @main(%x: Tensor[(1, 2, 3, 3), float32], %y: Tensor[(1, 2, 3, 3), float32]) {
  %0 = nn.conv2d(%x, const([1, 2, 3, 4], shape=(2, 2, 1, 1), dtype=float32), channels=2, kernel_size=[1, 1]);
  %1 = add(%0, const([5, 6], shape=(2, 1, 1), dtype=float32));
  %2 = nn.relu(%1);
  %3 = nn.conv2d(%2, const([1, -1, 0, 2], shape=(2, 2, 1, 1), dtype=float32));
  %4 = add(%2, %3);
  %5 = add(%4, %y);
  nn.softmax(%5, axis=1)
}
)");
  ir::IRModule after = alter_op_layout(mod, 2);
  EXPECT_EQ(print(after), R"(#[version = "0.0.5"]
def @main(%x: Tensor[(1, 2, 3, 3), float32], %y: Tensor[(1, 2, 3, 3), float32]) -> Tensor[(1, 2, 3, 3), float32] {
  %0 = layout_transform(%x, src_layout="NCHW", dst_layout="NCHW2c");
  %1 = nn.contrib_conv2d_NCHWc(%0, const([1, 3, 2, 4], shape=(1, 1, 1, 1, 2, 2), dtype=float32), channels=2, kernel_size=[1, 1], data_layout="NCHW2c", kernel_layout="OIHW2i2o", out_layout="NCHW2c");
  %2 = add(%1, const([5, 6], shape=(1, 1, 1, 2), dtype=float32));
  %3 = nn.relu(%2);
  %4 = nn.contrib_conv2d_NCHWc(%3, const([1, 0, -1, 2], shape=(1, 1, 1, 1, 2, 2), dtype=float32), channels=2, kernel_size=[1, 1], data_layout="NCHW2c", kernel_layout="OIHW2i2o", out_layout="NCHW2c");
  %5 = add(%3, %4);
  %6 = layout_transform(%y, src_layout="NCHW", dst_layout="NCHW2c");
  %7 = add(%5, %6);
  %8 = layout_transform(%7, src_layout="NCHW2c", dst_layout="NCHW");
  nn.softmax(%8, axis=1)
}
)");
  std::vector<Tensor> inputs = testing::random_inputs(mod, 1);
  testing::expect_same_outputs(mod, after, inputs, inputs);
}

// Three input channels take blocks of 1; strides and padding carry over. OIHW w[o][i] = 3o + i
// (4 x 3) becomes OIHW1i4o w'[i][o] = [[0, 3, 6, 9], [1, 4, 7, 10], [2, 5, 8, 11]].
TEST(AlterOpLayout, ThreeChannelsTakeUnitBlocks) {
  ir::IRModule mod = parse(R"(
def @main(%x: Tensor[(1, 3, 4, 4), float32]) {
  nn.conv2d(%x, const([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11], shape=(4, 3, 1, 1), dtype=float32), strides=[2, 2], padding=[1, 1, 1, 1])
}
)");
  ir::IRModule after = alter_op_layout(mod, 16);
  EXPECT_EQ(print(after), R"(#[version = "0.0.5"]
def @main(%x: Tensor[(1, 3, 4, 4), float32]) -> Tensor[(1, 4, 3, 3), float32] {
  %0 = layout_transform(%x, src_layout="NCHW", dst_layout="NCHW1c");
  %1 = nn.contrib_conv2d_NCHWc(%0, const([0, 3, 6, 9, 1, 4, 7, 10, 2, 5, 8, 11], shape=(1, 3, 1, 1, 1, 4), dtype=float32), strides=[2, 2], padding=[1, 1, 1, 1], channels=4, kernel_size=[1, 1], data_layout="NCHW1c", kernel_layout="OIHW1i4o", out_layout="NCHW4c");
  layout_transform(%1, src_layout="NCHW4c", dst_layout="NCHW")
}
)");
  std::vector<Tensor> inputs = testing::random_inputs(mod, 2);
  testing::expect_same_outputs(mod, after, inputs, inputs);
}

// A broadcast operand that is not per-channel (here along W) gets the NCHW tensor.
TEST(AlterOpLayout, NonChannelBroadcastTakesTheNchwTensor) {
  ir::IRModule mod = parse(R"(
def @main(%x: Tensor[(1, 2, 1, 3), float32]) {
  %0 = nn.conv2d(%x, const([1, 2, 3, 4], shape=(2, 2, 1, 1), dtype=float32));
  multiply(%0, const([1, 2, 3], shape=(3), dtype=float32))
}
)");
  ir::IRModule after = alter_op_layout(mod, 2);
  EXPECT_EQ(print(after), R"(#[version = "0.0.5"]
def @main(%x: Tensor[(1, 2, 1, 3), float32]) -> Tensor[(1, 2, 1, 3), float32] {
  %0 = layout_transform(%x, src_layout="NCHW", dst_layout="NCHW2c");
  %1 = nn.contrib_conv2d_NCHWc(%0, const([1, 3, 2, 4], shape=(1, 1, 1, 1, 2, 2), dtype=float32), channels=2, kernel_size=[1, 1], data_layout="NCHW2c", kernel_layout="OIHW2i2o", out_layout="NCHW2c");
  %2 = layout_transform(%1, src_layout="NCHW2c", dst_layout="NCHW");
  multiply(%2, const([1, 2, 3], shape=(3), dtype=float32))
}
)");
}

// A depthwise convolution keeps one block for data and output; its weight has one input
// channel per group: OIHW (2, 1, 1, 1) [3, 5] becomes OIHW1i2o (1, 1, 1, 1, 1, 2) [3, 5].
TEST(AlterOpLayout, DepthwiseKeepsTheDataBlock) {
  ir::IRModule mod = parse(R"(
def @main(%x: Tensor[(1, 2, 3, 3), float32]) {
  %0 = nn.conv2d(%x, const([3, 5], shape=(2, 1, 1, 1), dtype=float32), groups=2);
  nn.relu(%0)
}
)");
  ir::IRModule after = alter_op_layout(mod, 2);
  EXPECT_EQ(print(after), R"(#[version = "0.0.5"]
def @main(%x: Tensor[(1, 2, 3, 3), float32]) -> Tensor[(1, 2, 3, 3), float32] {
  %0 = layout_transform(%x, src_layout="NCHW", dst_layout="NCHW2c");
  %1 = nn.contrib_conv2d_NCHWc(%0, const([3, 5], shape=(1, 1, 1, 1, 1, 2), dtype=float32), groups=2, channels=2, kernel_size=[1, 1], data_layout="NCHW2c", kernel_layout="OIHW1i2o", out_layout="NCHW2c");
  %2 = nn.relu(%1);
  layout_transform(%2, src_layout="NCHW2c", dst_layout="NCHW")
}
)");
  std::vector<Tensor> inputs = testing::random_inputs(mod, 4);
  testing::expect_same_outputs(mod, after, inputs, inputs);
}

// A channel bias_add (the ONNX importer's conv bias) becomes an add in the blocked layout: a
// constant bias is re-laid out, a bias that is a parameter is reshaped to (C/b, 1, 1, b).
TEST(AlterOpLayout, BiasAddBecomesBlockedAdd) {
  ir::IRModule mod = parse(R"(
def @main(%x: Tensor[(1, 2, 3, 3), float32], %b: Tensor[(2), float32]) {
  %0 = nn.conv2d(%x, const([1, 2, 3, 4], shape=(2, 2, 1, 1), dtype=float32));
  %1 = nn.bias_add(%0, const([7, 8], shape=(2), dtype=float32));
  nn.bias_add(%1, %b)
}
)");
  ir::IRModule after = alter_op_layout(mod, 2);
  EXPECT_EQ(print(after), R"(#[version = "0.0.5"]
def @main(%x: Tensor[(1, 2, 3, 3), float32], %b: Tensor[(2), float32]) -> Tensor[(1, 2, 3, 3), float32] {
  %0 = layout_transform(%x, src_layout="NCHW", dst_layout="NCHW2c");
  %1 = nn.contrib_conv2d_NCHWc(%0, const([1, 3, 2, 4], shape=(1, 1, 1, 1, 2, 2), dtype=float32), channels=2, kernel_size=[1, 1], data_layout="NCHW2c", kernel_layout="OIHW2i2o", out_layout="NCHW2c");
  %2 = add(%1, const([7, 8], shape=(1, 1, 1, 2), dtype=float32));
  %3 = reshape(%b, newshape=[1, 1, 1, 2]);
  %4 = add(%2, %3);
  layout_transform(%4, src_layout="NCHW2c", dst_layout="NCHW")
}
)");
  std::vector<Tensor> inputs = testing::random_inputs(mod, 6);
  testing::expect_same_outputs(mod, after, inputs, inputs);
}

// Pools read the blocked layout directly; only their result goes back to NCHW.
TEST(AlterOpLayout, PoolsStayBlocked) {
  ir::IRModule mod = parse(R"(
def @main(%x: Tensor[(1, 2, 4, 4), float32]) {
  %0 = nn.conv2d(%x, const([1, 2, 3, 4], shape=(2, 2, 1, 1), dtype=float32));
  %1 = nn.max_pool2d(%0, pool_size=[2, 2], strides=[2, 2]);
  nn.global_avg_pool2d(%1)
}
)");
  ir::IRModule after = alter_op_layout(mod, 2);
  EXPECT_EQ(print(after), R"(#[version = "0.0.5"]
def @main(%x: Tensor[(1, 2, 4, 4), float32]) -> Tensor[(1, 2, 1, 1), float32] {
  %0 = layout_transform(%x, src_layout="NCHW", dst_layout="NCHW2c");
  %1 = nn.contrib_conv2d_NCHWc(%0, const([1, 3, 2, 4], shape=(1, 1, 1, 1, 2, 2), dtype=float32), channels=2, kernel_size=[1, 1], data_layout="NCHW2c", kernel_layout="OIHW2i2o", out_layout="NCHW2c");
  %2 = nn.max_pool2d(%1, pool_size=[2, 2], strides=[2, 2], layout="NCHW2c");
  %3 = nn.global_avg_pool2d(%2, layout="NCHW2c");
  layout_transform(%3, src_layout="NCHW2c", dst_layout="NCHW")
}
)");
  std::vector<Tensor> inputs = testing::random_inputs(mod, 5);
  testing::expect_same_outputs(mod, after, inputs, inputs);
}

// A fire module (SqueezeNet): a squeeze conv feeds two expand convs whose outputs join along
// the channels (axis -3), and the next conv reads the join. The join stays blocked: the parts
// meet on the chunk axis of NCHW2c (4 channels = 2 chunks of 2), and only the input and the
// result change layout. The last conv's OIHW (2, 4) weight w[o][i] = 4o + i + 1 becomes
// OIHW2i2o w'[io][ii][oi] = w[oi][2 io + ii] = [1, 5, 2, 6, 3, 7, 4, 8].
TEST(AlterOpLayout, FireModuleConcatenateStaysBlocked) {
  ir::IRModule mod = parse(R"(
def @main(%x: Tensor[(1, 2, 3, 3), float32]) {
  %0 = nn.conv2d(%x, const([1, 2, 3, 4], shape=(2, 2, 1, 1), dtype=float32));
  %1 = nn.relu(%0);
  %2 = nn.conv2d(%1, const([1, -1, 0, 2], shape=(2, 2, 1, 1), dtype=float32));
  %3 = nn.relu(%2);
  %4 = nn.conv2d(%1, const([2, 0, -1, 1], shape=(2, 2, 1, 1), dtype=float32));
  %5 = nn.relu(%4);
  %6 = (%3, %5);
  %7 = concatenate(%6, axis=-3);
  nn.conv2d(%7, const([1, 2, 3, 4, 5, 6, 7, 8], shape=(2, 4, 1, 1), dtype=float32))
}
)");
  ir::IRModule after = alter_op_layout(mod, 2);
  EXPECT_EQ(print(after), R"(#[version = "0.0.5"]
def @main(%x: Tensor[(1, 2, 3, 3), float32]) -> Tensor[(1, 2, 3, 3), float32] {
  %0 = layout_transform(%x, src_layout="NCHW", dst_layout="NCHW2c");
  %1 = nn.contrib_conv2d_NCHWc(%0, const([1, 3, 2, 4], shape=(1, 1, 1, 1, 2, 2), dtype=float32), channels=2, kernel_size=[1, 1], data_layout="NCHW2c", kernel_layout="OIHW2i2o", out_layout="NCHW2c");
  %2 = nn.relu(%1);
  %3 = nn.contrib_conv2d_NCHWc(%2, const([1, 0, -1, 2], shape=(1, 1, 1, 1, 2, 2), dtype=float32), channels=2, kernel_size=[1, 1], data_layout="NCHW2c", kernel_layout="OIHW2i2o", out_layout="NCHW2c");
  %4 = nn.relu(%3);
  %5 = nn.contrib_conv2d_NCHWc(%2, const([2, -1, 0, 1], shape=(1, 1, 1, 1, 2, 2), dtype=float32), channels=2, kernel_size=[1, 1], data_layout="NCHW2c", kernel_layout="OIHW2i2o", out_layout="NCHW2c");
  %6 = nn.relu(%5);
  %7 = (%4, %6);
  %8 = concatenate(%7, axis=1);
  %9 = nn.contrib_conv2d_NCHWc(%8, const([1, 5, 2, 6, 3, 7, 4, 8], shape=(1, 2, 1, 1, 2, 2), dtype=float32), channels=2, kernel_size=[1, 1], data_layout="NCHW2c", kernel_layout="OIHW2i2o", out_layout="NCHW2c");
  layout_transform(%9, src_layout="NCHW2c", dst_layout="NCHW")
}
)");
  std::vector<Tensor> inputs = testing::random_inputs(mod, 7);
  testing::expect_same_outputs(mod, after, inputs, inputs);
}

// Parts with different blocks join in the smallest: the 4-channel conv (NCHW4c) is re-blocked
// to NCHW2c like the 2-channel one, and a part in NCHW is brought in. OIHW (4, 2) w[o][i] = 2o + i
// becomes OIHW2i4o w'[ii][oi] = w[oi][ii] = [0, 2, 4, 6, 1, 3, 5, 7].
TEST(AlterOpLayout, ConcatenateJoinsInTheSmallestBlock) {
  ir::IRModule mod = parse(R"(
def @main(%x: Tensor[(1, 2, 2, 2), float32], %y: Tensor[(1, 2, 2, 2), float32]) {
  %0 = nn.conv2d(%x, const([0, 1, 2, 3, 4, 5, 6, 7], shape=(4, 2, 1, 1), dtype=float32));
  %1 = nn.conv2d(%x, const([1, 2, 3, 4], shape=(2, 2, 1, 1), dtype=float32));
  %2 = (%0, %1, %y);
  concatenate(%2, axis=1)
}
)");
  ir::IRModule after = alter_op_layout(mod, 4);
  EXPECT_EQ(print(after), R"(#[version = "0.0.5"]
def @main(%x: Tensor[(1, 2, 2, 2), float32], %y: Tensor[(1, 2, 2, 2), float32]) -> Tensor[(1, 8, 2, 2), float32] {
  %0 = layout_transform(%x, src_layout="NCHW", dst_layout="NCHW2c");
  %1 = nn.contrib_conv2d_NCHWc(%0, const([0, 2, 4, 6, 1, 3, 5, 7], shape=(1, 1, 1, 1, 2, 4), dtype=float32), channels=4, kernel_size=[1, 1], data_layout="NCHW2c", kernel_layout="OIHW2i4o", out_layout="NCHW4c");
  %2 = layout_transform(%1, src_layout="NCHW4c", dst_layout="NCHW2c");
  %3 = nn.contrib_conv2d_NCHWc(%0, const([1, 3, 2, 4], shape=(1, 1, 1, 1, 2, 2), dtype=float32), channels=2, kernel_size=[1, 1], data_layout="NCHW2c", kernel_layout="OIHW2i2o", out_layout="NCHW2c");
  %4 = layout_transform(%y, src_layout="NCHW", dst_layout="NCHW2c");
  %5 = (%2, %3, %4);
  %6 = concatenate(%5, axis=1);
  layout_transform(%6, src_layout="NCHW2c", dst_layout="NCHW")
}
)");
  std::vector<Tensor> inputs = testing::random_inputs(mod, 8);
  testing::expect_same_outputs(mod, after, inputs, inputs);
}

// Joins along H (and N, W) need no channel condition: the parts share their channel count.
TEST(AlterOpLayout, ConcatenateAlongRowsStaysBlocked) {
  ir::IRModule mod = parse(R"(
def @main(%x: Tensor[(1, 2, 2, 3), float32]) {
  %0 = nn.conv2d(%x, const([1, 2, 3, 4], shape=(2, 2, 1, 1), dtype=float32));
  %1 = nn.relu(%0);
  %2 = (%0, %1);
  concatenate(%2, axis=2)
}
)");
  ir::IRModule after = alter_op_layout(mod, 2);
  EXPECT_EQ(print(after), R"(#[version = "0.0.5"]
def @main(%x: Tensor[(1, 2, 2, 3), float32]) -> Tensor[(1, 2, 4, 3), float32] {
  %0 = layout_transform(%x, src_layout="NCHW", dst_layout="NCHW2c");
  %1 = nn.contrib_conv2d_NCHWc(%0, const([1, 3, 2, 4], shape=(1, 1, 1, 1, 2, 2), dtype=float32), channels=2, kernel_size=[1, 1], data_layout="NCHW2c", kernel_layout="OIHW2i2o", out_layout="NCHW2c");
  %2 = nn.relu(%1);
  %3 = (%1, %2);
  %4 = concatenate(%3, axis=2);
  layout_transform(%4, src_layout="NCHW2c", dst_layout="NCHW")
}
)");
  std::vector<Tensor> inputs = testing::random_inputs(mod, 9);
  testing::expect_same_outputs(mod, after, inputs, inputs);
}

// A part of 3 channels leaves no common block above 1 where the conv has 4: the join stays in
// NCHW, with the conv's output taken back. A join of parts none of which is blocked stays too.
TEST(AlterOpLayout, ConcatenateWithoutACommonBlockStaysInNchw) {
  ir::IRModule mod = parse(R"(
def @main(%x: Tensor[(1, 4, 2, 2), float32], %y: Tensor[(1, 3, 2, 2), float32]) {
  %0 = nn.conv2d(%x, const([1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1], shape=(4, 4, 1, 1), dtype=float32));
  %1 = (%0, %y);
  %2 = concatenate(%1, axis=1);
  %3 = (%x, %y);
  %4 = concatenate(%3, axis=1);
  (%2, %4)
}
)");
  ir::IRModule after = alter_op_layout(mod, 4);
  EXPECT_EQ(print(after), R"(#[version = "0.0.5"]
def @main(%x: Tensor[(1, 4, 2, 2), float32], %y: Tensor[(1, 3, 2, 2), float32]) -> (Tensor[(1, 7, 2, 2), float32], Tensor[(1, 7, 2, 2), float32]) {
  %0 = layout_transform(%x, src_layout="NCHW", dst_layout="NCHW4c");
  %1 = nn.contrib_conv2d_NCHWc(%0, const([1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1], shape=(1, 1, 1, 1, 4, 4), dtype=float32), channels=4, kernel_size=[1, 1], data_layout="NCHW4c", kernel_layout="OIHW4i4o", out_layout="NCHW4c");
  %2 = layout_transform(%1, src_layout="NCHW4c", dst_layout="NCHW");
  %3 = (%2, %y);
  %4 = concatenate(%3, axis=1);
  %5 = (%x, %y);
  %6 = concatenate(%5, axis=1);
  (%4, %6)
}
)");
  std::vector<Tensor> inputs = testing::random_inputs(mod, 10);
  testing::expect_same_outputs(mod, after, inputs, inputs);
}

// Grouped (not depthwise) convolutions, weights that are not constants and other layouts stay as
// they are.
TEST(AlterOpLayout, LeavesConvsItCannotBlock) {
  ir::IRModule mod = parse(R"(
def @main(%x: Tensor[(1, 4, 3, 3), float32], %w: Tensor[(2, 2, 1, 1), float32], %h: Tensor[(1, 3, 3, 2), float32]) {
  %0 = nn.conv2d(%x, const([1, 2, 3, 4], shape=(2, 2, 1, 1), dtype=float32), groups=2);
  %1 = nn.conv2d(%0, %w);
  %2 = nn.conv2d(%h, const([1, 2, 3, 4], shape=(1, 1, 2, 2), dtype=float32), data_layout="NHWC", kernel_layout="HWIO");
  (%1, %2)
}
)");
  std::vector<std::string> remarks;
  EXPECT_EQ(print(alter_op_layout(mod, 16, &remarks)), print(mod));
  // Each convolution left as it was says why (consumers are met before their producers).
  ASSERT_EQ(remarks.size(), 3u);
  EXPECT_EQ(remarks[0],
            "nn.conv2d((1, 2, 3, 3), (2, 2, 1, 1)): x86.conv2d_nchwc declined: the weight is not "
            "a constant (bind the params to pack it)");
  EXPECT_EQ(remarks[1],
            "nn.conv2d((1, 4, 3, 3), (2, 2, 1, 1)): x86.conv2d_nchwc declined: groups of 2 input "
            "/ 1 output channels fit no channel block of 4 or more, whole or merged");
  EXPECT_EQ(remarks[2],
            "nn.conv2d((1, 3, 3, 2), (1, 1, 2, 2)): x86.conv2d_nchwc declined: layouts "
            "NHWC/HWIO: the blocked form is made from NCHW/OIHW");
}

// nn.dense with a constant (N, K) weight of a width that takes no full vector (2 columns, 16
// lanes) becomes nn.matmul with the (K, N) transpose.
TEST(AlterOpLayout, DenseBecomesMatmulWithTransposedWeight) {
  ir::IRModule mod = parse(R"(
def @main(%x: Tensor[(1, 3), float32]) {
  nn.dense(%x, const([1, 2, 3, 4, 5, 6], shape=(2, 3), dtype=float32), units=2)
}
)");
  ir::IRModule after = alter_op_layout(mod, 16);
  EXPECT_EQ(print(after), R"(#[version = "0.0.5"]
def @main(%x: Tensor[(1, 3), float32]) -> Tensor[(1, 2), float32] {
  nn.matmul(%x, const([1, 4, 2, 5, 3, 6], shape=(3, 2), dtype=float32), units=2)
}
)");
  std::vector<Tensor> inputs = testing::random_inputs(mod, 3);
  testing::expect_same_outputs(mod, after, inputs, inputs);
}

// The single call of op in the body of @main, with its constant weight.
const ir::CallNode* the_call(const ir::IRModule& mod, const std::string& op) {
  const ir::CallNode* found = nullptr;
  ir::post_order_visit(mod.get_function("main")->body, [&](const ir::Expr& e) {
    if (const auto* call = ir::as<ir::CallNode>(e); call && call->op() && call->op()->name == op)
      found = call;
  });
  return found;
}

// @main(%x: (rows, K)) = op(%x, weight) with the weight's element i equal to i.
ir::IRModule product_with_counting_weight(const std::string& op, int64_t rows,
                                          std::vector<int64_t> weight_shape) {
  Tensor w = Tensor::empty(weight_shape, DataType::float32());
  for (int64_t i = 0; i < w.numel(); ++i) static_cast<float*>(w.data())[i] = float(i);
  const int64_t k = op == "nn.dense" ? weight_shape[1] : weight_shape[0];
  ir::Var x = ir::VarNode::make("x", ir::TensorTypeNode::make({rows, k}, DataType::float32()));
  ir::Expr body = ir::call_op(op, {x, ir::ConstantNode::make(w)});
  ir::IRModule mod;
  mod.add("main", ir::FunctionNode::make({x}, body));
  return ir::infer_type(mod);
}

// Checks that `after` computes @main with one nn.contrib_dense_pack whose weight has `shape`
// (blocks, K, b) and holds packed[blk, k, l] = k * columns + blk * b + l: the element (k, n) of
// a (K, N) weight counting 0, 1, 2, ... row by row.
void expect_counting_weight_packed(const ir::IRModule& after, std::vector<int64_t> shape,
                                   int64_t columns) {
  const ir::CallNode* packed = the_call(after, "nn.contrib_dense_pack");
  ASSERT_TRUE(packed) << print(after);
  const auto* weight = ir::as<ir::ConstantNode>(packed->args[1]);
  ASSERT_TRUE(weight) << print(after);
  ASSERT_EQ(weight->data.shape_vector(), shape);
  const float* values = static_cast<const float*>(weight->data.data());
  for (int64_t b = 0; b < shape[0]; ++b)
    for (int64_t k = 0; k < shape[1]; ++k)
      for (int64_t l = 0; l < shape[2]; ++l)
        EXPECT_EQ(values[(b * shape[1] + k) * shape[2] + l], float(k * columns + b * shape[2] + l))
            << b << " " << k << " " << l;
}

// nn.matmul with a constant (K, N) weight becomes nn.contrib_dense_pack with the weight packed
// in blocks of whole vectors of columns, packed[n / b, k, n % b] = B[k, n]: 20 columns = 5
// vectors of 4, which no 2, 3 or 4 divides, give blocks of one vector, (5, 3, 4).
TEST(AlterOpLayout, MatmulWeightIsPackedInColumnBlocks) {
  ir::IRModule mod = product_with_counting_weight("nn.matmul", 3, {3, 20});
  ir::IRModule after = alter_op_layout(mod, 4);
  EXPECT_EQ(count_calls(after, "nn.matmul"), 0) << print(after);
  expect_counting_weight_packed(after, {5, 3, 4}, 20);
  std::vector<Tensor> inputs = testing::random_inputs(mod, 3);
  testing::expect_same_outputs(mod, after, inputs, inputs);
}

// A width that takes no full vector but half ones (36 columns, 8 lanes: 9 vectors of 4) is
// packed in blocks of up to eight half vectors: 3 of 4 lanes, (3, 3, 12).
TEST(AlterOpLayout, WidthOfHalfVectorsIsPackedToo) {
  ir::IRModule mod = product_with_counting_weight("nn.matmul", 1, {3, 36});
  ir::IRModule after = alter_op_layout(mod, 8);
  expect_counting_weight_packed(after, {3, 3, 12}, 36);
  std::vector<Tensor> inputs = testing::random_inputs(mod, 3);
  testing::expect_same_outputs(mod, after, inputs, inputs);
}

// nn.dense reads its (N, K) weight by rows: packed[n / b, k, n % b] = W[n, k]. 8 columns = 2
// vectors of 4: one block of 8.
TEST(AlterOpLayout, DenseWeightIsPackedInColumnBlocks) {
  ir::IRModule mod = parse(R"(
def @main(%x: Tensor[(2, 2), float32]) {
  nn.dense(%x, const([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15], shape=(8, 2), dtype=float32), units=8)
}
)");
  ir::IRModule after = alter_op_layout(mod, 4);
  EXPECT_EQ(print(after), R"(#[version = "0.0.5"]
def @main(%x: Tensor[(2, 2), float32]) -> Tensor[(2, 8), float32] {
  nn.contrib_dense_pack(%x, const([0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15], shape=(1, 2, 8), dtype=float32), units=8)
}
)");
  std::vector<Tensor> inputs = testing::random_inputs(mod, 3);
  testing::expect_same_outputs(mod, after, inputs, inputs);
}

// A matmul whose weight is not a constant, or which reads it transposed, stays as it is.
TEST(AlterOpLayout, MatmulOfActivationsIsLeftAlone) {
  ir::IRModule mod = parse(R"(
def @main(%x: Tensor[(2, 4), float32], %w: Tensor[(4, 8), float32]) {
  %0 = nn.matmul(%x, %w);
  %1 = nn.matmul(%x, const([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15], shape=(4, 4), dtype=float32), transpose_b=True);
  (%0, %1)
}
)");
  std::vector<std::string> remarks;
  EXPECT_EQ(print(alter_op_layout(mod, 4, &remarks)), print(mod));
  ASSERT_EQ(remarks.size(), 2u);
  EXPECT_EQ(remarks[0],
            "nn.matmul((2, 4), (4, 8)): x86.dense_pack declined: the weight is not a constant "
            "(bind the params to pack it)");
  EXPECT_EQ(remarks[1],
            "nn.matmul((2, 4), (4, 4)): x86.dense_pack declined: transposed operands are not "
            "packed");
}

TEST(AlterOpLayout, RejectsNonPositiveLanes) {
  ir::IRModule mod = parse(R"(
def @main(%x: Tensor[(1, 3), float32]) { nn.relu(%x) }
)");
  try {
    alter_op_layout(mod, 0);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "alter_op_layout: vector_lanes must be positive, got 0");
  }
}

// 34 output channels take blocks of 2 on 4 lanes; rounded up to 36 (2 more channels, at most a
// sixteenth more work) they take whole vectors: the conv computes 36 channels from zero-padded
// weights, bias, relu and pooling follow in NCHW4c with the bias padded too, and the channels
// are sliced back to 34 only where the value leaves the blocked layout. A sum with another
// padded conv stays blocked; a sum with an NCHW input of 34 channels and a conv reading the
// padded value go through the sliced NCHW form.
TEST(AlterOpLayout, OutputChannelsArePaddedToWholeVectors) {
  ir::IRModule with_weights = parse(R"(
def @main(%x: Tensor[(1, 4, 3, 3), float32], %y: Tensor[(1, 34, 1, 1), float32],
          %w0: Tensor[(34, 4, 1, 1), float32], %b: Tensor[(34), float32],
          %w1: Tensor[(34, 4, 1, 1), float32], %w2: Tensor[(8, 34, 1, 1), float32]) {
  %0 = nn.conv2d(%x, %w0);
  %1 = nn.bias_add(%0, %b);
  %2 = nn.relu(%1);
  %3 = nn.conv2d(%x, %w1);
  %4 = add(%2, %3);
  %5 = nn.global_avg_pool2d(%4);
  %6 = add(%5, %y);
  %7 = nn.conv2d(%2, %w2);
  (%6, %7)
}
)");
  ir::IRModule mod = bind_params(with_weights, {{"w0", testing::random_tensor({34, 4, 1, 1}, 1)},
                                                {"b", testing::random_tensor({34}, 2)},
                                                {"w1", testing::random_tensor({34, 4, 1, 1}, 3)},
                                                {"w2", testing::random_tensor({8, 34, 1, 1}, 4)}});
  ir::IRModule after = alter_op_layout(mod, 4);
  const std::string text = print(after);
  EXPECT_EQ(count_calls(after, "nn.contrib_conv2d_NCHWc"), 3) << text;
  EXPECT_NE(text.find("channels=36, kernel_size=[1, 1], data_layout=\"NCHW4c\", "
                      "kernel_layout=\"OIHW4i4o\", out_layout=\"NCHW4c\""),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("%2 = add(%1, meta"), std::string::npos) << text;  // the padded bias
  EXPECT_NE(text.find("nn.global_avg_pool2d(%5, layout=\"NCHW4c\")"), std::string::npos) << text;
  // One slice for the pooled sum's way out, one for the conv reading %2 (in NCHW2c: 34 = 17 x 2).
  EXPECT_EQ(count_calls(after, "strided_slice"), 2) << text;
  std::vector<Tensor> inputs = testing::random_inputs(mod, 11);
  testing::expect_same_outputs(mod, after, inputs, inputs, 1e-5);
}

// ResNet-18 with its parameters bound and folded: every conv is blocked, the layout changes
// are only at the edges (into the first conv, back after the global pooling), and the
// network computes the same.
TEST(AlterOpLayout, ResNet18ComputesTheSame) {
  anvil::testing::Workload w = anvil::testing::resnet(18, 1, {3, 32, 32}, 10);
  ir::IRModule mod = fold_constant(simplify_inference(bind_params(w.mod, w.params)));
  ir::IRModule after = alter_op_layout(mod, 16);
  EXPECT_EQ(count_calls(after, "nn.conv2d"), 0);
  EXPECT_EQ(count_calls(after, "nn.contrib_conv2d_NCHWc"), count_calls(mod, "nn.conv2d"));
  EXPECT_EQ(count_calls(after, "layout_transform"), 2) << print(after);
  std::vector<Tensor> inputs = {testing::random_tensor({1, 3, 32, 32}, 5)};
  testing::expect_same_outputs(mod, after, inputs, inputs, 1e-4);
}

// MobileNet: depthwise and pointwise convolutions alternate, all blocked.
TEST(AlterOpLayout, MobileNetComputesTheSame) {
  anvil::testing::Workload w = anvil::testing::mobilenet(1, 10, {3, 32, 32});
  ir::IRModule mod = fold_constant(simplify_inference(bind_params(w.mod, w.params)));
  ir::IRModule after = alter_op_layout(mod, 16);
  EXPECT_EQ(count_calls(after, "nn.conv2d"), 0);
  EXPECT_EQ(count_calls(after, "layout_transform"), 2) << print(after);
  std::vector<Tensor> inputs = {testing::random_tensor({1, 3, 32, 32}, 6)};
  testing::expect_same_outputs(mod, after, inputs, inputs, 1e-4);
}

}  // namespace
}  // namespace anvil::transform
