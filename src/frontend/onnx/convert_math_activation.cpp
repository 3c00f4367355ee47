// Activation functions. Those with an nn.* op map onto it; Celu, Softsign,
// ThresholdedRelu and Shrink are built from elementwise ops following their
// ONNX definitions. ONNX float attributes are float32, so defaults are the
// float32 values (0.01f), as the attributes a model carries would be.
#include <optional>
#include <string>

#include "anvil/ir/attrs/nn_activation.h"
#include "frontend/onnx/convert_math.h"

namespace anvil::frontend::onnx_import::math {

using namespace ir;

namespace {

std::vector<Expr> convert_leaky_relu(ConvertContext& ctx) {
  return {ctx.op("nn.leaky_relu", {ctx.input(0)}, {{"alpha", ctx.attr_float("alpha", 0.01f)}})};
}

// PRelu's slope broadcasts to x, numpy style (unidirectionally). A slope
// that varies along a single axis of x is nn.prelu's per-channel form; a
// single constant slope is leaky_relu; anything else is spelled out as
// where(x < 0, x * slope, x).
std::vector<Expr> convert_prelu(ConvertContext& ctx) {
  Expr x = ctx.input(0);
  Expr slope = ctx.input(1);
  const TensorTypeNode& x_type = ctx.input_tensor(0);
  const TensorTypeNode& slope_type = ctx.input_tensor(1);
  if (std::optional<Tensor> value = ctx.input_constant(1); value && value->numel() == 1)
    return {ctx.op("nn.leaky_relu", {x}, {{"alpha", value->get_as_double(0)}})};
  int64_t x_rank = x_type.ndim(), slope_rank = slope_type.ndim();
  if (slope_rank <= x_rank) {
    std::vector<int64_t> varying;  // slope dims that are not 1
    bool all_static = true;
    for (int64_t d = 0; d < slope_rank; ++d) {
      const Dim& dim = (*slope_type.shape)[size_t(d)];
      all_static &= dim.is_int();
      if (dim != Dim(1)) varying.push_back(d);
    }
    if (all_static && varying.size() == 1) {
      int64_t axis = x_rank - slope_rank + varying[0];
      const Dim& channels = (*slope_type.shape)[size_t(varying[0])];
      if ((*x_type.shape)[size_t(axis)] == channels) {
        Expr alpha = slope_rank == 1
                         ? slope
                         : ctx.op("reshape", {slope},
                                  {{"newshape", std::vector<int64_t>{channels.int_value()}}});
        return {ctx.op("nn.prelu", {x, alpha}, {{"axis", axis}})};
      }
    }
  }
  Expr zero = scalar(ctx, 0, x_type.dtype);
  Expr negative = ctx.op("less", {x, zero});
  return {ctx.op("where", {negative, ctx.op("multiply", {x, slope}), x})};
}

std::vector<Expr> convert_elu(ConvertContext& ctx) {
  return {ctx.op("nn.elu", {ctx.input(0)}, {{"alpha", ctx.attr_float("alpha", 1.0)}})};
}

std::vector<Expr> convert_selu(ConvertContext& ctx) {
  SeluAttrs defaults;
  return {ctx.op("nn.selu", {ctx.input(0)},
                 {{"alpha", ctx.attr_float("alpha", defaults.alpha)},
                  {"gamma", ctx.attr_float("gamma", defaults.gamma)}})};
}

// Celu(x) = max(0, x) + min(0, alpha * (exp(x / alpha) - 1)), which for
// x <= 0 is alpha * elu(x / alpha) with elu's alpha of 1.
std::vector<Expr> convert_celu(ConvertContext& ctx) {
  Expr x = ctx.input(0);
  DataType dtype = input_dtype(ctx, 0);
  double alpha_value = ctx.attr_float("alpha", 1.0);
  // With the default alpha of 1, Celu is exactly elu.
  if (alpha_value == 1.0) return {ctx.op("nn.elu", {x}, {{"alpha", 1.0}})};
  Expr alpha = scalar(ctx, alpha_value, dtype);
  Expr elu = ctx.op("nn.elu", {ctx.op("divide", {x, alpha})}, {{"alpha", 1.0}});
  Expr negative_part = ctx.op("multiply", {alpha, elu});
  Expr positive = ctx.op("greater", {x, scalar(ctx, 0, dtype)});
  return {ctx.op("where", {positive, x, negative_part})};
}

std::vector<Expr> convert_gelu(ConvertContext& ctx) {
  std::string approximate = ctx.attr_string("approximate", "none");
  if (approximate != "none" && approximate != "tanh")
    ctx.fail("attribute 'approximate' = \"", approximate, "\" must be \"none\" or \"tanh\"");
  return {ctx.op("nn.gelu", {ctx.input(0)}, {{"approximate", approximate}})};
}

// ONNX's Softplus is log(exp(x) + 1) with no threshold; nn.softplus's
// default threshold of 20 returns x there, which equals log(exp(x) + 1) to
// within 2e-9, below the precision of float32 at 20.
std::vector<Expr> convert_softplus(ConvertContext& ctx) {
  return {ctx.op("nn.softplus", {ctx.input(0)})};
}

// Softsign(x) = x / (1 + |x|).
std::vector<Expr> convert_softsign(ConvertContext& ctx) {
  Expr x = ctx.input(0);
  Expr one = scalar(ctx, 1, input_dtype(ctx, 0));
  return {ctx.op("divide", {x, ctx.op("add", {one, ctx.op("abs", {x})})})};
}

std::vector<Expr> convert_hard_sigmoid(ConvertContext& ctx) {
  return {
      ctx.op("nn.hard_sigmoid", {ctx.input(0)},
             {{"alpha", ctx.attr_float("alpha", 0.2f)}, {"beta", ctx.attr_float("beta", 0.5f)}})};
}

// ThresholdedRelu(x) = x where x > alpha, else 0.
std::vector<Expr> convert_thresholded_relu(ConvertContext& ctx) {
  Expr x = ctx.input(0);
  DataType dtype = input_dtype(ctx, 0);
  Expr above = ctx.op("greater", {x, scalar(ctx, ctx.attr_float("alpha", 1.0), dtype)});
  return {ctx.op("where", {above, x, scalar(ctx, 0, dtype)})};
}

// Shrink(x) = x + bias where x < -lambd, x - bias where x > lambd, else 0.
// Integer inputs are computed in float64 and truncated back, as ONNX's
// float attributes applied to them would be.
std::vector<Expr> convert_shrink(ConvertContext& ctx) {
  Expr x = ctx.input(0);
  DataType dtype = input_dtype(ctx, 0);
  bool is_float = dtype.is_float() || dtype.is_bfloat();
  DataType compute = is_float ? dtype : DataType::float64();
  if (!is_float) x = ctx.op("cast", {x}, {{"dtype", compute}});
  double lambd = ctx.attr_float("lambd", 0.5f), bias = ctx.attr_float("bias", 0.0);
  Expr bias_value = scalar(ctx, bias, compute);
  Expr below = ctx.op("less", {x, scalar(ctx, -lambd, compute)});
  Expr above = ctx.op("greater", {x, scalar(ctx, lambd, compute)});
  Expr inner =
      ctx.op("where", {above, ctx.op("subtract", {x, bias_value}), scalar(ctx, 0, compute)});
  Expr result = ctx.op("where", {below, ctx.op("add", {x, bias_value}), inner});
  if (!is_float) result = ctx.op("cast", {result}, {{"dtype", dtype}});
  return {result};
}

}  // namespace

void register_activation_converters(ConverterTable& table) {
  table.add("Relu", 1, unary("nn.relu"));
  table.add("LeakyRelu", 1, convert_leaky_relu);
  table.add("PRelu", 1, convert_prelu);
  table.add("Elu", 1, convert_elu);
  table.add("Selu", 1, convert_selu);
  table.add("Celu", 12, convert_celu);
  table.add("Gelu", 20, convert_gelu);
  table.add("Softplus", 1, convert_softplus);
  table.add("Softsign", 1, convert_softsign);
  table.add("HardSigmoid", 1, convert_hard_sigmoid);
  table.add("HardSwish", 14, unary("nn.hard_swish"));
  table.add("ThresholdedRelu", 10, convert_thresholded_relu);
  table.add("Shrink", 9, convert_shrink);
  table.add("Mish", 18, unary("nn.mish"));
}

}  // namespace anvil::frontend::onnx_import::math
