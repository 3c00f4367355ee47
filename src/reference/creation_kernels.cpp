// Reference kernels of the creation family: arange, range, full (and
// dyn.full), zeros, ones, their *_like forms, shape_of and ndarray_size.
#include <cmath>

#include "anvil/ir/attrs/transform.h"
#include "reference/kernel_families.h"
#include "reference/transform_kernel_util.h"

namespace anvil::reference {
namespace {

using namespace ir;

// A tensor of `shape` and `dtype` every element of which is `value`
// converted to dtype (exactly, when value already has that dtype).
Tensor filled(const Tensor& value, std::vector<int64_t> shape, DataType dtype) {
  if (value.numel() != 1)
    throw_error("fill value must be a scalar, got shape ", shape_to_string(value.shape()));
  bool exact = is_integer_like(dtype) || is_integer_like(value.dtype());
  Tensor one = value.dtype() == dtype ? value
               : exact                ? from_int64s(to_int64s(value), {}, dtype)
                                      : from_doubles(to_doubles(value), {}, dtype);
  std::vector<int64_t> source(size_t(shape_numel(shape)), 0);
  return gather_elements(one, source, std::move(shape));
}

Tensor filled(double value, std::vector<int64_t> shape, DataType dtype) {
  return filled(from_doubles({value}, {}, dtype), std::move(shape), dtype);
}

std::vector<Tensor> arange_kernel(const KernelArgs& args) {
  const auto& attrs = args.attrs_as<ArangeAttrs>();
  double count = std::ceil((attrs.stop - attrs.start) / attrs.step);
  int64_t n = count > 0 ? int64_t(count) : 0;
  std::vector<double> values;
  for (int64_t i = 0; i < n; ++i) values.push_back(attrs.start + double(i) * attrs.step);
  return {from_doubles(values, {n}, attrs.dtype)};
}

// ONNX Range: max(ceil((limit - start) / delta), 0) elements start + i * delta,
// computed exactly in integers for integer dtypes.
std::vector<Tensor> range_kernel(const KernelArgs& args) {
  DataType dtype = args.inputs[0].dtype();
  if (is_integer_like(dtype)) {
    int64_t start = scalar_int(args.inputs[0], "range start");
    int64_t limit = scalar_int(args.inputs[1], "range limit");
    int64_t delta = scalar_int(args.inputs[2], "range delta");
    if (delta == 0) throw_error("range delta must not be 0");
    int64_t span = delta > 0 ? limit - start : start - limit;
    int64_t step = delta > 0 ? delta : -delta;
    int64_t n = span > 0 ? (span + step - 1) / step : 0;
    std::vector<int64_t> values;
    for (int64_t i = 0; i < n; ++i) values.push_back(start + i * delta);
    return {from_int64s(values, {n}, dtype)};
  }
  double start = to_doubles(args.inputs[0]).at(0);
  double limit = to_doubles(args.inputs[1]).at(0);
  double delta = to_doubles(args.inputs[2]).at(0);
  if (delta == 0 || !std::isfinite(start) || !std::isfinite(limit) || !std::isfinite(delta))
    throw_error("range of ", start, " to ", limit, " by ", delta, " is not a finite range");
  double count = std::ceil((limit - start) / delta);
  int64_t n = count > 0 ? int64_t(count) : 0;
  std::vector<double> values;
  for (int64_t i = 0; i < n; ++i) values.push_back(start + double(i) * delta);
  return {from_doubles(values, {n}, dtype)};
}

std::vector<Tensor> full_kernel(const KernelArgs& args) {
  return {filled(args.inputs[0], args.attrs_as<InitOpAttrs>().shape, args.out_dtype())};
}

std::vector<Tensor> dyn_full_kernel(const KernelArgs& args) {
  std::vector<int64_t> shape = int_values(args.inputs[1]);
  for (int64_t d : shape)
    if (d < 0) throw_error("full shape ", shape_to_string(shape), " has a negative dim");
  return {filled(args.inputs[0], shape, args.out_dtype())};
}

std::vector<Tensor> zeros_kernel(const KernelArgs& args) {
  return {Tensor::zeros(args.attrs_as<InitOpAttrs>().shape, args.out_dtype())};
}

std::vector<Tensor> ones_kernel(const KernelArgs& args) {
  return {filled(1.0, args.attrs_as<InitOpAttrs>().shape, args.out_dtype())};
}

std::vector<Tensor> full_like_kernel(const KernelArgs& args) {
  const Tensor& data = args.inputs[0];
  return {filled(args.inputs[1], data.shape_vector(), data.dtype())};
}

std::vector<Tensor> zeros_like_kernel(const KernelArgs& args) {
  return {Tensor::zeros(args.inputs[0].shape_vector(), args.inputs[0].dtype())};
}

std::vector<Tensor> ones_like_kernel(const KernelArgs& args) {
  return {filled(1.0, args.inputs[0].shape_vector(), args.inputs[0].dtype())};
}

std::vector<Tensor> shape_of_kernel(const KernelArgs& args) {
  std::vector<int64_t> shape = args.inputs[0].shape_vector();
  return {from_int64s(shape, {int64_t(shape.size())}, args.out_dtype())};
}

std::vector<Tensor> ndarray_size_kernel(const KernelArgs& args) {
  return {from_int64s({args.inputs[0].numel()}, {}, args.out_dtype())};
}

}  // namespace

void register_creation_kernels() {
  register_kernel("arange", arange_kernel);
  register_kernel("range", range_kernel);
  register_kernel("full", full_kernel);
  register_kernel("dyn.full", dyn_full_kernel);
  register_kernel("zeros", zeros_kernel);
  register_kernel("ones", ones_kernel);
  register_kernel("full_like", full_like_kernel);
  register_kernel("zeros_like", zeros_like_kernel);
  register_kernel("ones_like", ones_like_kernel);
  register_kernel("shape_of", shape_of_kernel);
  register_kernel("ndarray_size", ndarray_size_kernel);
}

}  // namespace anvil::reference
