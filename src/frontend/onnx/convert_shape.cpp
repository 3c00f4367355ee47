// Converters about shapes and new tensors: Shape, Size, ConstantOfShape,
// Range, EyeLike and CenterCropPad. Shape and Size fold to constants whenever
// the dims they read are static, which lets Shape -> Gather -> Reshape
// chains become static reshapes.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "frontend/onnx/convert_nn.h"
#include "frontend/onnx/convert_tensor.h"

namespace anvil::frontend::onnx_import::tensor {

using namespace ir;

namespace {

// Shape-15's start and end: clamped into [0, rank], negative ones counting from the end.
int64_t clamp_shape_bound(int64_t bound, int64_t rank) {
  if (bound < 0) bound += rank;
  return std::clamp(bound, int64_t(0), rank);
}

std::vector<Expr> convert_shape(ConvertContext& ctx) {
  Type type = ctx.input_type(0);
  const auto* t = as<TensorTypeNode>(type);
  if (!t) ctx.fail("input 0 must be a tensor, got ", type_to_string(type));
  bool sliced = ctx.has_attr("start") || ctx.has_attr("end");
  if (!t->shape) {
    Expr shape = ctx.op("shape_of", {ctx.input(0)});
    if (!sliced) return {shape};
    // With the rank unknown, strided_slice's own clamping applies the bounds at run time.
    int64_t end = ctx.attr_int("end", std::numeric_limits<int64_t>::max());
    return {ctx.op("strided_slice", {shape},
                   {{"begin", std::vector<int64_t>{ctx.attr_int("start", 0)}},
                    {"end", std::vector<int64_t>{end}}})};
  }
  int64_t rank = int64_t(t->shape->size());
  int64_t start = clamp_shape_bound(ctx.attr_int("start", 0), rank);
  int64_t end = std::max(start, clamp_shape_bound(ctx.attr_int("end", rank), rank));
  std::vector<int64_t> dims;
  for (int64_t i = start; i < end; ++i) {
    std::optional<int64_t> d = (*t->shape)[size_t(i)].as_int();
    if (!d) break;
    dims.push_back(*d);
  }
  if (int64_t(dims.size()) == end - start) return {int64_vector(ctx, dims)};
  Expr shape = ctx.op("shape_of", {ctx.input(0)});
  if (start == 0 && end == rank) return {shape};
  return {ctx.op("strided_slice", {shape},
                 {{"begin", std::vector<int64_t>{start}}, {"end", std::vector<int64_t>{end}}})};
}

std::vector<Expr> convert_size(ConvertContext& ctx) {
  Type type = ctx.input_type(0);
  const auto* t = as<TensorTypeNode>(type);
  if (t && t->shape)
    if (std::optional<int64_t> n = dims_product(*t->shape).as_int()) return {int64_scalar(ctx, *n)};
  return {ctx.op("ndarray_size", {ctx.input(0)})};
}

// The fill value: attribute 'value' (a one-element tensor), 0.0f by default.
Expr fill_value(ConvertContext& ctx) {
  if (!ctx.has_attr("value")) {
    Tensor zero = Tensor::zeros({}, DataType::float32());
    return ctx.constant(zero);
  }
  Tensor value = ctx.attr_tensor("value");
  if (value.numel() != 1)
    ctx.fail("attribute 'value' must hold one element, got shape ", shape_to_string(value.shape()));
  return ctx.constant(value.copy().view({}));
}

std::vector<Expr> convert_constant_of_shape(ConvertContext& ctx) {
  Expr value = fill_value(ctx);
  if (ctx.input_constant(0)) {
    std::vector<int64_t> shape = ctx.constant_ints(0, "shape");
    for (int64_t d : shape)
      if (d < 0) ctx.fail("shape ", shape_to_string(shape), " has a negative dim");
    return {ctx.op("full", {value}, {{"shape", shape}})};
  }
  return {ctx.op("dyn.full", {value, as_int64(ctx, ctx.input(0))})};
}

// Range takes scalars; one-element 1-D tensors (which ONNX's own reference
// accepts, and expanded functions produce) are reshaped to scalars.
std::vector<Expr> convert_range(ConvertContext& ctx) {
  std::vector<Expr> bounds;
  for (size_t i = 0; i < 3; ++i) {
    const TensorTypeNode& t = ctx.input_tensor(i);
    bool one_element = t.shape->size() == 1 && (*t.shape)[0].as_int() == 1;
    bounds.push_back(one_element
                         ? ctx.op("reshape", {ctx.input(i)}, {{"newshape", std::vector<int64_t>{}}})
                         : ctx.input(i));
  }
  return {ctx.op("range", bounds)};
}

// ---------------------------------------------------------------- window functions

// HannWindow, HammingWindow, BlackmanWindow: w[n] = a0 - a1 cos(2 pi n / N) + a2 cos(4 pi n / N)
// for n in [0, size), N = size (periodic, the default) or size - 1 (symmetric), computed in
// float32 and cast to output_datatype.
ConverterFn window(double a0, double a1, double a2) {
  return [a0, a1, a2](ConvertContext& ctx) -> std::vector<Expr> {
    DataType out =
        onnx_dtype(int32_t(ctx.attr_int("output_datatype", 1)), "attribute 'output_datatype'");
    const DataType f = DataType::float32();
    Expr size =
        ctx.op("cast", {ctx.op("reshape", {ctx.input(0)}, {{"newshape", std::vector<int64_t>{}}})},
               {{"dtype", DataType::int64()}});
    Expr n = ctx.op("cast",
                    {ctx.op("range", {scalar_constant(ctx, 0, DataType::int64()), size,
                                      scalar_constant(ctx, 1, DataType::int64())})},
                    {{"dtype", f}});
    Expr period = ctx.op("cast", {size}, {{"dtype", f}});
    if (ctx.attr_int("periodic", 1) == 0)
      period = ctx.op("subtract", {period, scalar_constant(ctx, 1, f)});
    Expr angle =
        ctx.op("divide", {ctx.op("multiply", {n, scalar_constant(ctx, 2 * M_PI, f)}), period});
    Expr w = ctx.op("subtract",
                    {scalar_constant(ctx, a0, f),
                     ctx.op("multiply", {scalar_constant(ctx, a1, f), ctx.op("cos", {angle})})});
    if (a2 != 0)
      w = ctx.op(
          "add",
          {w, ctx.op("multiply",
                     {scalar_constant(ctx, a2, f),
                      ctx.op("cos", {ctx.op("multiply", {angle, scalar_constant(ctx, 2, f)})})})});
    return {ctx.op("cast", {w}, {{"dtype", out}})};
  };
}

// ---------------------------------------------------------------- EyeLike

// Ones where column - row == k, zeros elsewhere: a constant when the shape is
// static, else the band between two triangles of ones_like.
std::vector<Expr> convert_eye_like(ConvertContext& ctx) {
  const TensorTypeNode& in = ctx.input_tensor(0);
  if (in.shape->size() != 2)
    ctx.fail("input 0 must be 2-D, got ", type_to_string(ctx.input_type(0)));
  DataType dtype = ctx.has_attr("dtype")
                       ? onnx_dtype(int32_t(ctx.attr_int("dtype", 0)), "attribute 'dtype'")
                       : in.dtype;
  int64_t k = ctx.attr_int("k", 0);
  if (std::optional<std::vector<int64_t>> shape = static_dims(ctx, 0)) {
    Tensor eye = Tensor::zeros(*shape, dtype);
    int64_t rows = (*shape)[0], cols = (*shape)[1];
    for (int64_t r = 0; r < rows; ++r)
      if (r + k >= 0 && r + k < cols) eye.set_from_double(r * cols + r + k, 1.0);
    return {ctx.constant(eye)};
  }
  Expr ones = ctx.op("ones_like", {ctx.input(0)});
  Expr k_value = int64_scalar(ctx, k);
  Expr band = ctx.op("trilu", {ctx.op("trilu", {ones, k_value}, {{"upper", true}}), k_value},
                     {{"upper", false}});
  if (dtype == in.dtype) return {band};
  return {ctx.op("cast", {band}, {{"dtype", dtype}})};
}

// ---------------------------------------------------------------- CenterCropPad

// A tuple of tensors joined along axis.
Expr join(ConvertContext& ctx, std::vector<Expr> parts, int64_t axis) {
  return ctx.op("concatenate", {ctx.typed(TupleNode::make(std::move(parts)))}, {{"axis", axis}});
}

// Crops (centred, the extra element at the end) or zero-pads (centred, the
// extra element at the end) each listed axis to its target size.
Expr center_crop_pad_static(ConvertContext& ctx, const std::vector<int64_t>& axes,
                            const std::vector<int64_t>& targets) {
  const TensorTypeNode& in = ctx.input_tensor(0);
  std::vector<int64_t> begin, end, slice_axes;
  for (size_t i = 0; i < axes.size(); ++i) {
    std::optional<int64_t> dim = (*in.shape)[size_t(axes[i])].as_int();
    if (!dim) ctx.fail("axis ", axes[i], " has a symbolic size");
    if (targets[i] < *dim) {
      slice_axes.push_back(axes[i]);
      begin.push_back((*dim - targets[i]) / 2);
      end.push_back(begin.back() + targets[i]);
    }
  }
  Expr x = ctx.input(0);
  if (!slice_axes.empty())
    x = ctx.op("strided_slice", {x}, {{"begin", begin}, {"end", end}, {"axes", slice_axes}});
  for (size_t i = 0; i < axes.size(); ++i) {
    const auto* current = as<TensorTypeNode>(x->checked_type);
    std::vector<int64_t> shape = *current->static_shape();
    int64_t missing = targets[i] - shape[size_t(axes[i])];
    if (missing <= 0) continue;
    std::vector<int64_t> before = shape, after = shape;
    before[size_t(axes[i])] = missing / 2;
    after[size_t(axes[i])] = missing - missing / 2;
    Expr zeros_before = ctx.constant(Tensor::zeros(before, in.dtype));
    Expr zeros_after = ctx.constant(Tensor::zeros(after, in.dtype));
    x = join(ctx, {zeros_before, x, zeros_after}, axes[i]);
  }
  return x;
}

// The same with targets known only at run time: the amounts are computed
// from the shapes, the crop is a dyn.strided_slice and the padding joins
// blocks of zeros made by dyn.full.
Expr center_crop_pad_runtime(ConvertContext& ctx, const std::vector<int64_t>& axes) {
  DataType dtype = ctx.input_tensor(0).dtype;
  Expr targets = as_int64(ctx, ctx.input(1));
  Expr axes_value = int64_vector(ctx, axes);
  Expr dims = ctx.op("take", {ctx.op("shape_of", {ctx.input(0)}), axes_value},
                     {{"axis", int64_t(0)}, {"mode", std::string("fast")}});
  Expr zero = int64_scalar(ctx, 0), two = int64_scalar(ctx, 2);
  Expr excess = ctx.op("maximum", {ctx.op("subtract", {dims, targets}), zero});
  Expr crop_begin = ctx.op("floor_divide", {excess, two});
  Expr crop_end = ctx.op("add", {crop_begin, ctx.op("minimum", {dims, targets})});
  Expr ones = int64_vector(ctx, std::vector<int64_t>(axes.size(), 1));
  Expr x = ctx.op("dyn.strided_slice", {ctx.input(0), crop_begin, crop_end, ones, axes_value});
  Expr missing = ctx.op("maximum", {ctx.op("subtract", {targets, dims}), zero});
  Expr pad_before = ctx.op("floor_divide", {missing, two});
  Expr pad_after = ctx.op("subtract", {missing, pad_before});
  Expr fill = ctx.constant(Tensor::zeros({}, dtype));
  for (size_t i = 0; i < axes.size(); ++i) {
    auto block = [&](const Expr& amounts) {
      Expr amount = ctx.op("strided_slice", {amounts},
                           {{"begin", std::vector<int64_t>{int64_t(i)}},
                            {"end", std::vector<int64_t>{int64_t(i) + 1}}});
      Expr shape = ctx.op("scatter_elements",
                          {ctx.op("shape_of", {x}), int64_vector(ctx, {axes[i]}), amount});
      return ctx.op("dyn.full", {fill, shape});
    };
    x = join(ctx, {block(pad_before), x, block(pad_after)}, axes[i]);
  }
  return x;
}

std::vector<Expr> convert_center_crop_pad(ConvertContext& ctx) {
  int64_t rank = int64_t(ctx.input_tensor(0).shape->size());
  std::vector<int64_t> axes = ctx.attr_ints("axes");
  if (axes.empty()) {
    axes.resize(size_t(rank));
    std::iota(axes.begin(), axes.end(), int64_t(0));
  }
  for (int64_t& a : axes) {
    if (a < -rank || a >= rank) ctx.fail("axis ", a, " is out of range for rank ", rank);
    if (a < 0) a += rank;
  }
  int64_t count = static_length(ctx, 1, "shape");
  if (count != int64_t(axes.size()))
    ctx.fail("shape has ", count, " entries for ", axes.size(), " axes");
  if (ctx.input_constant(1) && static_dims(ctx, 0))
    return {center_crop_pad_static(ctx, axes, ctx.constant_ints(1, "shape"))};
  return {center_crop_pad_runtime(ctx, axes)};
}

}  // namespace

void register_shape_converters(ConverterTable& table) {
  table.add("Shape", 1, convert_shape);
  table.add("Size", 1, convert_size);
  table.add("ConstantOfShape", 9, convert_constant_of_shape);
  table.add("Range", 11, convert_range);
  table.add("EyeLike", 9, convert_eye_like);
  table.add("HannWindow", 17, window(0.5, 0.5, 0));
  table.add("HammingWindow", 17, window(25.0 / 46.0, 21.0 / 46.0, 0));
  table.add("BlackmanWindow", 17, window(0.42, 0.5, 0.08));
  table.add("CenterCropPad", 18, convert_center_crop_pad);
}

}  // namespace anvil::frontend::onnx_import::tensor
