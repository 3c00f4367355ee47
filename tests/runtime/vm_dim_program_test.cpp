// Dims computed at run time (vm::DimProgram): values against plain arithmetic, floor semantics
// for negative operands, text, and the errors a corrupt program or huge sizes give.
#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "anvil/runtime/vm_executable.h"
#include "anvil/support/error.h"

namespace anvil::vm {
namespace {

using Op = DimProgram::Op;

DimProgram program(std::vector<DimProgram::Step> steps) {
  DimProgram p;
  p.steps = std::move(steps);
  return p;
}

std::string error_of(const DimProgram& p, const std::vector<int64_t>& vars) {
  try {
    p.evaluate(vars);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(DimProgram, EvaluatesOverSizeVariables) {
  // (n * 2 + s) and floordiv / floormod with negative operands (floor, not truncation).
  DimProgram sum = program({{Op::Var, 0}, {Op::Const, 2}, {Op::Mul}, {Op::Var, 1}, {Op::Add}});
  for (int64_t n : {0, 1, 7})
    for (int64_t s : {1, 5}) EXPECT_EQ(sum.evaluate({n, s}), n * 2 + s);
  EXPECT_EQ(sum.to_string({"n", "s"}), "(n * 2) + s");
  DimProgram div = program({{Op::Var, 0}, {Op::Const, 4}, {Op::FloorDiv}});
  DimProgram mod = program({{Op::Var, 0}, {Op::Const, 4}, {Op::FloorMod}});
  for (int64_t x : {-9, -8, -1, 0, 3, 9}) {
    int64_t floor = x >= 0 ? x / 4 : -((-x + 3) / 4);
    EXPECT_EQ(div.evaluate({x}), floor) << x;
    EXPECT_EQ(mod.evaluate({x}), x - floor * 4) << x;
  }
  EXPECT_EQ(program({{Op::Var, 0}, {Op::Var, 1}, {Op::Min}}).evaluate({3, 9}), 3);
  EXPECT_EQ(program({{Op::Var, 0}, {Op::Var, 1}, {Op::Max}}).evaluate({3, 9}), 9);
  EXPECT_EQ(program({{Op::Var, 0}, {Op::Const, 1}, {Op::Sub}}).evaluate({3}), 2);
  // numpy's broadcast of two dims; -1 where they do not broadcast.
  DimProgram broadcast = program({{Op::Var, 0}, {Op::Var, 1}, {Op::Broadcast}});
  for (auto [a, b, expected] : {std::tuple<int64_t, int64_t, int64_t>{1, 5, 5},
                                {5, 1, 5},
                                {4, 4, 4},
                                {1, 0, 0},
                                {0, 1, 0},
                                {0, 0, 0},
                                {3, 4, -1},
                                {0, 2, -1}})
    EXPECT_EQ(broadcast.evaluate({a, b}), expected) << a << " " << b;
  EXPECT_EQ(broadcast.to_string({"a", "b"}), "broadcast(a, b)");
  EXPECT_TRUE(DimProgram(5).is_static());
  EXPECT_EQ(DimProgram(5).evaluate({}), 5);
}

TEST(DimProgram, HugeSizesAndCorruptProgramsAreErrors) {
  const int64_t big = std::numeric_limits<int64_t>::max() / 2 + 1;
  EXPECT_EQ(error_of(program({{Op::Var, 0}, {Op::Const, 2}, {Op::Mul}}), {big}),
            "vm: a dim overflows int64");
  EXPECT_EQ(error_of(program({{Op::Var, 0}, {Op::Var, 0}, {Op::Add}}), {big}),
            "vm: a dim overflows int64");
  const int64_t lowest = std::numeric_limits<int64_t>::min();
  EXPECT_EQ(error_of(program({{Op::Var, 0}, {Op::Const, -1}, {Op::FloorDiv}}), {lowest}),
            "vm: a dim overflows int64");
  EXPECT_EQ(program({{Op::Var, 0}, {Op::Const, -1}, {Op::FloorMod}}).evaluate({lowest}), 0);
  EXPECT_EQ(error_of(program({{Op::Var, 0}, {Op::Const, 0}, {Op::FloorDiv}}), {3}),
            "vm: a dim divides by zero");
  EXPECT_EQ(error_of(program({{Op::Var, 2}}), {3}), "vm: a dim program reads size variable 2 of 1");
  EXPECT_EQ(error_of(program({{Op::Const, 1}, {Op::Add}}), {}),
            "vm: a dim program applies an operator to too few operands");
  EXPECT_EQ(error_of(program({{Op::Const, 1}, {Op::Const, 2}}), {}),
            "vm: a dim program leaves 2 values instead of one");
}

}  // namespace
}  // namespace anvil::vm
