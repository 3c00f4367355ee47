// Data movement on images: nn.pad, image.resize1d/2d/3d, the sub-pixel
// rearrangements nn.depth_to_space and nn.space_to_depth, and nn.batch_flatten;
// also dyn.nn.pad and dyn.image.resize, whose amounts arrive at run time, and
// image.grid_sample.
#include <cmath>
#include <optional>
#include <string_view>

#include "anvil/ir/attrs/nn.h"
#include "ir/op/families.h"
#include "ir/op/nn_util.h"

namespace anvil::ir {
namespace {

// The spatial axes of an op over n of them.
constexpr const char* spatial_axes(int n) { return n == 1 ? "W" : n == 2 ? "HW" : "DHW"; }

// Throws Error unless value is one of the choices.
void expect_choice(const std::string& value, const char* attr,
                   std::initializer_list<std::string_view> choices) {
  std::string listed;
  for (std::string_view choice : choices) {
    if (value == choice) return;
    listed += (listed.empty() ? "" : ", ") + std::string(choice);
  }
  throw_error("attribute '", attr, "' = \"", value, "\" must be one of ", listed);
}

Type pad_relation(const RelationArgs& args) {
  const auto& a = args.attrs_as<PadAttrs>();
  expect_choice(a.pad_mode, "pad_mode", {"constant", "reflect", "edge", "wrap"});
  if (a.pad_width.size() % 2 != 0)
    throw_error("attribute 'pad_width' must hold a (before, after) pair per axis, got ",
                nn::ints_text(a.pad_width));
  for (int64_t pad : a.pad_width)
    if (pad < 0)
      throw_error("attribute 'pad_width' must be non-negative, got ", nn::ints_text(a.pad_width));
  size_t rank = a.pad_width.size() / 2;
  std::vector<Dim> shape = nn::shape_or_any(args, 0, rank);
  if (shape.size() != rank)
    throw_error("attribute 'pad_width' has ", rank, " (before, after) pairs but ", args.arg_name(0),
                " has rank ", shape.size(), ": ", nn::inputs_text(args));
  relation::expect_same_dtype(args);
  const auto* value = as<TensorTypeNode>(args.inputs[1]);
  if (value->shape && !value->shape->empty())
    throw_error(args.arg_name(1), " must be a scalar, got ", relation::describe(*value));
  for (size_t i = 0; i < rank; ++i) {
    int64_t before = a.pad_width[2 * i], after = a.pad_width[2 * i + 1];
    // Reflection mirrors the axis without its edge element, so it needs that many.
    if (a.pad_mode == "reflect" && shape[i].is_int() &&
        std::max(before, after) >= shape[i].int_value())
      throw_error("attribute 'pad_width' = ", nn::ints_text(a.pad_width), " pads axis ", i, " by ",
                  std::max(before, after), " but reflect mode needs less than its size ",
                  shape[i].int_value(), ": ", nn::inputs_text(args));
    if ((a.pad_mode == "edge" || a.pad_mode == "wrap") && shape[i].is_int() &&
        shape[i].int_value() == 0 && before + after > 0)
      throw_error("attribute 'pad_width' pads axis ", i, " in ", a.pad_mode,
                  " mode, but the axis is empty: ", nn::inputs_text(args));
    shape[i] = shape[i] + (before + after);
  }
  return TensorTypeNode::make(std::move(shape), nn::input_dtype(args, 0));
}

// floor(in * scale), as ONNX Resize sizes its output. Symbolic sizes stay
// exact for integer scales and their reciprocals, and are unknown otherwise.
Dim scaled_size(const Dim& in, double scale, const std::vector<double>& scales, char axis) {
  if (in.is_int()) {
    auto size = int64_t(std::floor(double(in.int_value()) * scale));
    if (size < 1)
      throw_error("attribute 'scales' shrinks axis ", axis, " of size ", in.int_value(), " to ",
                  size, " (scales ", scales, ")");
    return size;
  }
  if (in.is_any()) return in;
  double whole = std::round(scale);
  if (whole == scale) return in * int64_t(whole);
  double divisor = std::round(1.0 / scale);
  if (divisor >= 1 && divisor * scale == 1.0) return floordiv(in, int64_t(divisor));
  return Dim::any();
}

template <int N>
Type resize_relation(const RelationArgs& args) {
  const auto& a = args.attrs_as<ResizeAttrs<N>>();
  const std::string order = std::string("NC") + spatial_axes(N);
  nn::Layout layout = nn::Layout::parse(a.layout, "layout", order);
  expect_choice(a.method, "method", {"nearest_neighbor", "linear", "cubic"});
  expect_choice(a.coordinate_transformation_mode, "coordinate_transformation_mode",
                {"half_pixel", "half_pixel_symmetric", "align_corners", "asymmetric",
                 "pytorch_half_pixel", "tf_half_pixel_for_nn", "tf_crop_and_resize"});
  if (!a.rounding_method.empty())
    expect_choice(a.rounding_method, "rounding_method",
                  {"round", "floor", "ceil", "round_prefer_floor", "round_prefer_ceil"});
  if (a.cubic_exclude != 0 && a.cubic_exclude != 1)
    throw_error("attribute 'cubic_exclude' must be 0 or 1, got ", a.cubic_exclude);
  if (!a.roi.empty() && a.roi.size() != 2 * N)
    throw_error("attribute 'roi' must have ", 2 * N, " values (starts then ends), got ",
                a.roi.size());
  if (a.coordinate_transformation_mode == "tf_crop_and_resize" && a.roi.empty())
    throw_error(
        "attribute 'roi' must be set when coordinate_transformation_mode is "
        "tf_crop_and_resize");
  if (a.size.empty() == a.scales.empty())
    throw_error("exactly one of the attributes 'size' and 'scales' must be set, got ",
                a.size.empty() ? "neither" : "both");
  std::vector<Dim> shape =
      layout.to_primal(nn::shape_or_any(args, 0, layout.rank()), order, args.arg_name(0), "layout");
  const char* axes = spatial_axes(N);
  if (!a.size.empty()) {
    std::vector<int64_t> size = nn::spatial_attr(a.size, N, "size", 1);
    for (int i = 0; i < N; ++i) shape[2 + i] = size[i];
  } else {
    if (a.scales.size() != N && a.scales.size() != 1)
      throw_error("attribute 'scales' must have ", N, " values (one per spatial axis), got ",
                  a.scales.size());
    for (int i = 0; i < N; ++i) {
      double scale = a.scales.size() == 1 ? a.scales[0] : a.scales[i];
      if (!(scale > 0) || !std::isfinite(scale))
        throw_error("attribute 'scales' must be positive and finite, got ", scale);
      shape[2 + i] = scaled_size(shape[2 + i], scale, a.scales, axes[i]);
    }
  }
  if (!a.coordinate_scales.empty()) {
    if (a.size.empty())
      throw_error("attribute 'coordinate_scales' needs 'size' (the output it rounds to)");
    if (a.coordinate_scales.size() != N)
      throw_error("attribute 'coordinate_scales' must have ", N,
                  " values (one per spatial axis), got ", a.coordinate_scales.size());
    for (double scale : a.coordinate_scales)
      if (!(scale > 0) || !std::isfinite(scale))
        throw_error("attribute 'coordinate_scales' must be positive and finite, got ", scale);
  }
  return TensorTypeNode::make(layout.from_primal(shape, order, "layout"),
                              a.out_dtype.value_or(nn::input_dtype(args, 0)));
}

// The input of a sub-pixel op in (N, C, H, W) order, with its layout.
struct SubPixelInput {
  nn::Layout layout;
  std::vector<Dim> dims;
};

SubPixelInput read_sub_pixel(const RelationArgs& args, const SubPixelAttrs& a) {
  if (a.block_size < 1) throw_error("attribute 'block_size' must be positive, got ", a.block_size);
  expect_choice(a.mode, "mode", {"DCR", "CRD"});
  nn::Layout layout = nn::Layout::parse(a.layout, "layout", "NCHW");
  std::vector<Dim> dims = layout.to_primal(nn::shape_or_any(args, 0, layout.rank()), "NCHW",
                                           args.arg_name(0), "layout");
  return {std::move(layout), std::move(dims)};
}

void expect_multiple(const RelationArgs& args, const Dim& size, int64_t factor, const char* what,
                     const char* factor_text) {
  if (size.is_int() && size.int_value() % factor != 0)
    throw_error(args.arg_name(0), " has ", what, " ", size.int_value(), ", not a multiple of ",
                factor_text, " = ", factor, ": ", nn::inputs_text(args));
}

Type depth_to_space_relation(const RelationArgs& args) {
  const auto& a = args.attrs_as<SubPixelAttrs>();
  auto [layout, d] = read_sub_pixel(args, a);
  int64_t b = a.block_size;
  expect_multiple(args, d[1], b * b, "channels", "block_size^2");
  std::vector<Dim> out = {d[0], floordiv(d[1], b * b), d[2] * b, d[3] * b};
  return TensorTypeNode::make(layout.from_primal(out, "NCHW", "layout"), nn::input_dtype(args, 0));
}

Type space_to_depth_relation(const RelationArgs& args) {
  const auto& a = args.attrs_as<SubPixelAttrs>();
  auto [layout, d] = read_sub_pixel(args, a);
  int64_t b = a.block_size;
  expect_multiple(args, d[2], b, "height", "block_size");
  expect_multiple(args, d[3], b, "width", "block_size");
  std::vector<Dim> out = {d[0], d[1] * (b * b), floordiv(d[2], b), floordiv(d[3], b)};
  return TensorTypeNode::make(layout.from_primal(out, "NCHW", "layout"), nn::input_dtype(args, 0));
}

Type batch_flatten_relation(const RelationArgs& args) {
  DataType dtype = nn::input_dtype(args, 0);
  const auto* data = as<TensorTypeNode>(args.inputs[0]);
  if (!data->shape) return TensorTypeNode::make({Dim::any(), Dim::any()}, dtype);
  if (data->shape->empty())
    throw_error(args.arg_name(0), " must have rank at least 1 (a batch axis), got ",
                relation::describe(*data));
  std::vector<Dim> rest(data->shape->begin() + 1, data->shape->end());
  return TensorTypeNode::make({data->shape->front(), dims_product(rest)}, dtype);
}

// Argument i, which must be a 1-D tensor of integers (or of floats when !integer).
const TensorTypeNode* vector_arg(const RelationArgs& args, size_t i, bool integer) {
  const auto* t = as<TensorTypeNode>(args.inputs[i]);
  if (!t) throw_error(args.arg_name(i), " must be a tensor, got ", type_to_string(args.inputs[i]));
  bool is_integer = t->dtype.is_int() || t->dtype.is_uint();
  bool is_float = t->dtype.is_float() || t->dtype.is_bfloat();
  if (integer ? !is_integer : !is_float)
    throw_error(args.arg_name(i), " must hold ", integer ? "integers" : "floats", ", got ",
                relation::describe(*t));
  if (t->shape && t->shape->size() != 1)
    throw_error(args.arg_name(i), " must be 1-D, got ", relation::describe(*t));
  return t;
}

// The static length of a 1-D argument, if known.
std::optional<int64_t> vector_length(const TensorTypeNode* t) {
  return t->shape ? (*t->shape)[0].as_int() : std::nullopt;
}

Type dyn_pad_relation(const RelationArgs& args) {
  const auto& a = args.attrs_as<DynPadAttrs>();
  expect_choice(a.pad_mode, "pad_mode", {"constant", "reflect", "edge", "wrap"});
  const auto* data = as<TensorTypeNode>(args.inputs[0]);
  if (!data)
    throw_error(args.arg_name(0), " must be a tensor, got ", type_to_string(args.inputs[0]));
  vector_arg(args, 1, true);
  vector_arg(args, 3, true);
  const auto* value = as<TensorTypeNode>(args.inputs[2]);
  if (!value || value->dtype != data->dtype)
    throw_error(args.arg_name(2), " must be a scalar of the dtype of 'data' (",
                data->dtype.to_string(), "), got ", type_to_string(args.inputs[2]));
  if (value->shape && !value->shape->empty())
    throw_error(args.arg_name(2), " must be a scalar, got ", relation::describe(*value));
  // Which axes grow, and by how much, is only known at run time.
  if (!data->shape) return TensorTypeNode::make_unknown_rank(data->dtype);
  return TensorTypeNode::make(std::vector<Dim>(data->shape->size(), Dim::any()), data->dtype);
}

Type dyn_resize_relation(const RelationArgs& args) {
  const auto& a = args.attrs_as<DynResizeAttrs>();
  expect_choice(a.target, "target", {"scales", "sizes"});
  expect_choice(a.keep_aspect_ratio_policy, "keep_aspect_ratio_policy",
                {"stretch", "not_larger", "not_smaller"});
  expect_choice(a.method, "method", {"nearest_neighbor", "linear", "cubic"});
  expect_choice(a.coordinate_transformation_mode, "coordinate_transformation_mode",
                {"half_pixel", "half_pixel_symmetric", "align_corners", "asymmetric",
                 "pytorch_half_pixel", "tf_half_pixel_for_nn", "tf_crop_and_resize"});
  if (!a.rounding_method.empty())
    expect_choice(a.rounding_method, "rounding_method",
                  {"round", "floor", "ceil", "round_prefer_floor", "round_prefer_ceil"});
  if (a.cubic_exclude != 0 && a.cubic_exclude != 1)
    throw_error("attribute 'cubic_exclude' must be 0 or 1, got ", a.cubic_exclude);
  const auto* data = as<TensorTypeNode>(args.inputs[0]);
  if (!data)
    throw_error(args.arg_name(0), " must be a tensor, got ", type_to_string(args.inputs[0]));
  vector_arg(args, 1, false);
  const TensorTypeNode* target = vector_arg(args, 2, a.target == "sizes");
  if (!data->shape) return TensorTypeNode::make_unknown_rank(data->dtype);
  auto rank = int64_t(data->shape->size());
  std::vector<Dim> out = *data->shape;
  std::vector<bool> resized(size_t(rank), a.axes.empty());
  for (int64_t axis : a.axes) {
    int64_t k = relation::normalize_axis(axis, rank, "axes");
    if (resized[size_t(k)])
      throw_error("attribute 'axes' = ", nn::ints_text(a.axes), " repeats axis ", k);
    resized[size_t(k)] = true;
  }
  int64_t count = a.axes.empty() ? rank : int64_t(a.axes.size());
  std::optional<int64_t> length = vector_length(target);
  if (length && *length != count)
    throw_error(args.arg_name(2), " has ", *length, " ", a.target, " but ", count,
                " axes are resized: ", nn::inputs_text(args));
  for (int64_t k = 0; k < rank; ++k)
    if (resized[size_t(k)]) out[size_t(k)] = Dim::any();
  return TensorTypeNode::make(std::move(out), data->dtype);
}

// The output takes N and C from data and its spatial size from grid.
Type grid_sample_relation(const RelationArgs& args) {
  const auto& a = args.attrs_as<GridSampleAttrs>();
  expect_choice(a.method, "method", {"nearest", "bilinear", "bicubic"});
  expect_choice(a.padding_mode, "padding_mode", {"zeros", "border", "reflection"});
  expect_choice(a.layout, "layout", {"NCHW", "NCDHW"});
  relation::expect_same_dtype(args);
  const size_t rank = a.layout.size();
  std::vector<Dim> data = nn::shape_or_any(args, 0, rank), grid = nn::shape_or_any(args, 1, rank);
  if (data.size() != rank || grid.size() != rank)
    throw_error("data and grid must both have rank ", rank, " for layout ", a.layout, ": ",
                nn::inputs_text(args));
  if (nn::provably_different(grid[1], int64_t(rank - 2)) ||
      nn::provably_different(grid[0], data[0]))
    throw_error(args.arg_name(1), " must be (batch, ", rank - 2,
                ", output spatial dims...) with the batch of 'data': ", nn::inputs_text(args));
  std::vector<Dim> out = {data[0], data[1]};
  out.insert(out.end(), grid.begin() + 2, grid.end());
  return TensorTypeNode::make(std::move(out), nn::input_dtype(args, 0));
}

template <int N>
void register_resize(OpTable& table) {
  table.add("image.resize" + std::to_string(N) + "d")
      .describe(std::string("resizes ") + spatial_axes(N) +
                " to size, or by scales (output = floor(input * scale)), with nearest, linear or "
                "cubic interpolation")
      .inputs({"data"})
      .attrs<ResizeAttrs<N>>()
      .type_relation(resize_relation<N>)
      .fusion_pattern(OpPattern::Injective);
}

}  // namespace

void register_nn_image_ops(OpTable& table) {
  table.add("nn.pad")
      .describe(
          "pads each axis by pad_width; pad_mode constant fills with pad_value (a scalar input, "
          "as in TVM, so it may be computed), reflect mirrors without the edge, edge repeats it")
      .inputs({"data", "pad_value"})
      .attrs<PadAttrs>()
      .type_relation(pad_relation)
      .fusion_pattern(OpPattern::Injective);
  register_resize<1>(table);
  register_resize<2>(table);
  register_resize<3>(table);
  table.add("dyn.nn.pad")
      .describe(
          "pads by amounts known at run time: pads holds every listed axis' before-padding, then "
          "every after-padding (negative values crop); modes constant, reflect, edge, wrap")
      .inputs({"data", "pads", "pad_value", "axes"})
      .attrs<DynPadAttrs>()
      .type_relation(dyn_pad_relation)
      .fusion_pattern(OpPattern::Opaque);
  table.add("dyn.image.resize")
      .describe(
          "ONNX Resize with scales or sizes (the target input) known at run time, over any axes "
          "of any rank; roi holds the starts then the ends of the resized axes")
      .inputs({"data", "roi", "target"})
      .attrs<DynResizeAttrs>()
      .type_relation(dyn_resize_relation)
      .fusion_pattern(OpPattern::Opaque);
  table.add("image.grid_sample")
      .describe(
          "samples data at the normalized points of grid, (N, 2, H, W) holding x then y (or 3-D), "
          "by nearest, bilinear or bicubic interpolation")
      .inputs({"data", "grid"})
      .attrs<GridSampleAttrs>()
      .type_relation(grid_sample_relation)
      .fusion_pattern(OpPattern::Injective);
  table.add("nn.depth_to_space")
      .describe("moves channel blocks into block_size x block_size spatial tiles (DCR or CRD)")
      .inputs({"data"})
      .attrs<SubPixelAttrs>()
      .type_relation(depth_to_space_relation)
      .fusion_pattern(OpPattern::Injective);
  table.add("nn.space_to_depth")
      .describe("moves block_size x block_size spatial tiles into channels")
      .inputs({"data"})
      .attrs<SubPixelAttrs>()
      .type_relation(space_to_depth_relation)
      .fusion_pattern(OpPattern::Injective);
  table.add("nn.batch_flatten")
      .describe("flattens every axis but the first: (N, ...) -> (N, product of the rest)")
      .inputs({"data"})
      .type_relation(batch_flatten_relation)
      .fusion_pattern(OpPattern::Injective);
}

}  // namespace anvil::ir
