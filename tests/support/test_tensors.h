// Helpers for tests that make tensors and check errors: the message an action throws, tensors
// filled from a value list, and element-wise closeness.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "anvil/runtime/tensor.h"
#include "anvil/support/error.h"

namespace anvil::testing {

// The message of the Error f throws, or "" if it throws none.
template <typename F>
std::string error_of(F&& f) {
  try {
    std::forward<F>(f)();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// A tensor of shape whose elements repeat `values` in row-major order.
inline Tensor filled(std::vector<int64_t> shape, DataType dtype,
                     const std::vector<double>& values) {
  Tensor t = Tensor::empty(std::move(shape), dtype);
  for (int64_t i = 0; i < t.numel(); ++i) t.set_from_double(i, values[size_t(i) % values.size()]);
  return t;
}

// A tensor of shape with values from a fixed pseudo-random sequence in [-1, 1).
inline Tensor pseudo_random(std::vector<int64_t> shape, DataType dtype, uint64_t seed) {
  Tensor t = Tensor::empty(std::move(shape), dtype);
  uint64_t state = seed * 0x9E3779B97F4A7C15ull + 1;
  for (int64_t i = 0; i < t.numel(); ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    t.set_from_double(i, double(state >> 40) / double(1ull << 23) - 1.0);
  }
  return t;
}

// Same shape and dtype, and every element within rtol of the expected one (relative to
// 1 + |expected|); a NaN is matched only by a NaN.
inline void expect_close(const Tensor& expected, const Tensor& got, const std::string& what,
                         double rtol = 1e-4) {
  ASSERT_EQ(expected.shape_vector(), got.shape_vector()) << what;
  ASSERT_EQ(expected.dtype(), got.dtype()) << what;
  for (int64_t i = 0; i < expected.numel(); ++i) {
    double e = expected.get_as_double(i), g = got.get_as_double(i);
    if (std::isnan(e) || std::isnan(g)) {
      ASSERT_EQ(std::isnan(e), std::isnan(g))
          << what << " element " << i << ": " << e << " vs " << g;
      continue;
    }
    if (e == g) continue;  // infinities included
    ASSERT_NEAR(e, g, rtol * (1 + std::fabs(e))) << what << " element " << i;
  }
}

}  // namespace anvil::testing
