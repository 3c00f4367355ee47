// While loops on the virtual machine: trip counts from an input (0, 1 and 100), a condition
// computed from the data (the exit taken early), a carried tensor that grows every iteration
// (its size variable bound anew on each pass), a loop inside an If branch reading values from
// outside, and a loop's text printed and parsed back. Each against the reference interpreter
// and against values worked out by hand.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "anvil/driver/vm_build.h"
#include "anvil/ir/infer_type.h"
#include "anvil/ir/parser.h"
#include "anvil/ir/printer.h"
#include "anvil/ir/structural_equal.h"
#include "anvil/reference/reference.h"
#include "anvil/support/error.h"
#include "support/test_tensors.h"
#include "support/vm_oracle.h"

namespace anvil {
namespace {

using testing::error_of;
using testing::expect_matches_reference;
using testing::filled;

ir::IRModule parse(const std::string& text) { return ir::infer_type(ir::parse_module(text)); }

Tensor scalar(DataType dtype, double value) {
  Tensor t = Tensor::empty({}, dtype);
  t.set_from_double(0, value);
  return t;
}

// acc <- acc / 2 + x, n times: acc = x * (2 - 2^-n); the count comes out as well.
constexpr const char* kCounted = R"(
def @main(%n: Tensor[(), int64], %x: Tensor[(4), float32]) {
  %0 = while (%i: Tensor[(), int64] = 0i64, %acc: Tensor[(4), float32] = %x) {
    less(%i, %n)
  } do {
    (add(%i, 1i64), add(multiply(%acc, 0.5f), %x))
  };
  (%0.0, %0.1)
}
)";

TEST(VmLoop, TripCountFromAnInput) {
  ir::IRModule mod = parse(kCounted);
  const Tensor x = filled({4}, DataType::float32(), {0.5, -1.0, 2.0, 0.25});
  for (int opt_level : {0, 3}) {
    driver::BuildOptions options;
    options.pass_context.opt_level = opt_level;
    driver::VmModule built = driver::build_vm(mod, {}, options);
    // Every group of the condition and body is a compiled kernel.
    EXPECT_EQ(built.print_bytecode().find("invoke_packed"), std::string::npos)
        << built.print_bytecode();
    VirtualMachine vm = built.create_vm();
    // 100, then 0 and 1: buffers kept from a longer run must not leak into a shorter one.
    for (int64_t n : {100, 0, 1, 3}) {
      SCOPED_TRACE("n = " + std::to_string(n) + " at opt level " + std::to_string(opt_level));
      expect_matches_reference(vm, mod, {scalar(DataType::int64(), double(n)), x},
                               built.print_bytecode());
      EXPECT_EQ(vm.get_output(0).get_as_double(0), double(n));
      for (int64_t j = 0; j < 4; ++j)
        EXPECT_NEAR(vm.get_output(1).get_as_double(j),
                    x.get_as_double(j) * (2 - std::pow(0.5, double(n))), 1e-6);
    }
  }
}

// Doubles x until its sum reaches the limit, at most 100 times: the condition reads the data.
TEST(VmLoop, DataDependentExitTakenEarly) {
  ir::IRModule mod = parse(R"(
def @main(%limit: Tensor[(), float32], %x: Tensor[(3), float32]) {
  %0 = while (%i: Tensor[(), int64] = 0i64, %s: Tensor[(3), float32] = %x) {
    logical_and(less(%i, 100i64), less(sum(%s), %limit))
  } do {
    (add(%i, 1i64), multiply(%s, 2f))
  };
  (%0.0, %0.1)
}
)");
  driver::VmModule built = driver::build_vm(mod, {});
  VirtualMachine vm = built.create_vm();
  const Tensor x = filled({3}, DataType::float32(), {0.25, 0.5, 0.25});  // sums to 1
  // Limit 0: no iteration; 1: none either (1 is not below 1); 5: three doublings (8 >= 5);
  // 1e30: the count stops it at 100.
  for (auto [limit, count] :
       std::vector<std::pair<double, int64_t>>{{0, 0}, {1, 0}, {5, 3}, {1e30, 100}}) {
    SCOPED_TRACE(limit);
    expect_matches_reference(vm, mod, {scalar(DataType::float32(), limit), x},
                             built.print_bytecode());
    EXPECT_EQ(vm.get_output(0).get_as_double(0), double(count));
    EXPECT_FLOAT_EQ(vm.get_output(1).get_as_double(1), 0.5f * std::pow(2.0f, float(count)));
  }
}

// A (?, 3) tensor that gains a row per iteration, negated each time: n + 1 rows, row r of
// them x times (-1)^(n - r).
TEST(VmLoop, CarriedTensorGrowsEveryIteration) {
  ir::IRModule mod = parse(R"(
def @main(%n: Tensor[(), int64], %x: Tensor[(3), float32]) {
  %0 = expand_dims(%x, axis=0);
  %1 = while (%i: Tensor[(), int64] = 0i64, %rows: Tensor[(?, 3), float32] = %0) {
    less(%i, %n)
  } do {
    (add(%i, 1i64), concatenate((negative(%rows), %0), axis=0))
  };
  sigmoid(%1.1)
}
)");
  driver::VmModule built = driver::build_vm(mod, {});
  // The growing tensor's kernels are compiled over the size variable the loop's head binds.
  EXPECT_EQ(built.print_bytecode().find("invoke_packed"), std::string::npos)
      << built.print_bytecode();
  VirtualMachine vm = built.create_vm();
  const Tensor x = filled({3}, DataType::float32(), {0.5, -1.5, 2.0});
  for (int64_t n : {0, 1, 5, 2}) {
    SCOPED_TRACE(n);
    expect_matches_reference(vm, mod, {scalar(DataType::int64(), double(n)), x},
                             built.print_bytecode());
    Tensor got = vm.get_output(0);
    ASSERT_EQ(got.shape_vector(), (std::vector<int64_t>{n + 1, 3}));
    for (int64_t r = 0; r <= n; ++r)
      for (int64_t j = 0; j < 3; ++j) {
        const double sign = (n - r) % 2 == 0 ? 1 : -1;
        EXPECT_NEAR(got.get_as_double(r * 3 + j), 1 / (1 + std::exp(-sign * x.get_as_double(j))),
                    1e-6);
      }
  }
}

// A loop in an If branch, adding a value computed outside both n times.
TEST(VmLoop, LoopInsideABranchReadsOuterValues) {
  ir::IRModule mod = parse(R"(
def @main(%c: bool, %n: Tensor[(), int64], %x: Tensor[(4), float32]) {
  %0 = exp(%x);
  %1 = if (%c) {
    %2 = while (%i: Tensor[(), int64] = 0i64, %a: Tensor[(4), float32] = %x) {
      less(%i, %n)
    } do {
      (add(%i, 1i64), add(%a, %0))
    };
    %2.1
  } else {
    %0
  };
  add(%1, %0)
}
)");
  driver::VmModule built = driver::build_vm(mod, {});
  VirtualMachine vm = built.create_vm();
  const Tensor x = filled({4}, DataType::float32(), {0.5, -1.0, 2.0, -0.25});
  for (bool c : {true, false})
    for (int64_t n : {0, 4}) {
      SCOPED_TRACE(std::to_string(c) + " " + std::to_string(n));
      expect_matches_reference(
          vm, mod, {scalar(DataType::boolean(), c), scalar(DataType::int64(), double(n)), x},
          built.print_bytecode());
      for (int64_t j = 0; j < 4; ++j) {
        const double e = std::exp(x.get_as_double(j));
        EXPECT_NEAR(vm.get_output(0).get_as_double(j),
                    c ? x.get_as_double(j) + double(n + 1) * e : 2 * e, 1e-5);
      }
    }
}

TEST(VmLoop, TextPrintsAndParsesBack) {
  ir::IRModule mod = parse(kCounted);
  const std::string text = ir::print_module(mod);
  EXPECT_NE(text.find("while (%i: int64 = 0i64, %acc: Tensor[(4), float32] = %x) {"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("} do {"), std::string::npos) << text;
  ir::IRModule again = parse(text);
  EXPECT_TRUE(ir::structural_equal(mod.get_function("main"), again.get_function("main")));
  EXPECT_EQ(ir::structural_hash(mod.get_function("main")),
            ir::structural_hash(again.get_function("main")));
}

TEST(VmLoop, TypeErrorsNameTheLoopVariable) {
  // The body gives %acc a (5) where its type is (4); a condition that is no scalar bool.
  EXPECT_NE(error_of([] {
              parse(R"(
def @main(%x: Tensor[(4), float32]) {
  %0 = while (%acc: Tensor[(4), float32] = %x) { False } do { (concatenate((%acc, %acc), axis=0),) };
  %0.0
}
)");
            })
                .find("loop variable %acc has type Tensor[(4), float32] but the body gives it "
                      "Tensor[(8), float32]"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              parse(R"(
def @main(%x: Tensor[(4), float32]) {
  %0 = while (%acc: Tensor[(4), float32] = %x) { %acc } do { (%acc,) };
  %0.0
}
)");
            }).find("loop condition must be a scalar bool"),
            std::string::npos);
  // The vars are not visible after the loop.
  EXPECT_NE(error_of([] {
              ir::parse_module(R"(
def @main(%x: Tensor[(4), float32]) {
  %0 = while (%acc: Tensor[(4), float32] = %x) { False } do { (%acc,) };
  %acc
}
)");
            }).find("unknown variable %acc"),
            std::string::npos);
}

}  // namespace
}  // namespace anvil
