// Whole-function costs: fused functions, @main of a small module counted by hand, and the
// built-in ResNet-18 against the published figures of torchvision's resnet18 (1.814 G MACs,
// 11.69 M parameters, as thop and fvcore count them).
#include <gtest/gtest.h>

#include <cmath>

#include "analysis_test_util.h"
#include "anvil/analysis/cost.h"
#include "anvil/ir/attrs/nn.h"
#include "anvil/ir/infer_type.h"
#include "anvil/ir/printer.h"
#include "anvil/testing/workloads.h"

namespace anvil::analysis {
namespace {

using testing::tensor_var;
using testing::with;

// fn (%x: (1, 3, 8, 8), %w: (4, 3, 3, 3), %b: (4, 1, 1)) { relu(add(conv2d(%x, %w), %b)) }
ir::Function conv_bias_relu_function() {
  auto x = tensor_var("x", {1, 3, 8, 8});
  auto w = tensor_var("w", {4, 3, 3, 3});
  auto b = tensor_var("b", {4, 1, 1});
  ir::Expr conv = ir::call_op("nn.conv2d", {x, w}, with<ir::Conv2DAttrs>([](auto& a) {
                                a.padding = {1, 1, 1, 1};
                              }));
  ir::Expr body = ir::call_op("nn.relu", {ir::call_op("add", {conv, b})});
  ir::DictAttrs attrs;
  attrs = attrs.with("Primitive", int64_t(1));
  return ir::FunctionNode::make({x, w, b}, body, nullptr, attrs);
}

// Conv (1, 4, 8, 8) outputs x 27 taps, then one add and one relu per output element.
constexpr int64_t kConvMacs = 4 * 8 * 8 * 27;
constexpr int64_t kConvBiasReluFlops = 2 * kConvMacs + 256 + 256;

TEST(ModelCost, FunctionFlopsSumsTheFusedBody) {
  ir::Function fn = conv_bias_relu_function();
  // Untyped on purpose: function_flops types the body from the parameter annotations.
  EXPECT_EQ(function_flops(*fn), kConvBiasReluFlops);
}

TEST(ModelCost, CallOfAFusedFunctionIsOneLayer) {
  ir::Function fn = conv_bias_relu_function();
  auto data = tensor_var("data", {1, 3, 8, 8});
  auto weight = tensor_var("weight", {4, 3, 3, 3});
  auto bias = tensor_var("bias", {4, 1, 1});
  ir::Expr group = ir::CallNode::make(fn, {data, weight, bias});
  ir::IRModule mod;
  mod.add("main", ir::FunctionNode::make({data, weight, bias}, ir::call_op("negative", {group})));

  ModelCost cost = model_cost(mod, {"weight", "bias"});
  ASSERT_EQ(cost.layers.size(), 2u);
  EXPECT_EQ(cost.layers[0].op, "fused(nn.conv2d, add, nn.relu)");
  EXPECT_EQ(cost.layers[0].out_shape, (std::vector<int64_t>{1, 4, 8, 8}));
  EXPECT_EQ(cost.layers[0].cost.macs, kConvMacs);
  EXPECT_EQ(cost.layers[0].cost.flops, kConvBiasReluFlops);
  EXPECT_EQ(cost.layers[1].op, "negative");
  EXPECT_EQ(cost.total.macs, kConvMacs);
  EXPECT_EQ(cost.total.flops, kConvBiasReluFlops + 256);
  EXPECT_EQ(cost.total.params, 4 * 27 + 4);
  EXPECT_EQ(cost.total.activation_bytes, 2 * 256 * 4);
  // The layer's name is the step print-ir gives the group call, after the function's own steps.
  ir::PrintOptions options;
  options.show_types = false;
  std::string text = ir::print_module(ir::infer_type(mod), options);
  EXPECT_NE(text.find("  " + cost.layers[0].name + " = %2(%data, %weight, %bias)"),
            std::string::npos)
      << cost.layers[0].name << " in\n"
      << text;
}

TEST(ModelCost, LayersInExecutionOrderAndSharedWeightsCountOnce) {
  // main(%data: (2, 16), %w: (16, 16)) { %0 = dense(%data, %w); %1 = relu(%0); dense(%1, %w) }
  auto data = tensor_var("data", {2, 16});
  auto w = tensor_var("w", {16, 16});
  ir::Expr first = ir::call_op("nn.dense", {data, w});
  ir::Expr relu = ir::call_op("nn.relu", {first});
  ir::Expr second = ir::call_op("nn.dense", {relu, w});
  ir::IRModule mod;
  mod.add("main", ir::FunctionNode::make({data, w}, second));

  ModelCost cost = model_cost(mod, {"w"});
  ASSERT_EQ(cost.layers.size(), 3u);
  EXPECT_EQ(cost.layers[0].name, "%0");
  EXPECT_EQ(cost.layers[0].op, "nn.dense");
  EXPECT_EQ(cost.layers[1].name, "%1");
  EXPECT_EQ(cost.layers[1].op, "nn.relu");
  EXPECT_EQ(cost.layers[2].op, "nn.dense");
  EXPECT_EQ(cost.layers[0].cost.params, 256);
  EXPECT_EQ(cost.layers[2].cost.params, 256);
  EXPECT_EQ(cost.total.params, 256);
  EXPECT_EQ(cost.total.macs, 2 * (2 * 16 * 16));
  EXPECT_EQ(cost.total.flops, 2 * cost.total.macs + 32);
  EXPECT_EQ(cost.total.activation_bytes, 3 * 32 * 4);
  // Without param names, the weight is an input like data.
  EXPECT_EQ(model_cost(mod).total.params, 0);
}

TEST(ModelCost, BindingsAreNamedByTheirVariable) {
  auto data = tensor_var("data", {4});
  auto y = ir::VarNode::make("y");
  ir::Expr relu = ir::call_op("nn.relu", {data});
  ir::Expr body = ir::LetNode::make(y, relu, ir::call_op("negative", {y}));
  ir::IRModule mod;
  mod.add("main", ir::FunctionNode::make({data}, body));
  ModelCost cost = model_cost(mod);
  ASSERT_EQ(cost.layers.size(), 2u);
  EXPECT_EQ(cost.layers[0].name, "%y");
  EXPECT_EQ(cost.layers[0].op, "nn.relu");
  EXPECT_EQ(cost.layers[1].op, "negative");
}

bool within_one_percent(double value, double expected) {
  return std::abs(value - expected) <= 0.01 * expected;
}

TEST(ModelCost, BuiltInResNet18MatchesTorchvisionFigures) {
  anvil::testing::Workload workload = anvil::testing::resnet(18);
  std::vector<std::string> names;
  for (const auto& [name, tensor] : workload.params) names.push_back(name);
  ModelCost cost = model_cost(workload.mod, names);
  EXPECT_TRUE(within_one_percent(double(cost.total.macs), 1.814e9)) << cost.total.macs;
  EXPECT_TRUE(within_one_percent(double(cost.total.params), 11.69e6)) << cost.total.params;
  // Every weight is read by some layer, so the parameters are exactly the workload's.
  EXPECT_EQ(cost.total.params, workload.parameter_count());
  EXPECT_GT(cost.total.flops, 2 * cost.total.macs);
}

}  // namespace
}  // namespace anvil::analysis
