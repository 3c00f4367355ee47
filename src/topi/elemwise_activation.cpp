// Computes of the activation functions and nn.bias_add. The formulas are the reference
// kernels'; where those use expm1 or log1p (which have no intrinsic), accurate compositions
// of exp and log stand in so small arguments keep their relative precision.
#include <cmath>
#include <numbers>
#include <string>

#include "anvil/ir/attrs/nn.h"
#include "anvil/ir/attrs/nn_activation.h"
#include "anvil/topi/topi.h"
#include "topi/topi_util.h"

namespace anvil::topi {
namespace {

PrimExpr constant(const PrimExpr& like, double value) {
  return tir::make_const(like.dtype(), value);
}

PrimExpr exp(PrimExpr x) { return tir::call_intrin(x.dtype(), "exp", {x}); }
PrimExpr log(PrimExpr x) { return tir::call_intrin(x.dtype(), "log", {x}); }
PrimExpr fabs(PrimExpr x) { return tir::call_intrin(x.dtype(), "fabs", {x}); }

// exp(x) - 1: a Taylor polynomial near 0 (where the subtraction would cancel), the plain
// difference elsewhere. The polynomial's error past x^5 is below 1e-10 relative for |x| < 0.03.
PrimExpr expm1(PrimExpr x) {
  PrimExpr series =
      x * (constant(x, 1) + x * (constant(x, 1.0 / 2) +
                                 x * (constant(x, 1.0 / 6) +
                                      x * (constant(x, 1.0 / 24) + x * constant(x, 1.0 / 120)))));
  return tir::select(fabs(x) < constant(x, 0.03), series, exp(x) - constant(x, 1));
}

// log(1 + u) for u >= 0: w = 1 + u loses u's low bits, and log(w) * u / (w - 1) puts them back
// (exact enough when w is 1, where the result is u itself).
PrimExpr log1p(PrimExpr u) {
  PrimExpr w = constant(u, 1) + u;
  return tir::select(tir::eq(w, constant(u, 1)), u, log(w) * u / (w - constant(u, 1)));
}

// log(1 + exp(x)) without overflow: max(x, 0) + log1p(exp(-|x|)).
PrimExpr softplus(PrimExpr x) {
  PrimExpr positive = tir::select(x > constant(x, 0), x, constant(x, 0));
  return positive + log1p(exp(constant(x, -1) * fabs(x)));
}

// min(1, max(0, v)) that keeps NaN.
PrimExpr clamp_unit(PrimExpr v) {
  PrimExpr above = tir::select(v < constant(v, 0), constant(v, 0), v);
  return tir::select(above > constant(v, 1), constant(v, 1), above);
}

// Registers op as out = f(x) elementwise, with the call's attrs at hand.
void register_activation(const std::string& op,
                         std::function<PrimExpr(const ComputeArgs&, PrimExpr)> f) {
  register_compute(op, [op, f](const ComputeArgs& args) {
    return std::vector<te::Tensor>{
        map_elements(args.inputs[0], op, [&](PrimExpr x) { return f(args, x); })};
  });
}

// out[..., c, ...] = f(x[..., c, ...], per_channel[c]) with c the index along axis.
te::Tensor per_channel(const ComputeArgs& args, int64_t axis,
                       const std::function<PrimExpr(PrimExpr, PrimExpr)>& f) {
  const te::Tensor& x = args.inputs[0];
  const te::Tensor& channel_values = args.inputs[1];
  int64_t c = normalize_axis(axis, x.ndim(), args.op_name());
  return te::compute(
      x.shape(),
      [&](const std::vector<Var>& i) {
        return f(x.at(std::vector<PrimExpr>(i.begin(), i.end())), channel_values(i[size_t(c)]));
      },
      tensor_name(args.op_name()));
}

void register_relu_family() {
  // x < 0 ? 0 : x keeps NaN (and unsigned values are never negative).
  register_activation("nn.relu", [](const ComputeArgs&, PrimExpr x) -> PrimExpr {
    if (x.dtype().is_uint()) return x;
    return tir::select(x < 0, tir::make_const(x.dtype(), 0), x);
  });
  register_activation("nn.leaky_relu", [](const ComputeArgs& args, PrimExpr x) {
    double alpha = args.attrs_as<ir::LeakyReluAttrs>().alpha;
    return tir::select(x > constant(x, 0), x, constant(x, alpha) * x);
  });
  register_compute("nn.prelu", [](const ComputeArgs& args) {
    int64_t axis = args.attrs_as<ir::PReluAttrs>().axis;
    return std::vector<te::Tensor>{per_channel(args, axis, [](PrimExpr x, PrimExpr slope) {
      return tir::select(x > constant(x, 0), x, slope * x);
    })};
  });
  register_compute("nn.bias_add", [](const ComputeArgs& args) {
    int64_t axis = args.attrs_as<ir::BiasAddAttrs>().axis;
    return std::vector<te::Tensor>{
        per_channel(args, axis, [](PrimExpr x, PrimExpr bias) { return x + bias; })};
  });
}

void register_exponential_family() {
  register_activation("nn.elu", [](const ComputeArgs& args, PrimExpr x) {
    double alpha = args.attrs_as<ir::EluAttrs>().alpha;
    return tir::select(x > constant(x, 0), x, constant(x, alpha) * expm1(x));
  });
  register_activation("nn.selu", [](const ComputeArgs& args, PrimExpr x) {
    const auto& attrs = args.attrs_as<ir::SeluAttrs>();
    PrimExpr inner = tir::select(x > constant(x, 0), x, constant(x, attrs.alpha) * expm1(x));
    return constant(x, attrs.gamma) * inner;
  });
  register_activation("nn.gelu", [](const ComputeArgs& args, PrimExpr x) {
    PrimExpr half_x = constant(x, 0.5) * x;
    if (args.attrs_as<ir::GeluAttrs>().approximate == "tanh") {
      PrimExpr k = constant(x, std::sqrt(2.0 / std::numbers::pi));
      PrimExpr inner = k * (x + constant(x, 0.044715) * x * x * x);
      return half_x * (constant(x, 1) + tir::call_intrin(x.dtype(), "tanh", {inner}));
    }
    PrimExpr scaled = x * constant(x, 1.0 / std::numbers::sqrt2);
    return half_x * (constant(x, 1) + tir::call_intrin(x.dtype(), "erf", {scaled}));
  });
  register_activation("nn.softplus", [](const ComputeArgs& args, PrimExpr x) {
    const auto& attrs = args.attrs_as<ir::SoftplusAttrs>();
    PrimExpr scaled = constant(x, attrs.beta) * x;
    return tir::select(scaled > constant(x, attrs.threshold), x,
                       softplus(scaled) / constant(x, attrs.beta));
  });
  register_activation("nn.mish", [](const ComputeArgs&, PrimExpr x) {
    return x * tir::call_intrin(x.dtype(), "tanh", {softplus(x)});
  });
}

void register_hard_family() {
  register_activation("nn.hard_sigmoid", [](const ComputeArgs& args, PrimExpr x) {
    const auto& attrs = args.attrs_as<ir::HardSigmoidAttrs>();
    return clamp_unit(constant(x, attrs.alpha) * x + constant(x, attrs.beta));
  });
  register_activation("nn.hard_swish", [](const ComputeArgs&, PrimExpr x) {
    return x * clamp_unit(x / constant(x, 6) + constant(x, 0.5));
  });
}

}  // namespace

void register_activation_computes() {
  register_relu_family();
  register_exponential_family();
  register_hard_family();
}

}  // namespace anvil::topi
