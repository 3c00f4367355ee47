// Quantization ops of the ONNX domain: QuantizeLinear and DequantizeLinear
// (the QDQ format) become qnn.quantize / qnn.dequantize; DynamicQuantizeLinear
// computes its scale and zero point from the data's range; QLinearConv and
// QLinearMatMul run the integer product exactly (int32) and requantize it with
// one float multiplier, as ONNX's reference and ONNX Runtime do. ONNX Runtime's
// com.microsoft quantized ops are in convert_quantize_contrib.cpp.
#include "frontend/onnx/convert_quantize.h"

#include <cmath>
#include <optional>

#include "frontend/onnx/convert_nn.h"
#include "frontend/onnx/converter_families.h"

namespace anvil::frontend::onnx_import {

using namespace ir;

namespace {

std::vector<std::pair<std::string, AttrValue>> granularity_attrs(ConvertContext& ctx) {
  // Before opset 13 the scale is a scalar; axis is then irrelevant but harmless.
  return {{"axis", ctx.attr_int("axis", 1)}, {"block_size", ctx.attr_int("block_size", 0)}};
}

// The data type QuantizeLinear produces: its zero point's, else output_dtype
// (opset 21), else uint8.
DataType quantized_output_dtype(ConvertContext& ctx) {
  if (ctx.has_input(2)) return ctx.input_tensor(2).dtype;
  int64_t onnx_type = ctx.attr_int("output_dtype", 0);
  return onnx_type == 0 ? DataType::uint8() : onnx_dtype(int32_t(onnx_type), "output_dtype");
}

std::vector<Expr> convert_quantize_linear(ConvertContext& ctx) {
  DataType out = quantized_output_dtype(ctx);
  if (ctx.has_input(2) && ctx.has_attr("output_dtype") && ctx.attr_int("output_dtype", 0) != 0 &&
      onnx_dtype(int32_t(ctx.attr_int("output_dtype", 0)), "output_dtype") != out)
    ctx.fail("attribute 'output_dtype' (",
             onnx_dtype(int32_t(ctx.attr_int("output_dtype", 0)), "output_dtype").to_string(),
             ") differs from y_zero_point's dtype ", out.to_string());
  if (out.is_minifloat() && ctx.attr_int("saturate", 1) == 0 && out != DataType::float4_e2m1fn())
    ctx.fail("saturate=0 (overflow to infinity or NaN) is not supported when quantizing to ",
             out.to_string(), "; Cast takes it");
  Expr scale = checked_scale(ctx, 1, "y_scale");
  Expr zero_point = zero_point_or_zero(ctx, 2, 1, out, "y_zero_point");
  return {ctx.op("qnn.quantize", {ctx.input(0), scale, zero_point}, granularity_attrs(ctx))};
}

std::vector<Expr> convert_dequantize_linear(ConvertContext& ctx) {
  DataType in = ctx.input_tensor(0).dtype;
  Expr scale = checked_scale(ctx, 1, "x_scale");
  Expr zero_point = zero_point_or_zero(ctx, 2, 1, in, "x_zero_point");
  if (in == DataType::int32()) {
    // int32 data (a bias) has no zero point in the specification.
    if (auto zp = ctx.known_value(2)) {
      for (int64_t i = 0; i < zp->numel(); ++i)
        if (zp->get_as_double(i) != 0)
          ctx.fail("x_zero_point must be 0 for int32 data, got ", zp->get_as_double(i),
                   " at index ", i);
    }
  }
  return {ctx.op("qnn.dequantize", {ctx.input(0), scale, zero_point}, granularity_attrs(ctx))};
}

}  // namespace

Expr checked_scale(ConvertContext& ctx, size_t i, const char* name) {
  const TensorTypeNode& type = ctx.input_tensor(i);
  if (!type.dtype.is_float() && !type.dtype.is_bfloat())
    ctx.fail(name, " must be a floating-point tensor, got ", type_to_string(ctx.input_type(i)));
  if (auto value = ctx.known_value(i)) {
    for (int64_t k = 0; k < value->numel(); ++k) {
      double s = value->get_as_double(k);
      // Written so that NaN fails too.
      if (!(s > 0) || std::isinf(s))
        ctx.fail(name, " must be positive and finite, got ", s,
                 value->numel() > 1 ? str_cat(" at index ", k) : std::string());
    }
  }
  return ctx.input(i);
}

Expr zero_point_or_zero(ConvertContext& ctx, size_t i, size_t scale_index, DataType dtype,
                        const char* name) {
  if (ctx.has_input(i)) {
    const TensorTypeNode& zp = ctx.input_tensor(i);
    if (zp.dtype != dtype)
      ctx.fail(name, " must be ", dtype.to_string(), " (the quantized data's type), got ",
               type_to_string(ctx.input_type(i)));
    // A one-element [1] zero point beside a scalar scale is per tensor too (ONNX's node tests
    // write them so), and so is a scalar zero point beside a [1] scale (quantize_static writes a
    // bias's so): the zero point takes the scale's shape.
    const TensorTypeNode& scale = ctx.input_tensor(scale_index);
    auto is_one_vector = [](const TensorTypeNode& t) {
      return t.shape && t.shape->size() == 1 && (*t.shape)[0] == Dim(1);
    };
    auto is_scalar = [](const TensorTypeNode& t) { return t.shape && t.shape->empty(); };
    // (A constant stays a constant, so that the passes matching quantization see its value.)
    auto reshaped = [&](std::vector<int64_t> shape) {
      if (std::optional<Tensor> value = ctx.known_value(i))
        return Expr(ConstantNode::make(value->copy().view(shape)));
      return ctx.op("reshape", {ctx.input(i)}, {{"newshape", shape}});
    };
    if (is_scalar(scale) && is_one_vector(zp)) return reshaped({});
    if (is_one_vector(scale) && is_scalar(zp)) return reshaped({1});
    return ctx.input(i);
  }
  // Zeros of the scale's shape: folded to a constant when the scale is one.
  Expr zeros = ctx.op("zeros_like", {ctx.input(scale_index)});
  return ctx.op("cast", {zeros}, {{"dtype", dtype}});
}

Expr quantize_to(ConvertContext& ctx, const Expr& value, size_t scale_index, size_t zp_index,
                 DataType fallback, int64_t axis) {
  Expr scale = checked_scale(ctx, scale_index, "the output scale");
  Expr zero_point =
      zero_point_or_zero(ctx, zp_index, scale_index,
                         ctx.has_input(zp_index) ? ctx.input_tensor(zp_index).dtype : fallback,
                         "the output zero point");
  return ctx.op("qnn.quantize", {value, scale, zero_point}, {{"axis", axis}});
}

Expr dequantize_input(ConvertContext& ctx, size_t x_index, size_t scale_index, size_t zp_index,
                      int64_t axis) {
  Expr scale = checked_scale(ctx, scale_index, "an input scale");
  Expr zero_point = zero_point_or_zero(ctx, zp_index, scale_index, ctx.input_tensor(x_index).dtype,
                                       "an input zero point");
  return ctx.op("qnn.dequantize", {ctx.input(x_index), scale, zero_point}, {{"axis", axis}});
}

Expr requantize(ConvertContext& ctx, const Expr& acc, const Expr& multiplier, size_t zp_index,
                DataType fallback) {
  Expr scaled =
      ctx.op("multiply", {ctx.op("cast", {acc}, {{"dtype", DataType::float32()}}), multiplier});
  Expr zero_point =
      ctx.has_input(zp_index) ? ctx.input(zp_index) : scalar_constant(ctx, 0, fallback);
  if (ctx.has_input(zp_index) && ctx.input_tensor(zp_index).dtype.bits == 32)
    ctx.fail("the output zero point must be 8 or 16 bits, got ",
             type_to_string(ctx.input_type(zp_index)));
  // The multiplier already divides by the output scale: quantize with a scale of 1.
  Expr one = ctx.op("cast", {ctx.op("ones_like", {zero_point})}, {{"dtype", DataType::float32()}});
  return ctx.op("qnn.quantize", {scaled, one, zero_point});
}

DynamicQuantized dynamic_quantize_uint8(ConvertContext& ctx, size_t i) {
  Expr x = ctx.input(i);
  DataType f = ctx.input_tensor(i).dtype;
  Expr zero = scalar_constant(ctx, 0.0, f);
  Expr lo = ctx.op("minimum", {ctx.op("min", {x}), zero});
  Expr hi = ctx.op("maximum", {ctx.op("max", {x}), zero});
  Expr scale = ctx.op("divide", {ctx.op("subtract", {hi, lo}), scalar_constant(ctx, 255.0, f)});
  Expr zp_float = ctx.op("round", {ctx.op("divide", {ctx.op("negative", {lo}), scale})});
  zp_float = ctx.op("clip", {zp_float}, {{"a_min", 0.0}, {"a_max", 255.0}});
  Expr zero_point = ctx.op("cast", {zp_float}, {{"dtype", DataType::uint8()}});
  return {ctx.op("qnn.quantize", {x, scale, zero_point}), scale, zero_point};
}

Expr uint8_times_int8(ConvertContext& ctx, const Expr& a, const Expr& a_zero_point, size_t b_index,
                      size_t b_zp_index) {
  const auto* a_type = as<TensorTypeNode>(a->checked_type);
  const TensorTypeNode& b_type = ctx.input_tensor(b_index);
  if (!a_type || a_type->dtype != DataType::uint8() || !a_type->shape ||
      a_type->shape->size() < 2 || b_type.dtype != DataType::int8() || b_type.shape->size() != 2)
    return nullptr;
  if (ctx.has_input(b_zp_index)) {
    std::optional<Tensor> zp = ctx.known_value(b_zp_index);
    if (!zp) return nullptr;
    for (int64_t i = 0; i < zp->numel(); ++i)
      if (zp->get_as_double(i) != 0) return nullptr;
  }
  if (a_zero_point) {
    const auto* zp_type = as<TensorTypeNode>(a_zero_point->checked_type);
    if (!zp_type || !zp_type->shape || zp_type->shape->size() > 1 ||
        (zp_type->shape->size() == 1 && (*zp_type->shape)[0] != Dim(1)))
      return nullptr;
  }
  Expr b = ctx.input(b_index);
  Expr weight = ctx.op("transpose", {b}, {{"axes", std::vector<int64_t>{1, 0}}});
  Expr acc = ctx.op("qnn.dense", {a, weight, scalar_constant(ctx, 0, DataType::uint8()),
                                  scalar_constant(ctx, 0, DataType::int8())});
  if (!a_zero_point) return acc;
  Expr column_sums = ctx.op("sum", {ctx.op("cast", {b}, {{"dtype", DataType::int32()}})},
                            {{"axis", std::vector<int64_t>{0}}});
  Expr correction = ctx.op(
      "multiply", {ctx.op("cast", {a_zero_point}, {{"dtype", DataType::int32()}}), column_sums});
  return ctx.op("subtract", {acc, correction});
}

Expr as_float32(ConvertContext& ctx, size_t i) {
  Expr x = ctx.input(i);
  if (ctx.input_tensor(i).dtype == DataType::float32()) return x;
  return ctx.op("cast", {x}, {{"dtype", DataType::float32()}});
}

Expr along_axis(ConvertContext& ctx, const Expr& v, int64_t rank, int64_t axis) {
  const auto* type = as<TensorTypeNode>(v->checked_type);
  if (!type || !type->shape || type->shape->size() != 1 || (*type->shape)[0] == Dim(1)) return v;
  std::vector<int64_t> shape(size_t(rank - axis), 1);
  shape[0] = -1;
  return ctx.op("reshape", {v}, {{"newshape", shape}});
}

namespace {

// QLinearConv: x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale,
// y_zero_point, B (int32, scale x_scale * w_scale).
std::vector<Expr> convert_qlinear_conv(ConvertContext& ctx) {
  checked_scale(ctx, 1, "x_scale");
  checked_scale(ctx, 4, "w_scale");
  checked_scale(ctx, 6, "y_scale");
  Expr x = shift_by_zero_point(ctx, 0, 2, 1);
  Expr w = shift_by_zero_point(ctx, 3, 5, 0);
  Expr acc = convolution(ctx, x, w, DataType::int32(), 3);
  if (ctx.has_input(8)) acc = ctx.op("nn.bias_add", {acc, ctx.input(8)}, {{"axis", int64_t(1)}});
  auto rank = int64_t(ctx.input_tensor(0).shape->size());
  Expr multiplier = ctx.op(
      "divide", {ctx.op("multiply", {as_float32(ctx, 1), as_float32(ctx, 4)}), as_float32(ctx, 6)});
  multiplier = along_axis(ctx, multiplier, rank, 1);
  return {requantize(ctx, acc, multiplier, 7, DataType::uint8())};
}

// QLinearMatMul: a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point.
std::vector<Expr> convert_qlinear_matmul(ConvertContext& ctx) {
  checked_scale(ctx, 1, "a_scale");
  checked_scale(ctx, 4, "b_scale");
  checked_scale(ctx, 6, "y_scale");
  Expr a = shift_by_zero_point(ctx, 0, 2, -2);
  Expr b = ctx.op("cast", {ctx.input(3)}, {{"dtype", DataType::int32()}});
  if (ctx.has_input(5))
    b = ctx.op("subtract", {b, ctx.op("cast", {ctx.input(5)}, {{"dtype", DataType::int32()}})});
  Expr acc = ctx.op("matmul", {a, b}, {{"out_dtype", DataType::int32()}});
  Expr multiplier = ctx.op(
      "divide", {ctx.op("multiply", {as_float32(ctx, 1), as_float32(ctx, 4)}), as_float32(ctx, 6)});
  return {requantize(ctx, acc, multiplier, 7, DataType::uint8())};
}

std::vector<Expr> convert_dynamic_quantize_linear(ConvertContext& ctx) {
  DynamicQuantized q = dynamic_quantize_uint8(ctx, 0);
  return {q.data, q.scale, q.zero_point};
}

}  // namespace

void register_quantize_converters(ConverterTable& table) {
  table.add("QuantizeLinear", 10, convert_quantize_linear);
  table.add("DequantizeLinear", 10, convert_dequantize_linear);
  table.add("DynamicQuantizeLinear", 11, convert_dynamic_quantize_linear);
  table.add("QLinearConv", 10, convert_qlinear_conv);
  table.add("QLinearMatMul", 10, convert_qlinear_matmul);
  register_quantize_contrib_converters(table);
}

}  // namespace anvil::frontend::onnx_import
