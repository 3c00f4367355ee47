// Reference kernels of the activation family. Each is the textbook formula in
// double, rounded once to the output dtype; expm1/log1p keep small arguments
// accurate, and NaN inputs give NaN (as numpy's formulas do).
#include <cmath>
#include <numbers>

#include "anvil/ir/attrs/nn_activation.h"
#include "reference/elemwise_kernels.h"
#include "reference/kernel_families.h"

namespace anvil::reference {

namespace {

using namespace elemwise;

// Applies f to every element of a float tensor.
template <typename F>
std::vector<Tensor> map_floats(const KernelArgs& args, F f) {
  const Tensor& x = args.inputs[0];
  std::vector<double> values = to_doubles(x);
  for (double& v : values) v = f(v);
  return {store_floats(values, x.shape_vector(), args.out_dtype())};
}

// min(1, max(0, v)) that keeps NaN.
double clamp_unit(double v) {
  if (std::isnan(v)) return v;
  return v < 0 ? 0.0 : v > 1 ? 1.0 : v;
}

// log(1 + exp(x)) without overflow for large x: x + log1p(exp(-x)).
double softplus(double x) { return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x)); }

std::vector<Tensor> relu_kernel(const KernelArgs& args) {
  const Tensor& x = args.inputs[0];
  if (is_integer_like(x.dtype())) {
    std::vector<int64_t> values = to_int64s(x);
    // Unsigned values are never negative, including uint64 held as its bit
    // pattern (which to_int64s may show as negative).
    bool is_signed = x.dtype().is_int();
    for (int64_t& v : values)
      if (is_signed && v < 0) v = 0;
    return {from_int64s(values, x.shape_vector(), x.dtype())};
  }
  return map_floats(args, [](double v) { return v < 0 ? 0.0 : v; });
}

std::vector<Tensor> leaky_relu_kernel(const KernelArgs& args) {
  double alpha = args.attrs_as<ir::LeakyReluAttrs>().alpha;
  return map_floats(args, [alpha](double v) { return v > 0 ? v : alpha * v; });
}

// One slope per position along `axis`: the channel of flat index i is
// (i / inner) % channels, with inner the product of the dims after axis.
std::vector<Tensor> prelu_kernel(const KernelArgs& args) {
  const Tensor& x = args.inputs[0];
  std::vector<double> alpha = to_doubles(args.inputs[1]);
  std::vector<int64_t> shape = x.shape_vector();
  int64_t axis = wrap_axis(args.attrs_as<ir::PReluAttrs>().axis, int64_t(shape.size()));
  int64_t channels = shape[size_t(axis)];
  int64_t inner = 1;
  for (size_t d = size_t(axis) + 1; d < shape.size(); ++d) inner *= shape[d];
  std::vector<double> values = to_doubles(x);
  for (size_t i = 0; i < values.size(); ++i) {
    double slope = alpha[size_t((int64_t(i) / inner) % channels)];
    if (!(values[i] > 0)) values[i] *= slope;
  }
  return {store_floats(values, shape, x.dtype())};
}

std::vector<Tensor> elu_kernel(const KernelArgs& args) {
  double alpha = args.attrs_as<ir::EluAttrs>().alpha;
  return map_floats(args, [alpha](double v) { return v > 0 ? v : alpha * std::expm1(v); });
}

std::vector<Tensor> selu_kernel(const KernelArgs& args) {
  const auto& attrs = args.attrs_as<ir::SeluAttrs>();
  return map_floats(
      args, [&attrs](double v) { return attrs.gamma * (v > 0 ? v : attrs.alpha * std::expm1(v)); });
}

std::vector<Tensor> gelu_kernel(const KernelArgs& args) {
  if (args.attrs_as<ir::GeluAttrs>().approximate == "tanh") {
    const double k = std::sqrt(2.0 / std::numbers::pi);
    return map_floats(args, [k](double v) {
      return 0.5 * v * (1.0 + std::tanh(k * (v + 0.044715 * v * v * v)));
    });
  }
  return map_floats(args,
                    [](double v) { return 0.5 * v * (1.0 + std::erf(v / std::numbers::sqrt2)); });
}

std::vector<Tensor> softplus_kernel(const KernelArgs& args) {
  const auto& attrs = args.attrs_as<ir::SoftplusAttrs>();
  return map_floats(args, [&attrs](double v) {
    double scaled = attrs.beta * v;
    return scaled > attrs.threshold ? v : softplus(scaled) / attrs.beta;
  });
}

std::vector<Tensor> hard_sigmoid_kernel(const KernelArgs& args) {
  const auto& attrs = args.attrs_as<ir::HardSigmoidAttrs>();
  return map_floats(args, [&attrs](double v) { return clamp_unit(attrs.alpha * v + attrs.beta); });
}

std::vector<Tensor> hard_swish_kernel(const KernelArgs& args) {
  return map_floats(args, [](double v) { return v * clamp_unit(v / 6.0 + 0.5); });
}

std::vector<Tensor> mish_kernel(const KernelArgs& args) {
  return map_floats(args, [](double v) { return v * std::tanh(softplus(v)); });
}

}  // namespace

void register_activation_kernels() {
  register_kernel("nn.relu", relu_kernel);
  register_kernel("nn.leaky_relu", leaky_relu_kernel);
  register_kernel("nn.prelu", prelu_kernel);
  register_kernel("nn.elu", elu_kernel);
  register_kernel("nn.selu", selu_kernel);
  register_kernel("nn.gelu", gelu_kernel);
  register_kernel("nn.softplus", softplus_kernel);
  register_kernel("nn.hard_sigmoid", hard_sigmoid_kernel);
  register_kernel("nn.hard_swish", hard_swish_kernel);
  register_kernel("nn.mish", mish_kernel);
}

}  // namespace anvil::reference
