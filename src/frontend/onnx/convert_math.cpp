// Elementwise arithmetic: the four operations, Pow, Mod, unary math, and the
// variadic Sum, Mean, Max and Min. Also the math family's entry point and
// the helpers its files share.
#include "frontend/onnx/convert_math.h"

#include "frontend/onnx/converter_families.h"

namespace anvil::frontend::onnx_import {

using namespace ir;

namespace math {

DataType input_dtype(const ConvertContext& ctx, size_t i) {
  Type type = ctx.input_type(i);
  const auto* t = as<TensorTypeNode>(type);
  if (!t) ctx.fail("input ", i, " must be a tensor, got ", type_to_string(type));
  return t->dtype;
}

Expr scalar(ConvertContext& ctx, double value, DataType dtype) {
  Tensor t = Tensor::empty({}, dtype);
  t.set_from_double(0, value);
  return ctx.constant(std::move(t));
}

ConverterFn unary(const char* op_name) {
  return [op_name](ConvertContext& ctx) -> std::vector<Expr> {
    return {ctx.op(op_name, {ctx.input(0)})};
  };
}

Expr legacy_broadcast_rhs(ConvertContext& ctx) {
  Expr rhs = ctx.input(1);
  if (ctx.opset() >= 7 || ctx.attr_int("broadcast", 0) == 0) return rhs;
  int64_t lhs_rank = ctx.input_tensor(0).ndim();
  int64_t rhs_rank = ctx.input_tensor(1).ndim();
  // Without an axis the second input aligns with the trailing dims, which is
  // numpy's rule already.
  int64_t axis = ctx.attr_int("axis", lhs_rank - rhs_rank);
  if (axis < 0) axis += lhs_rank;
  if (axis < 0 || axis + rhs_rank > lhs_rank)
    ctx.fail("attribute 'axis' = ", ctx.attr_int("axis", 0), " cannot align input 1 of rank ",
             rhs_rank, " with input 0 of rank ", lhs_rank);
  int64_t trailing = lhs_rank - axis - rhs_rank;
  if (trailing == 0) return rhs;
  return ctx.op("expand_dims", {rhs}, {{"axis", rhs_rank}, {"num_newaxis", trailing}});
}

ConverterFn binary(const char* op_name) {
  return [op_name](ConvertContext& ctx) -> std::vector<Expr> {
    return {ctx.op(op_name, {ctx.input(0), legacy_broadcast_rhs(ctx)})};
  };
}

namespace {

Expr cast_to(ConvertContext& ctx, const Expr& x, DataType from, DataType to) {
  if (from == to) return x;
  return ctx.op("cast", {x}, {{"dtype", to}});
}

// Pow's exponent may have another dtype than its base (opset 12 on); the
// result has the base's dtype. A float base takes the exponent converted to
// its dtype (exact for every integer exponent that does not overflow it). An
// integer base is computed as numpy does for mixed types: in float64 when
// the exponent is a float, in int64 when it is an integer of another width,
// and converted back (truncating toward zero, wrapping).
std::vector<Expr> convert_pow(ConvertContext& ctx) {
  Expr base = ctx.input(0);
  Expr exponent = math::legacy_broadcast_rhs(ctx);
  DataType base_dtype = math::input_dtype(ctx, 0);
  DataType exponent_dtype = math::input_dtype(ctx, 1);
  if (base_dtype == exponent_dtype) return {ctx.op("power", {base, exponent})};
  if (base_dtype.is_float() || base_dtype.is_bfloat())
    return {ctx.op("power", {base, cast_to(ctx, exponent, exponent_dtype, base_dtype)})};
  DataType wide = exponent_dtype.is_float() || exponent_dtype.is_bfloat() ? DataType::float64()
                                                                          : DataType::int64();
  Expr result = ctx.op("power", {cast_to(ctx, base, base_dtype, wide),
                                 cast_to(ctx, exponent, exponent_dtype, wide)});
  return {cast_to(ctx, result, wide, base_dtype)};
}

// Mod: fmod=1 is C's fmod (sign of the dividend); fmod=0 is Python's %
// (sign of the divisor), for integers and, from onnx 1.20 on, floats.
std::vector<Expr> convert_mod(ConvertContext& ctx) {
  int64_t fmod = ctx.attr_int("fmod", 0);
  return {ctx.op(fmod ? "mod" : "floor_mod", {ctx.input(0), ctx.input(1)})};
}

// Sum, Max and Min fold their inputs left to right with numpy broadcasting.
ConverterFn variadic(const char* op_name) {
  return [op_name](ConvertContext& ctx) -> std::vector<Expr> {
    if (ctx.num_inputs() == 0) ctx.fail("needs at least one input");
    Expr result = ctx.input(0);
    for (size_t i = 1; i < ctx.num_inputs(); ++i) result = ctx.op(op_name, {result, ctx.input(i)});
    return {result};
  };
}

std::vector<Expr> convert_mean(ConvertContext& ctx) {
  Expr sum = variadic("add")(ctx)[0];
  if (ctx.num_inputs() == 1) return {sum};
  return {ctx.op("divide",
                 {sum, math::scalar(ctx, double(ctx.num_inputs()), math::input_dtype(ctx, 0))})};
}

}  // namespace

void register_arithmetic_converters(ConverterTable& table) {
  // Opset 7 replaced the broadcast/axis attributes with numpy broadcasting;
  // binary() handles both, so one implementation serves every version.
  table.add("Add", 1, binary("add"));
  table.add("Sub", 1, binary("subtract"));
  table.add("Mul", 1, binary("multiply"));
  // The divide op truncates integer quotients toward zero, as ONNX's Div does.
  table.add("Div", 1, binary("divide"));
  table.add("Pow", 1, convert_pow);
  table.add("Mod", 10, convert_mod);
  table.add("Sum", 1, variadic("add"));
  table.add("Max", 1, variadic("maximum"));
  table.add("Min", 1, variadic("minimum"));
  table.add("Mean", 1, convert_mean);

  table.add("Neg", 1, unary("negative"));
  table.add("Abs", 1, unary("abs"));
  table.add("Sign", 9, unary("sign"));
  table.add("Reciprocal", 1, unary("reciprocal"));
  table.add("Floor", 1, unary("floor"));
  table.add("Ceil", 1, unary("ceil"));
  table.add("Round", 11, unary("round"));
  table.add("Sqrt", 1, unary("sqrt"));
  table.add("Exp", 1, unary("exp"));
  table.add("Log", 1, unary("log"));
  table.add("Sigmoid", 1, unary("sigmoid"));
  table.add("Tanh", 1, unary("tanh"));
  table.add("Erf", 9, unary("erf"));
  table.add("Sin", 7, unary("sin"));
  table.add("Cos", 7, unary("cos"));
  table.add("Tan", 7, unary("tan"));
  table.add("Asin", 7, unary("asin"));
  table.add("Acos", 7, unary("acos"));
  table.add("Atan", 7, unary("atan"));
  table.add("Sinh", 9, unary("sinh"));
  table.add("Cosh", 9, unary("cosh"));
  table.add("Asinh", 9, unary("asinh"));
  table.add("Acosh", 9, unary("acosh"));
  table.add("Atanh", 9, unary("atanh"));
}

}  // namespace math

void register_math_converters(ConverterTable& table) {
  math::register_arithmetic_converters(table);
  math::register_logic_converters(table);
  math::register_cast_converters(table);
  math::register_activation_converters(table);
}

}  // namespace anvil::frontend::onnx_import
