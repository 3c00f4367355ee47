// The vision family: ops of detection models' post-processing. vision.non_max_suppression
// runs as a runtime function of the VM (anvil/runtime/builtins.h): its output length depends
// on the data and its greedy selection is sequential.
#include "anvil/runtime/builtins.h"
#include "ir/op/families.h"
#include "ir/op/transform_util.h"

namespace anvil::ir {
namespace {

using namespace relation;

// One value of `dtype`: a scalar or a one-element vector.
void expect_one_value(const RelationArgs& args, size_t i, DataType dtype) {
  const TensorTypeNode& t = args.tensor(i);
  bool one =
      t.shape->empty() || (t.shape->size() == 1 && !provably_different((*t.shape)[0], Dim(1)));
  if (t.dtype != dtype || !one)
    throw_error(args.arg_name(i), " must be one ", dtype.to_string(), " value, got ", describe(t));
}

// boxes [batch, boxes, 4] and scores [batch, classes, boxes], float32; the selected boxes'
// (batch, class, index) rows, as many as the data selects.
Type non_max_suppression_relation(const RelationArgs& args) {
  const TensorTypeNode& boxes = args.tensor(0);
  const TensorTypeNode& scores = args.tensor(1);
  if (boxes.dtype != DataType::float32() || scores.dtype != DataType::float32())
    throw_error(args.arg_name(0), " and ", args.arg_name(1), " must be float32, got ",
                describe(boxes), " and ", describe(scores));
  expect_rank(boxes, 3, args.arg_name(0));
  expect_rank(scores, 3, args.arg_name(1));
  expect_dim_equal((*boxes.shape)[2], Dim(4), args.arg_name(0) + " dim 2 (the coordinates)");
  expect_dim_equal((*scores.shape)[0], (*boxes.shape)[0],
                   args.arg_name(1) + " dim 0 (the batch of boxes)");
  expect_dim_equal((*scores.shape)[2], (*boxes.shape)[1],
                   args.arg_name(1) + " dim 2 (the number of boxes)");
  expect_one_value(args, 2, DataType::int64());
  expect_one_value(args, 3, DataType::float32());
  expect_one_value(args, 4, DataType::float32());
  return TensorTypeNode::make({Dim::any(), Dim(3)}, DataType::int64());
}

// data [N, C, H, W], rois [R, 4], batch_indices [R], params [6] float64 -> [R, C, ?, ?]: the
// output size is among the params, values the relation does not see.
Type roi_align_relation(const RelationArgs& args) {
  const TensorTypeNode& data = args.tensor(0);
  const TensorTypeNode& rois = args.tensor(1);
  const TensorTypeNode& indices = args.tensor(2);
  if (data.dtype != DataType::float32() && data.dtype != DataType::float64())
    throw_error(args.arg_name(0), " must be float32 or float64, got ", describe(data));
  if (rois.dtype != data.dtype)
    throw_error(args.arg_name(1), " must have X's dtype, got ", describe(rois));
  expect_rank(data, 4, args.arg_name(0));
  expect_rank(rois, 2, args.arg_name(1));
  expect_dim_equal((*rois.shape)[1], Dim(4), args.arg_name(1) + " dim 1 (x1, y1, x2, y2)");
  if (!indices.dtype.is_int() && !indices.dtype.is_uint())
    throw_error(args.arg_name(2), " must be integers, got ", describe(indices));
  expect_rank(indices, 1, args.arg_name(2));
  expect_dim_equal((*indices.shape)[0], (*rois.shape)[0],
                   args.arg_name(2) + " dim 0 (one per roi)");
  const TensorTypeNode& params = args.tensor(3);
  if (params.dtype != DataType::float64()) throw_error(args.arg_name(3), " must be float64");
  return TensorTypeNode::make({(*rois.shape)[0], (*data.shape)[1], Dim::any(), Dim::any()},
                              data.dtype);
}

// theta [N, 2, 3] or [N, 3, 4], size [4] or [5] int64, align_corners -> [N, ?, ?, 2] or
// [N, ?, ?, ?, 3]: the spatial dims are size's values.
Type affine_grid_relation(const RelationArgs& args) {
  const TensorTypeNode& theta = args.tensor(0);
  const TensorTypeNode& size = args.tensor(1);
  if (theta.dtype != DataType::float32() && theta.dtype != DataType::float64())
    throw_error(args.arg_name(0), " must be float32 or float64, got ", describe(theta));
  expect_rank(theta, 3, args.arg_name(0));
  expect_rank(size, 1, args.arg_name(1));
  if (!size.dtype.is_int())
    throw_error(args.arg_name(1), " must be integers, got ", describe(size));
  std::optional<int64_t> values = (*size.shape)[0].as_int();
  if (!values || (*values != 4 && *values != 5))
    throw_error(args.arg_name(1), " must hold 4 (2-D) or 5 (3-D) values, got ", describe(size));
  const int64_t spatial = *values - 2;
  expect_dim_equal((*theta.shape)[1], Dim(spatial), args.arg_name(0) + " dim 1");
  expect_dim_equal((*theta.shape)[2], Dim(spatial + 1), args.arg_name(0) + " dim 2");
  std::vector<Dim> out = {(*theta.shape)[0]};
  for (int64_t d = 0; d < spatial; ++d) out.push_back(Dim::any());
  out.push_back(Dim(spatial));
  return TensorTypeNode::make(out, theta.dtype);
}

}  // namespace

void register_vision_ops(OpTable& table) {
  table.add("vision.non_max_suppression")
      .describe(
          "ONNX NonMaxSuppression on corner boxes: per batch and class, the boxes scoring above "
          "score_threshold, greedily by descending score, each kept unless its IoU with a kept "
          "box exceeds iou_threshold, at most max_output_boxes_per_class; rows of (batch, "
          "class, box index).")
      .inputs({"boxes", "scores", "max_output_boxes_per_class", "iou_threshold", "score_threshold"})
      .type_relation(non_max_suppression_relation)
      .fusion_pattern(OpPattern::Opaque)
      .set_extra("runtime_function", std::string(builtins::kNonMaxSuppression));
  table.add("vision.roi_align")
      .describe(
          "ONNX RoiAlign: each region of interest pooled to output_height x output_width bins "
          "of bilinear samples, averaged or maxed; params holds (output_height, output_width, "
          "sampling_ratio, spatial_scale, max mode, half_pixel).")
      .inputs({"data", "rois", "batch_indices", "params"})
      .type_relation(roi_align_relation)
      .fusion_pattern(OpPattern::Opaque)
      .set_extra("runtime_function", std::string(builtins::kRoiAlign));
  table.add("vision.affine_grid")
      .describe(
          "ONNX AffineGrid: the normalized sampling grid of size's spatial dims mapped by each "
          "affine matrix of theta (x first), for grid_sample.")
      .inputs({"theta", "size", "align_corners"})
      .type_relation(affine_grid_relation)
      .fusion_pattern(OpPattern::Opaque)
      .set_extra("runtime_function", std::string(builtins::kAffineGrid));
}

}  // namespace anvil::ir
