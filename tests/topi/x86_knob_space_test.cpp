// The knobs' search spaces of the x86 schedules: every config a space holds is a valid schedule
// (the strategy accepts it, the kernel compiles and matches the reference interpreter), and a
// config outside the space makes the strategy decline with a message naming the knob. Each
// group walks every value of every knob with the others at the heuristic's picks, then a few
// seeded random combinations.
#include <gtest/gtest.h>

#include <random>

#include "anvil/lower/lower.h"
#include "topi/topi_test_util.h"
#include "topi/x86_schedule_check.h"

namespace anvil {
namespace {

struct SpaceCase {
  const char* name;
  const char* group;  // the fused group as graph IR text
  const char* anchor_op;
  const char* strategy;
  int vector_bits = 512;
};

void PrintTo(const SpaceCase& c, std::ostream* os) { *os << c.name; }

class KnobSpace : public ::testing::TestWithParam<SpaceCase> {};

TEST_P(KnobSpace, EveryConfigIsValid) {
  const SpaceCase& c = GetParam();
  lower::LowerGroupOptions options;
  options.vector_bits = c.vector_bits;
  lower::GroupKnobSpace space =
      lower::group_knob_space(topi_test::primitive_function(c.group), options);
  ASSERT_EQ(space.strategy, c.strategy) << space.declined;
  ASSERT_FALSE(space.knobs.empty());

  std::vector<lower::KnobConfig> configs;
  for (const auto& [name, values] : space.knobs) {
    ASSERT_FALSE(values.empty()) << name;
    for (int64_t value : values) configs.push_back({{name, value}});
  }
  std::mt19937 random(7);
  for (int i = 0; i < 4; ++i) {
    lower::KnobConfig combination;
    for (const auto& [name, values] : space.knobs)
      combination[name] = values[random() % values.size()];
    configs.push_back(combination);
  }
  for (const lower::KnobConfig& config : configs) {
    std::string text;
    for (const auto& [name, value] : config) text += name + "=" + std::to_string(value) + " ";
    SCOPED_TRACE(text);
    x86_test::check_x86_schedule(c.group, c.anchor_op, c.vector_bits, 1e-4, 1e-4, &config);
    if (HasFatalFailure() || HasNonfatalFailure()) return;
  }
}

INSTANTIATE_TEST_SUITE_P(
    X86, KnobSpace,
    ::testing::Values(SpaceCase{"Conv3x3OddWidth", R"(fn (%x: Tensor[(1, 2, 9, 13, 16), float32],
            %w: Tensor[(2, 2, 3, 3, 16, 16), float32], %b: Tensor[(2, 1, 1, 16), float32]) {
          %0 = nn.contrib_conv2d_NCHWc(%x, %w, padding=[1, 1, 1, 1], data_layout="NCHW16c",
                                       kernel_layout="OIHW16i16o");
          %1 = add(%0, %b);
          nn.relu(%1)
        })",
                                "nn.contrib_conv2d_NCHWc", "x86.conv2d_nchwc"},
                      SpaceCase{"Conv1x1Grouped", R"(fn (%x: Tensor[(1, 4, 7, 7, 8), float32],
            %w: Tensor[(4, 1, 1, 1, 8, 8), float32]) {
          nn.contrib_conv2d_NCHWc(%x, %w, groups=4, data_layout="NCHW8c",
                                  kernel_layout="OIHW8i8o")
        })",
                                "nn.contrib_conv2d_NCHWc", "x86.conv2d_nchwc"},
                      SpaceCase{"DensePacked", R"(fn (%x: Tensor[(5, 48), float32],
            %w: Tensor[(2, 48, 16), float32]) {
          nn.contrib_dense_pack(%x, %w)
        })",
                                "nn.contrib_dense_pack", "x86.dense_pack"},
                      SpaceCase{"MatmulOfActivations", R"(fn (%a: Tensor[(4, 7, 32), float32],
            %b: Tensor[(4, 32, 20), float32]) {
          matmul(%a, %b)
        })",
                                "matmul", "x86.dense"},
                      SpaceCase{"MaxPoolWindowed", R"(fn (%x: Tensor[(1, 2, 11, 11, 16), float32]) {
          nn.max_pool2d(%x, pool_size=[3, 3], strides=[2, 2], layout="NCHW16c")
        })",
                                "nn.max_pool2d", "x86.pool_nchwc"},
                      SpaceCase{"GlobalAvgPool", R"(fn (%x: Tensor[(1, 12, 5, 5, 8), float32]) {
          nn.global_avg_pool2d(%x, layout="NCHW8c")
        })",
                                "nn.global_avg_pool2d", "x86.pool_nchwc"},
                      SpaceCase{"Winograd", R"(fn (%x: Tensor[(1, 2, 10, 10, 16), float32],
            %w: Tensor[(6, 6, 2, 32, 16), float32]) {
          nn.contrib_conv2d_winograd_NCHWc(%x, %w, padding=[1, 1, 1, 1], kernel_size=[3, 3],
                                           data_layout="NCHW16c", kernel_layout="HWOI16o")
        })",
                                "nn.contrib_conv2d_winograd_NCHWc", "x86.conv2d_winograd"}),
    [](const auto& info) { return std::string(info.param.name); });

// A value outside the space, or a knob the strategy does not have, makes it decline: the kernel
// says which knob, and the generic schedule runs (the auto-scheduler declines it too).
TEST(KnobSpaceErrors, ConfigOutsideTheSpaceIsDeclinedByName) {
  ir::Function fn = topi_test::primitive_function(R"(fn (%x: Tensor[(1, 2, 6, 6, 16), float32],
      %w: Tensor[(2, 2, 1, 1, 16, 16), float32]) {
    nn.contrib_conv2d_NCHWc(%x, %w, data_layout="NCHW16c", kernel_layout="OIHW16i16o")
  })");
  auto declined_with = [&](const lower::KnobConfig& config) {
    lower::LowerGroupOptions options;
    options.config_for = [&](const ir::Function&, const lower::LowerGroupOptions&) {
      return &config;
    };
    tir::PrimFunc func = lower::lower_primitive(fn, "kernel", options);
    const ir::AttrValue* schedule = func->func_attrs.find(topi::kScheduleAttr);
    EXPECT_EQ(std::get<std::string>(*schedule), "generic");
    const ir::AttrValue* declined = func->func_attrs.find(topi::kScheduleDeclinedAttr);
    return declined ? std::get<std::string>(*declined) : std::string();
  };
  // The auto-scheduler, next in line, has neither knob either.
  EXPECT_EQ(declined_with({{"oc_tile", 5}}),
            "x86.conv2d_nchwc: knob 'oc_tile' = 5 is not one of {1, 2}; auto: auto has no knob "
            "'oc_tile'");
  EXPECT_EQ(declined_with({{"tile", 2}}),
            "x86.conv2d_nchwc: x86.conv2d_nchwc has no knob 'tile'; auto: auto has no knob 'tile'");
}

}  // namespace
}  // namespace anvil
