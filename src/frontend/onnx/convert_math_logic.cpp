// Logic and comparison ops, bitwise ops and shifts, IsNaN/IsInf and Where.
#include <limits>

#include "frontend/onnx/convert_math.h"

namespace anvil::frontend::onnx_import::math {

using namespace ir;

namespace {

std::vector<Expr> convert_bitshift(ConvertContext& ctx) {
  std::string direction = ctx.attr_string("direction", "");
  if (direction == "LEFT") return {ctx.op("left_shift", {ctx.input(0), ctx.input(1)})};
  if (direction == "RIGHT") return {ctx.op("right_shift", {ctx.input(0), ctx.input(1)})};
  ctx.fail("attribute 'direction' = \"", direction, "\" must be \"LEFT\" or \"RIGHT\"");
}

// IsInf with detect_positive/detect_negative: one sign is an equality test
// against that infinity; neither sign matches nothing (no value exceeds +inf).
std::vector<Expr> convert_isinf(ConvertContext& ctx) {
  bool positive = ctx.attr_int("detect_positive", 1) != 0;
  bool negative = ctx.attr_int("detect_negative", 1) != 0;
  Expr x = ctx.input(0);
  if (positive && negative) return {ctx.op("isinf", {x})};
  constexpr double kInf = std::numeric_limits<double>::infinity();
  DataType dtype = input_dtype(ctx, 0);
  if (positive) return {ctx.op("equal", {x, scalar(ctx, kInf, dtype)})};
  if (negative) return {ctx.op("equal", {x, scalar(ctx, -kInf, dtype)})};
  return {ctx.op("greater", {x, scalar(ctx, kInf, dtype)})};
}

std::vector<Expr> convert_where(ConvertContext& ctx) {
  return {ctx.op("where", {ctx.input(0), ctx.input(1), ctx.input(2)})};
}

}  // namespace

void register_logic_converters(ConverterTable& table) {
  table.add("Not", 1, unary("logical_not"));
  table.add("And", 1, binary("logical_and"));
  table.add("Or", 1, binary("logical_or"));
  table.add("Xor", 1, binary("logical_xor"));
  table.add("Equal", 1, binary("equal"));
  table.add("Less", 1, binary("less"));
  table.add("Greater", 1, binary("greater"));
  table.add("LessOrEqual", 12, binary("less_equal"));
  table.add("GreaterOrEqual", 12, binary("greater_equal"));
  table.add("BitShift", 11, convert_bitshift);
  table.add("BitwiseAnd", 18, binary("bitwise_and"));
  table.add("BitwiseOr", 18, binary("bitwise_or"));
  table.add("BitwiseXor", 18, binary("bitwise_xor"));
  table.add("BitwiseNot", 18, unary("bitwise_not"));
  table.add("IsNaN", 9, unary("isnan"));
  table.add("IsInf", 10, convert_isinf);
  table.add("Where", 9, convert_where);
}

}  // namespace anvil::frontend::onnx_import::math
