// Type relations of the convolution family: conv1d/2d/3d, the transposed
// convolutions and the blocked contrib_conv2d_NCHWc.
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

// ---------------------------------------------------------------- conv2d

TEST(NnConv, Conv2dStridedPaddedLikeResNetStem) {
  auto x = tensor_var("x", {1, 3, 224, 224});
  auto k = tensor_var("k", {64, 3, 7, 7});
  Attrs attrs = with<Conv2DAttrs>([](auto& a) {
    a.strides = {2, 2};
    a.padding = {3, 3, 3, 3};
    a.channels = 64;
    a.kernel_size = {7, 7};
  });
  EXPECT_TRUE(is_tensor(infer_call("nn.conv2d", {x, k}, attrs), {1, 64, 112, 112}, f32));
  EXPECT_EQ(pattern_of("nn.conv2d"), OpPattern::OutEWiseFusable);
}

TEST(NnConv, Conv2dDefaultsAreUnpaddedUnitStride) {
  auto x = tensor_var("x", {2, 3, 10, 12});
  auto k = tensor_var("k", {8, 3, 3, 5});
  EXPECT_TRUE(is_tensor(infer_call("nn.conv2d", {x, k}), {2, 8, 8, 8}, f32));
}

TEST(NnConv, Conv2dSymbolicDimsFlowThrough) {
  auto x = tensor_var("x", {n, 3, h, w});
  auto k = tensor_var("k", {8, 3, 3, 3});
  Attrs same = with<Conv2DAttrs>([](auto& a) { a.padding = {1, 1, 1, 1}; });
  EXPECT_TRUE(is_tensor(infer_call("nn.conv2d", {x, k}, same), {n, 8, h, w}, f32));
  Attrs strided = with<Conv2DAttrs>([](auto& a) {
    a.padding = {1, 1, 1, 1};
    a.strides = {2, 2};
  });
  EXPECT_TRUE(is_tensor(infer_call("nn.conv2d", {x, k}, strided),
                        {n, 8, floordiv(h - 1, 2) + 1, floordiv(w - 1, 2) + 1}, f32));
}

TEST(NnConv, Conv2dSymbolicChannelsAreNotProvablyWrong) {
  auto x = tensor_var("x", {1, Dim::var("c"), 8, 8});
  auto k = tensor_var("k", {4, 3, 3, 3});
  EXPECT_TRUE(is_tensor(infer_call("nn.conv2d", {x, k}), {1, 4, 6, 6}, f32));
}

TEST(NnConv, Conv2dAsymmetricAndShorthandPadding) {
  auto x = tensor_var("x", {1, 3, 10, 10});
  auto k = tensor_var("k", {4, 3, 3, 3});
  // (top, left, bottom, right)
  Attrs asym = with<Conv2DAttrs>([](auto& a) { a.padding = {1, 2, 0, 3}; });
  EXPECT_TRUE(is_tensor(infer_call("nn.conv2d", {x, k}, asym), {1, 4, 9, 13}, f32));
  Attrs one = with<Conv2DAttrs>([](auto& a) { a.padding = {2}; });
  EXPECT_TRUE(is_tensor(infer_call("nn.conv2d", {x, k}, one), {1, 4, 12, 12}, f32));
  Attrs two = with<Conv2DAttrs>([](auto& a) { a.padding = {1, 0}; });
  EXPECT_TRUE(is_tensor(infer_call("nn.conv2d", {x, k}, two), {1, 4, 10, 8}, f32));
}

TEST(NnConv, Conv2dDilationWidensTheKernel) {
  auto x = tensor_var("x", {1, 3, 10, 10});
  auto k = tensor_var("k", {4, 3, 3, 3});
  Attrs attrs = with<Conv2DAttrs>([](auto& a) { a.dilation = {2, 3}; });
  EXPECT_TRUE(is_tensor(infer_call("nn.conv2d", {x, k}, attrs), {1, 4, 6, 4}, f32));
}

TEST(NnConv, Conv2dGroupedAndDepthwise) {
  auto x = tensor_var("x", {1, 32, 10, 10});
  auto depthwise = tensor_var("dw", {32, 1, 3, 3});
  Attrs dw = with<Conv2DAttrs>([](auto& a) { a.groups = 32; });
  EXPECT_TRUE(is_tensor(infer_call("nn.conv2d", {x, depthwise}, dw), {1, 32, 8, 8}, f32));
  auto multiplier = tensor_var("m", {64, 1, 3, 3});
  EXPECT_TRUE(is_tensor(infer_call("nn.conv2d", {x, multiplier}, dw), {1, 64, 8, 8}, f32));
  auto grouped = tensor_var("g", {16, 8, 3, 3});
  Attrs g4 = with<Conv2DAttrs>([](auto& a) { a.groups = 4; });
  EXPECT_TRUE(is_tensor(infer_call("nn.conv2d", {x, grouped}, g4), {1, 16, 8, 8}, f32));
}

TEST(NnConv, Conv2dNhwcWithHwioAndOhwiKernels) {
  auto x = tensor_var("x", {1, 10, 10, 3});
  Attrs hwio = with<Conv2DAttrs>([](auto& a) {
    a.data_layout = "NHWC";
    a.kernel_layout = "HWIO";
  });
  auto k_hwio = tensor_var("k", {3, 3, 3, 16});
  EXPECT_TRUE(is_tensor(infer_call("nn.conv2d", {x, k_hwio}, hwio), {1, 8, 8, 16}, f32));
  Attrs ohwi = with<Conv2DAttrs>([](auto& a) {
    a.data_layout = "NHWC";
    a.kernel_layout = "OHWI";
    a.strides = {2, 2};
  });
  auto k_ohwi = tensor_var("k", {16, 3, 3, 3});
  EXPECT_TRUE(is_tensor(infer_call("nn.conv2d", {x, k_ohwi}, ohwi), {1, 4, 4, 16}, f32));
  auto wrong = tensor_var("k", {3, 3, 5, 16});
  EXPECT_TRUE(type_error_mentions(call_op("nn.conv2d", {x, wrong}, hwio),
                                  {"argument 'weight' has 5 input channels", "'data' has 3"}));
}

TEST(NnConv, Conv2dOutLayoutAndOutDtype) {
  auto x = tensor_var("x", {1, 3, 10, 10});
  auto k = tensor_var("k", {16, 3, 3, 3});
  Attrs nhwc = with<Conv2DAttrs>([](auto& a) { a.out_layout = "NHWC"; });
  EXPECT_TRUE(is_tensor(infer_call("nn.conv2d", {x, k}, nhwc), {1, 8, 8, 16}, f32));
  auto q = tensor_var("q", {1, 3, 10, 10}, DataType::uint8());
  auto qk = tensor_var("qk", {16, 3, 3, 3}, DataType::int8());
  Attrs i32 = with<Conv2DAttrs>([](auto& a) { a.out_dtype = DataType::int32(); });
  EXPECT_TRUE(is_tensor(infer_call("nn.conv2d", {q, qk}, i32), {1, 16, 8, 8}, DataType::int32()));
}

TEST(NnConv, Conv2dUnknownRankDataKeepsWhatTheWeightTells) {
  auto x = VarNode::make("x", TensorTypeNode::make_unknown_rank(f32));
  auto k = tensor_var("k", {16, 3, 3, 3});
  Type type = infer_call("nn.conv2d", {x, k});
  EXPECT_TRUE(is_tensor(type, {Dim::any(), 16, Dim::any(), Dim::any()}, f32));
}

TEST(NnConv, Conv2dChannelMismatchNamesWeightAndShapes) {
  auto x = tensor_var("x", {1, 64, 56, 56});
  auto k = tensor_var("k", {64, 32, 3, 3});
  EXPECT_TRUE(type_error_mentions(
      call_op("nn.conv2d", {x, k}),
      {"nn.conv2d", "argument 'weight' has 32 input channels but 'data' has 64 (groups=1)",
       "data Tensor[(1, 64, 56, 56), float32]", "weight Tensor[(64, 32, 3, 3), float32]"}));
}

TEST(NnConv, Conv2dGroupErrors) {
  auto x = tensor_var("x", {1, 64, 8, 8});
  Attrs g4 = with<Conv2DAttrs>([](auto& a) { a.groups = 4; });
  EXPECT_TRUE(
      type_error_mentions(call_op("nn.conv2d", {x, tensor_var("k", {128, 8, 3, 3})}, g4),
                          {"8 input channels", "'data' has 64", "groups=4, so 16 per group"}));
  EXPECT_TRUE(type_error_mentions(call_op("nn.conv2d", {x, tensor_var("k", {30, 16, 3, 3})}, g4),
                                  {"'groups' = 4", "30 output channels of 'weight'"}));
  auto odd = tensor_var("odd", {1, 30, 8, 8});
  EXPECT_TRUE(type_error_mentions(call_op("nn.conv2d", {odd, tensor_var("k", {8, 7, 3, 3})}, g4),
                                  {"'groups' = 4", "30 channels of 'data'"}));
  Attrs g0 = with<Conv2DAttrs>([](auto& a) { a.groups = 0; });
  EXPECT_TRUE(type_error_mentions(call_op("nn.conv2d", {x, tensor_var("k", {8, 64, 3, 3})}, g0),
                                  {"'groups'", "positive"}));
}

TEST(NnConv, Conv2dChannelsAndKernelSizeMustMatchTheWeight) {
  auto x = tensor_var("x", {1, 3, 8, 8});
  auto k = tensor_var("k", {16, 3, 3, 3});
  Attrs channels = with<Conv2DAttrs>([](auto& a) { a.channels = 32; });
  EXPECT_TRUE(type_error_mentions(call_op("nn.conv2d", {x, k}, channels),
                                  {"'channels' = 32", "16 output channels"}));
  Attrs kernel = with<Conv2DAttrs>([](auto& a) { a.kernel_size = {5, 5}; });
  EXPECT_TRUE(type_error_mentions(call_op("nn.conv2d", {x, k}, kernel),
                                  {"'kernel_size' = [5, 5]", "kernel (3, 3)"}));
  // A symbolic kernel takes its size from kernel_size.
  auto sym = tensor_var("s", {16, 3, Dim::var("kh"), Dim::var("kw")});
  EXPECT_TRUE(is_tensor(infer_call("nn.conv2d", {x, sym}, kernel), {1, 16, 4, 4}, f32));
}

TEST(NnConv, Conv2dBadSpatialAttributes) {
  auto x = tensor_var("x", {1, 3, 8, 8});
  auto k = tensor_var("k", {4, 3, 3, 3});
  auto fails = [&](Attrs attrs, std::vector<std::string> words) {
    return type_error_mentions(call_op("nn.conv2d", {x, k}, std::move(attrs)), words);
  };
  EXPECT_TRUE(fails(with<Conv2DAttrs>([](auto& a) {
                      a.strides = {1, 1, 1};
                    }),
                    {"'strides'", "2 values", "[1, 1, 1]"}));
  EXPECT_TRUE(fails(with<Conv2DAttrs>([](auto& a) {
                      a.strides = {0, 1};
                    }),
                    {"'strides'", "positive"}));
  EXPECT_TRUE(fails(with<Conv2DAttrs>([](auto& a) {
                      a.dilation = {1, -1};
                    }),
                    {"'dilation'", "positive"}));
  EXPECT_TRUE(fails(with<Conv2DAttrs>([](auto& a) {
                      a.padding = {1, 1, 1};
                    }),
                    {"'padding'", "1, 2 or 4 values"}));
  EXPECT_TRUE(fails(with<Conv2DAttrs>([](auto& a) {
                      a.padding = {0, -1, 0, 0};
                    }),
                    {"'padding'", "non-negative"}));
  EXPECT_TRUE(
      fails(with<Conv2DAttrs>([](auto& a) { a.channels = 0; }), {"'channels'", "positive"}));
}

TEST(NnConv, Conv2dKernelLargerThanPaddedInput) {
  auto x = tensor_var("x", {1, 3, 2, 8});
  auto k = tensor_var("k", {4, 3, 3, 3});
  EXPECT_TRUE(type_error_mentions(call_op("nn.conv2d", {x, k}),
                                  {"kernel spans 3 on axis H", "padded input is only 2"}));
  Attrs dilated = with<Conv2DAttrs>([](auto& a) { a.dilation = {1, 4}; });
  auto wide = tensor_var("x", {1, 3, 8, 8});
  EXPECT_TRUE(type_error_mentions(call_op("nn.conv2d", {wide, k}, dilated),
                                  {"kernel spans 9 on axis W", "dilation 4"}));
}

TEST(NnConv, Conv2dLayoutErrors) {
  auto x = tensor_var("x", {1, 3, 8, 8});
  auto k = tensor_var("k", {4, 3, 3, 3});
  auto fails = [&](Attrs attrs, std::vector<std::string> words) {
    return type_error_mentions(call_op("nn.conv2d", {x, k}, std::move(attrs)), words);
  };
  EXPECT_TRUE(fails(with<Conv2DAttrs>([](auto& a) { a.data_layout = "NCHX"; }),
                    {"'data_layout' = \"NCHX\"", "axes N, C, H, W"}));
  EXPECT_TRUE(fails(with<Conv2DAttrs>([](auto& a) { a.data_layout = "NCHWc"; }),
                    {"'data_layout'", "needs a block factor"}));
  EXPECT_TRUE(fails(with<Conv2DAttrs>([](auto& a) { a.data_layout = "NCHWN"; }),
                    {"'data_layout'", "repeats"}));
  EXPECT_TRUE(fails(with<Conv2DAttrs>([](auto& a) { a.data_layout = "NCHW4d"; }),
                    {"'data_layout'", "absent"}));
  EXPECT_TRUE(fails(with<Conv2DAttrs>([](auto& a) { a.kernel_layout = "OIW"; }),
                    {"'kernel_layout'", "axes O, I, H, W"}));
  EXPECT_TRUE(fails(with<Conv2DAttrs>([](auto& a) { a.out_layout = "NCH"; }),
                    {"'out_layout'", "axes N, C, H, W"}));
  EXPECT_TRUE(fails(with<Conv2DAttrs>([](auto& a) { a.out_layout = "NCHW3c"; }),
                    {"'out_layout' = \"NCHW3c\"", "blocks of 3", "C is 4"}));
  auto rank3 = tensor_var("x", {1, 3, 8});
  EXPECT_TRUE(type_error_mentions(call_op("nn.conv2d", {rank3, k}),
                                  {"argument 'data' has shape (1, 3, 8)", "needs rank 4"}));
}

TEST(NnConv, Conv2dDtypeMismatch) {
  auto x = tensor_var("x", {1, 3, 8, 8});
  auto k = tensor_var("k", {4, 3, 3, 3}, DataType::float16());
  EXPECT_TRUE(type_error_mentions(call_op("nn.conv2d", {x, k}),
                                  {"argument 'weight' has dtype float16", "float32"}));
}

TEST(NnConv, ConvAttrsSurviveTheTextForm) {
  auto x = tensor_var("x", {1, 224, 224, 3});
  auto k = tensor_var("k", {7, 7, 3, 64});
  EXPECT_TRUE(round_trips({x, k}, call_op("nn.conv2d", {x, k}, with<Conv2DAttrs>([](auto& a) {
                                            a.strides = {2, 2};
                                            a.padding = {3, 3, 3, 3};
                                            a.channels = 64;
                                            a.kernel_size = {7, 7};
                                            a.data_layout = "NHWC";
                                            a.kernel_layout = "HWIO";
                                            a.out_dtype = DataType::float16();
                                          }))));
  auto y = tensor_var("y", {1, 16, 8, 8});
  auto t = tensor_var("t", {16, 8, 4, 4});
  EXPECT_TRUE(round_trips(
      {y, t}, call_op("nn.conv2d_transpose", {y, t}, with<Conv2DTransposeAttrs>([](auto& a) {
                        a.strides = {2, 2};
                        a.output_padding = {1, 1};
                        a.groups = 2;
                      }))));
}

TEST(NnConv, ConvAttrsPrintOnlyNonDefaultFields) {
  Attrs attrs = with<Conv2DAttrs>([](auto& a) {
    a.strides = {2, 2};
    a.channels = 64;
  });
  std::vector<std::string> names;
  for (const AttrField& field : non_default_fields(*attrs)) names.push_back(field.name);
  EXPECT_EQ(names, (std::vector<std::string>{"strides", "channels"}));
  EXPECT_TRUE(non_default_fields(*make_attrs<Conv3DAttrs>()).empty());
  EXPECT_STREQ(make_attrs<Conv1DAttrs>()->type_key(), "nn.Conv1DAttrs");
  EXPECT_EQ(make_attrs<Conv3DTransposeAttrs>()->kernel_layout, "IODHW");
}

// ---------------------------------------------------------------- conv1d and conv3d

TEST(NnConv, Conv1d) {
  auto x = tensor_var("x", {n, 4, Dim::var("len")});
  auto k = tensor_var("k", {8, 4, 3});
  Attrs attrs = with<Conv1DAttrs>([](auto& a) { a.padding = {1, 1}; });
  EXPECT_TRUE(is_tensor(infer_call("nn.conv1d", {x, k}, attrs), {n, 8, Dim::var("len")}, f32));
  auto y = tensor_var("y", {1, 4, 10});
  Attrs strided = with<Conv1DAttrs>([](auto& a) { a.strides = {2}; });
  EXPECT_TRUE(is_tensor(infer_call("nn.conv1d", {y, k}, strided), {1, 8, 4}, f32));
  auto nwc = tensor_var("nwc", {1, 10, 4});
  Attrs nwc_attrs = with<Conv1DAttrs>([](auto& a) {
    a.data_layout = "NWC";
    a.kernel_layout = "WIO";
  });
  EXPECT_TRUE(is_tensor(infer_call("nn.conv1d", {nwc, tensor_var("k", {3, 4, 8})}, nwc_attrs),
                        {1, 8, 8}, f32));
  EXPECT_TRUE(type_error_mentions(call_op("nn.conv1d", {y, tensor_var("k", {8, 5, 3})}),
                                  {"5 input channels", "'data' has 4"}));
  EXPECT_TRUE(type_error_mentions(call_op("nn.conv1d", {y, k}, with<Conv1DAttrs>([](auto& a) {
                                            a.strides = {1, 1};
                                          })),
                                  {"'strides'", "1 value"}));
  EXPECT_EQ(pattern_of("nn.conv1d"), OpPattern::OutEWiseFusable);
}

TEST(NnConv, Conv3d) {
  auto x = tensor_var("x", {1, 2, Dim::var("d"), 8, 8});
  auto k = tensor_var("k", {4, 2, 3, 3, 3});
  Attrs attrs = with<Conv3DAttrs>([](auto& a) { a.padding = {1}; });
  EXPECT_TRUE(is_tensor(infer_call("nn.conv3d", {x, k}, attrs), {1, 4, Dim::var("d"), 8, 8}, f32));
  Attrs ndhwc = with<Conv3DAttrs>([](auto& a) {
    a.data_layout = "NDHWC";
    a.kernel_layout = "DHWIO";
    a.strides = {1, 2, 2};
  });
  auto y = tensor_var("y", {1, 5, 9, 9, 2});
  EXPECT_TRUE(is_tensor(infer_call("nn.conv3d", {y, tensor_var("k", {3, 3, 3, 2, 4})}, ndhwc),
                        {1, 3, 4, 4, 4}, f32));
  EXPECT_TRUE(type_error_mentions(call_op("nn.conv3d", {x, k}, with<Conv3DAttrs>([](auto& a) {
                                            a.padding = {1, 1, 1, 1};
                                          })),
                                  {"'padding'", "1, 3 or 6 values"}));
  EXPECT_TRUE(type_error_mentions(call_op("nn.conv3d", {x, tensor_var("k", {4, 2, 3, 3})}),
                                  {"argument 'weight' has shape (4, 2, 3, 3)", "needs rank 5"}));
  EXPECT_EQ(pattern_of("nn.conv3d"), OpPattern::OutEWiseFusable);
}

// ---------------------------------------------------------------- transposed

TEST(NnConv, Conv2dTransposeUpsamples) {
  auto x = tensor_var("x", {1, 16, 8, 8});
  auto k = tensor_var("k", {16, 8, 4, 4});  // IOHW
  Attrs attrs = with<Conv2DTransposeAttrs>([](auto& a) {
    a.strides = {2, 2};
    a.padding = {1, 1, 1, 1};
  });
  EXPECT_TRUE(is_tensor(infer_call("nn.conv2d_transpose", {x, k}, attrs), {1, 8, 16, 16}, f32));
  Attrs out_pad = with<Conv2DTransposeAttrs>([](auto& a) {
    a.strides = {2, 2};
    a.padding = {1, 1, 1, 1};
    a.output_padding = {1, 0};
  });
  EXPECT_TRUE(is_tensor(infer_call("nn.conv2d_transpose", {x, k}, out_pad), {1, 8, 17, 16}, f32));
  auto sym = tensor_var("s", {n, 16, h, w});
  EXPECT_TRUE(
      is_tensor(infer_call("nn.conv2d_transpose", {sym, k}, attrs), {n, 8, h * 2, w * 2}, f32));
  EXPECT_EQ(pattern_of("nn.conv2d_transpose"), OpPattern::OutEWiseFusable);
}

TEST(NnConv, Conv2dTransposeGroupsDilationAndLayouts) {
  auto x = tensor_var("x", {1, 16, 5, 5});
  Attrs grouped = with<Conv2DTransposeAttrs>([](auto& a) { a.groups = 2; });
  EXPECT_TRUE(
      is_tensor(infer_call("nn.conv2d_transpose", {x, tensor_var("k", {16, 4, 3, 3})}, grouped),
                {1, 8, 7, 7}, f32));
  Attrs dilated = with<Conv2DTransposeAttrs>([](auto& a) { a.dilation = {2, 2}; });
  EXPECT_TRUE(
      is_tensor(infer_call("nn.conv2d_transpose", {x, tensor_var("k", {16, 4, 3, 3})}, dilated),
                {1, 4, 9, 9}, f32));
  Attrs oihw = with<Conv2DTransposeAttrs>([](auto& a) { a.kernel_layout = "OIHW"; });
  EXPECT_TRUE(
      is_tensor(infer_call("nn.conv2d_transpose", {x, tensor_var("k", {4, 16, 3, 3})}, oihw),
                {1, 4, 7, 7}, f32));
}

TEST(NnConv, Conv2dTransposeErrors) {
  auto x = tensor_var("x", {1, 16, 8, 8});
  EXPECT_TRUE(
      type_error_mentions(call_op("nn.conv2d_transpose", {x, tensor_var("k", {8, 8, 3, 3})}),
                          {"argument 'weight' has 8 input channels but 'data' has 16",
                           "weight Tensor[(8, 8, 3, 3), float32]"}));
  auto k = tensor_var("k", {16, 8, 3, 3});
  EXPECT_TRUE(type_error_mentions(
      call_op("nn.conv2d_transpose", {x, k}, with<Conv2DTransposeAttrs>([](auto& a) {
                a.strides = {2, 2};
                a.output_padding = {2, 0};
              })),
      {"'output_padding' = [2, 0]", "smaller than the stride"}));
  EXPECT_TRUE(
      type_error_mentions(call_op("nn.conv2d_transpose", {x, k},
                                  with<Conv2DTransposeAttrs>([](auto& a) { a.channels = 10; })),
                          {"'channels' = 10", "8 output channels"}));
  EXPECT_TRUE(
      type_error_mentions(call_op("nn.conv2d_transpose", {x, k},
                                  with<Conv2DTransposeAttrs>([](auto& a) { a.groups = 3; })),
                          {"'groups' = 3", "16 channels of 'data'"}));
  auto tiny = tensor_var("t", {1, 16, 1, 1});
  EXPECT_TRUE(
      type_error_mentions(call_op("nn.conv2d_transpose", {tiny, tensor_var("k1", {16, 8, 1, 1})},
                                  with<Conv2DTransposeAttrs>([](auto& a) {
                                    a.padding = {1, 1, 1, 1};
                                  })),
                          {"output axis H would have size -1"}));
}

TEST(NnConv, Conv1dAndConv3dTranspose) {
  auto x = tensor_var("x", {1, 4, 10});
  Attrs attrs1 = with<Conv1DTransposeAttrs>([](auto& a) { a.strides = {3}; });
  EXPECT_TRUE(is_tensor(infer_call("nn.conv1d_transpose", {x, tensor_var("k", {4, 2, 3})}, attrs1),
                        {1, 2, 30}, f32));
  auto v = tensor_var("v", {1, 4, 2, 3, 4});
  Attrs attrs3 = with<Conv3DTransposeAttrs>([](auto& a) { a.strides = {2, 2, 2}; });
  EXPECT_TRUE(
      is_tensor(infer_call("nn.conv3d_transpose", {v, tensor_var("k", {4, 6, 2, 2, 2})}, attrs3),
                {1, 6, 4, 6, 8}, f32));
  EXPECT_TRUE(
      type_error_mentions(call_op("nn.conv3d_transpose", {v, tensor_var("k", {2, 6, 2, 2, 2})}),
                          {"2 input channels", "'data' has 4"}));
}

// ---------------------------------------------------------------- blocked NCHWc

TEST(NnConv, Conv2dNchwcReadsBlockFactorsFromLayouts) {
  auto x = tensor_var("x", {1, 4, 56, 56, 16});    // 64 channels
  auto k = tensor_var("k", {8, 4, 3, 3, 16, 16});  // 128 out, 64 in
  Attrs attrs = with<Conv2DAttrs>([](auto& a) {
    a.padding = {1, 1, 1, 1};
    a.data_layout = "NCHW16c";
    a.kernel_layout = "OIHW16i16o";
    a.out_layout = "NCHW16c";
  });
  EXPECT_TRUE(
      is_tensor(infer_call("nn.contrib_conv2d_NCHWc", {x, k}, attrs), {1, 8, 56, 56, 16}, f32));
  Attrs reblocked = with<Conv2DAttrs>([](auto& a) {
    a.data_layout = "NCHW16c";
    a.kernel_layout = "OIHW16i16o";
    a.out_layout = "NCHW32c";
  });
  EXPECT_TRUE(
      is_tensor(infer_call("nn.contrib_conv2d_NCHWc", {x, k}, reblocked), {1, 4, 54, 54, 32}, f32));
  auto sym = tensor_var("s", {n, 4, h, w, 16});
  EXPECT_TRUE(
      is_tensor(infer_call("nn.contrib_conv2d_NCHWc", {sym, k}, attrs), {n, 8, h, w, 16}, f32));
  EXPECT_EQ(pattern_of("nn.contrib_conv2d_NCHWc"), OpPattern::OutEWiseFusable);
}

TEST(NnConv, Conv2dNchwcErrors) {
  auto x = tensor_var("x", {1, 4, 8, 8, 16});
  auto k = tensor_var("k", {8, 4, 3, 3, 16, 16});
  auto blocked = [](auto& a) {
    a.data_layout = "NCHW16c";
    a.kernel_layout = "OIHW16i16o";
  };
  EXPECT_TRUE(type_error_mentions(call_op("nn.contrib_conv2d_NCHWc", {x, k}),
                                  {"'data_layout' = \"NCHW\"", "must block the channels"}));
  EXPECT_TRUE(
      type_error_mentions(call_op("nn.contrib_conv2d_NCHWc", {x, k}, with<Conv2DAttrs>([](auto& a) {
                                    a.data_layout = "NCHW16c";
                                    a.kernel_layout = "OIHW16o";
                                  })),
                          {"'kernel_layout'", "must block both channel axes"}));
  auto inner8 = tensor_var("x8", {1, 4, 8, 8, 8});
  EXPECT_TRUE(type_error_mentions(
      call_op("nn.contrib_conv2d_NCHWc", {inner8, k}, with<Conv2DAttrs>(blocked)),
      {"inner 'c' axis is 8", "\"NCHW16c\" needs 16"}));
  auto half = tensor_var("k2", {8, 2, 3, 3, 16, 16});
  EXPECT_TRUE(
      type_error_mentions(call_op("nn.contrib_conv2d_NCHWc", {x, half}, with<Conv2DAttrs>(blocked)),
                          {"argument 'weight' has 32 input channels but 'data' has 64"}));
  EXPECT_TRUE(
      type_error_mentions(call_op("nn.contrib_conv2d_NCHWc", {x, k}, with<Conv2DAttrs>([](auto& a) {
                                    a.data_layout = "NCHW16c";
                                    a.kernel_layout = "OIHW16i16o";
                                    a.out_layout = "NCHW48c";
                                  })),
                          {"'out_layout' = \"NCHW48c\"", "blocks of 48", "C is 128"}));
}

}  // namespace
}  // namespace anvil::ir
