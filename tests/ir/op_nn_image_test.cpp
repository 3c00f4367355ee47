// Type relations of the image family: pad, resize1d/2d/3d, depth_to_space,
// space_to_depth and batch_flatten.
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

Attrs pad_attrs(std::vector<int64_t> pad_width, std::string mode = "constant") {
  return with<PadAttrs>([&](auto& a) {
    a.pad_width = std::move(pad_width);
    a.pad_mode = std::move(mode);
  });
}

// ---------------------------------------------------------------- pad

TEST(NnImage, PadGrowsEachAxis) {
  auto x = tensor_var("x", {n, 3, 4, h});
  auto zero = tensor_var("zero", {});
  EXPECT_TRUE(is_tensor(infer_call("nn.pad", {x, zero}, pad_attrs({0, 0, 0, 0, 1, 2, 3, 4})),
                        {n, 3, 7, h + 7}, f32));
  EXPECT_TRUE(
      is_tensor(infer_call("nn.pad", {x, zero}, pad_attrs({0, 0, 0, 0, 3, 3, 1, 1}, "reflect")),
                {n, 3, 10, h + 2}, f32));
  EXPECT_TRUE(
      is_tensor(infer_call("nn.pad", {x, zero}, pad_attrs({0, 0, 0, 0, 5, 5, 0, 0}, "edge")),
                {n, 3, 14, h}, f32));
  EXPECT_EQ(pattern_of("nn.pad"), OpPattern::Injective);
}

TEST(NnImage, PadUnknownRankTakesTheRankFromPadWidth) {
  auto x = VarNode::make("x", TensorTypeNode::make_unknown_rank(f32));
  Dim any = Dim::any();
  EXPECT_TRUE(is_tensor(infer_call("nn.pad", {x, tensor_var("v", {})}, pad_attrs({1, 1, 0, 0})),
                        {any, any}, f32));
}

TEST(NnImage, PadErrors) {
  auto x = tensor_var("x", {1, 3, 4, 4});
  auto v = tensor_var("v", {});
  auto fails = [&](Attrs attrs, std::vector<std::string> words) {
    return type_error_mentions(call_op("nn.pad", {x, v}, std::move(attrs)), words);
  };
  EXPECT_TRUE(fails(pad_attrs({0, 0, 0, 0, 1, 1, 1, 1}, "symmetric"),
                    {"nn.pad", "'pad_mode' = \"symmetric\"", "constant, reflect, edge, wrap"}));
  EXPECT_TRUE(fails(pad_attrs({0, 0, 1}), {"'pad_width'", "(before, after) pair per axis"}));
  EXPECT_TRUE(fails(pad_attrs({0, 0, 0, 0, -1, 0, 0, 0}), {"'pad_width'", "non-negative"}));
  EXPECT_TRUE(fails(pad_attrs({1, 1, 1, 1}),
                    {"'pad_width' has 2 (before, after) pairs but argument 'data' has rank 4",
                     "data Tensor[(1, 3, 4, 4), float32]"}));
  EXPECT_TRUE(fails(pad_attrs({0, 0, 0, 0, 4, 0, 0, 0}, "reflect"),
                    {"pads axis 2 by 4", "reflect mode needs less than its size 4"}));
  auto empty = tensor_var("e", {0, 3});
  EXPECT_TRUE(type_error_mentions(call_op("nn.pad", {empty, v}, pad_attrs({1, 0, 0, 0}, "edge")),
                                  {"pads axis 0 in edge mode", "empty"}));
  EXPECT_TRUE(type_error_mentions(call_op("nn.pad", {empty, v}, pad_attrs({0, 2, 0, 0}, "wrap")),
                                  {"pads axis 0 in wrap mode", "empty"}));
  EXPECT_TRUE(type_error_mentions(
      call_op("nn.pad", {x, tensor_var("v1", {1})}, pad_attrs({0, 0, 0, 0, 1, 1, 1, 1})),
      {"argument 'pad_value' must be a scalar", "Tensor[(1), float32]"}));
  EXPECT_TRUE(type_error_mentions(call_op("nn.pad", {x, tensor_var("vi", {}, DataType::int32())},
                                          pad_attrs({0, 0, 0, 0, 1, 1, 1, 1})),
                                  {"argument 'pad_value' has dtype int32"}));
}

// ---------------------------------------------------------------- resize

TEST(NnImage, Resize2dToSize) {
  auto x = tensor_var("x", {n, 3, h, w});
  Attrs attrs = with<Resize2DAttrs>([](auto& a) { a.size = {224, 200}; });
  EXPECT_TRUE(is_tensor(infer_call("image.resize2d", {x}, attrs), {n, 3, 224, 200}, f32));
  Attrs nhwc = with<Resize2DAttrs>([](auto& a) {
    a.size = {10, 10};
    a.layout = "NHWC";
    a.method = "nearest_neighbor";
    a.rounding_method = "round_prefer_floor";
    a.coordinate_transformation_mode = "asymmetric";
  });
  EXPECT_TRUE(is_tensor(infer_call("image.resize2d", {tensor_var("y", {1, 5, 5, 3})}, nhwc),
                        {1, 10, 10, 3}, f32));
  Attrs half = with<Resize2DAttrs>([](auto& a) {
    a.size = {8, 8};
    a.out_dtype = DataType::float16();
  });
  EXPECT_TRUE(
      is_tensor(infer_call("image.resize2d", {x}, half), {n, 3, 8, 8}, DataType::float16()));
  EXPECT_EQ(pattern_of("image.resize2d"), OpPattern::Injective);
}

TEST(NnImage, Resize2dByScales) {
  auto x = tensor_var("x", {n, 3, h, w});
  Attrs twice = with<Resize2DAttrs>([](auto& a) { a.scales = {2.0, 3.0}; });
  EXPECT_TRUE(is_tensor(infer_call("image.resize2d", {x}, twice), {n, 3, h * 2, w * 3}, f32));
  Attrs halve = with<Resize2DAttrs>([](auto& a) { a.scales = {0.5}; });
  EXPECT_TRUE(is_tensor(infer_call("image.resize2d", {x}, halve),
                        {n, 3, floordiv(h, 2), floordiv(w, 2)}, f32));
  Attrs odd = with<Resize2DAttrs>([](auto& a) { a.scales = {1.5, 1.5}; });
  EXPECT_TRUE(is_tensor(infer_call("image.resize2d", {tensor_var("s", {1, 3, 5, 4})}, odd),
                        {1, 3, 7, 6}, f32));
  EXPECT_TRUE(
      is_tensor(infer_call("image.resize2d", {x}, odd), {n, 3, Dim::any(), Dim::any()}, f32));
}

TEST(NnImage, Resize1dAnd3d) {
  Attrs r1 = with<Resize1DAttrs>([](auto& a) {
    a.scales = {2.0};
    a.method = "cubic";
    a.cubic_alpha = -0.75;
    a.cubic_exclude = 1;
  });
  EXPECT_TRUE(is_tensor(infer_call("image.resize1d", {tensor_var("x", {1, 3, w})}, r1),
                        {1, 3, w * 2}, f32));
  Attrs r3 = with<Resize3DAttrs>([](auto& a) { a.size = {2, 4, 6}; });
  EXPECT_TRUE(is_tensor(infer_call("image.resize3d", {tensor_var("v", {1, 3, 5, h, w})}, r3),
                        {1, 3, 2, 4, 6}, f32));
  Attrs crop = with<Resize3DAttrs>([](auto& a) {
    a.size = {2, 2, 2};
    a.coordinate_transformation_mode = "tf_crop_and_resize";
    a.roi = {0, 0, 0, 0.5, 0.5, 0.5};
    a.extrapolation_value = -1;
  });
  EXPECT_TRUE(is_tensor(infer_call("image.resize3d", {tensor_var("v", {1, 3, 4, 4, 4})}, crop),
                        {1, 3, 2, 2, 2}, f32));
  EXPECT_EQ(pattern_of("image.resize1d"), OpPattern::Injective);
  EXPECT_EQ(pattern_of("image.resize3d"), OpPattern::Injective);
}

TEST(NnImage, ResizeErrors) {
  auto x = tensor_var("x", {1, 3, 4, 4});
  auto fails = [&](Attrs attrs, std::vector<std::string> words) {
    return type_error_mentions(call_op("image.resize2d", {x}, std::move(attrs)), words);
  };
  EXPECT_TRUE(fails(with<Resize2DAttrs>([](auto&) {}),
                    {"image.resize2d", "exactly one of", "'size' and 'scales'", "neither"}));
  EXPECT_TRUE(fails(with<Resize2DAttrs>([](auto& a) {
                      a.size = {8, 8};
                      a.scales = {2, 2};
                    }),
                    {"exactly one of", "both"}));
  EXPECT_TRUE(fails(with<Resize2DAttrs>([](auto& a) {
                      a.size = {8, 8};
                      a.method = "bilinear";
                    }),
                    {"'method' = \"bilinear\"", "nearest_neighbor, linear, cubic"}));
  EXPECT_TRUE(fails(with<Resize2DAttrs>([](auto& a) {
                      a.size = {8, 8};
                      a.coordinate_transformation_mode = "center";
                    }),
                    {"'coordinate_transformation_mode' = \"center\"", "half_pixel"}));
  EXPECT_TRUE(fails(with<Resize2DAttrs>([](auto& a) {
                      a.size = {8, 8};
                      a.rounding_method = "nearest";
                    }),
                    {"'rounding_method' = \"nearest\"", "round_prefer_ceil"}));
  EXPECT_TRUE(fails(with<Resize2DAttrs>([](auto& a) {
                      a.size = {8, 8};
                      a.cubic_exclude = 2;
                    }),
                    {"'cubic_exclude'", "0 or 1"}));
  EXPECT_TRUE(fails(with<Resize2DAttrs>([](auto& a) {
                      a.size = {8, 8};
                      a.roi = {0, 0, 1};
                    }),
                    {"'roi'", "4 values"}));
  EXPECT_TRUE(fails(with<Resize2DAttrs>([](auto& a) {
                      a.size = {8, 8};
                      a.coordinate_transformation_mode = "tf_crop_and_resize";
                    }),
                    {"'roi' must be set", "tf_crop_and_resize"}));
  EXPECT_TRUE(fails(with<Resize2DAttrs>([](auto& a) {
                      a.size = {8, 8, 8};
                    }),
                    {"'size'", "2 values"}));
  EXPECT_TRUE(fails(with<Resize2DAttrs>([](auto& a) { a.size = {0, 8}; }), {"'size'", "positive"}));
  EXPECT_TRUE(fails(with<Resize2DAttrs>([](auto& a) {
                      a.scales = {2, 2, 2};
                    }),
                    {"'scales'", "2 values"}));
  EXPECT_TRUE(fails(with<Resize2DAttrs>([](auto& a) {
                      a.scales = {-1, 2};
                    }),
                    {"'scales'", "positive"}));
  EXPECT_TRUE(fails(with<Resize2DAttrs>([](auto& a) {
                      a.scales = {0.2, 1};
                    }),
                    {"'scales' shrinks axis H of size 4 to 0"}));
  EXPECT_TRUE(fails(with<Resize2DAttrs>([](auto& a) {
                      a.size = {8, 8};
                      a.layout = "NCW";
                    }),
                    {"'layout' = \"NCW\"", "axes N, C, H, W"}));
  EXPECT_TRUE(type_error_mentions(
      call_op("image.resize2d", {tensor_var("y", {3, 4, 4})}, with<Resize2DAttrs>([](auto& a) {
                a.size = {8, 8};
              })),
      {"argument 'data' has shape (3, 4, 4)", "needs rank 4"}));
}

TEST(NnImage, AttrsSurviveTheTextForm) {
  auto x = tensor_var("x", {1, 3, 4, 4});
  EXPECT_TRUE(round_trips({x}, call_op("image.resize2d", {x}, with<Resize2DAttrs>([](auto& a) {
                                         a.scales = {2.0, 1.5};
                                         a.roi = {0, 0, 1, 1};
                                         a.method = "cubic";
                                         a.cubic_alpha = -0.75;
                                         a.rounding_method = "floor";
                                       }))));
  auto v = tensor_var("v", {});
  EXPECT_TRUE(
      round_trips({x, v}, call_op("nn.pad", {x, v}, pad_attrs({0, 0, 0, 0, 1, 1, 2, 2}, "edge"))));
}

// ---------------------------------------------------------------- sub-pixel

Attrs block(int64_t size, std::string layout = "NCHW", std::string mode = "DCR") {
  return with<SubPixelAttrs>([&](auto& a) {
    a.block_size = size;
    a.layout = std::move(layout);
    a.mode = std::move(mode);
  });
}

TEST(NnImage, DepthToSpace) {
  auto x = tensor_var("x", {1, 16, 4, 5});
  EXPECT_TRUE(is_tensor(infer_call("nn.depth_to_space", {x}, block(2)), {1, 4, 8, 10}, f32));
  EXPECT_TRUE(
      is_tensor(infer_call("nn.depth_to_space", {x}, block(2, "NCHW", "CRD")), {1, 4, 8, 10}, f32));
  EXPECT_TRUE(
      is_tensor(infer_call("nn.depth_to_space", {tensor_var("y", {1, 4, 5, 18})}, block(3, "NHWC")),
                {1, 12, 15, 2}, f32));
  EXPECT_TRUE(is_tensor(infer_call("nn.depth_to_space", {tensor_var("s", {n, 16, h, w})}, block(2)),
                        {n, 4, h * 2, w * 2}, f32));
  EXPECT_EQ(pattern_of("nn.depth_to_space"), OpPattern::Injective);
  EXPECT_TRUE(type_error_mentions(
      call_op("nn.depth_to_space", {tensor_var("odd", {1, 18, 4, 4})}, block(2)),
      {"argument 'data' has channels 18", "block_size^2 = 4",
       "data Tensor[(1, 18, 4, 4), float32]"}));
  EXPECT_TRUE(type_error_mentions(call_op("nn.depth_to_space", {x}, block(2, "NCHW", "RCD")),
                                  {"'mode' = \"RCD\"", "DCR, CRD"}));
  EXPECT_TRUE(type_error_mentions(call_op("nn.depth_to_space", {x}, block(0)),
                                  {"'block_size'", "positive"}));
  EXPECT_TRUE(type_error_mentions(call_op("nn.depth_to_space", {x}, block(2, "NCW")),
                                  {"'layout' = \"NCW\""}));
}

TEST(NnImage, SpaceToDepth) {
  auto x = tensor_var("x", {1, 3, 8, 6});
  EXPECT_TRUE(is_tensor(infer_call("nn.space_to_depth", {x}, block(2)), {1, 12, 4, 3}, f32));
  EXPECT_TRUE(
      is_tensor(infer_call("nn.space_to_depth", {tensor_var("y", {1, 8, 6, 3})}, block(2, "NHWC")),
                {1, 4, 3, 12}, f32));
  EXPECT_TRUE(is_tensor(infer_call("nn.space_to_depth", {tensor_var("s", {n, 3, h, w})}, block(4)),
                        {n, 48, floordiv(h, 4), floordiv(w, 4)}, f32));
  EXPECT_EQ(pattern_of("nn.space_to_depth"), OpPattern::Injective);
  EXPECT_TRUE(
      type_error_mentions(call_op("nn.space_to_depth", {x}, block(3)),
                          {"argument 'data' has height 8", "not a multiple of block_size = 3"}));
  EXPECT_TRUE(type_error_mentions(call_op("nn.space_to_depth", {x}, block(4)),
                                  {"argument 'data' has width 6", "block_size = 4"}));
  EXPECT_TRUE(type_error_mentions(call_op("nn.space_to_depth", {tensor_var("r", {8, 8})}, block(2)),
                                  {"argument 'data' has shape (8, 8)", "needs rank 4"}));
}

// ---------------------------------------------------------------- batch_flatten

TEST(NnImage, BatchFlatten) {
  EXPECT_TRUE(
      is_tensor(infer_call("nn.batch_flatten", {tensor_var("x", {n, 3, 4, 5})}), {n, 60}, f32));
  Dim c = Dim::var("c");
  EXPECT_TRUE(
      is_tensor(infer_call("nn.batch_flatten", {tensor_var("y", {n, c, 2})}), {n, c * 2}, f32));
  EXPECT_TRUE(is_tensor(infer_call("nn.batch_flatten", {tensor_var("v", {5})}), {5, 1}, f32));
  auto unknown = VarNode::make("u", TensorTypeNode::make_unknown_rank(f32));
  EXPECT_TRUE(is_tensor(infer_call("nn.batch_flatten", {unknown}), {Dim::any(), Dim::any()}, f32));
  EXPECT_TRUE(
      type_error_mentions(call_op("nn.batch_flatten", {tensor_var("s", {})}),
                          {"nn.batch_flatten", "argument 'data' must have rank at least 1"}));
  EXPECT_EQ(pattern_of("nn.batch_flatten"), OpPattern::Injective);
}

}  // namespace
}  // namespace anvil::ir
