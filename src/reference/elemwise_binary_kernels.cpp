// Reference kernels of the broadcasting binary ops, where and clip. Integer
// operands are computed exactly (int64, or uint64 for uint64) with numpy's
// fixed-width wrap-around; the cases C++ leaves undefined (division by zero,
// the most negative value divided by -1, shifts past the width) get the
// results numpy gives for them.
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "anvil/ir/attrs/elemwise.h"
#include "anvil/support/error.h"
#include "reference/elemwise_kernels.h"

namespace anvil::reference::elemwise {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Placeholder for the float side of integer-only ops; the type relation
// never lets a float reach it.
double no_float(double, double) {
  ANVIL_ICHECK(false, "integer-only op given a float");
  return kNaN;
}

// A broadcasting binary kernel. int_op receives the exact integer type of the
// operands' dtype; float_op receives doubles. Either returns the value of the
// output (a bool for comparisons).
template <typename IntOp, typename FloatOp>
ReferenceKernel binary_kernel(IntOp int_op, FloatOp float_op) {
  return [int_op, float_op](const KernelArgs& args) {
    const Tensor& a = args.inputs[0];
    const Tensor& b = args.inputs[1];
    std::vector<int64_t> shape = broadcast_shape(a.shape(), b.shape());
    int64_t n = shape_numel(shape);
    DataType out_dtype = args.out_dtype();
    if (is_integer_like(a.dtype())) {
      std::vector<int64_t> av = to_int64s(a), bv = to_int64s(b);
      std::vector<int64_t> out(static_cast<size_t>(n));
      with_integer_type(a.dtype(), [&]<typename I>(I) {
        for (int64_t i = 0; i < n; ++i) {
          I x = I(av[size_t(broadcast_source(i, shape, a.shape()))]);
          I y = I(bv[size_t(broadcast_source(i, shape, b.shape()))]);
          out[size_t(i)] = int64_t(int_op(x, y));
        }
      });
      return std::vector<Tensor>{from_int64s(out, shape, out_dtype)};
    }
    std::vector<double> av = to_doubles(a), bv = to_doubles(b);
    std::vector<double> out(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      double x = av[size_t(broadcast_source(i, shape, a.shape()))];
      double y = bv[size_t(broadcast_source(i, shape, b.shape()))];
      out[size_t(i)] = double(float_op(x, y));
    }
    if (out_dtype.is_bool()) {
      std::vector<int64_t> flags(out.begin(), out.end());
      return std::vector<Tensor>{from_int64s(flags, shape, out_dtype)};
    }
    return std::vector<Tensor>{store_floats(out, shape, out_dtype)};
  };
}

template <typename I>
constexpr bool is_most_negative(I v) {
  if constexpr (std::is_signed_v<I>) return v == std::numeric_limits<I>::min();
  return false;
}

// Truncating division; x / 0 is 0 as in numpy, and min / -1 wraps to min.
template <typename I>
I int_divide(I x, I y) {
  if (y == 0) return 0;
  if (is_most_negative(x) && y == I(-1)) return x;
  return x / y;
}

// Remainder of truncating division (sign of x); x % 0 is 0 as in numpy.
template <typename I>
I int_mod(I x, I y) {
  if (y == 0 || (is_most_negative(x) && y == I(-1))) return 0;
  return x % y;
}

// Remainder of flooring division (sign of y), Python's %.
template <typename I>
I int_floor_mod(I x, I y) {
  I r = int_mod(x, y);
  if constexpr (std::is_signed_v<I>)
    if (r != 0 && (r < 0) != (y < 0)) r = wrapping_add(r, y);
  return r;
}

template <typename I>
I int_floor_divide(I x, I y) {
  I q = int_divide(x, y);
  if constexpr (std::is_signed_v<I>)
    if (y != 0 && int_mod(x, y) != 0 && (x < 0) != (y < 0)) q = wrapping_sub(q, I(1));
  return q;
}

// Exponentiation by squaring with wrap-around. A negative exponent gives
// 1 / x^-y truncated toward zero, which is 0 unless |x| is 1 (and for x = 0,
// where numpy raises, 0 as well).
template <typename I>
I int_power(I x, I y) {
  if constexpr (std::is_signed_v<I>) {
    if (y < 0) {
      if (x == 1) return 1;
      if (x == -1) return (y & 1) ? -1 : 1;
      return 0;
    }
  }
  I result = 1;
  for (uint64_t e = uint64_t(y); e != 0; e >>= 1) {
    if (e & 1) result = wrapping_mul(result, x);
    x = wrapping_mul(x, x);
  }
  return result;
}

// Shifts by a negative amount or by 64 or more behave as shifting all bits
// out; narrower dtypes lose the excess bits when the result is stored.
template <typename I>
I int_left_shift(I x, I y) {
  if (y < 0 || y >= 64) return 0;
  return I(uint64_t(x) << uint64_t(y));
}

template <typename I>
I int_right_shift(I x, I y) {
  if (y < 0 || y >= 64) {
    if constexpr (std::is_signed_v<I>) return x < 0 ? -1 : 0;
    return 0;
  }
  return x >> y;  // arithmetic for signed types (defined since C++20)
}

// numpy's float remainder: the sign of the divisor, NaN for a zero divisor.
double float_floor_mod(double x, double y) {
  double r = std::fmod(x, y);
  if (r != 0 && (r < 0) != (y < 0)) r += y;
  if (r == 0) r = std::copysign(0.0, y);
  return r;
}

// maximum and minimum propagate NaN, as numpy's (and ONNX's Max/Min) do.
double float_maximum(double x, double y) {
  if (std::isnan(x) || std::isnan(y)) return kNaN;
  return x < y ? y : x;
}
double float_minimum(double x, double y) {
  if (std::isnan(x) || std::isnan(y)) return kNaN;
  return y < x ? y : x;
}

void register_arithmetic_kernels() {
  register_kernel("add", binary_kernel([](auto x, auto y) { return wrapping_add(x, y); },
                                       [](double x, double y) { return x + y; }));
  register_kernel("subtract", binary_kernel([](auto x, auto y) { return wrapping_sub(x, y); },
                                            [](double x, double y) { return x - y; }));
  register_kernel("multiply", binary_kernel([](auto x, auto y) { return wrapping_mul(x, y); },
                                            [](double x, double y) { return x * y; }));
  register_kernel("divide", binary_kernel([](auto x, auto y) { return int_divide(x, y); },
                                          [](double x, double y) { return x / y; }));
  register_kernel("power", binary_kernel([](auto x, auto y) { return int_power(x, y); },
                                         [](double x, double y) { return std::pow(x, y); }));
  register_kernel("maximum",
                  binary_kernel([](auto x, auto y) { return x < y ? y : x; }, float_maximum));
  register_kernel("minimum",
                  binary_kernel([](auto x, auto y) { return y < x ? y : x; }, float_minimum));
  register_kernel("mod", binary_kernel([](auto x, auto y) { return int_mod(x, y); },
                                       [](double x, double y) { return std::fmod(x, y); }));
  register_kernel("floor_mod", binary_kernel([](auto x, auto y) { return int_floor_mod(x, y); },
                                             float_floor_mod));
  register_kernel("floor_divide",
                  binary_kernel([](auto x, auto y) { return int_floor_divide(x, y); },
                                [](double x, double y) { return std::floor(x / y); }));
}

void register_comparison_kernels() {
  register_kernel("equal", binary_kernel([](auto x, auto y) { return x == y; },
                                         [](double x, double y) { return x == y; }));
  register_kernel("not_equal", binary_kernel([](auto x, auto y) { return x != y; },
                                             [](double x, double y) { return x != y; }));
  register_kernel("less", binary_kernel([](auto x, auto y) { return x < y; },
                                        [](double x, double y) { return x < y; }));
  register_kernel("less_equal", binary_kernel([](auto x, auto y) { return x <= y; },
                                              [](double x, double y) { return x <= y; }));
  register_kernel("greater", binary_kernel([](auto x, auto y) { return x > y; },
                                           [](double x, double y) { return x > y; }));
  register_kernel("greater_equal", binary_kernel([](auto x, auto y) { return x >= y; },
                                                 [](double x, double y) { return x >= y; }));
}

void register_bitwise_kernels() {
  register_kernel("logical_and",
                  binary_kernel([](auto x, auto y) { return x != 0 && y != 0; }, no_float));
  register_kernel("logical_or",
                  binary_kernel([](auto x, auto y) { return x != 0 || y != 0; }, no_float));
  register_kernel("logical_xor",
                  binary_kernel([](auto x, auto y) { return (x != 0) != (y != 0); }, no_float));
  register_kernel("bitwise_and", binary_kernel([](auto x, auto y) { return x & y; }, no_float));
  register_kernel("bitwise_or", binary_kernel([](auto x, auto y) { return x | y; }, no_float));
  register_kernel("bitwise_xor", binary_kernel([](auto x, auto y) { return x ^ y; }, no_float));
  register_kernel("left_shift",
                  binary_kernel([](auto x, auto y) { return int_left_shift(x, y); }, no_float));
  register_kernel("right_shift",
                  binary_kernel([](auto x, auto y) { return int_right_shift(x, y); }, no_float));
}

// where(condition, x, y): copies whole elements, so every dtype stays exact.
std::vector<Tensor> where_kernel(const KernelArgs& args) {
  const Tensor& cond = args.inputs[0];
  const Tensor& x = args.inputs[1];
  const Tensor& y = args.inputs[2];
  std::vector<int64_t> shape = broadcast_shape(cond.shape(), x.shape());
  shape = broadcast_shape(shape, y.shape());
  std::vector<int64_t> flags = to_int64s(cond);
  Tensor out = Tensor::empty(shape, x.dtype());
  size_t element = size_t(x.dtype().bytes());
  char* dst = static_cast<char*>(out.data());
  for (int64_t i = 0, n = out.numel(); i < n; ++i) {
    bool take_x = flags[size_t(broadcast_source(i, shape, cond.shape()))] != 0;
    const Tensor& src = take_x ? x : y;
    int64_t source = broadcast_source(i, shape, src.shape());
    std::memcpy(dst + i * int64_t(element),
                static_cast<const char*>(src.data()) + src.byte_offset_of(source), element);
  }
  return {out};
}

// The integer bounds [lo, hi] of a clip to [a_min, a_max] within I's range:
// an integer v satisfies a_min <= v exactly when ceil(a_min) <= v.
template <typename I>
std::pair<I, I> integer_clip_bounds(double a_min, double a_max) {
  constexpr double kLowest = double(std::numeric_limits<I>::lowest());
  // max() + 1 is a power of two, exact in double.
  constexpr double kPastMax = double(std::numeric_limits<I>::max() / 2 + 1) * 2.0;
  double lo = std::ceil(a_min), hi = std::floor(a_max);
  I lo_int = lo <= kLowest    ? std::numeric_limits<I>::lowest()
             : lo >= kPastMax ? std::numeric_limits<I>::max()
                              : I(lo);
  I hi_int = hi <= kLowest    ? std::numeric_limits<I>::lowest()
             : hi >= kPastMax ? std::numeric_limits<I>::max()
                              : I(hi);
  return {lo_int, hi_int};
}

std::vector<Tensor> clip_kernel(const KernelArgs& args) {
  const auto& attrs = args.attrs_as<ir::ClipAttrs>();
  const Tensor& x = args.inputs[0];
  if (is_integer_like(x.dtype())) {
    std::vector<int64_t> values = to_int64s(x);
    with_integer_type(x.dtype(), [&]<typename I>(I) {
      auto [lo, hi] = integer_clip_bounds<I>(attrs.a_min, attrs.a_max);
      for (int64_t& v : values) {
        I value = I(v);
        value = value < lo ? lo : value;
        value = value > hi ? hi : value;
        v = int64_t(value);
      }
    });
    return {from_int64s(values, x.shape_vector(), x.dtype())};
  }
  std::vector<double> values = to_doubles(x);
  for (double& v : values) {
    if (std::isnan(v)) continue;  // NaN stays NaN, as in numpy's clip
    v = v < attrs.a_min ? attrs.a_min : v;
    v = v > attrs.a_max ? attrs.a_max : v;
  }
  return {store_floats(values, x.shape_vector(), x.dtype())};
}

}  // namespace

void register_binary_kernels() {
  register_arithmetic_kernels();
  register_comparison_kernels();
  register_bitwise_kernels();
  register_kernel("where", where_kernel);
  register_kernel("clip", clip_kernel);
}

}  // namespace anvil::reference::elemwise
