// Helpers shared by the elementwise, cast and activation reference kernels:
// rounding a double once, exactly, to a float dtype (so float16 and bfloat16
// results are not rounded twice through float32), and running integer
// arithmetic in a type that holds every value of the input dtype exactly.
#pragma once

#include <cstdint>
#include <vector>

#include "reference/kernel_util.h"

namespace anvil::reference::elemwise {

// x rounded to nearest even at the precision and range of the float dtype
// (float16, bfloat16, float32 or float64); beyond the largest finite value
// it becomes infinity, as IEEE 754 overflow does.
double round_to_float_dtype(double x, DataType dtype);

// A magnitude rounded to nearest even at `precision` significant bits; exact
// where a conversion through double would round twice.
double round_magnitude(uint64_t magnitude, int precision);

// Significant bits (with the implicit one) of a float dtype: 11 for float16.
int float_precision(DataType dtype);

// A tensor of a float dtype from doubles, each rounded once to the dtype.
Tensor store_floats(const std::vector<double>& values, std::vector<int64_t> shape, DataType dtype);

// Calls f with the integer type in which the dtype's values are computed
// exactly: uint64_t for uint64, int64_t for everything else (bool, the other
// unsigned types and all signed ones fit). f receives a value of that type.
// to_int64s keeps uint64 as its bit pattern, so I(value) recovers it.
template <typename F>
decltype(auto) with_integer_type(DataType dtype, F&& f) {
  if (dtype == DataType::uint64()) return f(uint64_t{});
  return f(int64_t{});
}

// Two's complement wrap-around arithmetic, as numpy does for fixed-width
// integers, without the undefined behaviour of signed overflow in C++.
template <typename I>
I wrapping_add(I a, I b) {
  return I(uint64_t(a) + uint64_t(b));
}
template <typename I>
I wrapping_sub(I a, I b) {
  return I(uint64_t(a) - uint64_t(b));
}
template <typename I>
I wrapping_mul(I a, I b) {
  return I(uint64_t(a) * uint64_t(b));
}

}  // namespace anvil::reference::elemwise
