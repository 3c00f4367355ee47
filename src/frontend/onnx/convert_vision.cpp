// Detection post-processing: NonMaxSuppression becomes vision.non_max_suppression on corner
// boxes, run by the VM as a runtime function (anvil/runtime/builtins.h). Center-point boxes
// (center_point_box=1: x, y, width, height) are turned into corners here, as ONNX Runtime does
// before comparing them; absent optional inputs become their defaults (no boxes kept, an IoU
// threshold of 0, no score threshold).
#include <limits>
#include <string>

#include "frontend/onnx/convert_nn.h"
#include "frontend/onnx/convert_tensor.h"

namespace anvil::frontend::onnx_import {

using namespace ir;

namespace {

// Coordinate k of every box: [batch, boxes, 1].
Expr coordinate(ConvertContext& ctx, const Expr& boxes, int64_t k) {
  Tensor index = Tensor::empty({1}, DataType::int64());
  index.data_as<int64_t>()[0] = k;
  return ctx.op("take", {boxes, ctx.constant(index)}, {{"axis", int64_t(2)}});
}

// (x_center, y_center, width, height) -> (y1, x1, y2, x2).
Expr center_to_corners(ConvertContext& ctx, const Expr& boxes) {
  Expr half = scalar_constant(ctx, 0.5, DataType::float32());
  Expr x = coordinate(ctx, boxes, 0), y = coordinate(ctx, boxes, 1);
  Expr half_w = ctx.op("multiply", {coordinate(ctx, boxes, 2), half});
  Expr half_h = ctx.op("multiply", {coordinate(ctx, boxes, 3), half});
  std::vector<Expr> corners = {ctx.op("subtract", {y, half_h}), ctx.op("subtract", {x, half_w}),
                               ctx.op("add", {y, half_h}), ctx.op("add", {x, half_w})};
  return ctx.op("concatenate", {ctx.typed(TupleNode::make(std::move(corners)))},
                {{"axis", int64_t(2)}});
}

std::vector<Expr> convert_non_max_suppression(ConvertContext& ctx) {
  for (size_t i : {size_t(0), size_t(1)}) {
    if (ctx.input_tensor(i).dtype != DataType::float32())
      ctx.fail("input ", i, " (", i == 0 ? "boxes" : "scores", ") must be float32, got ",
               type_to_string(ctx.input_type(i)));
  }
  Expr boxes = ctx.input(0);
  int64_t center_point_box = ctx.attr_int("center_point_box", 0);
  if (center_point_box != 0 && center_point_box != 1)
    ctx.fail("attribute 'center_point_box' = ", center_point_box, " must be 0 or 1");
  if (center_point_box == 1) boxes = center_to_corners(ctx, boxes);
  Expr max_boxes = ctx.has_input(2) ? ctx.input(2) : scalar_constant(ctx, 0, DataType::int64());
  Expr iou = ctx.has_input(3) ? ctx.input(3) : scalar_constant(ctx, 0, DataType::float32());
  Expr score = ctx.has_input(4) ? ctx.input(4)
                                : scalar_constant(ctx, -std::numeric_limits<double>::infinity(),
                                                  DataType::float32());
  return {ctx.op("vision.non_max_suppression", {boxes, ctx.input(1), max_boxes, iou, score})};
}

// RoiAlign: vision.roi_align, a runtime function of the VM; its attributes travel as a constant
// float64 vector. Opset 10 has no coordinate_transformation_mode: its boxes are
// output_half_pixel; from 16 the default is half_pixel.
ConverterFn convert_roi_align(bool transformation_attr) {
  return [transformation_attr](ConvertContext& ctx) -> std::vector<Expr> {
    std::string mode = ctx.attr_string("mode", "avg");
    if (mode != "avg" && mode != "max")
      ctx.fail("attribute 'mode' = '", mode, "' must be avg or max");
    std::string transform = transformation_attr
                                ? ctx.attr_string("coordinate_transformation_mode", "half_pixel")
                                : "output_half_pixel";
    if (transform != "half_pixel" && transform != "output_half_pixel")
      ctx.fail("attribute 'coordinate_transformation_mode' = '", transform,
               "' must be half_pixel or output_half_pixel");
    int64_t height = ctx.attr_int("output_height", 1), width = ctx.attr_int("output_width", 1);
    int64_t sampling_ratio = ctx.attr_int("sampling_ratio", 0);
    if (height <= 0 || width <= 0)
      ctx.fail("attributes output_height and output_width must be positive, got ", height, " and ",
               width);
    if (sampling_ratio < 0)
      ctx.fail("attribute 'sampling_ratio' must be >= 0, got ", sampling_ratio);
    Tensor params = Tensor::empty({6}, DataType::float64());
    double* p = params.data_as<double>();
    p[0] = double(height);
    p[1] = double(width);
    p[2] = double(sampling_ratio);
    p[3] = ctx.attr_float("spatial_scale", 1.0);
    p[4] = mode == "max" ? 1 : 0;
    p[5] = transform == "half_pixel" ? 1 : 0;
    return {ctx.op("vision.roi_align",
                   {ctx.input(0), ctx.input(1), ctx.input(2), ctx.constant(params)})};
  };
}

// AffineGrid: vision.affine_grid, a runtime function of the VM (the grid's size is an input's
// value); align_corners travels as a constant.
std::vector<Expr> convert_affine_grid(ConvertContext& ctx) {
  int64_t align_corners = ctx.attr_int("align_corners", 0);
  return {ctx.op("vision.affine_grid",
                 {ctx.input(0), ctx.input(1), tensor::int64_scalar(ctx, align_corners != 0)})};
}

}  // namespace

void register_vision_converters(ConverterTable& table) {
  table.add("AffineGrid", 20, convert_affine_grid);
  table.add("NonMaxSuppression", 10, convert_non_max_suppression);
  table.add("RoiAlign", 10, convert_roi_align(false));
  table.add("RoiAlign", 16, convert_roi_align(true));
}

}  // namespace anvil::frontend::onnx_import
