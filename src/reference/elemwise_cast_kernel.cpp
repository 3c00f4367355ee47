// The reference kernel of cast, following ONNX's Cast rules:
// - float to float rounds to nearest even, once (no double rounding through
//   float32 on the way to float16 or bfloat16); out of range gives infinity;
// - integer to float rounds the exact integer to nearest even;
// - float to integer truncates toward zero. ONNX leaves out-of-range values
//   undefined; here they saturate to the dtype's range and NaN becomes 0, so
//   the result never depends on the platform;
// - integer to integer keeps the low bits (two's complement wrap-around), and so
//   does float to int4/uint4/int2/uint2 after truncating (as ml_dtypes converts);
// - to float8/float4 rounds to nearest even and saturates (Cast's default
//   saturate=1: beyond the largest finite value, infinity included, gives it);
// - anything to bool is "not zero" (NaN is not zero, so true).
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "anvil/ir/attrs/transform.h"
#include "reference/elemwise_kernels.h"

namespace anvil::reference::elemwise {

namespace {

// A float already truncated toward zero, saturated into I's range.
template <typename I>
I saturate_to(double truncated) {
  if (std::isnan(truncated)) return 0;
  constexpr double kLowest = double(std::numeric_limits<I>::lowest());
  // max() + 1 is a power of two, exact in double, unlike max() itself.
  constexpr double kPastMax = double(std::numeric_limits<I>::max() / 2 + 1) * 2.0;
  if (truncated <= kLowest) return std::numeric_limits<I>::lowest();
  if (truncated >= kPastMax) return std::numeric_limits<I>::max();
  return I(truncated);
}

// A float truncated into an integer dtype of any width, saturating.
int64_t float_to_integer(double value, DataType to) {
  double t = std::trunc(value);
  if (to.is_sub_byte_int()) return saturate_to<int64_t>(t);  // from_int64s wraps
  if (to.is_int()) {
    switch (to.bits) {
      case 8:
        return saturate_to<int8_t>(t);
      case 16:
        return saturate_to<int16_t>(t);
      case 32:
        return saturate_to<int32_t>(t);
      default:
        return saturate_to<int64_t>(t);
    }
  }
  switch (to.bits) {
    case 8:
      return saturate_to<uint8_t>(t);
    case 16:
      return saturate_to<uint16_t>(t);
    case 32:
      return saturate_to<uint32_t>(t);
    default:
      return int64_t(saturate_to<uint64_t>(t));  // bit pattern, as from_int64s expects
  }
}

std::vector<Tensor> cast_kernel(const KernelArgs& args) {
  const Tensor& x = args.inputs[0];
  DataType from = x.dtype();
  DataType to = args.out_dtype();
  std::vector<int64_t> shape = x.shape_vector();
  if (from == to) return {x.copy()};

  if (is_integer_like(from)) {
    std::vector<int64_t> values = to_int64s(x);
    if (is_integer_like(to)) return {from_int64s(values, shape, to)};  // wraps; bool is v != 0
    if (to.is_minifloat()) {
      std::vector<double> exact(values.size());
      with_integer_type(from, [&]<typename I>(I) {
        for (size_t i = 0; i < values.size(); ++i) exact[i] = double(I(values[i]));
      });
      return {store_floats(exact, shape, to)};
    }
    int precision = float_precision(to);
    std::vector<double> result(values.size());
    with_integer_type(from, [&]<typename I>(I) {
      for (size_t i = 0; i < values.size(); ++i) {
        I v = I(values[i]);
        bool negative = false;
        if constexpr (std::is_signed_v<I>) negative = v < 0;
        // The magnitude of the most negative int64 is 2^63, which uint64 holds.
        uint64_t magnitude = negative ? uint64_t(0) - uint64_t(v) : uint64_t(v);
        double rounded = round_magnitude(magnitude, precision);
        result[i] = negative ? -rounded : rounded;
      }
    });
    return {store_floats(result, shape, to)};
  }

  std::vector<double> values = to_doubles(x);
  if (to.is_bool()) {
    std::vector<int64_t> flags(values.size());
    for (size_t i = 0; i < values.size(); ++i) flags[i] = values[i] != 0 ? 1 : 0;
    return {from_int64s(flags, shape, to)};
  }
  if (is_integer_like(to)) {
    std::vector<int64_t> ints(values.size());
    for (size_t i = 0; i < values.size(); ++i) ints[i] = float_to_integer(values[i], to);
    return {from_int64s(ints, shape, to)};
  }
  return {store_floats(values, shape, to)};
}

// The same bytes under another dtype (bool is one byte of 0 or 1).
std::vector<Tensor> reinterpret_kernel(const KernelArgs& args) {
  const Tensor& x = args.inputs[0];
  Tensor y = Tensor::empty(x.shape_vector(), args.out_dtype());
  std::memcpy(y.data(), x.data(), size_t(x.nbytes()));
  return {y};
}

}  // namespace

void register_cast_kernel() {
  register_kernel("cast", cast_kernel);
  register_kernel("reinterpret", reinterpret_kernel);
}

}  // namespace anvil::reference::elemwise
