// The precision a build runs its products in (docs/precision.md): the pass configs
// anvil.precision and anvil.bf16_emulate against targets with and without a bf16 unit (named
// by -mattr, so the answers do not depend on the host), and an emulated bf16 build that runs on
// any host and stays within bf16's rounding of the float32 reference.
#include <gtest/gtest.h>

#include <string>

#include "anvil/driver/build.h"
#include "anvil/ir/infer_type.h"
#include "anvil/ir/parser.h"
#include "anvil/reference/reference.h"
#include "support/test_tensors.h"

namespace anvil {
namespace {

using testing::error_of;

driver::BuildOptions options_for(const std::string& target, const std::string& precision,
                                 const std::string& emulate = "") {
  driver::BuildOptions options;
  options.target = target;
  options.pass_context.config["anvil.precision"] = precision;
  if (!emulate.empty()) options.pass_context.config["anvil.bf16_emulate"] = emulate;
  return options;
}

const char* kWithUnit = "llvm -mcpu=x86-64-v4 -mattr=+avx512bf16";
const char* kWithoutUnit = "llvm -mcpu=x86-64-v4 -mattr=-avx512bf16";

TEST(Precision, FollowsTheConfigAndTheTargetsUnit) {
  EXPECT_EQ(driver::build_precision(options_for(kWithUnit, "fp32")), "fp32");
  EXPECT_EQ(driver::build_precision(options_for(kWithUnit, "bf16")), "bf16");
  EXPECT_EQ(driver::build_precision(options_for(kWithUnit, "auto")), "bf16");
  EXPECT_EQ(driver::build_precision(options_for(kWithoutUnit, "auto")), "fp32");
  // Without the unit bf16 falls back to fp32, unless emulation is asked for; auto never
  // emulates.
  EXPECT_EQ(driver::build_precision(options_for(kWithoutUnit, "bf16")), "fp32");
  EXPECT_EQ(driver::build_precision(options_for(kWithoutUnit, "bf16", "1")), "bf16");
  EXPECT_EQ(driver::build_precision(options_for(kWithoutUnit, "bf16", "true")), "bf16");
  EXPECT_EQ(driver::build_precision(options_for(kWithoutUnit, "bf16", "false")), "fp32");
  EXPECT_EQ(driver::build_precision(options_for(kWithoutUnit, "auto", "1")), "fp32");
}

TEST(Precision, UnknownValuesAreErrorsNamingTheConfig) {
  EXPECT_NE(error_of([] {
              driver::build_precision(options_for("llvm", "fp16"));
            }).find("anvil.precision must be fp32, bf16 or auto, got 'fp16'"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              driver::build_precision(options_for("llvm", "bf16", "yes"));
            }).find("anvil.bf16_emulate must be 0, 1, true or false, got 'yes'"),
            std::string::npos);
}

// A convolution of 32 channels and a dense layer built in emulated bf16 on the host: the bf16
// kernels are taken, and the outputs are within 2e-2 of the float32 reference's largest.
TEST(Precision, EmulatedBf16BuildRunsOnAnyHost) {
  ir::IRModule mod = ir::infer_type(ir::parse_module(R"(
def @main(%x: Tensor[(1, 32, 8, 8), float32], %w: Tensor[(32, 32, 3, 3), float32], %v: Tensor[(10, 2048), float32]) {
  %0 = nn.conv2d(%x, %w, padding=[1, 1, 1, 1], channels=32, kernel_size=[3, 3]);
  %1 = nn.relu(%0);
  %2 = reshape(%1, newshape=[1, 2048]);
  nn.dense(%2, %v)
}
)"));
  const Tensor x = testing::pseudo_random({1, 32, 8, 8}, DataType::float32(), 1);
  const Tensor w = testing::pseudo_random({32, 32, 3, 3}, DataType::float32(), 2);
  const Tensor v = testing::pseudo_random({10, 2048}, DataType::float32(), 3);
  const Tensor want = reference::Interpreter(mod).run({x, w, v})[0];
  driver::BuiltModule built =
      driver::build(mod, {{"w", w}, {"v", v}}, options_for("llvm", "bf16", "1"));
  const std::string relay = built.get_source("relay");
  EXPECT_NE(relay.find("conv2d_NCHWc_bf16"), std::string::npos) << relay;
  GraphExecutor executor = built.create_executor();
  executor.set_input("x", x);
  executor.run();
  const Tensor got = executor.get_output(0);
  ASSERT_EQ(got.shape_vector(), want.shape_vector());
  double largest = 0, gap = 0;
  for (int64_t i = 0; i < want.numel(); ++i) {
    largest = std::max(largest, std::fabs(want.get_as_double(i)));
    gap = std::max(gap, std::fabs(want.get_as_double(i) - got.get_as_double(i)));
  }
  EXPECT_GT(gap, 0);  // it did round
  EXPECT_LE(gap, 2e-2 * largest);
}

}  // namespace
}  // namespace anvil
