// Strategy records (anvil/topi/strategy.h) as a second target uses them: a toy target key with
// one record for nn.dense, compiled through build() with "-keys=toy"; priorities, declines,
// typed lookups and refused schedule steps.
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <vector>

#include "anvil/driver/build.h"
#include "anvil/ir/infer_type.h"
#include "anvil/ir/op.h"
#include "anvil/ir/parser.h"
#include "anvil/lower/lower.h"
#include "anvil/reference/reference.h"
#include "anvil/topi/strategy.h"
#include "support/test_tensors.h"

namespace anvil {
namespace {

constexpr const char* kDenseModel = R"(
def @main(%x: Tensor[(5, 8), float32], %w: Tensor[(16, 8), float32], %b: Tensor[(16), float32]) {
  %0 = nn.dense(%x, %w);
  %1 = nn.bias_add(%0, %b);
  nn.relu(%1)
})";

std::atomic<int> toy_computes{0}, toy_schedules{0};

// The toy target's dense: out[i, j] = sum_k x[i, k] * w[j, k], written here rather than taken
// from the op's own compute, and scheduled by parallelizing its rows.
std::vector<te::Tensor> toy_dense_compute(const topi::ComputeArgs& args) {
  ++toy_computes;
  const te::Tensor x = args.inputs[0], w = args.inputs[1];
  tir::IterVar k = te::reduce_axis(w.shape()[1], "k");
  auto body = [=](const std::vector<tir::Var>& idx) {
    return tir::sum(x(idx[0], k.var) * w(idx[1], k.var), {k});
  };
  return {te::compute(args.out_shape(), body, "T_toy_dense")};
}

void toy_dense_schedule(tir::Schedule& sch, const topi::ScheduleArgs& args) {
  ++toy_schedules;
  std::vector<tir::LoopRV> loops = sch.get_loops(sch.get_block(args.anchor_block));
  // An optional step that is refused (it names a block the kernel does not have): the kernel
  // says so.
  sch.try_apply("toy: place a missing block",
                [&](tir::Schedule& s) { s.get_loops(s.get_block("toy_missing_block")); });
  sch.parallel(loops.front());
}

// Registered once for the whole binary: the records of a key are kept by priority.
void register_toy_target() {
  static bool done = [] {
    topi::register_strategy("nn.dense", "toy",
                            {.name = "toy.dense",
                             .precisions = {DataType::float32()},
                             .compute = toy_dense_compute,
                             .schedule = toy_dense_schedule});
    // Tried first, and declines every group: the kernel says so, and the next record runs.
    topi::register_strategy("nn.dense", "toy",
                            {.name = "toy.declining",
                             .priority = 10,
                             .schedule = [](tir::Schedule&, const topi::ScheduleArgs&) {
                               throw Error("toy.declining takes no group");
                             }});
    return true;
  }();
  (void)done;
}

std::string text_attr(const tir::PrimFunc& func, const char* key) {
  const ir::AttrValue* value = func->func_attrs.find(key);
  const std::string* text = value ? std::get_if<std::string>(value) : nullptr;
  return text ? *text : std::string();
}

TEST(StrategyTarget, ToyTargetCompilesAModelWithItsOwnRecord) {
  register_toy_target();
  ir::IRModule mod = ir::infer_type(ir::parse_module(kDenseModel));
  const DataType f32 = DataType::float32();
  Tensor x = testing::pseudo_random({5, 8}, f32, 1);
  Tensor w = testing::pseudo_random({16, 8}, f32, 2);
  Tensor b = testing::pseudo_random({16}, f32, 3);
  Tensor expected = reference::Interpreter(mod).run({x, w, b}).at(0);

  const int computes = toy_computes, schedules = toy_schedules;
  driver::BuildOptions options;
  options.target = "llvm -keys=toy";
  driver::BuiltModule built = driver::build(mod, {{"w", w}, {"b", b}}, options);
  EXPECT_GT(toy_computes.load(), computes);
  EXPECT_GT(toy_schedules.load(), schedules);
  GraphExecutor executor = built.create_executor();
  executor.set_input("x", x);
  executor.run();
  testing::expect_close(expected, executor.get_output(0), "toy dense");
  // The profile names the record and the step its schedule was refused.
  bool profiled = false;
  for (const KernelProfile& row : executor.profile(1)) {
    if (row.schedule.rfind("toy.dense", 0) != 0) continue;
    profiled = true;
    EXPECT_NE(row.schedule_refused.find("toy: place a missing block: "), std::string::npos)
        << row.schedule_refused;
  }
  EXPECT_TRUE(profiled);

  // The kernel says which record scheduled it and which declined first; the toy key has no
  // layout anchor, so the weight is not packed as x86's record would have it.
  const std::string json = built.graph_json();
  EXPECT_NE(json.find("\"schedule\": \"toy.dense (declined toy.declining: "), std::string::npos)
      << json;
  EXPECT_EQ(json.find("x86.dense_pack"), std::string::npos) << json;
  EXPECT_EQ(built.get_source("relay").find("nn.contrib_dense_pack"), std::string::npos);

  // The same model for the CPU keys takes x86's records.
  driver::BuiltModule cpu = driver::build(mod, {{"w", w}, {"b", b}});
  EXPECT_NE(cpu.graph_json().find("x86.dense_pack"), std::string::npos) << cpu.graph_json();
}

TEST(StrategyTarget, RecordsAreTriedByPriorityAndEachDeclineIsRecorded) {
  register_toy_target();
  std::vector<std::string> keys = {"toy"};
  std::vector<const topi::Strategy*> records = topi::find_strategies("nn.dense", keys);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0]->name, "toy.declining");
  EXPECT_EQ(records[1]->name, "toy.dense");
  // A key with no records for the op gives way to the next key.
  std::vector<std::string> fallback = {"no-such-target", "x86"};
  ASSERT_FALSE(topi::find_strategies("nn.dense", fallback).empty());
  EXPECT_EQ(topi::find_strategies("nn.dense", fallback).front()->name, "x86.dense_pack");
  EXPECT_EQ(topi::find_strategy("nn.dense", fallback, topi::LayoutRole::Follows), nullptr);
  EXPECT_EQ(*topi::find_strategy_compute("nn.dense", keys)->target<decltype(&toy_dense_compute)>(),
            &toy_dense_compute);

  ir::IRModule mod = ir::infer_type(ir::parse_module(R"(
def @main(%x: Tensor[(5, 8), float32], %w: Tensor[(6, 8), float32]) {
  %0 = fn (%p0: Tensor[(5, 8), float32], %p1: Tensor[(6, 8), float32], Primitive=1) {
    nn.dense(%p0, %p1)
  };
  %0(%x, %w)
})"));
  const auto* call = ir::as<ir::CallNode>(mod.get_function("main")->body);
  ASSERT_TRUE(call);
  lower::LowerGroupOptions options;
  options.strategy_keys = keys;
  tir::PrimFunc kernel =
      lower::lower_primitive(ir::downcast<ir::FunctionNode>(call->callee), "kernel", options);
  EXPECT_EQ(text_attr(kernel, topi::kScheduleAttr), "toy.dense");
  EXPECT_EQ(text_attr(kernel, topi::kScheduleDeclinedAttr),
            "toy.declining: toy.declining takes no group");
}

TEST(StrategyTarget, TargetStringsCarryTheirKeys) {
  driver::BuildOptions options;
  options.target = "c -keys=toy,x86";
  register_toy_target();
  ir::IRModule mod = ir::infer_type(ir::parse_module(kDenseModel));
  const DataType f32 = DataType::float32();
  Tensor w = testing::pseudo_random({16, 8}, f32, 2);
  Tensor b = testing::pseudo_random({16}, f32, 3);
  driver::BuiltModule built = driver::build(mod, {{"w", w}, {"b", b}}, options);
  EXPECT_NE(built.graph_json().find("toy.dense"), std::string::npos);
  options.target = "llvm -keys=";
  EXPECT_THROW(driver::build(mod, {{"w", w}, {"b", b}}, options), Error);
  options.target = "llvm -keys=toy,,x86";
  EXPECT_THROW(driver::build(mod, {{"w", w}, {"b", b}}, options), Error);
}

TEST(StrategyTarget, AnEntryOfTheWrongTypeIsAnErrorNotAMissingEntry) {
  ir::OpDef& dense = ir::OpTable::global().get_mutable("nn.dense");
  dense.set_extra("strategy_test_entry", 5);
  EXPECT_NE(dense.get_extra<int>("strategy_test_entry"), nullptr);
  EXPECT_EQ(dense.get_extra<int>("strategy_test_absent"), nullptr);
  EXPECT_ANY_THROW(dense.get_extra<std::string>("strategy_test_entry"));
}

TEST(StrategyTarget, RefusedStepsLeaveTheScheduleAndAreRecorded) {
  ir::IRModule mod = ir::infer_type(ir::parse_module(R"(
def @main(%x: Tensor[(5, 8), float32]) {
  %0 = fn (%p0: Tensor[(5, 8), float32], Primitive=1) {
    nn.relu(%p0)
  };
  %0(%x)
})"));
  const auto* call = ir::as<ir::CallNode>(mod.get_function("main")->body);
  lower::LowerGroupOptions naive;
  naive.schedule = false;
  tir::PrimFunc func =
      lower::lower_primitive(ir::downcast<ir::FunctionNode>(call->callee), "kernel", naive);
  tir::Schedule sch(func);
  const std::vector<tir::LoopRV> loops =
      sch.get_loops(sch.get_child_blocks(sch.get_block("root")).front());
  // A step whose second primitive names a block that is not there is refused whole.
  EXPECT_FALSE(sch.try_apply("parallel rows, then a missing block", [&](tir::Schedule& s) {
    s.parallel(loops[0]);
    s.get_block("no_such_block");
  }));
  EXPECT_EQ(sch.func().get(), func.get());  // the accepted first primitive was undone too
  ASSERT_EQ(sch.refused_steps().size(), 1u);
  EXPECT_EQ(sch.refused_steps()[0].rfind("parallel rows, then a missing block: ", 0), 0u)
      << sch.refused_steps()[0];
  EXPECT_TRUE(sch.try_apply("parallel rows", [&](tir::Schedule& s) { s.parallel(loops[0]); }));
  EXPECT_NE(sch.func().get(), func.get());
  EXPECT_EQ(sch.refused_steps().size(), 1u);
}

}  // namespace
}  // namespace anvil
