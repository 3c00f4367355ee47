// Convolutions and matrix products: Conv, ConvTranspose, ConvInteger,
// DeformConv, Gemm, MatMul, MatMulInteger and Flatten; the entry point of the
// nn converter family, which also registers pooling, padding and resizing.
#include "frontend/onnx/convert_nn.h"

#include "frontend/onnx/convert_quantize.h"
#include "frontend/onnx/converter_families.h"

namespace anvil::frontend::onnx_import {

using namespace ir;

size_t spatial_rank(const ConvertContext& ctx, size_t i) {
  const TensorTypeNode& t = ctx.input_tensor(i);
  size_t rank = t.shape->size();
  if (rank < 3 || rank > 5)
    ctx.fail("input ", i, " must be (N, C, spatial...) with 1 to 3 spatial axes, got ",
             type_to_string(ctx.input_type(i)));
  return rank - 2;
}

std::vector<int64_t> static_spatial_dims(const ConvertContext& ctx, size_t i, const char* what) {
  const TensorTypeNode& t = ctx.input_tensor(i);
  std::vector<int64_t> dims;
  for (size_t k = 2; k < t.shape->size(); ++k) {
    std::optional<int64_t> d = (*t.shape)[k].as_int();
    if (!d)
      ctx.fail(what, " needs the spatial dims of input ", i,
               ", which are not static: ", type_to_string(ctx.input_type(i)));
    dims.push_back(*d);
  }
  return dims;
}

std::vector<int64_t> spatial_ints(const ConvertContext& ctx, const char* name, size_t n,
                                  int64_t fallback) {
  std::vector<int64_t> values = ctx.attr_ints(name, std::vector<int64_t>(n, fallback));
  if (values.size() != n)
    ctx.fail("attribute '", name, "' has ", values.size(), " values for ", n, " spatial axes");
  return values;
}

std::vector<int64_t> window_padding(const ConvertContext& ctx, const std::vector<int64_t>& kernel,
                                    const std::vector<int64_t>& strides,
                                    const std::vector<int64_t>& dilations) {
  size_t n = kernel.size();
  std::string auto_pad = ctx.attr_string("auto_pad", "NOTSET");
  if (auto_pad == "VALID") return std::vector<int64_t>(2 * n, 0);
  if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    std::vector<int64_t> in = static_spatial_dims(ctx, 0, "auto_pad SAME_UPPER or SAME_LOWER");
    std::vector<int64_t> pads(2 * n);
    for (size_t i = 0; i < n; ++i) {
      int64_t out = (in[i] + strides[i] - 1) / strides[i];
      int64_t window = (kernel[i] - 1) * dilations[i] + 1;
      int64_t total = std::max<int64_t>(0, (out - 1) * strides[i] + window - in[i]);
      int64_t smaller = total / 2;
      pads[i] = auto_pad == "SAME_UPPER" ? smaller : total - smaller;
      pads[n + i] = total - pads[i];
    }
    return pads;
  }
  if (auto_pad != "NOTSET") ctx.fail("attribute 'auto_pad' = \"", auto_pad, "\" is not supported");
  std::vector<int64_t> pads = ctx.attr_ints("pads", std::vector<int64_t>(2 * n, 0));
  if (pads.size() != 2 * n)
    ctx.fail("attribute 'pads' has ", pads.size(), " values, expected ", 2 * n,
             " (every begin, then every end)");
  return pads;
}

Expr scalar_constant(ConvertContext& ctx, double value, DataType dtype) {
  Tensor t = Tensor::empty({}, dtype);
  t.set_from_double(0, value);
  return ctx.constant(t);
}

Expr ints_constant(ConvertContext& ctx, const std::vector<int64_t>& values) {
  Tensor t = Tensor::empty({int64_t(values.size())}, DataType::int64());
  std::copy(values.begin(), values.end(), t.data_as<int64_t>());
  return ctx.constant(t);
}

namespace {

// The kernel's spatial size: the kernel_shape attribute, or the weight's static dims.
std::vector<int64_t> kernel_shape(const ConvertContext& ctx, size_t n, size_t weight_index = 1) {
  if (ctx.has_attr("kernel_shape")) return spatial_ints(ctx, "kernel_shape", n, 1);
  return static_spatial_dims(ctx, weight_index, "a Conv without kernel_shape");
}

std::string conv_op(size_t n, bool transpose) {
  return "nn.conv" + std::to_string(n) + "d" + (transpose ? "_transpose" : "");
}

// Adds the optional bias (input 2) along the channel axis.
Expr add_bias(ConvertContext& ctx, Expr y) {
  if (!ctx.has_input(2)) return y;
  return ctx.op("nn.bias_add", {y, ctx.input(2)}, {{"axis", int64_t(1)}});
}

}  // namespace

Expr convolution(ConvertContext& ctx, const Expr& x, const Expr& w,
                 std::optional<DataType> out_dtype, size_t weight_index) {
  size_t n = spatial_rank(ctx, 0);
  std::vector<int64_t> kernel = kernel_shape(ctx, n, weight_index);
  std::vector<int64_t> strides = spatial_ints(ctx, "strides", n, 1);
  std::vector<int64_t> dilations = spatial_ints(ctx, "dilations", n, 1);
  std::vector<std::pair<std::string, AttrValue>> attrs = {
      {"strides", strides},
      {"padding", window_padding(ctx, kernel, strides, dilations)},
      {"dilation", dilations},
      {"groups", ctx.attr_int("group", 1)},
      {"kernel_size", kernel}};
  if (out_dtype) attrs.emplace_back("out_dtype", *out_dtype);
  return ctx.op(conv_op(n, false), {x, w}, attrs);
}

// x - zero_point in int32, where zero_point (input zp_index, optional) is a
// scalar or one value per slice of `axis` of x.
Expr shift_by_zero_point(ConvertContext& ctx, size_t x_index, size_t zp_index, int64_t axis) {
  Expr x = ctx.op("cast", {ctx.input(x_index)}, {{"dtype", DataType::int32()}});
  if (!ctx.has_input(zp_index)) return x;
  Expr zp = ctx.op("cast", {ctx.input(zp_index)}, {{"dtype", DataType::int32()}});
  const TensorTypeNode& zp_type = ctx.input_tensor(zp_index);
  const TensorTypeNode& x_type = ctx.input_tensor(x_index);
  if (zp_type.shape->size() == 1 && (*zp_type.shape)[0] != Dim(1)) {
    // One value per slice: give it trailing unit axes so it broadcasts along `axis`.
    auto rank = int64_t(x_type.shape->size());
    std::vector<int64_t> shape(size_t(axis < 0 ? -axis : rank - axis), 1);
    shape[0] = -1;
    zp = ctx.op("reshape", {zp}, {{"newshape", shape}});
  }
  return ctx.op("subtract", {x, zp});
}

namespace {

std::vector<Expr> convert_conv(ConvertContext& ctx) {
  return {add_bias(ctx, convolution(ctx, ctx.input(0), ctx.input(1), std::nullopt))};
}

// ConvTranspose's padding: from output_shape when given (the excess split by
// auto_pad, an odd element at the start unless SAME_UPPER; a shortfall grows
// the end as output_padding would), from auto_pad SAME_* as for an output of
// in * stride, else the pads attribute.
std::vector<Expr> convert_conv_transpose(ConvertContext& ctx) {
  size_t n = spatial_rank(ctx, 0);
  std::vector<int64_t> kernel = kernel_shape(ctx, n);
  std::vector<int64_t> strides = spatial_ints(ctx, "strides", n, 1);
  std::vector<int64_t> dilations = spatial_ints(ctx, "dilations", n, 1);
  std::vector<int64_t> output_padding = spatial_ints(ctx, "output_padding", n, 0);
  std::string auto_pad = ctx.attr_string("auto_pad", "NOTSET");
  std::vector<int64_t> pads;
  std::vector<int64_t> output_shape = ctx.attr_ints("output_shape");
  if (output_shape.size() == n + 2)
    output_shape.erase(output_shape.begin(), output_shape.begin() + 2);
  bool same = auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER";
  if (!output_shape.empty() || same) {
    std::vector<int64_t> in =
        static_spatial_dims(ctx, 0, "ConvTranspose with output_shape or auto_pad");
    if (output_shape.empty())
      for (size_t i = 0; i < n; ++i) output_shape.push_back(in[i] * strides[i]);
    if (output_shape.size() != n)
      ctx.fail("attribute 'output_shape' has ", output_shape.size(), " values for ", n,
               " spatial axes");
    pads.assign(2 * n, 0);
    for (size_t i = 0; i < n; ++i) {
      int64_t natural =
          strides[i] * (in[i] - 1) + output_padding[i] + (kernel[i] - 1) * dilations[i] + 1;
      int64_t total = natural - output_shape[i];
      if (total < 0) {
        output_padding[i] -= total;
        continue;
      }
      pads[i] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      pads[n + i] = total - pads[i];
    }
  } else {
    pads = window_padding(ctx, kernel, strides, dilations);
  }
  Expr y = ctx.op(conv_op(n, true), {ctx.input(0), ctx.input(1)},
                  {{"strides", strides},
                   {"padding", pads},
                   {"dilation", dilations},
                   {"output_padding", output_padding},
                   {"groups", ctx.attr_int("group", 1)},
                   {"kernel_size", kernel}});
  return {add_bias(ctx, y)};
}

std::vector<Expr> convert_conv_integer(ConvertContext& ctx) {
  Expr x = shift_by_zero_point(ctx, 0, 2, 1);
  Expr w = shift_by_zero_point(ctx, 1, 3, 0);
  return {convolution(ctx, x, w, DataType::int32())};
}

// Gemm: alpha * A' B' + beta * C. A plain A times B transposed is nn.dense (the
// fully connected layer); other transposes go to nn.matmul. A C of one value
// per output column is a bias_add.
std::vector<Expr> convert_gemm(ConvertContext& ctx) {
  const TensorTypeNode& a = ctx.input_tensor(0);
  const TensorTypeNode& b = ctx.input_tensor(1);
  if (a.shape->size() != 2 || b.shape->size() != 2)
    ctx.fail("A and B must be 2-D, got ", type_to_string(ctx.input_type(0)), " and ",
             type_to_string(ctx.input_type(1)));
  bool trans_a = ctx.attr_int("transA", 0) != 0, trans_b = ctx.attr_int("transB", 0) != 0;
  double alpha = ctx.attr_float("alpha", 1.0), beta = ctx.attr_float("beta", 1.0);
  Expr y = !trans_a && trans_b ? ctx.op("nn.dense", {ctx.input(0), ctx.input(1)})
                               : ctx.op("nn.matmul", {ctx.input(0), ctx.input(1)},
                                        {{"transpose_a", trans_a}, {"transpose_b", trans_b}});
  if (alpha != 1.0) y = ctx.op("multiply", {y, scalar_constant(ctx, alpha, a.dtype)});
  if (!ctx.has_input(2) || beta == 0.0) return {y};
  Expr c = ctx.input(2);
  if (beta != 1.0) c = ctx.op("multiply", {c, scalar_constant(ctx, beta, a.dtype)});
  const TensorTypeNode& c_type = ctx.input_tensor(2);
  Dim columns = trans_b ? (*b.shape)[0] : (*b.shape)[1];
  if (c_type.shape->size() == 1 && (*c_type.shape)[0] == columns)
    return {ctx.op("nn.bias_add", {y, c}, {{"axis", int64_t(1)}})};
  return {ctx.op("add", {y, c})};
}

// MatMul: with a 2-D B (weights, usually) nn.matmul; otherwise numpy matmul.
std::vector<Expr> convert_matmul(ConvertContext& ctx) {
  const TensorTypeNode& b = ctx.input_tensor(1);
  if (b.shape->size() == 2) return {ctx.op("nn.matmul", {ctx.input(0), ctx.input(1)})};
  return {ctx.op("matmul", {ctx.input(0), ctx.input(1)})};
}

// MatMulInteger: (A - a_zero_point) times (B - b_zero_point) in int32; a
// per-row zero point of A broadcasts along rows, a per-column one of B along columns.
std::vector<Expr> convert_matmul_integer(ConvertContext& ctx) {
  // uint8 times a constant int8 B: the int8 dense layer (VNNI on x86).
  if (Expr fast =
          uint8_times_int8(ctx, ctx.input(0), ctx.has_input(2) ? ctx.input(2) : Expr(), 1, 3))
    return {fast};
  Expr a = shift_by_zero_point(ctx, 0, 2, -2);
  Expr b = ctx.op("cast", {ctx.input(1)}, {{"dtype", DataType::int32()}});
  if (ctx.has_input(3))
    b = ctx.op("subtract", {b, ctx.op("cast", {ctx.input(3)}, {{"dtype", DataType::int32()}})});
  return {ctx.op("matmul", {a, b}, {{"out_dtype", DataType::int32()}})};
}

// DeformConv: 2-D only, as nn.deformable_conv2d, or its modulated form when a mask is given.
std::vector<Expr> convert_deform_conv(ConvertContext& ctx) {
  if (spatial_rank(ctx, 0) != 2) ctx.fail("only 2-D deformable convolution is supported");
  std::vector<int64_t> kernel = kernel_shape(ctx, 2);
  std::vector<std::pair<std::string, AttrValue>> attrs = {
      {"strides", spatial_ints(ctx, "strides", 2, 1)},
      {"padding", ctx.attr_ints("pads", std::vector<int64_t>(4, 0))},
      {"dilation", spatial_ints(ctx, "dilations", 2, 1)},
      {"deformable_groups", ctx.attr_int("offset_group", 1)},
      {"groups", ctx.attr_int("group", 1)},
      {"kernel_size", kernel}};
  Expr y = ctx.has_input(4)
               ? ctx.op("nn.modulated_deformable_conv2d",
                        {ctx.input(0), ctx.input(2), ctx.input(1), ctx.input(4)}, attrs)
               : ctx.op("nn.deformable_conv2d", {ctx.input(0), ctx.input(2), ctx.input(1)}, attrs);
  if (!ctx.has_input(3)) return {y};
  return {ctx.op("nn.bias_add", {y, ctx.input(3)}, {{"axis", int64_t(1)}})};
}

std::vector<Expr> convert_flatten(ConvertContext& ctx) {
  return {ctx.op("flatten", {ctx.input(0)}, {{"axis", ctx.attr_int("axis", 1)}})};
}

}  // namespace

void register_nn_converters(ConverterTable& table) {
  table.add("Conv", 1, convert_conv);
  table.add("ConvTranspose", 1, convert_conv_transpose);
  table.add("ConvInteger", 10, convert_conv_integer);
  table.add("DeformConv", 19, convert_deform_conv);
  table.add("Gemm", 1, convert_gemm);
  table.add("MatMul", 1, convert_matmul);
  table.add("MatMulInteger", 10, convert_matmul_integer);
  table.add("Flatten", 1, convert_flatten);
  register_pool_converters(table);
  register_image_converters(table);
  register_resize_converters(table);
  register_vision_converters(table);
  register_linalg_converters(table);
}

}  // namespace anvil::frontend::onnx_import
