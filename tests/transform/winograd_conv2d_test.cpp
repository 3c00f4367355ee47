// WinogradConv2D: which blocked convolutions it rewrites (3x3, stride 1, groups 1, constant
// weight, a map of at least 14 x 14, 64+ channels each way, dilated class maps that tiles of 4
// cover without overshooting more than 8 / 7) and which it leaves, and that the
// rewritten graphs compute what the direct convolution computes (reference interpreter, whose
// Winograd kernel is itself checked against the direct one in tests/reference).
#include <string>

#include "anvil/ir/op.h"
#include "anvil/testing/workloads.h"
#include "anvil/transform/passes.h"
#include "transform/pass_test_util.h"

namespace anvil::transform {
namespace {

using testing::count_calls;

struct ConvSpec {
  int64_t in_channels = 64, out_channels = 64, size = 14, kernel = 3, stride = 1, pad = 1,
          dilation = 1, groups = 1;
  int64_t dilation_w = 0;  // 0: the same dilation along W
  bool constant_weight = true;
};

// def @main(%x) { nn.conv2d(%x, W) } in NCHW / OIHW, W a random constant (or parameter %w).
ir::IRModule conv_module(const ConvSpec& s) {
  ir::Var x = ir::VarNode::make(
      "x", ir::TensorTypeNode::make({1, s.in_channels, s.size, s.size}, DataType::float32()));
  std::vector<int64_t> w_shape = {s.out_channels, s.in_channels / s.groups, s.kernel, s.kernel};
  std::vector<ir::Var> params = {x};
  ir::Expr weight;
  if (s.constant_weight) {
    weight = ir::ConstantNode::make(testing::random_tensor(w_shape, 3));
  } else {
    ir::Var w =
        ir::VarNode::make("w", ir::TensorTypeNode::make(ir::to_dims(w_shape), DataType::float32()));
    params.push_back(w);
    weight = w;
  }
  ir::Attrs attrs = ir::make_op_attrs(
      "nn.conv2d",
      {{"strides", std::vector<int64_t>{s.stride, s.stride}},
       {"padding", std::vector<int64_t>{s.pad, s.pad, s.pad, s.pad}},
       {"dilation", std::vector<int64_t>{s.dilation, s.dilation_w ? s.dilation_w : s.dilation}},
       {"groups", s.groups},
       {"channels", s.out_channels},
       {"kernel_size", std::vector<int64_t>{s.kernel, s.kernel}}});
  ir::Expr conv = ir::call_op("nn.conv2d", {x, weight}, attrs);
  ir::IRModule mod;
  mod.add("main", ir::FunctionNode::make(params, conv));
  return ir::infer_type(mod);
}

int winograd_calls(const ConvSpec& s) {
  ir::IRModule blocked = alter_op_layout(conv_module(s), 16);
  return count_calls(winograd_conv2d(blocked), "nn.contrib_conv2d_winograd_NCHWc");
}

TEST(WinogradConv2D, RewritesEligibleConvAndComputesTheSame) {
  ConvSpec spec;
  spec.in_channels = 128;
  ir::IRModule mod = conv_module(spec);
  ir::IRModule blocked = alter_op_layout(mod, 16);
  ir::IRModule after = winograd_conv2d(blocked);
  EXPECT_EQ(count_calls(after, "nn.contrib_conv2d_winograd_NCHWc"), 1);
  EXPECT_EQ(count_calls(after, "nn.contrib_conv2d_NCHWc"), 0);
  const std::string text = testing::print(after);
  EXPECT_NE(text.find("kernel_layout=\"HWOI16o\""), std::string::npos) << text;
  std::vector<int64_t> weight_shape;
  ir::post_order_visit(after.get_function("main")->body, [&](const ir::Expr& e) {
    const auto* call = ir::as<ir::CallNode>(e);
    if (call && call->op() && call->op()->name == "nn.contrib_conv2d_winograd_NCHWc")
      if (const auto* weight = ir::as<ir::ConstantNode>(call->args[1]))
        weight_shape = weight->data.shape_vector();
  });
  EXPECT_EQ(weight_shape, (std::vector<int64_t>{6, 6, 4, 128, 16})) << text;
  std::vector<Tensor> inputs = testing::random_inputs(mod, 4);
  testing::expect_same_outputs(mod, after, inputs, inputs, 1e-4);
}

TEST(WinogradConv2D, UnpaddedOddMapComputesTheSame) {
  ConvSpec spec;
  spec.size = 19;  // 17 x 17 outputs: 5 x 5 tiles, the last ones cut
  spec.pad = 0;
  spec.out_channels = 80;
  ir::IRModule mod = conv_module(spec);
  ir::IRModule after = winograd_conv2d(alter_op_layout(mod, 16));
  EXPECT_EQ(count_calls(after, "nn.contrib_conv2d_winograd_NCHWc"), 1);
  std::vector<Tensor> inputs = testing::random_inputs(mod, 5);
  testing::expect_same_outputs(mod, after, inputs, inputs, 1e-4);
}

TEST(WinogradConv2D, LeavesIneligibleConvs) {
  ConvSpec stride2;
  stride2.stride = 2;
  stride2.size = 29;
  EXPECT_EQ(winograd_calls(stride2), 0);
  ConvSpec one_by_one;
  one_by_one.kernel = 1;
  one_by_one.pad = 0;
  EXPECT_EQ(winograd_calls(one_by_one), 0);
  ConvSpec small_map;  // ResNet's last stage: 7 x 7
  small_map.size = 7;
  EXPECT_EQ(winograd_calls(small_map), 0);
  ConvSpec grouped;
  grouped.groups = 2;
  EXPECT_EQ(winograd_calls(grouped), 0);
  ConvSpec depthwise;
  depthwise.groups = 64;
  EXPECT_EQ(winograd_calls(depthwise), 0);
  ConvSpec overshooting;  // dilation 3 on 14 x 14: class maps of 5 rows in tiles of 8
  overshooting.dilation = 3;
  overshooting.pad = 3;
  EXPECT_EQ(winograd_calls(overshooting), 0);
  ConvSpec parameter_weight;
  parameter_weight.constant_weight = false;
  EXPECT_EQ(winograd_calls(parameter_weight), 0);
  ConvSpec few_channels;
  few_channels.in_channels = 32;  // SqueezeNet's expand convs: 16-64 inputs
  EXPECT_EQ(winograd_calls(few_channels), 0);
  ConvSpec eligible;  // the control: the same helper does rewrite an eligible conv
  EXPECT_EQ(winograd_calls(eligible), 1);
}

// Dilated convolutions run as one undilated Winograd convolution per class of outputs (oh % d,
// ow % d): DeepLab's rates 2 and 4 on 28 x 28 maps, odd sizes with classes of unequal size,
// and unequal dilations along H and W.
TEST(WinogradConv2D, DilatedConvsComputeTheSame) {
  struct Case {
    int64_t size, pad, dilation_h, dilation_w;
  };
  for (const Case& c : {Case{28, 2, 2, 2}, Case{28, 4, 4, 4}, Case{30, 2, 2, 2}, Case{31, 3, 3, 3},
                        Case{28, 3, 2, 4}}) {
    ConvSpec spec;
    spec.size = c.size;
    spec.pad = c.pad;
    spec.dilation = c.dilation_h;
    spec.dilation_w = c.dilation_w;
    ir::IRModule mod = conv_module(spec);
    ir::IRModule after = winograd_conv2d(alter_op_layout(mod, 16));
    EXPECT_EQ(count_calls(after, "nn.contrib_conv2d_winograd_NCHWc"), 1)
        << "size " << c.size << " dilation " << c.dilation_h << "x" << c.dilation_w;
    std::vector<Tensor> inputs = testing::random_inputs(mod, 7);
    testing::expect_same_outputs(mod, after, inputs, inputs, 1e-4);
  }
}

// ResNet-18 on a 56 x 56 image: the four 3x3 convolutions of the first stage run on 14 x 14
// maps and become Winograd; the later stages (7 x 7 and less) and the strided ones stay
// direct. The network computes what it computed before within 1e-3.
TEST(WinogradConv2D, ResNet18FirstStageComputesTheSame) {
  anvil::testing::Workload w = anvil::testing::resnet(18, 1, {3, 56, 56}, 10);
  ir::IRModule mod = fold_constant(simplify_inference(bind_params(w.mod, w.params)));
  ir::IRModule after = fold_constant(winograd_conv2d(alter_op_layout(mod, 16)));
  EXPECT_EQ(count_calls(after, "nn.contrib_conv2d_winograd_NCHWc"), 4);
  std::vector<Tensor> inputs = {testing::random_tensor({1, 3, 56, 56}, 6)};
  testing::expect_same_outputs(mod, after, inputs, inputs, 1e-3);
}

}  // namespace
}  // namespace anvil::transform
