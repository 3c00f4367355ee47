// anvil analyze on torchvision networks exported by export_models.py: the totals must be within
// 1% of the published thop / fvcore figures (MACs of convolutions and linear layers, parameter
// counts of torchvision's models). Batch norm folded into the convolutions by the export keeps
// the parameter count within that margin.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "models/model_cache.h"
#include "support/test_util.h"

namespace fs = std::filesystem;

namespace anvil::testing {
namespace {

struct PublishedCost {
  std::string model;
  double macs;
  double params;
};

void PrintTo(const PublishedCost& cost, std::ostream* os) { *os << cost.model; }

class AnalyzeModel : public ::testing::TestWithParam<PublishedCost> {};

TEST_P(AnalyzeModel, TotalsMatchPublishedFigures) {
  const PublishedCost& expected = GetParam();
  const fs::path cache = model_cache();
  // The stamp is written last, so its presence means the model file is whole.
  ASSERT_TRUE(fs::exists(cache / (expected.model + ".stamp")))
      << expected.model << " is not exported in " << cache
      << "; run .venv/bin/python tests/models/export_models.py";
  CommandResult r =
      run_anvil({"analyze", (cache / (expected.model + ".onnx")).string(), "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  const double macs = j["total_macs"].get<double>();
  const double params = j["total_params"].get<double>();
  EXPECT_LE(std::abs(macs - expected.macs), 0.01 * expected.macs)
      << expected.model << ": " << macs << " MACs";
  EXPECT_LE(std::abs(params - expected.params), 0.01 * expected.params)
      << expected.model << ": " << params << " params";
  // FLOPs are twice the MACs plus the other layers' work, which is small beside it.
  const double flops = j["total_flops"].get<double>();
  EXPECT_GT(flops, 2 * macs);
  EXPECT_LT(flops, 2.1 * macs);
}

INSTANTIATE_TEST_SUITE_P(Torchvision, AnalyzeModel,
                         ::testing::Values(PublishedCost{"resnet18", 1.814e9, 11.69e6},
                                           PublishedCost{"resnet50", 4.089e9, 25.56e6},
                                           PublishedCost{"mobilenet_v2", 0.301e9, 3.50e6}),
                         [](const auto& info) { return info.param.model; });

}  // namespace
}  // namespace anvil::testing
