// Per-call costs against counts worked out by hand from the shapes: every expected number below
// is written as the product it comes from (output elements x work per element).
#include <gtest/gtest.h>

#include "analysis_test_util.h"
#include "anvil/analysis/cost.h"
#include "anvil/ir/attrs/nn.h"
#include "anvil/ir/attrs/nn_norm.h"
#include "anvil/ir/attrs/reduce.h"
#include "anvil/ir/attrs/transform.h"
#include "anvil/support/error.h"

namespace anvil::analysis {
namespace {

using testing::tensor_var;
using testing::typed_call;
using testing::with;
using testing::zeros_constant;

// ---------------------------------------------------------------- convolutions

TEST(OpCost, GroupedStridedPaddedConv2d) {
  // out (1, 16, 5, 5); each output sums 8 / 2 input channels x 3 x 3 taps.
  auto x = tensor_var("x", {1, 8, 10, 10});
  ir::Call call = typed_call("nn.conv2d", {x, zeros_constant({16, 4, 3, 3})},
                             with<ir::Conv2DAttrs>([](auto& a) {
                               a.strides = {2, 2};
                               a.padding = {1, 1, 1, 1};
                               a.groups = 2;
                             }));
  OpCost cost = call_cost(*call);
  EXPECT_EQ(cost.macs, 16 * 5 * 5 * (4 * 3 * 3));
  EXPECT_EQ(cost.flops, 2 * cost.macs);
  EXPECT_EQ(cost.params, 16 * 4 * 3 * 3);
  EXPECT_EQ(cost.activation_bytes, 16 * 5 * 5 * 4);
}

TEST(OpCost, DepthwiseConv2d) {
  auto x = tensor_var("x", {1, 32, 7, 7});
  auto w = tensor_var("w", {32, 1, 3, 3});
  ir::Call call = typed_call("nn.conv2d", {x, w}, with<ir::Conv2DAttrs>([](auto& a) {
                               a.padding = {1, 1, 1, 1};
                               a.groups = 32;
                             }));
  // The weight is a variable: a parameter only when the caller says so.
  EXPECT_EQ(call_cost(*call).params, 0);
  OpCost cost = call_cost(*call, {false, true});
  EXPECT_EQ(cost.params, 32 * 3 * 3);
  EXPECT_EQ(cost.macs, 32 * 7 * 7 * 9);
}

TEST(OpCost, Conv2dNhwcLayoutCountsTheSame) {
  auto x = tensor_var("x", {1, 10, 10, 8});
  auto w = tensor_var("w", {3, 3, 8, 16});
  ir::Call call = typed_call("nn.conv2d", {x, w}, with<ir::Conv2DAttrs>([](auto& a) {
                               a.data_layout = "NHWC";
                               a.kernel_layout = "HWIO";
                             }));
  EXPECT_EQ(call_cost(*call).macs, 8 * 8 * 16 * (8 * 9));
}

TEST(OpCost, BlockedNchwcConv2d) {
  // 8 input channels in blocks of 4, 16 output channels in blocks of 4: out (1, 4, 8, 8, 4).
  auto x = tensor_var("x", {1, 2, 10, 10, 4});
  auto w = tensor_var("w", {4, 2, 3, 3, 4, 4});
  ir::Call call = typed_call("nn.contrib_conv2d_NCHWc", {x, w}, with<ir::Conv2DAttrs>([](auto& a) {
                               a.data_layout = "NCHW4c";
                               a.kernel_layout = "OIHW4i4o";
                               a.out_layout = "NCHW4c";
                             }));
  EXPECT_EQ(call_cost(*call).macs, 8 * 8 * 16 * (8 * 9));
}

TEST(OpCost, Conv1dAndConv3d) {
  ir::Call conv1d =
      typed_call("nn.conv1d", {tensor_var("x", {1, 4, 10}), tensor_var("w", {6, 4, 3})});
  EXPECT_EQ(call_cost(*conv1d).macs, 6 * 8 * (4 * 3));
  ir::Call conv3d =
      typed_call("nn.conv3d", {tensor_var("x", {2, 3, 4, 5, 6}), tensor_var("w", {5, 3, 2, 2, 2})});
  // out (2, 5, 3, 4, 5)
  EXPECT_EQ(call_cost(*conv3d).macs, 2 * 5 * 3 * 4 * 5 * (3 * 8));
}

TEST(OpCost, TransposedConv2dCountsPerInputElement) {
  // Every one of the 4 x 5 x 5 input elements scatters into 6 channels x 3 x 3 taps.
  auto x = tensor_var("x", {1, 4, 5, 5});
  auto w = tensor_var("w", {4, 6, 3, 3});
  ir::Call call =
      typed_call("nn.conv2d_transpose", {x, w}, with<ir::Conv2DTransposeAttrs>([](auto& a) {
                   a.strides = {2, 2};
                 }));
  EXPECT_EQ(call_cost(*call).macs, 4 * 5 * 5 * (6 * 9));
}

// ---------------------------------------------------------------- dense and matmul

TEST(OpCost, Dense) {
  ir::Call call = typed_call("nn.dense", {tensor_var("x", {3, 20}), zeros_constant({7, 20})});
  OpCost cost = call_cost(*call);
  EXPECT_EQ(cost.macs, 3 * 7 * 20);
  EXPECT_EQ(cost.flops, 2 * 3 * 7 * 20);
  EXPECT_EQ(cost.params, 7 * 20);
}

TEST(OpCost, NumpyMatmulWithBatchDims) {
  ir::Call call = typed_call("matmul", {tensor_var("a", {2, 5, 6}), tensor_var("b", {6, 4})});
  EXPECT_EQ(call_cost(*call).macs, 2 * 5 * 4 * 6);
}

TEST(OpCost, MatmulWithTransposedA) {
  // a is (K=6, M=4) read transposed; b is (6, 3).
  ir::Call call = typed_call("nn.matmul", {tensor_var("a", {6, 4}), tensor_var("b", {6, 3})},
                             with<ir::MatmulAttrs>([](auto& a) { a.transpose_a = true; }));
  EXPECT_EQ(call_cost(*call).macs, 4 * 3 * 6);
}

TEST(OpCost, BatchMatmul) {
  // x (3, 4, 5) times y (3, 6, 5) transposed: out (3, 4, 6), K = 5.
  ir::Call call =
      typed_call("nn.batch_matmul", {tensor_var("x", {3, 4, 5}), tensor_var("y", {3, 6, 5})});
  EXPECT_EQ(call_cost(*call).macs, 3 * 4 * 6 * 5);
}

TEST(OpCost, EinsumContraction) {
  // The operands come as one tuple; out (2, 3, 5) sums over j (4).
  ir::Expr operands = ir::TupleNode::make({tensor_var("a", {2, 3, 4}), tensor_var("b", {2, 4, 5})});
  ir::Call call = typed_call("einsum", {operands},
                             with<ir::EinsumAttrs>([](auto& a) { a.equation = "bij,bjk->bik"; }));
  EXPECT_EQ(call_cost(*call).macs, 2 * 3 * 5 * 4);
  // Implicit output: the letters used once (i, k); j is contracted.
  ir::Call implicit = typed_call("einsum", {operands},
                                 with<ir::EinsumAttrs>([](auto& a) { a.equation = "bij,bjk"; }));
  EXPECT_EQ(call_cost(*implicit).macs, 3 * 5 * (2 * 4));
}

// ---------------------------------------------------------------- the rest: FLOPs only

TEST(OpCost, ElementwiseCountsOnePerOutputElement) {
  auto x = tensor_var("x", {2, 3, 4});
  ir::Call add = typed_call("add", {x, zeros_constant({4})});
  OpCost cost = call_cost(*add);
  EXPECT_EQ(cost.macs, 0);
  EXPECT_EQ(cost.flops, 2 * 3 * 4);
  EXPECT_EQ(cost.params, 4);
  EXPECT_EQ(call_cost(*typed_call("nn.relu", {x})).flops, 24);
  EXPECT_EQ(call_cost(*typed_call("sigmoid", {x})).flops, 24);
  // A scalar literal is not a parameter.
  EXPECT_EQ(call_cost(*typed_call("multiply", {x, zeros_constant({})})).params, 0);
}

TEST(OpCost, DataMovementCountsNoFlops) {
  auto x = tensor_var("x", {2, 3, 4});
  ir::Call cast =
      typed_call("cast", {x}, with<ir::CastAttrs>([](auto& a) { a.dtype = DataType::float16(); }));
  EXPECT_EQ(call_cost(*cast).flops, 0);
  EXPECT_EQ(call_cost(*cast).activation_bytes, 24 * 2);
  ir::Call reshape = typed_call("reshape", {x}, with<ir::ReshapeAttrs>([](auto& a) {
                                  a.newshape = {6, 4};
                                }));
  EXPECT_EQ(call_cost(*reshape).flops, 0);
  ir::Call transpose = typed_call("transpose", {x});
  EXPECT_EQ(call_cost(*transpose).flops, 0);
}

TEST(OpCost, PoolingCountsTheWindow) {
  // out (1, 2, 4, 4), a 3 x 3 window each.
  auto x = tensor_var("x", {1, 2, 8, 8});
  auto fill = [](auto& a) {
    a.pool_size = {3, 3};
    a.strides = {2, 2};
    a.padding = {1, 1, 1, 1};
  };
  EXPECT_EQ(call_cost(*typed_call("nn.max_pool2d", {x}, with<ir::MaxPool2DAttrs>(fill))).flops,
            2 * 4 * 4 * 9);
  EXPECT_EQ(call_cost(*typed_call("nn.avg_pool2d", {x}, with<ir::AvgPool2DAttrs>(fill))).flops,
            2 * 4 * 4 * 9);
  // A global pool reads every input element once.
  OpCost global = call_cost(*typed_call("nn.global_avg_pool2d", {x}));
  EXPECT_EQ(global.flops, 2 * 8 * 8);
  EXPECT_EQ(global.activation_bytes, 2 * 4);
}

TEST(OpCost, NormalizationSoftmaxAndReduction) {
  auto x = tensor_var("x", {1, 4, 5, 5});
  auto c = tensor_var("c", {4});
  OpCost bn =
      call_cost(*typed_call("nn.batch_norm", {x, c, c, c, c}), {false, true, true, true, true});
  EXPECT_EQ(bn.flops, 2 * 100);
  EXPECT_EQ(bn.params, 4 * 4);
  EXPECT_EQ(call_cost(*typed_call("nn.softmax", {tensor_var("s", {2, 10})})).flops, 5 * 20);
  ir::Call sum = typed_call("sum", {x}, with<ir::ReduceAttrs>([](auto& a) { a.axis = {1}; }));
  EXPECT_EQ(call_cost(*sum).flops, 100);
}

TEST(OpCost, SymbolicDimsCountAsOne) {
  auto x = tensor_var("x", {ir::Dim::var("n"), 20});
  ir::Call call = typed_call("nn.dense", {x, tensor_var("w", {7, 20})});
  EXPECT_EQ(call_cost(*call).macs, 7 * 20);
}

TEST(OpCost, UntypedCallIsAnError) {
  ir::Call call = ir::call_op("nn.relu", {tensor_var("x", {2})});
  EXPECT_THROW(call_cost(*call), Error);
}

}  // namespace
}  // namespace anvil::analysis
