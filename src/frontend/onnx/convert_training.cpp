// The optimizer steps of the ai.onnx.preview.training domain (Adagrad, Momentum, Adam): each is
// elementwise over its tensors, so it is written with elementwise ops and compiles like any
// other elementwise group. Inputs: the learning rate R and step count T, then n tensors X, n
// gradients G and n (Adagrad, Momentum) or 2n (Adam) state tensors; outputs the n updated
// tensors, then the updated states.
#include <string>
#include <vector>

#include "frontend/onnx/convert_nn.h"
#include "frontend/onnx/converter_families.h"

namespace anvil::frontend::onnx_import {
namespace {

using ir::Expr;

// Splits the inputs after R and T into `groups` equal groups of n tensors.
struct Groups {
  size_t n;
  DataType dtype;
};

Groups groups_of(ConvertContext& ctx, size_t groups) {
  size_t tensors = ctx.num_inputs() - 2;
  if (ctx.num_inputs() < 2 + groups || tensors % groups != 0)
    ctx.fail("expects R, T and ", groups, " equal groups of tensors, got ", ctx.num_inputs(),
             " inputs");
  DataType dtype = ctx.input_tensor(2).dtype;
  if (!dtype.is_float()) ctx.fail("the tensors must be float, got ", dtype.to_string());
  return {tensors / groups, dtype};
}

class Step {
 public:
  Step(ConvertContext& ctx, DataType dtype) : ctx_(ctx), dtype_(dtype) {}
  Expr c(double v) { return scalar_constant(ctx_, v, dtype_); }
  Expr as_dtype(const Expr& e) { return ctx_.op("cast", {e}, {{"dtype", dtype_}}); }
  Expr add(const Expr& a, const Expr& b) { return ctx_.op("add", {a, b}); }
  Expr sub(const Expr& a, const Expr& b) { return ctx_.op("subtract", {a, b}); }
  Expr mul(const Expr& a, const Expr& b) { return ctx_.op("multiply", {a, b}); }
  Expr div(const Expr& a, const Expr& b) { return ctx_.op("divide", {a, b}); }
  Expr sqrt(const Expr& a) { return ctx_.op("sqrt", {a}); }
  Expr pow(const Expr& a, const Expr& b) { return ctx_.op("power", {a, b}); }
  Expr where(const Expr& cond, const Expr& a, const Expr& b) {
    return ctx_.op("where", {cond, a, b});
  }
  // T > 0 as a bool scalar.
  Expr started() {
    return ctx_.op("greater",
                   {ctx_.input(1), scalar_constant(ctx_, 0, ctx_.input_tensor(1).dtype)});
  }

 private:
  ConvertContext& ctx_;
  DataType dtype_;
};

// Adagrad: r = R / (1 + T * decay); g = norm * X + G; H' = H + g^2; X' = X - r * g / (sqrt(H') +
// epsilon).
std::vector<Expr> convert_adagrad(ConvertContext& ctx) {
  auto [n, dtype] = groups_of(ctx, 3);
  Step s(ctx, dtype);
  Expr r =
      s.div(s.as_dtype(ctx.input(0)),
            s.add(s.c(1), s.mul(s.as_dtype(ctx.input(1)), s.c(ctx.attr_float("decay_factor", 0)))));
  std::vector<Expr> xs, hs;
  for (size_t i = 0; i < n; ++i) {
    Expr x = ctx.input(2 + i), h = ctx.input(2 + 2 * n + i);
    Expr g = s.add(s.mul(s.c(ctx.attr_float("norm_coefficient", 0)), x), ctx.input(2 + n + i));
    Expr h_new = s.add(h, s.mul(g, g));
    Expr adaptive = s.add(s.sqrt(h_new), s.c(ctx.attr_float("epsilon", 1e-6)));
    xs.push_back(s.sub(x, s.div(s.mul(r, g), adaptive)));
    hs.push_back(h_new);
  }
  xs.insert(xs.end(), hs.begin(), hs.end());
  return xs;
}

// Momentum: g = norm * X + G; V' = alpha * V + beta' * g (beta' = 1 at T = 0); X' = X - R * V'
// (standard) or X - R * (g + alpha * V') (nesterov).
std::vector<Expr> convert_momentum(ConvertContext& ctx) {
  auto [n, dtype] = groups_of(ctx, 3);
  for (const char* a : {"alpha", "beta", "mode", "norm_coefficient"})
    if (!ctx.has_attr(a)) ctx.fail("attribute '", a, "' is required");
  std::string mode = ctx.attr_string("mode", "");
  if (mode != "standard" && mode != "nesterov")
    ctx.fail("mode must be \"standard\" or \"nesterov\", got \"", mode, "\"");
  Step s(ctx, dtype);
  const double alpha = ctx.attr_float("alpha", 0), norm = ctx.attr_float("norm_coefficient", 0);
  Expr beta = s.where(s.started(), s.c(ctx.attr_float("beta", 0)), s.c(1));
  Expr r = s.as_dtype(ctx.input(0));
  std::vector<Expr> xs, vs;
  for (size_t i = 0; i < n; ++i) {
    Expr x = ctx.input(2 + i), v = ctx.input(2 + 2 * n + i);
    Expr g = s.add(s.mul(s.c(norm), x), ctx.input(2 + n + i));
    Expr v_new = s.add(s.mul(s.c(alpha), v), s.mul(beta, g));
    Expr step = mode == "standard" ? v_new : s.add(g, s.mul(s.c(alpha), v_new));
    xs.push_back(s.sub(x, s.mul(r, step)));
    vs.push_back(v_new);
  }
  xs.insert(xs.end(), vs.begin(), vs.end());
  return xs;
}

// Adam: g = norm * X + G; V' = alpha V + (1 - alpha) g; H' = beta H + (1 - beta) g^2;
// R' = R sqrt(1 - beta^T) / (1 - alpha^T) once T > 0; X' = (1 - norm_post) (X - R' V' /
// (sqrt(H') + epsilon)).
std::vector<Expr> convert_adam(ConvertContext& ctx) {
  auto [n, dtype] = groups_of(ctx, 4);
  Step s(ctx, dtype);
  const double alpha = ctx.attr_float("alpha", 0.9), beta = ctx.attr_float("beta", 0.999);
  const double norm = ctx.attr_float("norm_coefficient", 0);
  const double post = ctx.attr_float("norm_coefficient_post", 0);
  Expr r = s.as_dtype(ctx.input(0)), t = s.as_dtype(ctx.input(1));
  Expr corrected = s.div(s.mul(r, s.sqrt(s.sub(s.c(1), s.pow(s.c(beta), t)))),
                         s.sub(s.c(1), s.pow(s.c(alpha), t)));
  Expr rate = s.where(s.started(), corrected, r);
  std::vector<Expr> xs, vs, hs;
  for (size_t i = 0; i < n; ++i) {
    Expr x = ctx.input(2 + i), v = ctx.input(2 + 2 * n + i), h = ctx.input(2 + 3 * n + i);
    Expr g = s.add(s.mul(s.c(norm), x), ctx.input(2 + n + i));
    Expr v_new = s.add(s.mul(s.c(alpha), v), s.mul(s.c(1 - alpha), g));
    Expr h_new = s.add(s.mul(s.c(beta), h), s.mul(s.c(1 - beta), s.mul(g, g)));
    Expr x_new = s.sub(
        x, s.mul(rate, s.div(v_new, s.add(s.sqrt(h_new), s.c(ctx.attr_float("epsilon", 1e-6))))));
    xs.push_back(s.mul(s.c(1 - post), x_new));
    vs.push_back(v_new);
    hs.push_back(h_new);
  }
  xs.insert(xs.end(), vs.begin(), vs.end());
  xs.insert(xs.end(), hs.begin(), hs.end());
  return xs;
}

}  // namespace

void register_training_converters(ConverterTable& table) {
  const std::string domain = "ai.onnx.preview.training";
  table.add("Adagrad", 1, convert_adagrad, domain);
  table.add("Momentum", 1, convert_momentum, domain);
  table.add("Adam", 1, convert_adam, domain);
}

}  // namespace anvil::frontend::onnx_import
