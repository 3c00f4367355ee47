// Helpers shared by the tensor file format tests.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "anvil/runtime/tensor.h"

namespace anvil::testing {

// Every element type numpy and anvil share.
inline const std::vector<std::string>& numpy_dtype_names() {
  static const std::vector<std::string> names = {"bool",   "int8",    "int16",   "int32",
                                                 "int64",  "uint8",   "uint16",  "uint32",
                                                 "uint64", "float16", "float32", "float64"};
  return names;
}

// Shapes that exercise 0-d, zero-size and odd extents.
inline const std::vector<std::vector<int64_t>>& test_shapes() {
  static const std::vector<std::vector<int64_t>> shapes = {
      {}, {0}, {1}, {7}, {2, 3}, {0, 4}, {3, 0, 2}, {1, 1, 1}, {2, 3, 4}};
  return shapes;
}

// A deterministic, type-appropriate value for element i: negative values for
// signed types, fractions for floats, both truth values for bool.
inline double test_value(DataType dtype, int64_t i, int salt = 0) {
  int64_t k = i * 7 + salt * 13;
  if (dtype.is_bool()) return k % 3 == 0 ? 1 : 0;
  if (dtype.is_uint()) return double(k % 251);
  if (dtype.is_int()) return double(k % 113) - 56;
  return double(k % 41) * 0.25 - 5;
}

// A tensor filled with test_value.
inline Tensor make_test_tensor(DataType dtype, std::vector<int64_t> shape, int salt = 0) {
  Tensor t = Tensor::empty(std::move(shape), dtype);
  for (int64_t i = 0, n = t.numel(); i < n; ++i) t.set_from_double(i, test_value(dtype, i, salt));
  return t;
}

// The Python expression numpy uses to build the same values as make_test_tensor.
inline std::string numpy_test_array(DataType dtype, const std::vector<int64_t>& shape,
                                    int salt = 0) {
  std::string shape_text = "(";
  for (int64_t d : shape) shape_text += std::to_string(d) + ",";
  shape_text += ")";
  std::string k =
      "(np.arange(int(np.prod(" + shape_text + "))) * 7 + " + std::to_string(salt * 13) + ")";
  std::string values;
  if (dtype.is_bool())
    values = "(" + k + " % 3 == 0)";
  else if (dtype.is_uint())
    values = "(" + k + " % 251)";
  else if (dtype.is_int())
    values = "(" + k + " % 113 - 56)";
  else
    values = "(" + k + " % 41 * 0.25 - 5)";
  std::string np_name = dtype.is_bool() ? "bool_" : dtype.to_string();
  return values + ".astype(np." + np_name + ").reshape(" + shape_text + ")";
}

// Dtype, shape and every byte equal.
inline void expect_same_tensor(const Tensor& actual, const Tensor& expected,
                               const std::string& context = "") {
  ASSERT_TRUE(actual.defined()) << context;
  EXPECT_EQ(actual.dtype(), expected.dtype()) << context;
  ASSERT_EQ(actual.shape_vector(), expected.shape_vector()) << context;
  ASSERT_EQ(actual.nbytes(), expected.nbytes()) << context;
  Tensor a = actual.copy(), e = expected.copy();
  EXPECT_EQ(std::memcmp(a.data(), e.data(), size_t(a.nbytes())), 0) << context;
}

}  // namespace anvil::testing
