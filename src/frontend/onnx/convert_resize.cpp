// Resize (opsets 10, 11, 13, 18, 19) and the deprecated Upsample. A resize of
// the spatial axes of an (N, C, spatial...) tensor by constant scales or sizes
// becomes image.resize1d/2d/3d (ir::static_resize, which DynamicToStatic shares,
// decides), keep_aspect_ratio_policy included; everything else (run-time scales
// or sizes, other axes, antialias, half_pixel_symmetric) becomes
// dyn.image.resize, which implements ONNX Resize in full. Also GridSample, the
// other sampling op.
#include "anvil/ir/static_resize.h"
#include "frontend/onnx/convert_nn.h"

namespace anvil::frontend::onnx_import {

using namespace ir;

namespace {

// What a Resize node asks for, in ONNX's terms.
struct ResizeCall {
  Expr target;                // scales (floats) or sizes (integers)
  bool sizes = false;         // target holds sizes
  Expr roi;                   // null unless tf_crop_and_resize
  std::vector<int64_t> axes;  // the axes target and roi refer to; empty: all
  std::string policy = "stretch";
  std::string method, mode, rounding;
  double cubic_alpha = -0.75;
  bool exclude_outside = false;
  double extrapolation_value = 0;
  bool antialias = false;
};

std::string ir_method(const ConvertContext& ctx, const std::string& mode) {
  if (mode == "nearest") return "nearest_neighbor";
  if (mode == "linear" || mode == "bilinear" || mode == "trilinear") return "linear";
  if (mode == "cubic" || mode == "bicubic") return "cubic";
  ctx.fail("attribute 'mode' = \"", mode, "\" is not one of nearest, linear, cubic");
}

// The values of a constant expression, or nullopt when it is computed at run time.
std::optional<std::vector<double>> constant_doubles(const Expr& e) {
  const auto* c = as<ConstantNode>(e);
  if (!c) return std::nullopt;
  std::vector<double> values;
  for (int64_t i = 0; i < c->data.numel(); ++i) values.push_back(c->data.get_as_double(i));
  return values;
}

// The spatial-axes form, or nullopt when the request needs dyn.image.resize.
std::optional<StaticResize> as_static(const ConvertContext& ctx, const ResizeCall& r) {
  if (r.antialias || r.mode == "half_pixel_symmetric") return std::nullopt;
  std::optional<std::vector<double>> target = constant_doubles(r.target);
  if (!target) return std::nullopt;
  std::optional<std::vector<double>> roi;
  if (r.roi) {
    roi = constant_doubles(r.roi);
    if (!roi) return std::nullopt;
  }
  std::vector<std::optional<int64_t>> dims;
  for (const Dim& d : *ctx.input_tensor(0).shape) dims.push_back(d.as_int());
  return static_resize({.dims = std::move(dims),
                        .target = std::move(*target),
                        .sizes = r.sizes,
                        .axes = r.axes,
                        .roi = roi.value_or(std::vector<double>{}),
                        .keep_aspect_ratio_policy = r.policy});
}

Expr emit_resize(ConvertContext& ctx, const ResizeCall& r) {
  std::string rounding = r.method == "nearest_neighbor" ? r.rounding : "";
  if (std::optional<StaticResize> s = as_static(ctx, r)) {
    size_t n = ctx.input_tensor(0).shape->size() - 2;
    std::vector<std::pair<std::string, AttrValue>> attrs = {
        {"method", r.method},
        {"coordinate_transformation_mode", r.mode},
        {"rounding_method", rounding},
        {"cubic_alpha", r.cubic_alpha},
        {"cubic_exclude", int64_t(r.exclude_outside)},
        {"extrapolation_value", r.extrapolation_value}};
    if (r.sizes) {
      attrs.emplace_back("size", s->size);
    } else {
      attrs.emplace_back("scales", s->scales);
    }
    if (!s->coordinate_scales.empty())
      attrs.emplace_back("coordinate_scales", s->coordinate_scales);
    if (!s->roi.empty()) attrs.emplace_back("roi", s->roi);
    return ctx.op("image.resize" + std::to_string(n) + "d", {ctx.input(0)}, attrs);
  }
  Expr roi = r.roi ? r.roi : ctx.constant(Tensor::empty({0}, DataType::float32()));
  return ctx.op("dyn.image.resize", {ctx.input(0), roi, r.target},
                {{"target", std::string(r.sizes ? "sizes" : "scales")},
                 {"axes", r.axes},
                 {"keep_aspect_ratio_policy", r.policy},
                 {"method", r.method},
                 {"coordinate_transformation_mode", r.mode},
                 {"rounding_method", rounding},
                 {"cubic_alpha", r.cubic_alpha},
                 {"cubic_exclude", int64_t(r.exclude_outside)},
                 {"extrapolation_value", r.extrapolation_value},
                 {"antialias", r.antialias}});
}

// Resize-10 and Upsample: one scale per axis, asymmetric coordinates, and
// nearest rounding down (which repeats elements for whole scales).
Expr legacy_resize(ConvertContext& ctx, Expr scales) {
  ResizeCall r;
  r.target = std::move(scales);
  r.method = ir_method(ctx, ctx.attr_string("mode", "nearest"));
  r.mode = "asymmetric";
  r.rounding = "floor";
  return emit_resize(ctx, r);
}

std::vector<Expr> convert_resize_10(ConvertContext& ctx) {
  return {legacy_resize(ctx, ctx.input(1))};
}

// An input that ONNX leaves optional by an empty name or an empty tensor.
bool present(const ConvertContext& ctx, size_t i) {
  if (!ctx.has_input(i)) return false;
  const TensorTypeNode& t = ctx.input_tensor(i);
  return !(t.shape->size() == 1 && (*t.shape)[0] == Dim(0));
}

std::vector<Expr> convert_resize(ConvertContext& ctx) {
  ResizeCall r;
  if (present(ctx, 2)) {
    r.target = ctx.input(2);
  } else if (present(ctx, 3)) {
    r.target = ctx.input(3);
    r.sizes = true;
  } else {
    ctx.fail("needs scales (input 2) or sizes (input 3)");
  }
  r.method = ir_method(ctx, ctx.attr_string("mode", "nearest"));
  r.mode = ctx.attr_string("coordinate_transformation_mode", "half_pixel");
  r.rounding = ctx.attr_string("nearest_mode", "round_prefer_floor");
  r.cubic_alpha = ctx.attr_float("cubic_coeff_a", -0.75);
  r.exclude_outside = ctx.attr_int("exclude_outside", 0) != 0;
  r.extrapolation_value = ctx.attr_float("extrapolation_value", 0.0);
  r.antialias = ctx.attr_int("antialias", 0) != 0;
  r.axes = ctx.attr_ints("axes");
  r.policy = ctx.attr_string("keep_aspect_ratio_policy", "stretch");
  if (r.mode == "tf_crop_and_resize") {
    if (!present(ctx, 1)) ctx.fail("coordinate_transformation_mode tf_crop_and_resize needs roi");
    r.roi = ctx.input(1);
  }
  return {emit_resize(ctx, r)};
}

std::vector<Expr> convert_upsample_7(ConvertContext& ctx) {
  std::vector<double> scales = ctx.attr_floats("scales");
  Tensor t = Tensor::empty({int64_t(scales.size())}, DataType::float32());
  for (size_t i = 0; i < scales.size(); ++i) t.set_from_double(int64_t(i), scales[i]);
  return {legacy_resize(ctx, ctx.constant(t))};
}

std::vector<Expr> convert_upsample_9(ConvertContext& ctx) {
  return {legacy_resize(ctx, ctx.input(1))};
}

// GridSample: image.grid_sample reads the grid as TVM does, (N, axes, out...),
// so ONNX's (N, out..., axes) is transposed first.
std::vector<Expr> convert_grid_sample(ConvertContext& ctx) {
  size_t n = spatial_rank(ctx, 0);
  if (n == 1) ctx.fail("GridSample needs 2 or 3 spatial axes, got 1");
  std::string mode = ctx.attr_string("mode", ctx.opset() < 20 ? "bilinear" : "linear");
  std::string method = mode == "nearest"                        ? "nearest"
                       : mode == "linear" || mode == "bilinear" ? "bilinear"
                       : mode == "cubic" || mode == "bicubic"   ? "bicubic"
                                                                : "";
  if (method.empty()) ctx.fail("attribute 'mode' = \"", mode, "\" is not supported");
  std::vector<int64_t> axes = {0, int64_t(n) + 1};
  for (size_t k = 1; k <= n; ++k) axes.push_back(int64_t(k));
  Expr grid = ctx.op("transpose", {ctx.input(1)}, {{"axes", axes}});
  return {ctx.op("image.grid_sample", {ctx.input(0), grid},
                 {{"method", method},
                  {"layout", std::string(n == 2 ? "NCHW" : "NCDHW")},
                  {"padding_mode", ctx.attr_string("padding_mode", "zeros")},
                  {"align_corners", ctx.attr_int("align_corners", 0) != 0}})};
}

}  // namespace

void register_resize_converters(ConverterTable& table) {
  table.add("Resize", 10, convert_resize_10);
  table.add("Resize", 11, convert_resize);
  table.add("Upsample", 7, convert_upsample_7);
  table.add("Upsample", 9, convert_upsample_9);
  table.add("GridSample", 16, convert_grid_sample);
}

}  // namespace anvil::frontend::onnx_import
