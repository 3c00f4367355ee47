// Checking an op's compiled kernel against its reference kernel: the op is wrapped as a
// one-call fused group, lowered (with and without the default schedule), JIT-compiled and
// run; every output is compared with reference::evaluate_call on the same inputs.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "anvil/ir/ir.h"
#include "anvil/runtime/module.h"
#include "anvil/runtime/tensor.h"

namespace anvil::topi_test {

struct Tolerance {
  double rtol = 1e-5;
  double atol = 1e-6;
};

// A tensor of shape with seeded values uniform in [lo, hi) (integers: rounded; bool: 0/1).
Tensor random_tensor(std::vector<int64_t> shape, DataType dtype, uint64_t seed, double lo = -1,
                     double hi = 1);

// The op's attrs with the given fields over its defaults (ir::make_op_attrs).
ir::Attrs attrs(const std::string& op,
                const std::vector<std::pair<std::string, ir::AttrValue>>& fields);

// `op(inputs...)` as a typed one-call fused group, the function check_op lowers.
ir::Function op_function(const std::string& op, const std::vector<Tensor>& inputs,
                         ir::Attrs attrs = nullptr);

// Compiles `op(inputs...)` and checks it against the reference kernel (EXPECT failures name
// the op, the schedule, the output and the first differing element).
void check_op(const std::string& op, const std::vector<Tensor>& inputs, ir::Attrs attrs = nullptr,
              Tolerance tol = {});

// Calls module's "kernel" on inputs and a zeroed output shaped like `like`; returns the output.
Tensor run_kernel(const Module& module, const std::vector<Tensor>& inputs, const Tensor& like);

// Fails (once, naming `how` and the first bad element) unless every element of got is within
// rel_of_max x (the largest |want|, at least 1) of want: the check for float32 sums of many
// rounded products, whose error scales with the output's magnitude rather than each element's.
void expect_close_to_max(const Tensor& got, const Tensor& want, double rel_of_max,
                         const std::string& how);

// The function `fn (%a: Tensor[...], ...) { ... }` of graph IR text, typed and marked Primitive
// (a fused group, as lowering receives it).
ir::Function primitive_function(const std::string& function_text);

// The same for a whole fused group given as graph IR text of a function
// `fn (%a: Tensor[...], ...) { ... }` (parsed as @main of a module, then lowered as one
// group); inputs are random unless given.
void check_group(const std::string& function_text, std::vector<Tensor> inputs = {},
                 Tolerance tol = {});

}  // namespace anvil::topi_test
