// Type relations of the vision family.
#include <gtest/gtest.h>

#include "relation_test_util.h"

namespace anvil::ir {
namespace {

using testing::infer_call;
using testing::is_tensor;
using testing::pattern_of;
using testing::tensor_var;
using testing::type_error_mentions;

const DataType f32 = DataType::float32();
const DataType i64 = DataType::int64();
const Dim n = Dim::var("n");

Expr nms(std::vector<Dim> boxes, std::vector<Dim> scores, std::vector<Dim> max_out = {1},
         DataType score_dtype = f32) {
  return call_op(
      "vision.non_max_suppression",
      {tensor_var("boxes", std::move(boxes)), tensor_var("scores", std::move(scores), score_dtype),
       tensor_var("max_out", std::move(max_out), i64), tensor_var("iou", {}),
       tensor_var("score", {1})});
}

TEST(VisionNonMaxSuppression, RowsOfBatchClassAndBox) {
  EXPECT_TRUE(is_tensor(infer_expr_type(nms({n, 10, 4}, {n, 3, 10})), {Dim::any(), 3}, i64));
  EXPECT_TRUE(is_tensor(infer_expr_type(nms({2, 5, 4}, {2, 1, 5}, {})), {Dim::any(), 3}, i64));
  EXPECT_EQ(pattern_of("vision.non_max_suppression"), OpPattern::Opaque);
}

TEST(VisionNonMaxSuppression, MismatchesNameTheArgument) {
  EXPECT_TRUE(type_error_mentions(nms({2, 5, 4}, {2, 1, 6}), {"scores", "dim 2"}));
  EXPECT_TRUE(type_error_mentions(nms({2, 5, 4}, {3, 1, 5}), {"scores", "dim 0"}));
  EXPECT_TRUE(type_error_mentions(nms({2, 5, 3}, {2, 1, 5}), {"boxes", "coordinates"}));
  EXPECT_TRUE(type_error_mentions(nms({2, 5, 4}, {2, 1, 5}, {2}), {"max_output_boxes_per_class"}));
  EXPECT_TRUE(
      type_error_mentions(nms({2, 5, 4}, {2, 1, 5}, {1}, DataType::float16()), {"float32"}));
}

Expr roi_align(std::vector<Dim> rois, std::vector<Dim> indices, DataType rois_dtype = f32) {
  return call_op("vision.roi_align",
                 {tensor_var("x", {2, 8, 16, 16}), tensor_var("rois", std::move(rois), rois_dtype),
                  tensor_var("indices", std::move(indices), i64),
                  tensor_var("params", {6}, DataType::float64())});
}

TEST(VisionRoiAlign, OneOutputPerRoiAndChannel) {
  EXPECT_TRUE(
      is_tensor(infer_expr_type(roi_align({5, 4}, {5})), {5, 8, Dim::any(), Dim::any()}, f32));
  EXPECT_TRUE(
      is_tensor(infer_expr_type(roi_align({n, 4}, {n})), {n, 8, Dim::any(), Dim::any()}, f32));
  EXPECT_EQ(pattern_of("vision.roi_align"), OpPattern::Opaque);
}

TEST(VisionRoiAlign, MismatchesNameTheArgument) {
  EXPECT_TRUE(type_error_mentions(roi_align({5, 3}, {5}), {"rois", "dim 1"}));
  EXPECT_TRUE(type_error_mentions(roi_align({5, 4}, {6}), {"batch_indices", "one per roi"}));
  EXPECT_TRUE(type_error_mentions(roi_align({5, 4}, {5}, DataType::float64()), {"rois", "dtype"}));
}

Expr affine_grid(std::vector<Dim> theta, int64_t size_values) {
  return call_op("vision.affine_grid",
                 {tensor_var("theta", std::move(theta)), tensor_var("size", {size_values}, i64),
                  tensor_var("align_corners", {}, i64)});
}

TEST(VisionAffineGrid, SpatialDimsAreKnownAtRunTime) {
  EXPECT_TRUE(
      is_tensor(infer_expr_type(affine_grid({n, 2, 3}, 4)), {n, Dim::any(), Dim::any(), 2}, f32));
  EXPECT_TRUE(is_tensor(infer_expr_type(affine_grid({2, 3, 4}, 5)),
                        {2, Dim::any(), Dim::any(), Dim::any(), 3}, f32));
  EXPECT_TRUE(type_error_mentions(affine_grid({2, 2, 3}, 5), {"theta", "dim 1"}));
  EXPECT_TRUE(type_error_mentions(affine_grid({2, 2, 3}, 3), {"size", "4 (2-D) or 5 (3-D)"}));
}

}  // namespace
}  // namespace anvil::ir
