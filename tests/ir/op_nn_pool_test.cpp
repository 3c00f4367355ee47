// Type relations of the pooling family: max/avg/lp pooling in 1 to 3
// dimensions, global pooling and adaptive pooling.
#include <gtest/gtest.h>

#include "anvil/ir/attrs/nn.h"
#include "nn_test_util.h"

namespace anvil::ir {
namespace {

using testing::infer_call;
using testing::is_tensor;
using testing::pattern_of;
using testing::round_trips;
using testing::tensor_var;
using testing::type_error_mentions;
using testing::with;

const DataType f32 = DataType::float32();
const Dim n = Dim::var("n");
const Dim h = Dim::var("h");
const Dim w = Dim::var("w");

// ---------------------------------------------------------------- windowed pooling

TEST(NnPool, MaxPool2dLikeResNet) {
  auto x = tensor_var("x", {1, 64, 112, 112});
  Attrs attrs = with<MaxPool2DAttrs>([](auto& a) {
    a.pool_size = {3, 3};
    a.strides = {2, 2};
    a.padding = {1, 1, 1, 1};
  });
  EXPECT_TRUE(is_tensor(infer_call("nn.max_pool2d", {x}, attrs), {1, 64, 56, 56}, f32));
  for (const char* op :
       {"nn.max_pool1d", "nn.max_pool2d", "nn.max_pool3d", "nn.avg_pool1d", "nn.avg_pool2d",
        "nn.avg_pool3d", "nn.lp_pool1d", "nn.lp_pool2d", "nn.lp_pool3d"})
    EXPECT_EQ(pattern_of(op), OpPattern::OutEWiseFusable) << op;
}

TEST(NnPool, CeilModeRoundsUp) {
  auto x = tensor_var("x", {1, 1, 5, 5});
  Attrs floor_mode = with<MaxPool2DAttrs>([](auto& a) {
    a.pool_size = {2, 2};
    a.strides = {2, 2};
  });
  EXPECT_TRUE(is_tensor(infer_call("nn.max_pool2d", {x}, floor_mode), {1, 1, 2, 2}, f32));
  Attrs ceil_mode = with<MaxPool2DAttrs>([](auto& a) {
    a.pool_size = {2, 2};
    a.strides = {2, 2};
    a.ceil_mode = true;
  });
  EXPECT_TRUE(is_tensor(infer_call("nn.max_pool2d", {x}, ceil_mode), {1, 1, 3, 3}, f32));
}

TEST(NnPool, CeilModeNeverStartsAWindowInTheAfterPadding) {
  // W: 6 + right pad 1, window 2, stride 2: rounding up would add a window
  // starting at 6, wholly in the padding; it is dropped (3, not 4).
  auto x = tensor_var("x", {1, 1, 6, 6});
  Attrs attrs = with<AvgPool2DAttrs>([](auto& a) {
    a.pool_size = {2, 2};
    a.strides = {2, 2};
    a.padding = {0, 0, 0, 1};
    a.ceil_mode = true;
  });
  EXPECT_TRUE(is_tensor(infer_call("nn.avg_pool2d", {x}, attrs), {1, 1, 3, 3}, f32));
  // Stride 3 over 5 padded by 1 on both sides: windows at 0, 3 and (dropped) 6.
  auto y = tensor_var("y", {1, 1, 5});
  Attrs stride3 = with<MaxPool1DAttrs>([](auto& a) {
    a.pool_size = {2};
    a.strides = {3};
    a.padding = {1};
    a.ceil_mode = true;
  });
  EXPECT_TRUE(is_tensor(infer_call("nn.max_pool1d", {y}, stride3), {1, 1, 2}, f32));
  // With symmetric padding the last window starts inside the input and stays.
  auto z = tensor_var("z", {1, 1, 6});
  Attrs kept = with<MaxPool1DAttrs>([](auto& a) {
    a.pool_size = {2};
    a.strides = {2};
    a.padding = {1};
    a.ceil_mode = true;
  });
  EXPECT_TRUE(is_tensor(infer_call("nn.max_pool1d", {z}, kept), {1, 1, 4}, f32));
}

TEST(NnPool, SymbolicDimsFlowThrough) {
  auto x = tensor_var("x", {n, 3, h, w});
  Attrs attrs = with<MaxPool2DAttrs>([](auto& a) {
    a.pool_size = {3, 3};
    a.strides = {2, 2};
    a.padding = {1, 1, 1, 1};
  });
  EXPECT_TRUE(is_tensor(infer_call("nn.max_pool2d", {x}, attrs),
                        {n, 3, floordiv(h - 1, 2) + 1, floordiv(w - 1, 2) + 1}, f32));
  Attrs ceil_mode = with<MaxPool2DAttrs>([](auto& a) {
    a.pool_size = {2, 2};
    a.strides = {2, 2};
    a.padding = {0, 0, 0, 1};
    a.ceil_mode = true;
  });
  EXPECT_TRUE(is_tensor(infer_call("nn.max_pool2d", {x}, ceil_mode),
                        {n, 3, floordiv(h - 1, 2) + 1, min(floordiv(w, 2), floordiv(w - 1, 2)) + 1},
                        f32));
}

TEST(NnPool, DilationAndCountIncludePad) {
  auto x = tensor_var("x", {1, 2, 10, 10});
  Attrs dilated = with<MaxPool2DAttrs>([](auto& a) {
    a.pool_size = {3, 3};
    a.dilation = {2, 1};
  });
  EXPECT_TRUE(is_tensor(infer_call("nn.max_pool2d", {x}, dilated), {1, 2, 6, 8}, f32));
  Attrs avg = with<AvgPool2DAttrs>([](auto& a) {
    a.pool_size = {3, 3};
    a.padding = {1};
    a.count_include_pad = true;
  });
  EXPECT_TRUE(is_tensor(infer_call("nn.avg_pool2d", {x}, avg), {1, 2, 10, 10}, f32));
}

TEST(NnPool, OneAndThreeDimensional) {
  auto x = tensor_var("x", {2, 4, Dim::var("len")});
  Attrs p1 = with<AvgPool1DAttrs>([](auto& a) {
    a.pool_size = {2};
    a.strides = {2};
  });
  EXPECT_TRUE(is_tensor(infer_call("nn.avg_pool1d", {x}, p1),
                        {2, 4, floordiv(Dim::var("len") - 2, 2) + 1}, f32));
  auto v = tensor_var("v", {1, 2, 8, 9, 10});
  Attrs p3 = with<MaxPool3DAttrs>([](auto& a) {
    a.pool_size = {2, 3, 2};
    a.strides = {2, 3, 2};
  });
  EXPECT_TRUE(is_tensor(infer_call("nn.max_pool3d", {v}, p3), {1, 2, 4, 3, 5}, f32));
  Attrs avg3 = with<AvgPool3DAttrs>([](auto& a) { a.pool_size = {2}; });
  EXPECT_TRUE(is_tensor(infer_call("nn.avg_pool3d", {v}, avg3), {1, 2, 7, 8, 9}, f32));
  EXPECT_TRUE(type_error_mentions(
      call_op("nn.max_pool3d", {tensor_var("x4", {1, 2, 8, 8})}, p3),
      {"argument 'data' has shape (1, 2, 8, 8)", "layout \"NCDHW\" needs rank 5"}));
}

TEST(NnPool, LayoutsNhwcAndBlocked) {
  Attrs nhwc = with<MaxPool2DAttrs>([](auto& a) {
    a.pool_size = {2, 2};
    a.strides = {2, 2};
    a.layout = "NHWC";
  });
  EXPECT_TRUE(is_tensor(infer_call("nn.max_pool2d", {tensor_var("x", {1, 8, 8, 3})}, nhwc),
                        {1, 4, 4, 3}, f32));
  Attrs blocked = with<AvgPool2DAttrs>([](auto& a) {
    a.pool_size = {2, 2};
    a.strides = {2, 2};
    a.layout = "NCHW16c";
  });
  EXPECT_TRUE(is_tensor(infer_call("nn.avg_pool2d", {tensor_var("x", {1, 4, 8, 8, 16})}, blocked),
                        {1, 4, 4, 4, 16}, f32));
  Attrs to_nchw = with<AvgPool2DAttrs>([](auto& a) {
    a.layout = "NCHW16c";
    a.out_layout = "NCHW";
  });
  EXPECT_TRUE(is_tensor(infer_call("nn.avg_pool2d", {tensor_var("x", {1, 4, 8, 8, 16})}, to_nchw),
                        {1, 64, 8, 8}, f32));
}

TEST(NnPool, UnknownRankGivesUnknownDimsOfTheLayoutsRank) {
  auto x = VarNode::make("x", TensorTypeNode::make_unknown_rank(f32));
  Dim any = Dim::any();
  EXPECT_TRUE(is_tensor(infer_call("nn.max_pool2d", {x}), {any, any, any, any}, f32));
}

TEST(NnPool, LpPool) {
  auto x = tensor_var("x", {1, 3, 8, 8});
  Attrs attrs = with<LPPool2DAttrs>([](auto& a) {
    a.p_value = 3;
    a.pool_size = {2, 2};
    a.strides = {2, 2};
  });
  EXPECT_TRUE(is_tensor(infer_call("nn.lp_pool2d", {x}, attrs), {1, 3, 4, 4}, f32));
  EXPECT_TRUE(is_tensor(infer_call("nn.lp_pool1d", {tensor_var("y", {1, 3, 8})}), {1, 3, 8}, f32));
  Attrs zero = with<LPPool2DAttrs>([](auto& a) { a.p_value = 0; });
  EXPECT_TRUE(type_error_mentions(call_op("nn.lp_pool2d", {x}, zero), {"'p_value'", "positive"}));
}

TEST(NnPool, AttributeErrors) {
  auto x = tensor_var("x", {1, 3, 8, 8});
  auto fails = [&](Attrs attrs, std::vector<std::string> words) {
    return type_error_mentions(call_op("nn.max_pool2d", {x}, std::move(attrs)), words);
  };
  EXPECT_TRUE(fails(with<MaxPool2DAttrs>([](auto& a) {
                      a.pool_size = {2, 2, 2};
                    }),
                    {"nn.max_pool2d", "'pool_size'", "2 values"}));
  EXPECT_TRUE(fails(with<MaxPool2DAttrs>([](auto& a) {
                      a.pool_size = {0, 2};
                    }),
                    {"'pool_size'", "positive"}));
  EXPECT_TRUE(fails(with<MaxPool2DAttrs>([](auto& a) {
                      a.strides = {2, 0};
                    }),
                    {"'strides'", "positive"}));
  EXPECT_TRUE(
      fails(with<MaxPool2DAttrs>([](auto& a) { a.dilation = {0}; }), {"'dilation'", "positive"}));
  EXPECT_TRUE(fails(with<MaxPool2DAttrs>([](auto& a) {
                      a.padding = {1, 1, 1, 1, 1};
                    }),
                    {"'padding'", "1, 2 or 4 values"}));
  EXPECT_TRUE(fails(with<MaxPool2DAttrs>([](auto& a) {
                      a.pool_size = {2, 2};
                      a.padding = {0, 0, 2, 0};
                    }),
                    {"'padding' = [0, 0, 2, 0]", "smaller than the pool window"}));
  EXPECT_TRUE(fails(with<MaxPool2DAttrs>([](auto& a) {
                      a.pool_size = {9, 2};
                    }),
                    {"pool window spans 9 on axis H", "padded input is only 8"}));
  EXPECT_TRUE(fails(with<MaxPool2DAttrs>([](auto& a) { a.layout = "NCWH2"; }),
                    {"'layout' = \"NCWH2\"", "lower-case axis"}));
  EXPECT_TRUE(fails(with<MaxPool2DAttrs>([](auto& a) { a.out_layout = "NHW"; }),
                    {"'out_layout'", "axes N, C, H, W"}));
}

TEST(NnPool, AttrsSurviveTheTextForm) {
  auto x = tensor_var("x", {1, 3, 8, 8});
  EXPECT_TRUE(round_trips({x}, call_op("nn.avg_pool2d", {x}, with<AvgPool2DAttrs>([](auto& a) {
                                         a.pool_size = {3, 3};
                                         a.padding = {1, 1, 1, 1};
                                         a.ceil_mode = true;
                                         a.count_include_pad = true;
                                       }))));
  Attrs lp = with<LPPool2DAttrs>([](auto& a) { a.p_value = 3.5; });
  EXPECT_TRUE(round_trips({x}, call_op("nn.lp_pool2d", {x}, lp)));
  Attrs adaptive = with<AdaptivePool2DAttrs>([](auto& a) { a.output_size = {2, 2}; });
  EXPECT_TRUE(round_trips({x}, call_op("nn.adaptive_max_pool2d", {x}, adaptive)));
}

// ---------------------------------------------------------------- global and adaptive

TEST(NnPool, GlobalPoolingKeepsUnitSpatialAxes) {
  auto x = tensor_var("x", {n, 64, h, w});
  EXPECT_TRUE(is_tensor(infer_call("nn.global_avg_pool2d", {x}), {n, 64, 1, 1}, f32));
  EXPECT_TRUE(is_tensor(infer_call("nn.global_max_pool2d", {x}), {n, 64, 1, 1}, f32));
  Attrs nhwc = with<GlobalPool2DAttrs>([](auto& a) { a.layout = "NHWC"; });
  EXPECT_TRUE(is_tensor(infer_call("nn.global_avg_pool2d", {tensor_var("y", {n, h, w, 64})}, nhwc),
                        {n, 1, 1, 64}, f32));
  EXPECT_EQ(pattern_of("nn.global_avg_pool2d"), OpPattern::OutEWiseFusable);
  EXPECT_EQ(pattern_of("nn.global_max_pool2d"), OpPattern::OutEWiseFusable);
  Attrs bad = with<GlobalPool2DAttrs>([](auto& a) { a.layout = "NCDHW"; });
  EXPECT_TRUE(type_error_mentions(call_op("nn.global_max_pool2d", {x}, bad),
                                  {"'layout' = \"NCDHW\"", "axes N, C, H, W"}));
  EXPECT_TRUE(type_error_mentions(call_op("nn.global_avg_pool2d", {tensor_var("z", {1, 64})}),
                                  {"argument 'data' has shape (1, 64)", "needs rank 4"}));
}

TEST(NnPool, AdaptivePooling) {
  auto x = tensor_var("x", {n, 64, h, w});
  Attrs seven = with<AdaptivePool2DAttrs>([](auto& a) { a.output_size = {7, 7}; });
  EXPECT_TRUE(is_tensor(infer_call("nn.adaptive_avg_pool2d", {x}, seven), {n, 64, 7, 7}, f32));
  Attrs one = with<AdaptivePool2DAttrs>([](auto& a) { a.output_size = {1}; });
  EXPECT_TRUE(is_tensor(infer_call("nn.adaptive_max_pool2d", {x}, one), {n, 64, 1, 1}, f32));
  EXPECT_TRUE(is_tensor(infer_call("nn.adaptive_max_pool2d", {x}), {n, 64, h, w}, f32));
  Attrs a1 = with<AdaptivePool1DAttrs>([](auto& a) { a.output_size = {5}; });
  EXPECT_TRUE(is_tensor(infer_call("nn.adaptive_avg_pool1d", {tensor_var("s", {2, 3, 40})}, a1),
                        {2, 3, 5}, f32));
  Attrs a3 = with<AdaptivePool3DAttrs>([](auto& a) {
    a.output_size = {1, 2, 3};
    a.layout = "NDHWC";
  });
  EXPECT_TRUE(
      is_tensor(infer_call("nn.adaptive_max_pool3d", {tensor_var("v", {2, 8, 8, 8, 3})}, a3),
                {2, 1, 2, 3, 3}, f32));
  for (const char* op : {"nn.adaptive_max_pool1d", "nn.adaptive_avg_pool3d"})
    EXPECT_EQ(pattern_of(op), OpPattern::OutEWiseFusable) << op;
  Attrs three = with<AdaptivePool2DAttrs>([](auto& a) { a.output_size = {1, 2, 3}; });
  EXPECT_TRUE(type_error_mentions(call_op("nn.adaptive_avg_pool2d", {x}, three),
                                  {"'output_size'", "2 values"}));
  Attrs zero = with<AdaptivePool2DAttrs>([](auto& a) { a.output_size = {0, 2}; });
  EXPECT_TRUE(type_error_mentions(call_op("nn.adaptive_avg_pool2d", {x}, zero),
                                  {"'output_size'", "positive"}));
}

}  // namespace
}  // namespace anvil::ir
