// Helpers for writing reference kernels plainly: tensors are read into flat
// vectors of double (or int64 where integers must stay exact), computed on
// with ordinary loops, and written back in the output dtype.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "anvil/reference/reference.h"

namespace anvil::reference {

// All elements in row-major order, as double (float16/bfloat16 widened exactly).
std::vector<double> to_doubles(const Tensor& t);
// to_int64s, the integer counterpart, is public (anvil/reference/reference.h).
// A new tensor of the given shape and dtype holding the values (rounded/cast as C++ casts do,
// except float16/bfloat16 which round to nearest even).
Tensor from_doubles(const std::vector<double>& values, std::vector<int64_t> shape, DataType dtype);
Tensor from_int64s(const std::vector<int64_t>& values, std::vector<int64_t> shape, DataType dtype);

// Numpy broadcast of concrete shapes (the type relation has already checked them).
std::vector<int64_t> broadcast_shape(std::span<const int64_t> a, std::span<const int64_t> b);
// Row-major strides of a shape.
std::vector<int64_t> row_major_strides(std::span<const int64_t> shape);
// The flat index into an input of in_shape that broadcasting maps output index `out_flat`
// (of out_shape) to.
int64_t broadcast_source(int64_t out_flat, std::span<const int64_t> out_shape,
                         std::span<const int64_t> in_shape);
// Multi-index of a flat row-major index.
std::vector<int64_t> unravel(int64_t flat, std::span<const int64_t> shape);

// True for the dtypes whose values must be computed as exact integers.
inline bool is_integer_like(DataType t) { return t.is_int() || t.is_uint() || t.is_bool(); }

// Normalizes a possibly negative axis against a rank.
inline int64_t wrap_axis(int64_t axis, int64_t rank) { return axis < 0 ? axis + rank : axis; }

}  // namespace anvil::reference
