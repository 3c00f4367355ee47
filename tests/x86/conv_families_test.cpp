// Convolution families through the whole compiler (opt level 3, the host's vectors): grouped
// convolutions of every group width, depthwise 3x3/5x5/7x7, dilated and strided ones, on odd
// maps and channel counts that are no multiple of the vector. Each is checked against the
// reference executor, and each kernel must name the schedule strategy that production chose
// for it: a convolution the x86 strategy takes must not fall back to the generic schedule.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "anvil/driver/build.h"
#include "anvil/ir/infer_type.h"
#include "anvil/ir/parser.h"
#include "anvil/reference/reference.h"
#include "support/test_tensors.h"

namespace anvil {
namespace {

struct ConvCase {
  const char* name;
  int64_t in_channels, out_channels, groups, height, width, kernel, stride, pad, dilation;
  // The strategy the convolution's kernel must show, "x86.conv2d_nchwc" or "auto" (which must
  // come with the reason the x86 strategy declined).
  const char* schedule;
};

void PrintTo(const ConvCase& c, std::ostream* os) { *os << c.name; }

// The "schedule" attr of every kernel node of a graph JSON whose fused ops include `op`.
std::vector<std::string> schedules_of(const std::string& graph_json, const std::string& op) {
  std::vector<std::string> found;
  for (size_t at = graph_json.find("\"fused_ops\""); at != std::string::npos;
       at = graph_json.find("\"fused_ops\"", at + 1)) {
    size_t end = graph_json.find('}', at);
    std::string attrs = graph_json.substr(at, end - at);
    if (attrs.find(op) == std::string::npos) continue;
    size_t key = attrs.find("\"schedule\"");
    if (key == std::string::npos) {
      found.push_back("");
      continue;
    }
    size_t open = attrs.find('"', attrs.find(':', key) + 1);
    found.push_back(attrs.substr(open + 1, attrs.find('"', open + 1) - open - 1));
  }
  return found;
}

constexpr const char* kBlocked = "x86.conv2d_nchwc";
constexpr const char* kWinograd = "x86.conv2d_winograd";

class ConvFamily : public ::testing::TestWithParam<ConvCase> {};

TEST_P(ConvFamily, MatchesReferenceWithItsStrategy) {
  const ConvCase& c = GetParam();
  const int64_t k = c.kernel;
  char text[1024];
  std::snprintf(text, sizeof text, R"(
def @main(%%x: Tensor[(1, %lld, %lld, %lld), float32], %%w: Tensor[(%lld, %lld, %lld, %lld), float32],
          %%b: Tensor[(%lld), float32]) {
  %%0 = nn.conv2d(%%x, %%w, strides=[%lld, %lld], padding=[%lld, %lld, %lld, %lld],
                 dilation=[%lld, %lld], groups=%lld);
  %%1 = nn.bias_add(%%0, %%b);
  nn.relu(%%1)
})",
                (long long)c.in_channels, (long long)c.height, (long long)c.width,
                (long long)c.out_channels, (long long)(c.in_channels / c.groups), (long long)k,
                (long long)k, (long long)c.out_channels, (long long)c.stride, (long long)c.stride,
                (long long)c.pad, (long long)c.pad, (long long)c.pad, (long long)c.pad,
                (long long)c.dilation, (long long)c.dilation, (long long)c.groups);
  ir::IRModule mod = ir::infer_type(ir::parse_module(text));
  const DataType f32 = DataType::float32();
  Tensor x = testing::pseudo_random({1, c.in_channels, c.height, c.width}, f32, 1);
  Tensor w = testing::pseudo_random({c.out_channels, c.in_channels / c.groups, k, k}, f32, 2);
  Tensor b = testing::pseudo_random({c.out_channels}, f32, 3);
  Tensor expected = reference::Interpreter(mod).run({x, w, b}).at(0);

  driver::BuiltModule built = driver::build(mod, {{"w", w}, {"b", b}});
  GraphExecutor executor = built.create_executor();
  executor.set_input("x", x);
  executor.run();
  if (std::string(c.schedule) == kWinograd) {
    // Winograd rounds in its transforms: held, as every Winograd test is (docs/winograd.md),
    // to 1e-4 of the largest output magnitude.
    Tensor got = executor.get_output(0);
    double scale = 0;
    for (int64_t i = 0; i < expected.numel(); ++i)
      scale = std::max(scale, std::fabs(expected.get_as_double(i)));
    for (int64_t i = 0; i < expected.numel(); ++i)
      ASSERT_NEAR(got.get_as_double(i), expected.get_as_double(i), 1e-4 * scale)
          << c.name << " element " << i;
  } else {
    testing::expect_close(expected, executor.get_output(0), c.name);
  }

  // One kernel per convolution; more for an atrous one split into regions.
  std::vector<std::string> schedules = schedules_of(built.graph_json(), "conv2d");
  ASSERT_GE(schedules.size(), 1u) << built.graph_json();
  const std::string optimized = built.get_source("relay");
  for (const std::string& schedule : schedules) {
    if (std::string(c.schedule) != "auto") {
      EXPECT_EQ(schedule, c.schedule) << optimized;
      continue;
    }
    // The auto-scheduler never runs silently in place of the strategy: the kernel says which
    // strategy declined and why, and so does the optimized IR, as AlterOpLayout's remark.
    EXPECT_EQ(schedule.rfind("auto (declined x86.conv2d_nchwc: ", 0), 0u) << schedule;
    const std::string reason = schedule.substr(schedule.find(": ") + 2);
    EXPECT_NE(optimized.find("// AlterOpLayout: nn.conv2d("), std::string::npos) << optimized;
    EXPECT_NE(optimized.find("x86.conv2d_nchwc declined: " + reason.substr(0, reason.size() - 1)),
              std::string::npos)
        << optimized;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Grouped, ConvFamily,
    ::testing::Values(
        // Groups narrower than the data block are merged into block-diagonal groups.
        ConvCase{"Width2", 32, 32, 16, 7, 7, 3, 1, 1, 1, kBlocked},
        ConvCase{"Width4Strided", 64, 64, 16, 9, 9, 3, 2, 1, 1, kBlocked},
        ConvCase{"Width8OddMap", 64, 64, 8, 9, 11, 3, 1, 1, 1, kBlocked},
        ConvCase{"Width8Widening", 32, 64, 4, 6, 6, 3, 1, 1, 1, kBlocked},
        // Groups of whole blocks index their input blocks directly.
        ConvCase{"Width16Dilated", 64, 64, 4, 10, 10, 3, 1, 2, 2, kBlocked},
        ConvCase{"Width32", 64, 64, 2, 7, 7, 3, 1, 1, 1, kBlocked},
        ConvCase{"Width64OneByOne", 128, 128, 2, 5, 5, 1, 1, 0, 1, kBlocked},
        // Widths that are no multiple of the vector: the block divides both.
        ConvCase{"Width24", 48, 48, 2, 7, 7, 3, 1, 1, 1, kBlocked},
        ConvCase{"Width8Of24Channels", 24, 24, 3, 8, 8, 3, 2, 1, 1, kBlocked},
        ConvCase{"Width4Of40Channels", 40, 40, 10, 6, 6, 3, 1, 1, 1, kBlocked},
        ConvCase{"Width2Of12Channels", 12, 12, 6, 5, 5, 3, 1, 1, 1, kBlocked},
        // Three channels per group divide no block: the layout stays NCHW and the
        // auto-scheduler takes the kernel.
        ConvCase{"Width3TakesTheAutoScheduler", 48, 48, 16, 6, 6, 3, 1, 1, 1, "auto"}),
    [](const auto& info) { return std::string(info.param.name); });

INSTANTIATE_TEST_SUITE_P(
    Depthwise, ConvFamily,
    ::testing::Values(ConvCase{"K3", 32, 32, 32, 14, 14, 3, 1, 1, 1, kBlocked},
                      ConvCase{"K3Strided", 32, 32, 32, 15, 15, 3, 2, 1, 1, kBlocked},
                      ConvCase{"K5Strided24Channels", 24, 24, 24, 13, 13, 5, 2, 2, 1, kBlocked},
                      ConvCase{"K7", 16, 16, 16, 9, 9, 7, 1, 3, 1, kBlocked},
                      ConvCase{"K3Dilated", 48, 48, 48, 11, 11, 3, 1, 2, 2, kBlocked}),
    [](const auto& info) { return std::string(info.param.name); });

INSTANTIATE_TEST_SUITE_P(
    Dense, ConvFamily,
    ::testing::Values(ConvCase{"Dilated2", 16, 32, 1, 12, 12, 3, 1, 2, 2, kBlocked},
                      ConvCase{"Dilated3OddChannels", 20, 36, 1, 9, 9, 3, 1, 3, 3, kBlocked},
                      ConvCase{"Strided5x5", 8, 24, 1, 11, 11, 5, 2, 2, 1, kBlocked},
                      // Atrous heads: split into regions of valid taps (SplitDilatedConv), each
                      // blocked, the crops and joins staying in the blocked layout.
                      ConvCase{"AtrousRate12", 32, 16, 1, 14, 14, 3, 1, 12, 12, kBlocked},
                      ConvCase{"AtrousRate18Widest", 16, 16, 1, 14, 14, 3, 1, 18, 18, kBlocked},
                      ConvCase{"AtrousDepthwise", 32, 32, 32, 15, 15, 3, 1, 9, 9, kBlocked},
                      // DeepLab's backbone rates on 28 x 28 maps with 64+ channels: one
                      // Winograd convolution per class of outputs (oh % d, ow % d).
                      ConvCase{"Dilated2Winograd", 64, 64, 1, 28, 28, 3, 1, 2, 2, kWinograd},
                      ConvCase{"Dilated4WinogradOddMap", 64, 80, 1, 27, 29, 3, 1, 4, 4, kWinograd}),
    [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace anvil
