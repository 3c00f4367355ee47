// The graph executor's memory plan on the torchvision networks: read back from the planned
// graph JSON alone (support/graph_memory_oracle.h), the plan is safe, the reported figures are
// its own, and the activations' arena stays within 1.2x of the largest live set. The six
// networks the model fixture exports must be there; the further families
// (export_models.py FAMILY_MODELS, exported on request) are checked when exported.
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

struct CachedModel {
  std::string name;
  bool exported_by_default;
};

void PrintTo(const CachedModel& model, std::ostream* os) { *os << model.name; }

class ModelMemoryPlan : public ::testing::TestWithParam<CachedModel> {};

TEST_P(ModelMemoryPlan, ArenaWithinTwentyPercentOfTheLargestLiveSet) {
  const CachedModel& model = GetParam();
  const fs::path cache = testing::model_cache();
  if (!fs::exists(cache / (model.name + ".stamp"))) {
    ASSERT_FALSE(model.exported_by_default)
        << model.name << " is not exported in " << cache
        << "; run .venv/bin/python tests/models/export_models.py";
    GTEST_SKIP() << model.name << " is not exported (tests/models/export_models.py " << model.name
                 << ")";
  }
  frontend::ImportedModel imported = frontend::from_onnx(cache / (model.name + ".onnx"));
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
              model.name.c_str(), double(figures.arena_bytes) / (1 << 20),
              double(figures.largest_live_set) / (1 << 20), ratio,
              double(figures.slot_activation_bytes) / (1 << 20));
  EXPECT_GE(ratio, 1.0);
  EXPECT_LE(ratio, 1.2);
}

INSTANTIATE_TEST_SUITE_P(
    Torchvision, ModelMemoryPlan,
    ::testing::Values(CachedModel{"resnet18", true}, CachedModel{"mobilenet_v2", true},
                      CachedModel{"squeezenet1_1", true}, CachedModel{"efficientnet_b0", true},
                      CachedModel{"vit_b_16", true}, CachedModel{"resnet50", true},
                      CachedModel{"mobilenet_v3_large", false},
                      CachedModel{"efficientnet_b1", false},
                      CachedModel{"shufflenet_v2_x0_5", false},
                      CachedModel{"regnet_x_400mf", false}, CachedModel{"regnet_y_800mf", false},
                      CachedModel{"resnext50_32x4d", false}, CachedModel{"wide_resnet50_2", false},
                      CachedModel{"densenet169", false}, CachedModel{"mnasnet0_5", false},
                      CachedModel{"swin_t", false}, CachedModel{"fcn_resnet50", false},
                      CachedModel{"deeplabv3_resnet50", false}),
    [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace anvil
