// Reference kernels of the elementwise family's unary ops, the family's entry
// point, and the float rounding helpers the family shares. Floats are
// computed in double and rounded once to the output dtype; integers stay
// exact in int64 (uint64 in uint64).
#include "reference/elemwise_kernels.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <type_traits>

#include "anvil/support/error.h"
#include "anvil/support/half.h"
#include "reference/kernel_families.h"

namespace anvil::reference {

namespace elemwise {

// Defined in elemwise_binary_kernels.cpp and elemwise_cast_kernel.cpp.
void register_binary_kernels();
void register_cast_kernel();

int float_precision(DataType dtype) {
  if (dtype == DataType::float16()) return 11;
  if (dtype == DataType::bfloat16()) return 8;
  if (dtype == DataType::float32()) return 24;
  ANVIL_ICHECK(dtype == DataType::float64(), "no float precision for ", dtype.to_string());
  return 53;
}

double round_to_float_dtype(double x, DataType dtype) {
  if (dtype == DataType::float64() || !std::isfinite(x) || x == 0) return x;
  int precision = float_precision(dtype);
  // Smallest normal exponent and largest finite value of the dtype.
  int min_exponent = dtype == DataType::float16() ? -14 : -126;
  double max_finite = dtype == DataType::float16()    ? 65504.0
                      : dtype == DataType::bfloat16() ? 0x1.fep127
                                                      : double(std::numeric_limits<float>::max());
  int exponent = 0;
  std::frexp(x, &exponent);  // |x| = m * 2^exponent with m in [0.5, 1)
  // Subnormals share the spacing of the smallest normal binade.
  int lead = std::max(exponent - 1, min_exponent);
  double ulp = std::ldexp(1.0, lead - (precision - 1));
  // x / ulp is exact (a power-of-two scaling), so this is the only rounding;
  // nearest-even is spelled out so it does not depend on the FP environment.
  double scaled = x / ulp;
  double rounded = std::round(scaled);
  if (std::fabs(scaled - std::trunc(scaled)) == 0.5) rounded = 2.0 * std::round(scaled / 2.0);
  double result = rounded * ulp;
  // IEEE overflow is judged after rounding with an unbounded exponent.
  if (std::fabs(result) > max_finite)
    return std::copysign(std::numeric_limits<double>::infinity(), x);
  return result;
}

double round_magnitude(uint64_t magnitude, int precision) {
  int length = 64 - std::countl_zero(magnitude);
  if (length <= precision) return double(magnitude);
  int shift = length - precision;
  uint64_t kept = magnitude >> shift;
  uint64_t rest = magnitude & ((uint64_t(1) << shift) - 1);
  uint64_t half = uint64_t(1) << (shift - 1);
  if (rest > half || (rest == half && (kept & 1))) ++kept;
  return std::ldexp(double(kept), shift);  // kept has at most precision + 1 bits: exact
}

Tensor store_floats(const std::vector<double>& values, std::vector<int64_t> shape, DataType dtype) {
  ANVIL_ICHECK(dtype.is_float() || dtype.is_bfloat() || dtype.is_minifloat(), "store_floats into ",
               dtype.to_string());
  Tensor t = Tensor::empty(std::move(shape), dtype);
  ANVIL_ICHECK(int64_t(values.size()) == t.numel(), "value count ", values.size(), " vs ",
               t.numel());
  // float8 and float4 encode from the double itself: one rounding, saturating.
  if (dtype.is_minifloat()) {
    for (size_t i = 0; i < values.size(); ++i) t.set_from_double(int64_t(i), values[i]);
    return t;
  }
  // After rounding every value is representable, so the float32 step inside
  // set_from_double (and the 16-bit conversion after it) is exact.
  for (size_t i = 0; i < values.size(); ++i)
    t.set_from_double(int64_t(i), round_to_float_dtype(values[i], dtype));
  return t;
}

}  // namespace elemwise

namespace {

using namespace elemwise;

using FloatFn = double (*)(double);

// Round half to even without relying on the floating-point rounding mode.
double round_half_even(double x) {
  double r = std::round(x);
  if (std::fabs(x - std::trunc(x)) == 0.5) r = 2.0 * std::round(x / 2.0);
  return r;
}

double sign_of(double x) {
  if (std::isnan(x)) return x;
  return x > 0 ? 1.0 : x < 0 ? -1.0 : x;
}

// A kernel applying f to every element of a float tensor.
ReferenceKernel float_unary(FloatFn f) {
  return [f](const KernelArgs& args) {
    const Tensor& x = args.inputs[0];
    std::vector<double> values = to_doubles(x);
    for (double& v : values) v = f(v);
    return std::vector<Tensor>{store_floats(values, x.shape_vector(), args.out_dtype())};
  };
}

// A kernel for ops defined on integers and floats alike: int_fn receives the
// exact integer type of the dtype, float_fn a double.
template <typename IntFn>
ReferenceKernel numeric_unary(IntFn int_fn, FloatFn float_fn) {
  return [int_fn, float_fn](const KernelArgs& args) {
    const Tensor& x = args.inputs[0];
    if (!is_integer_like(x.dtype())) return float_unary(float_fn)(args);
    std::vector<int64_t> values = to_int64s(x);
    with_integer_type(x.dtype(), [&]<typename I>(I) {
      for (int64_t& v : values) v = int64_t(int_fn(I(v)));
    });
    return std::vector<Tensor>{from_int64s(values, x.shape_vector(), args.out_dtype())};
  };
}

// A kernel for the float predicates (isnan, ...): a bool tensor.
ReferenceKernel float_predicate(bool (*predicate)(double)) {
  return [predicate](const KernelArgs& args) {
    const Tensor& x = args.inputs[0];
    std::vector<double> values = to_doubles(x);
    std::vector<int64_t> result(values.size());
    for (size_t i = 0; i < values.size(); ++i) result[i] = predicate(values[i]) ? 1 : 0;
    return std::vector<Tensor>{from_int64s(result, x.shape_vector(), DataType::boolean())};
  };
}

void register_float_unary_kernels() {
  register_kernel("exp", float_unary([](double x) { return std::exp(x); }));
  register_kernel("log", float_unary([](double x) { return std::log(x); }));
  register_kernel("sqrt", float_unary([](double x) { return std::sqrt(x); }));
  register_kernel("rsqrt", float_unary([](double x) { return 1.0 / std::sqrt(x); }));
  register_kernel("sigmoid", float_unary([](double x) { return 1.0 / (1.0 + std::exp(-x)); }));
  register_kernel("tanh", float_unary([](double x) { return std::tanh(x); }));
  register_kernel("erf", float_unary([](double x) { return std::erf(x); }));
  register_kernel("floor", float_unary([](double x) { return std::floor(x); }));
  register_kernel("ceil", float_unary([](double x) { return std::ceil(x); }));
  register_kernel("round", float_unary(round_half_even));
  register_kernel("trunc", float_unary([](double x) { return std::trunc(x); }));
  register_kernel("sin", float_unary([](double x) { return std::sin(x); }));
  register_kernel("cos", float_unary([](double x) { return std::cos(x); }));
  register_kernel("tan", float_unary([](double x) { return std::tan(x); }));
  register_kernel("asin", float_unary([](double x) { return std::asin(x); }));
  register_kernel("acos", float_unary([](double x) { return std::acos(x); }));
  register_kernel("atan", float_unary([](double x) { return std::atan(x); }));
  register_kernel("sinh", float_unary([](double x) { return std::sinh(x); }));
  register_kernel("cosh", float_unary([](double x) { return std::cosh(x); }));
  register_kernel("asinh", float_unary([](double x) { return std::asinh(x); }));
  register_kernel("acosh", float_unary([](double x) { return std::acosh(x); }));
  register_kernel("atanh", float_unary([](double x) { return std::atanh(x); }));
  register_kernel("reciprocal", float_unary([](double x) { return 1.0 / x; }));
}

void register_numeric_unary_kernels() {
  // Integer abs and negation wrap for the most negative value, as numpy does.
  register_kernel("abs", numeric_unary(
                             []<typename I>(I v) -> I {
                               if constexpr (std::is_signed_v<I>)
                                 return v < 0 ? wrapping_sub(I(0), v) : v;
                               return v;
                             },
                             [](double x) { return std::fabs(x); }));
  register_kernel("negative", numeric_unary([]<typename I>(I v) { return wrapping_sub(I(0), v); },
                                            [](double x) { return -x; }));
  register_kernel("sign", numeric_unary(
                              []<typename I>(I v) -> I {
                                if constexpr (std::is_signed_v<I>)
                                  return v > 0 ? 1 : v < 0 ? -1 : 0;
                                return v > 0 ? 1 : 0;
                              },
                              sign_of));
}

void register_logic_unary_kernels() {
  register_kernel("logical_not", [](const KernelArgs& args) {
    const Tensor& x = args.inputs[0];
    std::vector<int64_t> values = to_int64s(x);
    for (int64_t& v : values) v = v == 0 ? 1 : 0;
    return std::vector<Tensor>{from_int64s(values, x.shape_vector(), DataType::boolean())};
  });
  register_kernel("bitwise_not", [](const KernelArgs& args) {
    const Tensor& x = args.inputs[0];
    std::vector<int64_t> values = to_int64s(x);
    // For bool the complement is negation; for integers the low bits of ~v
    // are the complement at the dtype's width.
    for (int64_t& v : values) v = x.dtype().is_bool() ? (v == 0 ? 1 : 0) : ~v;
    return std::vector<Tensor>{from_int64s(values, x.shape_vector(), x.dtype())};
  });
  register_kernel(
      "copy", [](const KernelArgs& args) { return std::vector<Tensor>{args.inputs[0].copy()}; });
  register_kernel("isnan", float_predicate([](double x) { return std::isnan(x); }));
  register_kernel("isinf", float_predicate([](double x) { return std::isinf(x); }));
  register_kernel("isfinite", float_predicate([](double x) { return std::isfinite(x); }));
}

}  // namespace

void register_elemwise_kernels() {
  register_float_unary_kernels();
  register_numeric_unary_kernels();
  register_logic_unary_kernels();
  elemwise::register_binary_kernels();
  elemwise::register_cast_kernel();
}

}  // namespace anvil::reference
