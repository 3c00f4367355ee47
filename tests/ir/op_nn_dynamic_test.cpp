// Type relations of the nn ops whose amounts arrive at run time (dyn.nn.pad,
// dyn.image.resize), of max pooling with argmax indices, and of max unpooling.
#include <gtest/gtest.h>

#include "anvil/ir/attrs/nn.h"
#include "nn_test_util.h"

namespace anvil::ir {
namespace {

using testing::infer_call;
using testing::is_tensor;
using testing::round_trips;
using testing::tensor_var;
using testing::type_error_mentions;
using testing::with;

const DataType f32 = DataType::float32();
const DataType i64 = DataType::int64();
const Dim n = Dim::var("n");

// ---------------------------------------------------------------- dyn.nn.pad

Attrs dyn_pad_attrs(std::string mode) {
  return with<DynPadAttrs>([&](auto& a) { a.pad_mode = std::move(mode); });
}

TEST(NnDynamic, PadKeepsTheRankAndForgetsTheSizes) {
  auto x = tensor_var("x", {n, 3, 4});
  auto pads = tensor_var("pads", {6}, i64), axes = tensor_var("axes", {3}, i64);
  auto value = tensor_var("value", {});
  Dim any = Dim::any();
  EXPECT_TRUE(is_tensor(infer_call("dyn.nn.pad", {x, pads, value, axes}, dyn_pad_attrs("wrap")),
                        {any, any, any}, f32));
  EXPECT_TRUE(round_trips({x, pads, value, axes},
                          call_op("dyn.nn.pad", {x, pads, value, axes}, dyn_pad_attrs("edge"))));
}

TEST(NnDynamic, PadErrors) {
  auto x = tensor_var("x", {2, 3});
  auto pads = tensor_var("pads", {4}, i64), axes = tensor_var("axes", {2}, i64);
  auto value = tensor_var("value", {});
  EXPECT_TRUE(
      type_error_mentions(call_op("dyn.nn.pad", {x, pads, value, axes}, dyn_pad_attrs("mirror")),
                          {"'pad_mode' = \"mirror\"", "constant, reflect, edge, wrap"}));
  EXPECT_TRUE(type_error_mentions(
      call_op("dyn.nn.pad", {x, tensor_var("fp", {4}), value, axes}, dyn_pad_attrs("constant")),
      {"argument 'pads' must hold integers", "Tensor[(4), float32]"}));
  EXPECT_TRUE(type_error_mentions(
      call_op("dyn.nn.pad", {x, pads, tensor_var("v", {}, i64), axes}, dyn_pad_attrs("constant")),
      {"argument 'pad_value' must be a scalar of the dtype of 'data' (float32)"}));
  EXPECT_TRUE(
      type_error_mentions(call_op("dyn.nn.pad", {x, pads, value, tensor_var("a2", {1, 2}, i64)},
                                  dyn_pad_attrs("constant")),
                          {"argument 'axes' must be 1-D"}));
}

// ---------------------------------------------------------------- dyn.image.resize

Attrs dyn_resize_attrs(std::string target, std::vector<int64_t> axes = {}) {
  return with<DynResizeAttrs>([&](auto& a) {
    a.target = std::move(target);
    a.axes = std::move(axes);
  });
}

TEST(NnDynamic, ResizeForgetsOnlyTheResizedAxes) {
  auto x = tensor_var("x", {n, 3, 8, 8});
  auto roi = tensor_var("roi", {0});
  Dim any = Dim::any();
  EXPECT_TRUE(is_tensor(infer_call("dyn.image.resize", {x, roi, tensor_var("sizes", {2}, i64)},
                                   dyn_resize_attrs("sizes", {-1, 2})),
                        {n, 3, any, any}, f32));
  EXPECT_TRUE(is_tensor(infer_call("dyn.image.resize", {x, roi, tensor_var("scales", {4})},
                                   dyn_resize_attrs("scales")),
                        {any, any, any, any}, f32));
  auto scales = tensor_var("scales", {4});
  EXPECT_TRUE(round_trips({x, roi, scales}, call_op("dyn.image.resize", {x, roi, scales},
                                                    with<DynResizeAttrs>([](auto& a) {
                                                      a.method = "cubic";
                                                      a.coordinate_transformation_mode =
                                                          "half_pixel_symmetric";
                                                      a.antialias = true;
                                                      a.cubic_alpha = -0.5;
                                                    }))));
}

TEST(NnDynamic, ResizeErrors) {
  auto x = tensor_var("x", {1, 3, 8, 8});
  auto roi = tensor_var("roi", {0});
  auto scales = tensor_var("scales", {4});
  auto fails = [&](Expr target, Attrs attrs, std::vector<std::string> words) {
    return type_error_mentions(call_op("dyn.image.resize", {x, roi, std::move(target)}, attrs),
                               words);
  };
  EXPECT_TRUE(fails(scales, dyn_resize_attrs("sizes"),
                    {"argument 'target' must hold integers", "Tensor[(4), float32]"}));
  EXPECT_TRUE(fails(scales, dyn_resize_attrs("scales", {2, 3}),
                    {"argument 'target' has 4 scales but 2 axes are resized"}));
  EXPECT_TRUE(fails(tensor_var("s2", {2}), dyn_resize_attrs("scales", {2, -2}),
                    {"attribute 'axes' = [2, -2] repeats axis 2"}));
  EXPECT_TRUE(fails(scales,
                    with<DynResizeAttrs>([](auto& a) { a.keep_aspect_ratio_policy = "fit"; }),
                    {"'keep_aspect_ratio_policy' = \"fit\"", "stretch, not_larger, not_smaller"}));
  EXPECT_TRUE(fails(scales, with<DynResizeAttrs>([](auto& a) { a.target = "shape"; }),
                    {"'target' = \"shape\"", "scales, sizes"}));
}

// ---------------------------------------------------------------- max pooling with argmax

TEST(NnDynamic, MaxPoolWithArgmaxReturnsValuesAndInt64Indices) {
  auto x = tensor_var("x", {n, 2, 5, 5});
  Attrs attrs = with<MaxPool2DAttrs>([](auto& a) {
    a.pool_size = {2, 2};
    a.strides = {2, 2};
  });
  Type t = infer_call("nn.max_pool2d_with_argmax", {x}, attrs);
  const auto* tuple = as<TupleTypeNode>(t);
  ASSERT_NE(tuple, nullptr) << type_to_string(t);
  ASSERT_EQ(tuple->fields.size(), 2u);
  EXPECT_TRUE(is_tensor(tuple->fields[0], {n, 2, 2, 2}, f32));
  EXPECT_TRUE(is_tensor(tuple->fields[1], {n, 2, 2, 2}, i64));
}

TEST(NnDynamic, MaxPoolWithArgmaxNeedsTheCanonicalLayout) {
  auto x = tensor_var("x", {1, 5, 5, 2});
  Attrs attrs = with<MaxPool2DAttrs>([](auto& a) {
    a.pool_size = {2, 2};
    a.layout = "NHWC";
  });
  EXPECT_TRUE(type_error_mentions(call_op("nn.max_pool2d_with_argmax", {x}, attrs),
                                  {"'layout' and 'out_layout' must be NCHW", "\"NHWC\""}));
}

// ---------------------------------------------------------------- max unpooling

TEST(NnDynamic, MaxUnpoolSizeFromTheWindowOrOutputSize) {
  auto x = tensor_var("x", {n, 3, 2, 2});
  auto indices = tensor_var("i", {n, 3, 2, 2}, i64);
  Attrs implied = with<MaxUnpool2DAttrs>([](auto& a) {
    a.pool_size = {3, 3};
    a.strides = {2, 2};
    a.padding = {1, 1, 0, 0};
  });
  // (2 - 1) * 2 + 3 - 1 = 4 on each axis.
  EXPECT_TRUE(is_tensor(infer_call("nn.max_unpool2d", {x, indices}, implied), {n, 3, 4, 4}, f32));
  Attrs sized = with<MaxUnpool2DAttrs>([](auto& a) {
    a.pool_size = {2, 2};
    a.output_size = {5, 6};
  });
  EXPECT_TRUE(is_tensor(infer_call("nn.max_unpool2d", {x, indices}, sized), {n, 3, 5, 6}, f32));
  Dim any = Dim::any();
  EXPECT_TRUE(is_tensor(
      infer_call("dyn.nn.max_unpool2d", {x, indices, tensor_var("shape", {4}, i64)}, implied),
      {n, 3, any, any}, f32));
  EXPECT_TRUE(
      type_error_mentions(call_op("nn.max_unpool2d", {x, tensor_var("f", {n, 3, 2, 2})}, implied),
                          {"argument 'indices' must hold integers"}));
  EXPECT_TRUE(type_error_mentions(
      call_op("nn.max_unpool2d", {x, tensor_var("j", {n, 3, 2, 3}, i64)}, implied),
      {"argument 'indices' must have the shape of 'data'"}));
}

}  // namespace
}  // namespace anvil::ir
