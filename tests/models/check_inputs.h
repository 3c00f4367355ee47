// The seeded batch of check inputs (check_inputs.npz, export_models.py) that classifiers are
// compared on input by input, and ONNX Runtime's first output on each (<name>.checks.npz).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "anvil/runtime/graph_executor.h"
#include "anvil/runtime/npy.h"
#include "models/model_cache.h"

namespace anvil::testing {

// The tensor called name, or null.
inline const Tensor* find_tensor(const NamedTensors& tensors, const std::string& name) {
  for (const auto& [key, tensor] : tensors)
    if (key == name) return &tensor;
  return nullptr;
}

// The tensor called name; a test failure and an empty tensor where there is none.
inline const Tensor& named(const NamedTensors& tensors, const std::string& name) {
  if (const Tensor* found = find_tensor(tensors, name)) return *found;
  ADD_FAILURE() << "no tensor '" << name << "'";
  static Tensor none;
  return none;
}

// Row `row` of a (rows, ...) tensor as a (1, ...) tensor.
inline Tensor row_of(const Tensor& batch, int64_t row) {
  std::vector<int64_t> shape = batch.shape_vector();
  shape[0] = 1;
  Tensor out = Tensor::empty(shape, batch.dtype());
  const int64_t n = out.numel();
  for (int64_t i = 0; i < n; ++i) out.set_from_double(i, batch.get_as_double(row * n + i));
  return out;
}

// The index of the largest of t's elements offset .. offset + n - 1, less the offset.
inline int64_t argmax(const Tensor& t, int64_t offset, int64_t n) {
  int64_t best = 0;
  for (int64_t i = 1; i < n; ++i)
    if (t.get_as_double(offset + i) > t.get_as_double(offset + best)) best = i;
  return best;
}

// The rows of a and b, (rows, classes) each, whose largest elements sit at the same index.
inline int64_t same_top1(const Tensor& a, const Tensor& b) {
  const int64_t rows = a.shape_vector()[0], classes = a.shape_vector()[1];
  EXPECT_EQ(a.shape_vector(), b.shape_vector());
  int64_t same = 0;
  for (int64_t r = 0; r < rows; ++r)
    same += argmax(a, r * classes, classes) == argmax(b, r * classes, classes);
  return same;
}

struct CheckRun {
  int64_t inputs = 0;
  int64_t same_top1 = 0;     // inputs whose largest output is ONNX Runtime's largest
  double max_gap = 0;        // max |anvil - ort| over every output of every input
  double max_magnitude = 0;  // max |ort| likewise
};

// Runs `executor` (model `name`, one input called `input`) on every check input and holds its
// first output, (1, classes), to ONNX Runtime's.
inline CheckRun run_check_inputs(GraphExecutor& executor, const std::string& name,
                                 const std::string& input) {
  const std::filesystem::path cache = model_cache();
  const Tensor inputs = named(read_npz(cache / "check_inputs.npz"), "input");
  const Tensor expected = named(read_npz(cache / (name + ".checks.npz")), "output_0");
  CheckRun run;
  run.inputs = inputs.shape_vector()[0];
  const int64_t classes = expected.shape_vector()[1];
  EXPECT_EQ(expected.shape_vector()[0], run.inputs) << name;
  for (int64_t k = 0; k < run.inputs; ++k) {
    executor.set_input(input, row_of(inputs, k));
    executor.run();
    const Tensor got = executor.get_output(0);
    EXPECT_EQ(got.numel(), classes) << name;
    if (got.numel() != classes) return run;
    for (int64_t j = 0; j < classes; ++j) {
      const double g = got.get_as_double(j), w = expected.get_as_double(k * classes + j);
      run.max_gap = std::max(run.max_gap, std::isfinite(g) ? std::fabs(g - w) : HUGE_VAL);
      run.max_magnitude = std::max(run.max_magnitude, std::fabs(w));
    }
    run.same_top1 += argmax(got, 0, classes) == argmax(expected, k * classes, classes);
  }
  return run;
}

}  // namespace anvil::testing
