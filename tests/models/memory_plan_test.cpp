// The graph executor's memory plan on the torchvision networks: read back from the planned
// graph JSON alone (support/graph_memory_oracle.h), the plan is safe, the reported figures are
// its own, and the activations' arena stays within 1.2x of the largest live set, on the six
// networks the model fixture exports. The further families (bench/model_bench.py's set) are
// checked by the bench, which prints the worst ratio of every run.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "anvil/driver/build.h"
#include "anvil/frontend/onnx.h"
#include "models/model_cache.h"
#include "support/graph_memory_oracle.h"

namespace fs = std::filesystem;

namespace anvil {
namespace {

class ModelMemoryPlan : public ::testing::TestWithParam<std::string> {};

TEST_P(ModelMemoryPlan, ArenaWithinTwentyPercentOfTheLargestLiveSet) {
  const std::string& name = GetParam();
  const fs::path cache = testing::model_cache();
  ASSERT_TRUE(fs::exists(cache / (name + ".stamp")))
      << name << " is not exported in " << cache
      << "; run .venv/bin/python tests/models/export_models.py";
  frontend::ImportedModel imported = frontend::from_onnx(cache / (name + ".onnx"));
  driver::GraphMemoryPlan plan = driver::plan_graph_memory(imported.mod, imported.params);
  testing::GraphMemoryFigures figures =
      testing::graph_memory_figures(nlohmann::json::parse(plan.graph_json));
  EXPECT_EQ(figures.problem, "");
  EXPECT_EQ(plan.memory.activation_bytes, figures.arena_bytes);
  EXPECT_EQ(plan.memory.largest_live_set, figures.largest_live_set);
  EXPECT_EQ(plan.memory.param_bytes + plan.memory.io_bytes, figures.fixed_bytes);
  ASSERT_GT(figures.largest_live_set, 0);
  double ratio = double(figures.arena_bytes) / double(figures.largest_live_set);
  std::printf("%s: arena %.2f MiB, largest live set %.2f MiB (%.3fx), slots %.2f MiB\n",
              name.c_str(), double(figures.arena_bytes) / (1 << 20),
              double(figures.largest_live_set) / (1 << 20), ratio,
              double(figures.slot_activation_bytes) / (1 << 20));
  EXPECT_GE(ratio, 1.0);
  EXPECT_LE(ratio, 1.2);
}

INSTANTIATE_TEST_SUITE_P(Torchvision, ModelMemoryPlan,
                         ::testing::Values("resnet18", "mobilenet_v2", "squeezenet1_1",
                                           "efficientnet_b0", "vit_b_16", "resnet50"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace anvil
