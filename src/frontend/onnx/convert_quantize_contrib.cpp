// ONNX Runtime's quantized ops of the com.microsoft domain, as its quantizer
// writes them in the QOperator format and its transformer optimizer for
// dynamic quantization. Elementwise ones and pooling are dequantize -> float op
// -> quantize (fused into one kernel downstream); the matrix products keep the
// integer product exact in int32 and scale it once.
#include "frontend/onnx/convert_nn.h"
#include "frontend/onnx/convert_quantize.h"

namespace anvil::frontend::onnx_import {

using namespace ir;

namespace {

const char* kMicrosoft = "com.microsoft";

// QLinearAdd / QLinearMul: A, A_scale, A_zero_point, B, B_scale, B_zero_point,
// C_scale, C_zero_point.
std::vector<Expr> convert_qlinear_binary(ConvertContext& ctx, const char* op) {
  Expr a = dequantize_input(ctx, 0, 1, 2);
  Expr b = dequantize_input(ctx, 3, 4, 5);
  return {quantize_to(ctx, ctx.op(op, {a, b}), 6, 7, ctx.input_tensor(0).dtype)};
}

// QLinearSigmoid / QLinearLeakyRelu: X, X_scale, X_zero_point, Y_scale, Y_zero_point.
std::vector<Expr> convert_qlinear_unary(
    ConvertContext& ctx, const char* op,
    const std::vector<std::pair<std::string, AttrValue>>& attrs = {}) {
  Expr x = dequantize_input(ctx, 0, 1, 2);
  return {quantize_to(ctx, ctx.op(op, {x}, attrs), 3, 4, ctx.input_tensor(0).dtype)};
}

// QLinearConcat: Y_scale, Y_zero_point, then (X, X_scale, X_zero_point) per input.
std::vector<Expr> convert_qlinear_concat(ConvertContext& ctx) {
  if (ctx.num_inputs() < 5 || (ctx.num_inputs() - 2) % 3 != 0)
    ctx.fail("expects Y_scale, Y_zero_point and (X, X_scale, X_zero_point) triples, got ",
             ctx.num_inputs(), " inputs");
  std::vector<Expr> parts;
  for (size_t i = 2; i < ctx.num_inputs(); i += 3)
    parts.push_back(dequantize_input(ctx, i, i + 1, i + 2));
  Expr joined = ctx.op("concatenate", {ctx.typed(TupleNode::make(std::move(parts)))},
                       {{"axis", ctx.required_int("axis")}});
  return {quantize_to(ctx, joined, 0, 1, ctx.input_tensor(2).dtype)};
}

// QLinearGlobalAveragePool: X, x_scale, x_zero_point, y_scale, y_zero_point;
// channels_last puts the channels last (NHWC).
std::vector<Expr> convert_qlinear_global_average_pool(ConvertContext& ctx) {
  auto rank = int64_t(ctx.input_tensor(0).shape->size());
  if (rank < 3) ctx.fail("X must have rank 3 or more (batch, channels, spatial...)");
  bool channels_last = ctx.attr_int("channels_last", 0) != 0;
  std::vector<int64_t> axes;
  for (int64_t d = channels_last ? 1 : 2; d < (channels_last ? rank - 1 : rank); ++d)
    axes.push_back(d);
  Expr x = dequantize_input(ctx, 0, 1, 2, channels_last ? rank - 1 : 1);
  Expr mean = ctx.op("mean", {x}, {{"axis", axes}, {"keepdims", true}});
  return {quantize_to(ctx, mean, 3, 4, ctx.input_tensor(0).dtype)};
}

// (A - a_zero_point) times (B - b_zero_point) in int32, A and B optionally
// transposed; b's zero point may be one per column.
Expr integer_product(ConvertContext& ctx, size_t a_index, size_t a_zp, size_t b_index, size_t b_zp,
                     bool trans_a = false, bool trans_b = false) {
  Expr a = shift_by_zero_point(ctx, a_index, a_zp, -2);
  Expr b = ctx.op("cast", {ctx.input(b_index)}, {{"dtype", DataType::int32()}});
  if (ctx.has_input(b_zp)) {
    Expr zp = ctx.op("cast", {ctx.input(b_zp)}, {{"dtype", DataType::int32()}});
    // One zero point per column of B: along its last axis, or its first when transposed.
    if (trans_b) zp = along_axis(ctx, zp, 2, 0);
    b = ctx.op("subtract", {b, zp});
  }
  if (!trans_a && !trans_b) return ctx.op("matmul", {a, b}, {{"out_dtype", DataType::int32()}});
  return ctx.op(
      "nn.matmul", {a, b},
      {{"out_dtype", DataType::int32()}, {"transpose_a", trans_a}, {"transpose_b", trans_b}});
}

// MatMulIntegerToFloat: A, B, a_scale, b_scale, a_zero_point, b_zero_point, bias.
std::vector<Expr> convert_matmul_integer_to_float(ConvertContext& ctx) {
  checked_scale(ctx, 2, "a_scale");
  checked_scale(ctx, 3, "b_scale");
  Expr acc = uint8_times_int8(ctx, ctx.input(0), ctx.has_input(4) ? ctx.input(4) : Expr(), 1, 5);
  if (!acc) acc = integer_product(ctx, 0, 4, 1, 5);
  Expr scale = ctx.op("multiply", {ctx.input(2), ctx.input(3)});
  Expr y =
      ctx.op("multiply", {ctx.op("cast", {acc}, {{"dtype", ctx.input_tensor(2).dtype}}), scale});
  if (ctx.has_input(6)) y = ctx.op("add", {y, ctx.input(6)});
  return {y};
}

// DynamicQuantizeMatMul: A (float) quantized to uint8 over its range as
// DynamicQuantizeLinear does, times B (int8 or uint8), b_scale, b_zero_point, bias.
std::vector<Expr> convert_dynamic_quantize_matmul(ConvertContext& ctx) {
  checked_scale(ctx, 2, "b_scale");
  DataType f = ctx.input_tensor(0).dtype;
  DynamicQuantized a = dynamic_quantize_uint8(ctx, 0);
  Expr acc = uint8_times_int8(ctx, a.data, a.zero_point, 1, 3);
  if (!acc) {
    Expr a_shifted =
        ctx.op("subtract", {ctx.op("cast", {a.data}, {{"dtype", DataType::int32()}}),
                            ctx.op("cast", {a.zero_point}, {{"dtype", DataType::int32()}})});
    Expr b = ctx.op("cast", {ctx.input(1)}, {{"dtype", DataType::int32()}});
    if (ctx.has_input(3))
      b = ctx.op("subtract", {b, ctx.op("cast", {ctx.input(3)}, {{"dtype", DataType::int32()}})});
    acc = ctx.op("matmul", {a_shifted, b}, {{"out_dtype", DataType::int32()}});
  }
  Expr scale = ctx.op("multiply", {a.scale, ctx.input(2)});
  Expr y = ctx.op("multiply", {ctx.op("cast", {acc}, {{"dtype", f}}), scale});
  if (ctx.has_input(4)) y = ctx.op("add", {y, ctx.input(4)});
  return {y};
}

// QGemm: A, a_scale, a_zero_point, B, b_scale, b_zero_point, C (int32, scale
// alpha * a_scale * b_scale), y_scale, y_zero_point. Without y_scale the
// output is float.
std::vector<Expr> convert_qgemm(ConvertContext& ctx) {
  checked_scale(ctx, 1, "a_scale");
  checked_scale(ctx, 4, "b_scale");
  bool trans_a = ctx.attr_int("transA", 0) != 0, trans_b = ctx.attr_int("transB", 0) != 0;
  Expr acc = integer_product(ctx, 0, 2, 3, 5, trans_a, trans_b);
  if (ctx.has_input(6)) acc = ctx.op("add", {acc, ctx.input(6)});
  Expr scale =
      ctx.op("multiply", {ctx.op("multiply", {as_float32(ctx, 1), as_float32(ctx, 4)}),
                          scalar_constant(ctx, ctx.attr_float("alpha", 1.0), DataType::float32())});
  if (!ctx.has_input(7))
    return {ctx.op("multiply", {ctx.op("cast", {acc}, {{"dtype", DataType::float32()}}), scale})};
  checked_scale(ctx, 7, "y_scale");
  Expr multiplier = ctx.op("divide", {scale, as_float32(ctx, 7)});
  return {requantize(ctx, acc, multiplier, 8, ctx.input_tensor(0).dtype)};
}

}  // namespace

void register_quantize_contrib_converters(ConverterTable& table) {
  table.add(
      "QLinearAdd", 1, [](ConvertContext& ctx) { return convert_qlinear_binary(ctx, "add"); },
      kMicrosoft);
  table.add(
      "QLinearMul", 1, [](ConvertContext& ctx) { return convert_qlinear_binary(ctx, "multiply"); },
      kMicrosoft);
  table.add(
      "QLinearSigmoid", 1,
      [](ConvertContext& ctx) { return convert_qlinear_unary(ctx, "sigmoid"); }, kMicrosoft);
  table.add(
      "QLinearLeakyRelu", 1,
      [](ConvertContext& ctx) {
        return convert_qlinear_unary(ctx, "nn.leaky_relu",
                                     {{"alpha", ctx.attr_float("alpha", 0.01)}});
      },
      kMicrosoft);
  table.add("QLinearConcat", 1, convert_qlinear_concat, kMicrosoft);
  table.add("QLinearGlobalAveragePool", 1, convert_qlinear_global_average_pool, kMicrosoft);
  table.add("MatMulIntegerToFloat", 1, convert_matmul_integer_to_float, kMicrosoft);
  table.add("DynamicQuantizeMatMul", 1, convert_dynamic_quantize_matmul, kMicrosoft);
  table.add("QGemm", 1, convert_qgemm, kMicrosoft);
}

}  // namespace anvil::frontend::onnx_import
