// Linear-algebra runtime functions (anvil/runtime/builtins.h): the determinant, by LU
// decomposition with partial pivoting.
#include <cmath>
#include <utility>
#include <vector>

#include "anvil/runtime/builtins.h"
#include "anvil/runtime/packed_func.h"
#include "anvil/support/error.h"
#include "runtime/builtin_registration.h"

namespace anvil::builtins {
namespace {

// The determinant of the n x n row-major matrix a (overwritten by its LU factors).
double lu_determinant(std::vector<double>& a, int64_t n) {
  double det = 1;
  for (int64_t k = 0; k < n; ++k) {
    int64_t pivot = k;
    for (int64_t i = k + 1; i < n; ++i)
      if (std::fabs(a[size_t(i * n + k)]) > std::fabs(a[size_t(pivot * n + k)])) pivot = i;
    if (a[size_t(pivot * n + k)] == 0) return 0;  // singular
    if (pivot != k) {
      for (int64_t j = 0; j < n; ++j) std::swap(a[size_t(k * n + j)], a[size_t(pivot * n + j)]);
      det = -det;
    }
    const double diagonal = a[size_t(k * n + k)];
    det *= diagonal;
    for (int64_t i = k + 1; i < n; ++i) {
      const double factor = a[size_t(i * n + k)] / diagonal;
      if (factor == 0) continue;
      for (int64_t j = k + 1; j < n; ++j) a[size_t(i * n + j)] -= factor * a[size_t(k * n + j)];
    }
  }
  return det;
}

}  // namespace

Tensor determinant(const Tensor& x) {
  const DataType dtype = x.dtype();
  if (dtype != DataType::float32() && dtype != DataType::float64())
    throw_error("det: the input must be float32 or float64, got ", dtype.to_string());
  if (x.ndim() < 2)
    throw_error("det: the input must have rank 2 or more, got shape ", shape_to_string(x.shape()));
  const int64_t n = x.shape()[size_t(x.ndim() - 1)];
  if (x.shape()[size_t(x.ndim() - 2)] != n)
    throw_error("det: the last two dims must be equal (square matrices), got shape ",
                shape_to_string(x.shape()));
  std::vector<int64_t> batch_shape(x.shape().begin(), x.shape().end() - 2);
  Tensor out = Tensor::empty(batch_shape, dtype);
  const int64_t count = out.numel();
  std::vector<double> matrix(size_t(n * n));
  for (int64_t b = 0; b < count; ++b) {
    for (int64_t e = 0; e < n * n; ++e) matrix[size_t(e)] = x.get_as_double(b * n * n + e);
    out.set_from_double(b, lu_determinant(matrix, n));
  }
  return out;
}

namespace {

// The VM's runtime-function convention: the input, then where the output goes.
const bool kRegistered = [] {
  detail::register_runtime_function(kDeterminant, &determinant);
  return true;
}();

}  // namespace

}  // namespace anvil::builtins
