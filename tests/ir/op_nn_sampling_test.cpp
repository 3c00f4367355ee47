// Type relations of the ops that sample at computed positions:
// image.grid_sample and the deformable convolutions.
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
const Dim n = Dim::var("n");

Attrs grid_attrs(std::string layout = "NCHW", std::string method = "bilinear") {
  return with<GridSampleAttrs>([&](auto& a) {
    a.layout = std::move(layout);
    a.method = std::move(method);
  });
}

TEST(NnSampling, GridSampleTakesTheGridsSpatialSize) {
  auto x = tensor_var("x", {n, 3, 8, 8});
  auto grid = tensor_var("grid", {n, 2, 5, 7});
  EXPECT_TRUE(
      is_tensor(infer_call("image.grid_sample", {x, grid}, grid_attrs()), {n, 3, 5, 7}, f32));
  auto volume = tensor_var("v", {2, 1, 4, 4, 4});
  auto grid3 = tensor_var("g3", {2, 3, 2, 3, 4});
  EXPECT_TRUE(is_tensor(infer_call("image.grid_sample", {volume, grid3}, grid_attrs("NCDHW")),
                        {2, 1, 2, 3, 4}, f32));
  EXPECT_TRUE(round_trips(
      {x, grid}, call_op("image.grid_sample", {x, grid}, with<GridSampleAttrs>([](auto& a) {
                           a.method = "bicubic";
                           a.padding_mode = "reflection";
                           a.align_corners = false;
                         }))));
}

TEST(NnSampling, GridSampleErrors) {
  auto x = tensor_var("x", {1, 3, 8, 8});
  EXPECT_TRUE(type_error_mentions(
      call_op("image.grid_sample", {x, tensor_var("g", {1, 3, 5, 5})}, grid_attrs()),
      {"argument 'grid' must be (batch, 2, output spatial dims...)"}));
  EXPECT_TRUE(type_error_mentions(
      call_op("image.grid_sample", {x, tensor_var("g", {1, 2, 5, 5})}, grid_attrs("NCHW", "area")),
      {"'method' = \"area\"", "nearest, bilinear, bicubic"}));
  EXPECT_TRUE(type_error_mentions(
      call_op("image.grid_sample", {x, tensor_var("g", {1, 2, 5, 5})}, grid_attrs("NCDHW")),
      {"data and grid must both have rank 5"}));
}

Attrs deformable_attrs(int64_t deformable_groups = 1) {
  return with<DeformableConv2DAttrs>([&](auto& a) {
    a.padding = {1, 1, 1, 1};
    a.deformable_groups = deformable_groups;
  });
}

TEST(NnSampling, DeformableConvShapes) {
  auto x = tensor_var("x", {n, 4, 6, 6});
  auto w = tensor_var("w", {8, 4, 3, 3});
  auto offset = tensor_var("offset", {n, 2 * 2 * 9, 6, 6});
  auto mask = tensor_var("mask", {n, 2 * 9, 6, 6});
  EXPECT_TRUE(is_tensor(infer_call("nn.deformable_conv2d", {x, offset, w}, deformable_attrs(2)),
                        {n, 8, 6, 6}, f32));
  EXPECT_TRUE(is_tensor(
      infer_call("nn.modulated_deformable_conv2d", {x, offset, w, mask}, deformable_attrs(2)),
      {n, 8, 6, 6}, f32));
}

TEST(NnSampling, DeformableConvErrors) {
  auto x = tensor_var("x", {1, 4, 6, 6});
  auto w = tensor_var("w", {8, 4, 3, 3});
  EXPECT_TRUE(type_error_mentions(
      call_op("nn.deformable_conv2d", {x, tensor_var("o", {1, 18, 6, 6}), w}, deformable_attrs(2)),
      {"argument 'offset' must have shape (1, 36, 6, 6)"}));
  EXPECT_TRUE(type_error_mentions(
      call_op("nn.modulated_deformable_conv2d",
              {x, tensor_var("o", {1, 18, 6, 6}), w, tensor_var("m", {1, 9, 5, 6})},
              deformable_attrs()),
      {"argument 'mask' must have shape (1, 9, 6, 6)"}));
  EXPECT_TRUE(type_error_mentions(
      call_op("nn.deformable_conv2d", {x, tensor_var("o", {1, 18, 6, 6}), w}, deformable_attrs(3)),
      {"'deformable_groups' = 3 does not divide the 4 channels of 'data'"}));
}

}  // namespace
}  // namespace anvil::ir
