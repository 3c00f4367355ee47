// The virtual machine against the reference interpreter: static models, If, data-dependent
// shapes, the bytecode text and user errors.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "anvil/driver/vm_build.h"
#include "anvil/ir/infer_type.h"
#include "anvil/ir/parser.h"
#include "anvil/reference/reference.h"
#include "anvil/support/error.h"
#include "anvil/testing/workloads.h"
#include "support/test_tensors.h"
#include "support/vm_oracle.h"

namespace anvil {
namespace {

using testing::error_of;
using testing::expect_close;
using testing::expect_matches_reference;
using testing::filled;

ir::IRModule parse(const std::string& text) { return ir::infer_type(ir::parse_module(text)); }

Tensor scalar_bool(bool value) {
  Tensor t = Tensor::empty({}, DataType::boolean());
  t.set_from_double(0, value ? 1 : 0);
  return t;
}

TEST(VirtualMachine, StaticMlpMatchesReference) {
  testing::Workload w = testing::mlp(2, 24, 16, 5);
  driver::VmModule built = driver::build_vm(w.mod, w.params);
  std::string code = built.print_bytecode();
  EXPECT_NE(code.find("invoke_kernel"), std::string::npos) << code;
  EXPECT_EQ(code.find("invoke_packed"), std::string::npos) << code;
  VirtualMachine vm = built.create_vm();
  ASSERT_EQ(vm.get_num_inputs(), 1);
  std::vector<InputInfo> info = vm.get_input_info();
  EXPECT_EQ(info[0].name, "data");
  EXPECT_EQ(info[0].shape, (std::vector<int64_t>{2, 24}));
  Tensor data = filled({2, 24}, DataType::float32(), {0.5, -1.25, 2.0, 0.75, -0.1});
  std::vector<Tensor> inputs = {data};
  for (const auto& [name, value] : w.params) inputs.push_back(value);
  vm.set_input("data", data);
  vm.run();
  std::vector<Tensor> expected = reference::Interpreter(w.mod).run(inputs);
  ASSERT_EQ(vm.get_num_outputs(), 1);
  expect_close(expected[0], vm.get_output(0), "mlp output");
  // A second run reuses the storage and gives the same answer.
  vm.run();
  expect_close(expected[0], vm.get_output(0), "mlp output, second run");
}

TEST(VirtualMachine, StaticResnetMatchesReference) {
  testing::Workload w = testing::resnet(18, 1, {3, 32, 32}, 10);
  driver::VmModule built = driver::build_vm(w.mod, w.params);
  VirtualMachine vm = built.create_vm();
  Tensor data = filled({1, 3, 32, 32}, DataType::float32(), {0.3, -0.7, 1.1, 0.05, -0.4, 0.9, 0.2});
  vm.set_input("data", data);
  vm.run();
  std::vector<Tensor> inputs = {data};
  for (const auto& [name, value] : w.params) inputs.push_back(value);
  std::vector<Tensor> expected = reference::Interpreter(w.mod).run(inputs);
  expect_close(expected[0], vm.get_output(0), "resnet18 output");
}

constexpr const char* kIfModule = R"(
def @main(%c: bool, %x: Tensor[(2, 3), float32]) {
  %0 = add(%x, %x);
  %1 = if (%c) {
    nn.relu(%0)
  } else {
    negative(exp(%0))
  };
  (multiply(%1, %0), %0)
}
)";

TEST(VirtualMachine, IfTakesEitherBranch) {
  ir::IRModule mod = parse(kIfModule);
  Tensor x = filled({2, 3}, DataType::float32(), {0.5, -1.0, 2.0, -0.25, 0.0, 1.5});
  for (int opt_level : {0, 3}) {
    driver::BuildOptions options;
    options.pass_context.opt_level = opt_level;
    driver::VmModule built = driver::build_vm(mod, {}, options);
    VirtualMachine vm = built.create_vm();
    // True, false, then true again: storage reused across runs must not leak between branches.
    for (bool taken : {true, false, true}) {
      SCOPED_TRACE(std::string(taken ? "then" : "else") + " at opt level " +
                   std::to_string(opt_level));
      expect_matches_reference(vm, mod, {scalar_bool(taken), x}, built.print_bytecode());
    }
  }
}

TEST(VirtualMachine, NestedIfAndValuesSharedWithBranches) {
  ir::IRModule mod = parse(R"(
def @main(%a: bool, %b: bool, %x: Tensor[(4), float32]) {
  %0 = exp(%x);
  %1 = sigmoid(%x);
  %2 = if (%a) {
    %3 = if (%b) { add(%0, %1) } else { subtract(%0, %1) };
    multiply(%3, %1)
  } else {
    %0
  };
  add(%2, %1)
}
)");
  driver::VmModule built = driver::build_vm(mod, {});
  VirtualMachine vm = built.create_vm();
  Tensor x = filled({4}, DataType::float32(), {0.5, -1.0, 2.0, -0.25});
  for (bool a : {true, false})
    for (bool b : {true, false}) {
      SCOPED_TRACE(std::to_string(a) + std::to_string(b));
      expect_matches_reference(vm, mod, {scalar_bool(a), scalar_bool(b), x},
                               built.print_bytecode());
    }
}

TEST(VirtualMachine, NonzeroFeedsFurtherOps) {
  ir::IRModule mod = parse(R"(
def @main(%x: Tensor[(3, 4), float32]) {
  %0 = nonzero(%x);
  %1 = cast(%0, dtype="float32");
  %2 = multiply(%1, 2f);
  sum(%2, axis=[1])
}
)");
  driver::VmModule built = driver::build_vm(mod, {});
  VirtualMachine vm = built.create_vm();
  // 5 and then 2 non-zero elements: the dynamic dim changes between runs.
  expect_matches_reference(vm, mod, {filled({3, 4}, DataType::float32(), {0, 1.5, 0, -2, 3, 0})},
                           built.print_bytecode());
  expect_matches_reference(
      vm, mod, {filled({3, 4}, DataType::float32(), {0, 0, 0, 0, 0, 0, 0, 7, 0, 0, 0, 1})},
      built.print_bytecode());
  EXPECT_EQ(vm.get_output(0).shape_vector(), (std::vector<int64_t>{2}));
}

TEST(VirtualMachine, UniqueFeedsFurtherOps) {
  ir::IRModule mod = parse(R"(
def @main(%x: Tensor[(8), float32]) {
  %0 = unique(%x, sorted=True);
  %1 = %0.0;
  %2 = %0.3;
  (add(%1, 1f), cast(%2, dtype="float32"), %0.2)
}
)");
  driver::VmModule built = driver::build_vm(mod, {});
  VirtualMachine vm = built.create_vm();
  expect_matches_reference(vm, mod, {filled({8}, DataType::float32(), {3, 1, 3, 2, 1, 1, 5, 2})},
                           built.print_bytecode());
  EXPECT_EQ(vm.get_output(0).shape_vector(), (std::vector<int64_t>{4}));
}

TEST(VirtualMachine, DynamicInputDimAcceptsAnySize) {
  ir::IRModule mod = parse(R"(
def @main(%x: Tensor[(?, 3), float32], %w: Tensor[(3), float32]) {
  nn.relu(multiply(add(%x, %w), %x))
}
)");
  driver::VmModule built = driver::build_vm(mod, {});
  VirtualMachine vm = built.create_vm();
  EXPECT_EQ(vm.get_input_info()[0].shape, (std::vector<int64_t>{-1, 3}));
  Tensor w = filled({3}, DataType::float32(), {0.5, -2, 1});
  for (int64_t rows : {1, 4, 2}) {
    SCOPED_TRACE(rows);
    expect_matches_reference(vm, mod,
                             {filled({rows, 3}, DataType::float32(), {1, -0.5, 2, 3, 0.25}), w},
                             built.print_bytecode());
  }
}

TEST(VirtualMachine, BytecodeText) {
  ir::IRModule mod = parse(R"(
def @main(%c: bool, %x: Tensor[(4), float32]) {
  %0 = if (%c) { exp(%x) } else { %x };
  nonzero(%0)
}
)");
  // Hand-derived: the If is emitted when nonzero reads it; the then branch is a compiled
  // kernel writing fresh storage, the else branch moves the input; nonzero's shape function
  // counts the nonzero elements, load_shape names that count d0, and nonzero's kernel writes
  // an output allocated over it.
  EXPECT_EQ(driver::build_vm(mod, {}).print_bytecode(),
            "def @main(%c: Tensor[(), bool], %x: Tensor[(4), float32]) {  // 6 registers\n"
            "  0: if r0 then 1 else 5\n"
            "  1: r3 = alloc_tensor Tensor[(4), float32]\n"
            "  2: invoke_kernel fused_exp(r1) -> (r3)\n"
            "  3: r2 = move r3\n"
            "  4: goto 6\n"
            "  5: r2 = move r1\n"
            "  6: r4 = alloc_tensor Tensor[(2), int64]\n"
            "  7: invoke_kernel shape_nonzero(r2) -> (r4)\n"
            "  8: load_shape r4 (1, d0)\n"
            "  9: r5 = alloc_tensor Tensor[(1, d0), int64]\n"
            "  10: invoke_kernel fused_nonzero(r2) -> (r5)\n"
            "  11: ret r5\n"
            "}\n");
}

TEST(VirtualMachine, UserErrorsNameTheInput) {
  ir::IRModule mod = parse(kIfModule);
  VirtualMachine vm = driver::build_vm(mod, {}).create_vm();
  EXPECT_EQ(error_of([&] { vm.run(); }), "run: input 'c' was not set");
  vm.set_input("c", scalar_bool(true));
  EXPECT_EQ(error_of([&] { vm.run(); }), "run: input 'x' was not set");
  EXPECT_EQ(error_of([&] {
              vm.set_input("x", Tensor::zeros({3, 2}, DataType::float32()));
            }),
            "set_input: input 'x' has 3 in dim 0, but the model fixes that dim at 2 (expects (2, "
            "3) float32)");
  EXPECT_EQ(error_of([&] {
              vm.set_input("x", Tensor::zeros({2, 3}, DataType::int32()));
            }),
            "set_input: input 'x' expects (2, 3) float32, got (2, 3) int32");
  EXPECT_EQ(error_of([&] {
              vm.set_input("y", Tensor::zeros({2, 3}, DataType::float32()));
            }),
            "set_input: no input named 'y'");
  EXPECT_EQ(error_of([&] { vm.get_output(0); }),
            "get_output: output index 0 out of range (the last run produced 0 outputs)");
  EXPECT_EQ(vm.get_input_index("x"), 1);
  EXPECT_EQ(vm.get_input_index("nope"), -1);
}

TEST(VirtualMachine, BenchmarkRuns) {
  ir::IRModule mod = parse(kIfModule);
  VirtualMachine vm = driver::build_vm(mod, {}).create_vm();
  vm.set_input("c", scalar_bool(false));
  vm.set_input("x", Tensor::zeros({2, 3}, DataType::float32()));
  BenchmarkResult result = vm.benchmark(3, 2);
  EXPECT_EQ(result.results_ms.size(), 3u);
  EXPECT_LE(result.min_ms, result.max_ms);
}

}  // namespace
}  // namespace anvil
