// What the pass tests share: parsing a module from text, printing it without types for
// golden comparisons, and running modules with the reference interpreter on random inputs.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "anvil/ir/functor.h"
#include "anvil/ir/infer_type.h"
#include "anvil/ir/parser.h"
#include "anvil/ir/printer.h"
#include "anvil/reference/reference.h"

namespace anvil::transform::testing {

// The module written in text, typed.
inline ir::IRModule parse(const std::string& text) {
  return ir::infer_type(ir::parse_module(text));
}

// The module's text without the type comments, which golden texts leave out, and without
// the metadata section of large constants (they print as meta[relay.Constant][i]).
inline std::string print(const ir::IRModule& mod) {
  ir::PrintOptions options;
  options.show_types = false;
  options.include_metadata = false;
  return ir::print_module(mod, options);
}

// A tensor of uniform values in [low, high) drawn from seed.
inline Tensor random_tensor(const std::vector<int64_t>& shape, uint64_t seed, double low = -1.0,
                            double high = 1.0, DataType dtype = DataType::float32()) {
  Tensor t = Tensor::empty(shape, dtype);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> dist(low, high);
  for (int64_t i = 0; i < t.numel(); ++i) t.set_from_double(i, dist(rng));
  return t;
}

// One random input per parameter of @main, shaped by its annotation.
inline std::vector<Tensor> random_inputs(const ir::IRModule& mod, uint64_t seed) {
  std::vector<Tensor> inputs;
  for (const ir::Var& p : mod.get_function("main")->params) {
    const auto* type = ir::as<ir::TensorTypeNode>(p->annotation);
    EXPECT_TRUE(type && type->static_shape()) << "parameter " << p->name;
    inputs.push_back(random_tensor(*type->static_shape(), seed++, -1.0, 1.0, type->dtype));
  }
  return inputs;
}

// Expects both lists of outputs to agree within rtol of the largest magnitude of each output.
inline void expect_all_close(const std::vector<Tensor>& expected, const std::vector<Tensor>& got,
                             double rtol) {
  ASSERT_EQ(expected.size(), got.size());
  for (size_t k = 0; k < expected.size(); ++k) {
    ASSERT_EQ(expected[k].shape_vector(), got[k].shape_vector()) << "output " << k;
    double scale = 0;
    for (int64_t i = 0; i < expected[k].numel(); ++i)
      scale = std::max(scale, std::abs(expected[k].get_as_double(i)));
    double tolerance = rtol * std::max(scale, 1e-30);
    for (int64_t i = 0; i < expected[k].numel(); ++i) {
      ASSERT_NEAR(expected[k].get_as_double(i), got[k].get_as_double(i), tolerance)
          << "output " << k << " element " << i;
    }
  }
}

// Runs @main of both modules on the same inputs and expects the same outputs.
inline void expect_same_outputs(const ir::IRModule& before, const ir::IRModule& after,
                                const std::vector<Tensor>& before_inputs,
                                const std::vector<Tensor>& after_inputs, double rtol = 1e-5) {
  std::vector<Tensor> expected = reference::Interpreter(before).run(before_inputs);
  std::vector<Tensor> got = reference::Interpreter(after).run(after_inputs);
  expect_all_close(expected, got, rtol);
}

// Calls of op_name in @main.
inline int count_calls(const ir::IRModule& mod, const std::string& op_name) {
  int count = 0;
  ir::post_order_visit(mod.get_function("main")->body, [&](const ir::Expr& e) {
    const auto* call = ir::as<ir::CallNode>(e);
    if (call && call->op() && call->op()->name == op_name) ++count;
  });
  return count;
}

}  // namespace anvil::transform::testing
