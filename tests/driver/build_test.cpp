// build() on every built-in workload at every opt level: the graph executor's outputs must
// match the reference executor's (rtol 1e-4, atol 1e-5). The deeper ResNets run at 64x64 to
// keep the suite fast; every layer kind still appears. plan_graph_memory must give the same
// storage plan, and the executor must allocate what it reports.
#include "anvil/driver/build.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>
#include <random>

#include "anvil/reference/reference.h"
#include "anvil/testing/workloads.h"
#include "support/test_tensors.h"

namespace anvil {
namespace {

testing::Workload make_workload(const std::string& name) {
  if (name == "resnet34") return testing::resnet(34, 1, {3, 64, 64});
  if (name == "resnet50") return testing::resnet(50, 1, {3, 64, 64});
  if (name == "resnet101") return testing::resnet(101, 1, {3, 32, 32});
  if (name == "resnet152") return testing::resnet(152, 1, {3, 32, 32});
  return testing::workload_by_name(name);
}

Tensor seeded_input(const ir::IRModule& mod) {
  const auto* type = ir::as<ir::TensorTypeNode>(mod.get_function("main")->params[0]->annotation);
  Tensor t = Tensor::empty(*type->static_shape(), type->dtype);
  std::mt19937 rng(3);
  std::normal_distribution<double> normal(0, 1);
  for (int64_t i = 0; i < t.numel(); ++i) t.set_from_double(i, normal(rng));
  return t;
}

class BuildWorkload : public ::testing::TestWithParam<std::tuple<std::string, int>> {};

TEST_P(BuildWorkload, MatchesReferenceExecutor) {
  const auto& [name, opt_level] = GetParam();
  testing::Workload w = make_workload(name);
  Tensor input = seeded_input(w.mod);
  std::vector<Tensor> args{input};
  for (const auto& [param, tensor] : w.params) args.push_back(tensor);
  Tensor expected = reference::Interpreter(w.mod).run(args).at(0);

  driver::BuildOptions options;
  options.pass_context.opt_level = opt_level;
  driver::BuiltModule built = driver::build(w.mod, w.params, options);
  GraphExecutor executor = built.create_executor();
  executor.set_input("data", input);
  executor.run();
  Tensor got = executor.get_output(0);
  ASSERT_EQ(got.shape_vector(), expected.shape_vector());
  int64_t bad = 0;
  double max_diff = 0;
  for (int64_t i = 0; i < got.numel(); ++i) {
    double g = got.get_as_double(i), e = expected.get_as_double(i);
    max_diff = std::max(max_diff, std::fabs(g - e));
    bad += !(std::fabs(g - e) <= 1e-5 + 1e-4 * std::fabs(e));
  }
  EXPECT_EQ(bad, 0) << name << " -O" << opt_level << ": max difference " << max_diff;
  // A run allocates nothing and leaves the same storage: a second run gives the same bits.
  Tensor first = got.copy();
  executor.run();
  Tensor again = executor.get_output(0);
  EXPECT_EQ(std::memcmp(first.data(), again.data(), size_t(first.nbytes())), 0);

  // Planning without kernels gives build()'s storage plan, and the executor allocates what
  // the plan reports.
  driver::GraphMemoryPlan plan = driver::plan_graph_memory(w.mod, w.params, options);
  EXPECT_EQ(nlohmann::json::parse(plan.graph_json)["attrs"],
            nlohmann::json::parse(built.graph_json())["attrs"]);
  GraphMemoryUse use = executor.memory_use();
  EXPECT_EQ(use.activation_bytes, plan.memory.activation_bytes);
  EXPECT_EQ(use.largest_live_set, plan.memory.largest_live_set);
  EXPECT_EQ(use.param_bytes, plan.memory.param_bytes);
  EXPECT_EQ(use.io_bytes, plan.memory.io_bytes);
}

INSTANTIATE_TEST_SUITE_P(Workloads, BuildWorkload,
                         ::testing::Combine(::testing::Values("mlp", "resnet18", "resnet34",
                                                              "resnet50", "resnet101", "resnet152",
                                                              "mobilenet"),
                                            ::testing::Values(0, 1, 2, 3)),
                         [](const ::testing::TestParamInfo<std::tuple<std::string, int>>& info) {
                           return std::get<0>(info.param) + "_O" +
                                  std::to_string(std::get<1>(info.param));
                         });

// Ops whose output dims are computed at run time (nonzero, dyn.cumsum) need the VM: the graph
// executor's build names them all at once, before lowering anything.
TEST(Build, OpsWithRunTimeShapesAreListedAtOnce) {
  auto type = ir::TensorTypeNode::make({ir::Dim(6)}, DataType::float32());
  ir::Var x = ir::VarNode::make("x", type);
  ir::Var axis = ir::VarNode::make("axis", ir::TensorTypeNode::make({}, DataType::int64()));
  ir::Expr sorted = ir::call_op("sort", {x});
  ir::Expr nonzero = ir::call_op("nonzero", {x});
  ir::Expr cumsum = ir::call_op("dyn.cumsum", {x, axis});
  ir::IRModule mod;
  mod.add("main",
          ir::FunctionNode::make({x, axis}, ir::TupleNode::make({sorted, nonzero, cumsum})));
  EXPECT_EQ(testing::error_of([&] { driver::build(mod, {}); }),
            "build: operators dyn.cumsum, nonzero compute output dims at run time, which only the "
            "VM executor does");
}

TEST(Build, BadTargetIsAnError) {
  testing::Workload w = testing::mlp();
  driver::BuildOptions options;
  options.target = "cuda";
  EXPECT_THROW(driver::build(w.mod, w.params, options), Error);
}

TEST(Build, CTargetMatchesLlvm) {
  testing::Workload w = testing::mlp();
  Tensor input = seeded_input(w.mod);
  std::vector<Tensor> outputs;
  for (const char* target : {"llvm", "c"}) {
    driver::BuildOptions options;
    options.target = target;
    GraphExecutor executor = driver::build(w.mod, w.params, options).create_executor();
    executor.set_input("data", input);
    executor.run();
    outputs.push_back(executor.get_output(0).copy());
  }
  for (int64_t i = 0; i < outputs[0].numel(); ++i)
    EXPECT_NEAR(outputs[0].get_as_double(i), outputs[1].get_as_double(i), 1e-4) << i;
}

}  // namespace
}  // namespace anvil
