// Reference kernels of the reduction family. Every reduction first groups the
// input elements by the output element they reduce into (each group in
// row-major order), then folds each group with a plain function. Floats fold
// in double; integer and bool data fold in int64 so that sums and products
// stay exact. Empty groups follow ONNX opset 18: sums give 0, products 1, max
// the lowest value (-inf), min the highest (+inf), mean NaN.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>

#include "anvil/ir/attrs/reduce.h"
#include "anvil/support/error.h"
#include "reference/kernel_families.h"
#include "reference/kernel_util.h"

namespace anvil::reference {
namespace {

using ir::ArgReduceAttrs;
using ir::ReduceAttrs;
using ir::VarianceAttrs;

// Which axes of a tensor of the given rank are reduced. As in the op
// relations, an empty list reduces every axis and exclude flips the list.
std::vector<bool> reduced_axes(const std::vector<int64_t>& axes, bool exclude, int64_t rank) {
  if (axes.empty()) return std::vector<bool>(size_t(rank), true);
  std::vector<bool> listed(size_t(rank), false);
  for (int64_t axis : axes) {
    int64_t a = wrap_axis(axis, rank);
    if (a < 0 || a >= rank)
      throw_error("reduction axis ", axis, " is out of range for rank ", rank);
    if (listed[size_t(a)]) throw_error("reduction axis ", axis, " is listed twice");
    listed[size_t(a)] = true;
  }
  if (exclude) listed.flip();
  return listed;
}

// Where each input element goes: the output shape (with keepdims applied),
// and for every input element in row-major order its output element.
struct Reduction {
  std::vector<int64_t> out_shape;
  int64_t out_count = 1;
  std::vector<int64_t> out_index;
};

Reduction plan_reduction(std::span<const int64_t> shape, const std::vector<bool>& reduced,
                         bool keepdims) {
  Reduction plan;
  std::vector<int64_t> kept_shape;  // the output dims that index the result
  for (size_t i = 0; i < shape.size(); ++i) {
    if (!reduced[i]) kept_shape.push_back(shape[i]);
    if (!reduced[i] || keepdims) plan.out_shape.push_back(reduced[i] ? 1 : shape[i]);
  }
  plan.out_count = shape_numel(kept_shape);
  int64_t count = shape_numel(shape);
  plan.out_index.resize(size_t(count));
  for (int64_t flat = 0; flat < count; ++flat) {
    std::vector<int64_t> index = unravel(flat, shape);
    int64_t out = 0;
    for (size_t i = 0; i < shape.size(); ++i)
      if (!reduced[i]) out = out * shape[i] + index[i];
    plan.out_index[size_t(flat)] = out;
  }
  return plan;
}

// The input values grouped by output element, each group in row-major order.
template <typename T>
std::vector<std::vector<T>> group_by_output(const std::vector<T>& values, const Reduction& plan) {
  std::vector<std::vector<T>> groups(size_t(plan.out_count));
  for (size_t i = 0; i < values.size(); ++i) groups[size_t(plan.out_index[i])].push_back(values[i]);
  return groups;
}

// The smallest and largest value an integer (or bool) dtype holds.
int64_t lowest_of(DataType dtype) {
  if (dtype.is_int())
    return dtype.bits == 64 ? std::numeric_limits<int64_t>::min()
                            : -(int64_t(1) << (dtype.bits - 1));
  return 0;
}
int64_t highest_of(DataType dtype) {
  if (dtype.is_bool()) return 1;
  if (dtype.is_int())
    return dtype.bits == 64 ? std::numeric_limits<int64_t>::max()
                            : (int64_t(1) << (dtype.bits - 1)) - 1;
  // Unsigned: all bits set, which for uint64 is -1 as an int64 bit pattern.
  return dtype.bits == 64 ? -1 : (int64_t(1) << dtype.bits) - 1;
}

// ---------------------------------------------------------------- folds

using FloatFold = double (*)(const std::vector<double>&);
using IntFold = int64_t (*)(const std::vector<int64_t>&, DataType);

double sum_f(const std::vector<double>& v) {
  double acc = 0;
  for (double x : v) acc += x;
  return acc;
}
// Integer folds wrap around in uint64 so that overflow stays defined; the
// low bits are what the output dtype keeps, as in two's complement hardware.
int64_t sum_i(const std::vector<int64_t>& v, DataType) {
  uint64_t acc = 0;
  for (int64_t x : v) acc += uint64_t(x);
  return int64_t(acc);
}
double mean_f(const std::vector<double>& v) { return sum_f(v) / double(v.size()); }
// Integer means truncate toward zero, as numpy's mean(...).astype(int) does.
int64_t mean_i(const std::vector<int64_t>& v, DataType dtype) {
  return v.empty() ? 0 : sum_i(v, dtype) / int64_t(v.size());
}
double prod_f(const std::vector<double>& v) {
  double acc = 1;
  for (double x : v) acc *= x;
  return acc;
}
int64_t prod_i(const std::vector<int64_t>& v, DataType) {
  uint64_t acc = 1;
  for (int64_t x : v) acc *= uint64_t(x);
  return int64_t(acc);
}
// NaN wins in max and min, as in numpy.
double max_f(const std::vector<double>& v) {
  double acc = -std::numeric_limits<double>::infinity();
  for (double x : v)
    if (std::isnan(x) || x > acc) acc = x;
  return acc;
}
int64_t max_i(const std::vector<int64_t>& v, DataType dtype) {
  int64_t acc = lowest_of(dtype);
  if (dtype.is_uint() && dtype.bits == 64) {
    for (int64_t x : v) acc = int64_t(std::max(uint64_t(acc), uint64_t(x)));
    return acc;
  }
  for (int64_t x : v) acc = std::max(acc, x);
  return acc;
}
double min_f(const std::vector<double>& v) {
  double acc = std::numeric_limits<double>::infinity();
  for (double x : v)
    if (std::isnan(x) || x < acc) acc = x;
  return acc;
}
int64_t min_i(const std::vector<int64_t>& v, DataType dtype) {
  int64_t acc = highest_of(dtype);
  if (dtype.is_uint() && dtype.bits == 64) {
    for (int64_t x : v) acc = int64_t(std::min(uint64_t(acc), uint64_t(x)));
    return acc;
  }
  for (int64_t x : v) acc = std::min(acc, x);
  return acc;
}
int64_t all_i(const std::vector<int64_t>& v, DataType) {
  for (int64_t x : v)
    if (x == 0) return 0;
  return 1;
}
int64_t any_i(const std::vector<int64_t>& v, DataType) {
  for (int64_t x : v)
    if (x != 0) return 1;
  return 0;
}
// Shifted by the largest element so that exp cannot overflow; empty gives -inf.
double logsumexp_f(const std::vector<double>& v) {
  double top = max_f(v);
  if (!std::isfinite(top)) return v.empty() ? -std::numeric_limits<double>::infinity() : top;
  double acc = 0;
  for (double x : v) acc += std::exp(x - top);
  return top + std::log(acc);
}
double l1_norm_f(const std::vector<double>& v) {
  double acc = 0;
  for (double x : v) acc += std::fabs(x);
  return acc;
}
int64_t l1_norm_i(const std::vector<int64_t>& v, DataType) {
  uint64_t acc = 0;
  for (int64_t x : v) acc += x < 0 ? 0 - uint64_t(x) : uint64_t(x);
  return int64_t(acc);
}
double sum_square_f(const std::vector<double>& v) {
  double acc = 0;
  for (double x : v) acc += x * x;
  return acc;
}
int64_t sum_square_i(const std::vector<int64_t>& v, DataType) {
  uint64_t acc = 0;
  for (int64_t x : v) acc += uint64_t(x) * uint64_t(x);
  return int64_t(acc);
}
double l2_norm_f(const std::vector<double>& v) { return std::sqrt(sum_square_f(v)); }

// Folds every group of data into an output of out_dtype.
Tensor fold_groups(const Tensor& data, const Reduction& plan, FloatFold float_fold,
                   IntFold int_fold, DataType out_dtype) {
  DataType dtype = data.dtype();
  if (is_integer_like(dtype)) {
    if (!int_fold) throw_error("this reduction does not take ", dtype.to_string(), " data");
    std::vector<int64_t> out;
    for (const auto& group : group_by_output(to_int64s(data), plan))
      out.push_back(int_fold(group, dtype));
    return from_int64s(out, plan.out_shape, out_dtype);
  }
  if (!float_fold) throw_error("this reduction does not take ", dtype.to_string(), " data");
  std::vector<double> out;
  for (const auto& group : group_by_output(to_doubles(data), plan))
    out.push_back(float_fold(group));
  return from_doubles(out, plan.out_shape, out_dtype);
}

// The axes of a dyn.* reduction: a 1-D integer tensor.
std::vector<int64_t> runtime_axes(const Tensor& axes) {
  if (axes.ndim() != 1) throw_error("reduction axes must be a 1-D tensor, got rank ", axes.ndim());
  return to_int64s(axes);
}

ReferenceKernel reduce_kernel(FloatFold float_fold, IntFold int_fold, bool axes_at_run_time) {
  return [=](const KernelArgs& args) -> std::vector<Tensor> {
    const auto& attrs = args.attrs_as<ReduceAttrs>();
    const Tensor& data = args.inputs[0];
    std::vector<int64_t> axes = axes_at_run_time ? runtime_axes(args.inputs[1]) : attrs.axis;
    std::vector<bool> reduced = reduced_axes(axes, attrs.exclude, data.ndim());
    Reduction plan = plan_reduction(data.shape(), reduced, attrs.keepdims);
    return {fold_groups(data, plan, float_fold, int_fold, args.out_dtype())};
  };
}

// ---------------------------------------------------------------- argmax, argmin

// The row-major position within each group of its largest (or smallest)
// element; NaN counts as the extreme, as in numpy. Ties go to the first
// position, or the last with select_last_index.
template <typename T>
int64_t arg_extreme(const std::vector<T>& group, bool largest, bool select_last) {
  if (group.empty()) throw_error("argmax/argmin of an empty set of elements");
  auto is_nan = [](T x) {
    if constexpr (std::is_floating_point_v<T>) return std::isnan(x);
    return false;
  };
  int64_t best = 0;
  for (size_t i = 1; i < group.size(); ++i) {
    T v = group[i], b = group[size_t(best)];
    bool tie = v == b || (is_nan(v) && is_nan(b));
    bool better = is_nan(b) ? false : is_nan(v) || (largest ? v > b : v < b);
    if (better || (tie && select_last)) best = int64_t(i);
  }
  return best;
}

ReferenceKernel arg_reduce_kernel(bool largest) {
  return [largest](const KernelArgs& args) -> std::vector<Tensor> {
    const auto& attrs = args.attrs_as<ArgReduceAttrs>();
    const Tensor& data = args.inputs[0];
    std::vector<bool> reduced = reduced_axes(attrs.axis, attrs.exclude, data.ndim());
    Reduction plan = plan_reduction(data.shape(), reduced, attrs.keepdims);
    std::vector<int64_t> out;
    if (data.dtype().is_uint() && data.dtype().bits == 64)
      throw_error("argmax/argmin of uint64 data is not supported by the reference kernel");
    if (is_integer_like(data.dtype())) {
      for (const auto& group : group_by_output(to_int64s(data), plan))
        out.push_back(arg_extreme(group, largest, attrs.select_last_index));
    } else {
      for (const auto& group : group_by_output(to_doubles(data), plan))
        out.push_back(arg_extreme(group, largest, attrs.select_last_index));
    }
    return {from_int64s(out, plan.out_shape, args.out_dtype())};
  };
}

// ---------------------------------------------------------------- variance, std

// Mean of the squared deviations from the given mean (broadcast to the data),
// divided by N - 1 when unbiased.
ReferenceKernel variance_kernel(bool take_sqrt) {
  return [take_sqrt](const KernelArgs& args) -> std::vector<Tensor> {
    const auto& attrs = args.attrs_as<VarianceAttrs>();
    const Tensor& data = args.inputs[0];
    const Tensor& mean = args.inputs[1];
    std::vector<double> x = to_doubles(data);
    std::vector<double> m = to_doubles(mean);
    std::vector<double> squared(x.size());
    for (size_t i = 0; i < x.size(); ++i) {
      double d = x[i] - m[size_t(broadcast_source(int64_t(i), data.shape(), mean.shape()))];
      squared[i] = d * d;
    }
    std::vector<bool> reduced = reduced_axes(attrs.axis, attrs.exclude, data.ndim());
    Reduction plan = plan_reduction(data.shape(), reduced, attrs.keepdims);
    std::vector<double> out;
    for (const auto& group : group_by_output(squared, plan)) {
      double divisor = double(group.size()) - (attrs.unbiased ? 1 : 0);
      double v = sum_f(group) / divisor;
      out.push_back(take_sqrt ? std::sqrt(v) : v);
    }
    return {from_doubles(out, plan.out_shape, args.out_dtype())};
  };
}

struct ReduceKernelSpec {
  const char* name;
  FloatFold float_fold;
  IntFold int_fold;  // null: the op takes no integer data
};

constexpr ReduceKernelSpec kReduceKernels[] = {
    {"sum", sum_f, sum_i},
    {"mean", mean_f, mean_i},
    {"prod", prod_f, prod_i},
    {"max", max_f, max_i},
    {"min", min_f, min_i},
    {"all", nullptr, all_i},
    {"any", nullptr, any_i},
    {"logsumexp", logsumexp_f, nullptr},
    {"l1_norm", l1_norm_f, l1_norm_i},
    {"l2_norm", l2_norm_f, nullptr},
    {"sum_square", sum_square_f, sum_square_i},
};

}  // namespace

void register_reduce_kernels() {
  for (const ReduceKernelSpec& spec : kReduceKernels) {
    register_kernel(spec.name, reduce_kernel(spec.float_fold, spec.int_fold, false));
    register_kernel(std::string("dyn.") + spec.name,
                    reduce_kernel(spec.float_fold, spec.int_fold, true));
  }
  register_kernel("argmax", arg_reduce_kernel(true));
  register_kernel("argmin", arg_reduce_kernel(false));
  register_kernel("variance", variance_kernel(false));
  register_kernel("std", variance_kernel(true));
}

}  // namespace anvil::reference
