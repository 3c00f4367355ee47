// Task extraction against what build() compiles: one task per distinct kernel of the package,
// weights that add up to its kernel calls, FLOPs that add up to the graph's, knob spaces that
// hold the heuristic's own picks, and workload keys that depend on the workload only.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>

#include "anvil/driver/tuning_records.h"
#include "anvil/testing/workloads.h"
#include "anvil/tune/tune.h"

namespace anvil::tune {
namespace {

// The kernel nodes of a built package's graph JSON: calls and per-call FLOPs per kernel.
struct GraphKernels {
  std::map<std::string, int> calls;
  int64_t flops = 0;
};

GraphKernels graph_kernels(const std::string& graph_json) {
  GraphKernels kernels;
  const nlohmann::json graph = nlohmann::json::parse(graph_json);
  for (const auto& node : graph["nodes"]) {
    if (node["op"] != "tvm_op") continue;
    const auto& attrs = node["attrs"];
    const std::string name = attrs["func_name"];
    if (name == "__copy") continue;
    ++kernels.calls[name];
    if (attrs.contains("flops")) kernels.flops += std::stoll(attrs["flops"].get<std::string>());
  }
  return kernels;
}

TEST(TuneTasks, OneTaskPerDistinctKernelOfTheBuild) {
  testing::Workload w = testing::resnet(18, 1, {3, 64, 64}, 10);
  std::vector<TuneTask> tasks = extract_tasks(w.mod, w.params);
  GraphKernels built = graph_kernels(driver::build(w.mod, w.params).graph_json());

  ASSERT_EQ(tasks.size(), built.calls.size());
  int calls = 0, built_calls = 0;
  int64_t flops = 0;
  for (const TuneTask& task : tasks) {
    calls += task.calls;
    flops += task.flops * task.calls;
  }
  for (const auto& [name, count] : built.calls) built_calls += count;
  EXPECT_EQ(calls, built_calls);
  EXPECT_EQ(flops, built.flops);

  // The convolutions carry the blocked schedule's knobs, their space holds more than one
  // config, and every group without a strategy has none.
  int tunable = 0;
  for (const TuneTask& task : tasks) {
    EXPECT_EQ(task.key, driver::workload_key(task.group));
    ASSERT_FALSE(task.space.strategy.empty()) << task.name;
    if (task.space.strategy == "generic") {
      // The generic schedule's knobs: vectorize, parallel grain, unroll.
      EXPECT_EQ(task.space.knobs.size(), 3u) << task.name;
      continue;
    }
    ++tunable;
    EXPECT_GT(task.space_size(), 1) << task.name;
    for (const auto& [name, values] : task.space.knobs) EXPECT_FALSE(values.empty()) << name;
  }
  EXPECT_GE(tunable, 5);
}

TEST(TuneTasks, WorkloadKeysDependOnTheWorkloadOnly) {
  testing::Workload a = testing::resnet(18, 1, {3, 64, 64}, 10);
  testing::Workload b = testing::resnet(18, 1, {3, 64, 64}, 10);
  std::vector<TuneTask> first = extract_tasks(a.mod, a.params);
  std::vector<TuneTask> second = extract_tasks(b.mod, b.params);
  ASSERT_EQ(first.size(), second.size());
  for (size_t i = 0; i < first.size(); ++i) EXPECT_EQ(first[i].key, second[i].key);
  // Distinct workloads have distinct keys, and another image size changes the convolutions'.
  std::map<std::string, int> seen;
  for (const TuneTask& task : first) EXPECT_EQ(++seen[task.key], 1) << task.name;
  testing::Workload larger = testing::resnet(18, 1, {3, 96, 96}, 10);
  for (const TuneTask& task : extract_tasks(larger.mod, larger.params)) {
    if (task.fused_ops.find("conv2d") != std::string::npos) {
      EXPECT_EQ(seen.count(task.key), 0u) << task.name;
    }
  }
}

}  // namespace
}  // namespace anvil::tune
