// The bfloat16 convolution on AMX tiles (x86.conv2d_amx_bf16) with a float32 epilogue, against
// the reference interpreter over a grid: input blocks of 16 and 32 channels (K per tile step
// 16 or 32 and sums whose depth is no multiple of 32), output blocks of one and two 16-channel
// halves (and odd block counts), tile heights from 7 to 16 (widths 7, 9, 13, 14, 28, 56), the
// second row tile along the width, along the height or absent, strides, dilation, padding, a
// batch, and dense rows (16, 13, 48 and 64 of them).
//
// Every kernel is also compiled for a Sapphire Rapids target and its assembly checked for the
// tile instructions, so a host without AMX still checks that the code generates. The kernels
// run only where the host has AMX; elsewhere the test says so and runs the same grid through
// the schedules that build takes there (vdpbf16ps, or the generic one).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "anvil/codegen/c.h"
#include "anvil/codegen/target.h"
#include "anvil/runtime/c_abi.h"
#include "anvil/runtime/module.h"
#include "support/test_util.h"
#include "topi/x86_bf16_cases.h"
#include "topi/x86_schedule_check.h"

namespace anvil {
namespace {

using topi_test::bf16_conv_group;
using topi_test::Bf16ConvCase;
using topi_test::run_kernel;

bool host_has_amx() {
  static const bool has = [] {
    const bool amx = codegen::Target::host().has_amx_bf16();
    if (!amx)
      std::printf(
          "[ SKIPPED  ] the AMX runs: this host has no AMX tiles (the kernels are "
          "compiled and their assembly checked; the fallbacks run the grid)\n");
    return amx;
  }();
  return has;
}

std::string schedule_of(const tir::PrimFunc& f) {
  const ir::AttrValue* ran = f->func_attrs.find(topi::kScheduleAttr);
  std::string out = ran ? std::get<std::string>(*ran) : "(none)";
  if (const ir::AttrValue* why = f->func_attrs.find(topi::kScheduleDeclinedAttr))
    out += " (declined: " + std::get<std::string>(*why) + ")";
  return out;
}

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// Schedules the group for an AMX target (a decline fails), checks the cross-compiled assembly,
// then runs it on the host where it can, else the host's own build, against the reference.
void check_amx_group(const std::string& function_text) {
  const topi_test::ReferenceRun run = topi_test::reference_run(function_text, 71);
  const ir::Function& fn = run.fn;
  const std::vector<Tensor>& inputs = run.inputs;
  const std::vector<Tensor> expected = {run.expected};

  lower::LowerGroupOptions amx;
  amx.amx_bf16 = true;
  tir::PrimFunc scheduled = lower::lower_primitive(fn, "kernel", amx);
  ASSERT_EQ(schedule_of(scheduled), "x86.conv2d_amx_bf16");
  tir::PrimFunc lowered = tir::transform::lower(scheduled);

  const std::string assembly =
      codegen::emit_assembly({lowered}, codegen::Target::parse("llvm -mcpu=sapphirerapids"));
  EXPECT_GE(count(assembly, "tdpbf16ps"), 1);
  EXPECT_GE(count(assembly, "ldtilecfg"), 1);
  EXPECT_GE(count(assembly, "tilerelease"), count(assembly, "ldtilecfg"))
      << "each function that configures the tiles releases them";

  if (host_has_amx()) {
    topi_test::expect_close_to_max(run_kernel(codegen::jit_compile({lowered}), inputs, expected[0]),
                                   expected[0], 1e-4, "AMX on the host");
  } else {
    tir::PrimFunc fallback = tir::transform::lower(lower::lower_primitive(fn, "kernel", {}));
    topi_test::expect_close_to_max(
        run_kernel(codegen::jit_compile({fallback}), inputs, expected[0]), expected[0], 1e-4,
        "the host's fallback");
  }
}

class X86AmxConv : public ::testing::TestWithParam<Bf16ConvCase> {};

TEST_P(X86AmxConv, MatchesTheReference) { check_amx_group(bf16_conv_group(GetParam())); }

INSTANTIATE_TEST_SUITE_P(
    Grid, X86AmxConv,
    ::testing::Values(
        // name, batch, in blocks x block, out blocks x block, h, w, kernel, stride, pad, dilation
        // 56 = 4 tiles of 14: two row tiles along the width
        Bf16ConvCase{"pointwise_w56", 1, 2, 32, 2, 32, 3, 56, 1, 1, 0, 1},
        // 14 wide (one tile), 6 high: the second row tile is the next output row
        Bf16ConvCase{"k3_pad1_w14_rows_along_h", 1, 2, 32, 1, 32, 6, 14, 3, 1, 1, 1},
        // 7 x 7: one 7-row tile, no second one
        Bf16ConvCase{"k3_7x7_single_tile", 1, 3, 32, 3, 32, 7, 7, 3, 1, 1, 1},
        // 48 input channels (three blocks of 16: K = 16 a step, 48 x 9 in all), one
        // 16-channel half, an odd number of output blocks
        Bf16ConvCase{"k3_48_channels_half", 1, 3, 16, 3, 16, 5, 13, 3, 1, 1, 1},
        // stride 2: a data row stride of two pixels; odd input size
        Bf16ConvCase{"k3_stride2", 1, 2, 32, 2, 32, 9, 29, 3, 2, 1, 1},
        Bf16ConvCase{"pointwise_stride2_w28", 1, 1, 32, 2, 16, 8, 56, 1, 2, 0, 1},
        Bf16ConvCase{"k3_dilation2_w9", 1, 1, 32, 1, 32, 9, 13, 3, 1, 0, 2},
        Bf16ConvCase{"k7_stride2_pad3", 1, 1, 16, 1, 32, 19, 19, 7, 2, 3, 1},
        Bf16ConvCase{"batch2_w28", 2, 1, 32, 1, 32, 3, 28, 3, 1, 1, 1}),
    [](const ::testing::TestParamInfo<Bf16ConvCase>& info) { return info.param.name; });

// A dense layer's rows as the batch of a 1x1 convolution with one pixel: 16 and 64 rows (one
// and two row tiles a block), 48 (three tiles: no second row tile), 13 (one tile of 13 rows).
TEST(X86AmxDense, RowsFillTheTiles) {
  for (int64_t rows : {16, 64, 48, 13}) {
    SCOPED_TRACE(rows);
    const std::string r = std::to_string(rows);
    check_amx_group("fn (%x: Tensor[(" + r +
                    ", 3, 1, 1, 32), bfloat16], %w: Tensor[(2, 3, 1, 1, 16, 64), bfloat16]) {\n"
                    "  nn.contrib_conv2d_NCHWc_bf16(%x, %w, kernel_size=[1, 1], "
                    "data_layout=\"NCHW32c\", kernel_layout=\"OIHW16i32o2i\", "
                    "out_layout=\"NCHW32c\", out_dtype=\"float32\")\n}");
  }
}

// A kernel with tiles cannot be built for a target without them: a clear error, not a crash
// in LLVM's instruction selection.
TEST(X86AmxCodegen, ATargetWithoutTilesIsRefused) {
  ir::Function fn = topi_test::primitive_function(
      bf16_conv_group(Bf16ConvCase{"pointwise", 1, 1, 32, 1, 32, 2, 14, 1, 1, 0, 1}));
  lower::LowerGroupOptions amx;
  amx.amx_bf16 = true;
  tir::PrimFunc lowered = tir::transform::lower(lower::lower_primitive(fn, "kernel", amx));
  try {
    codegen::emit_assembly({lowered}, codegen::Target::parse("llvm -mcpu=znver4"));
    ADD_FAILURE() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("AMX tiles, which the target lacks"), std::string::npos)
        << e.what();
  }
}

// The runtime grants the tile state where the host has AMX (once; later calls are free).
TEST(X86AmxRuntime, PermissionIsGrantedOnAnAmxHost) {
  if (!host_has_amx()) {
    EXPECT_NE(AnvilBackendRequestAMX(), 0) << "a host without AMX cannot be granted its state";
    return;
  }
  EXPECT_EQ(AnvilBackendRequestAMX(), 0);
  EXPECT_EQ(AnvilBackendRequestAMX(), 0);
}

}  // namespace
}  // namespace anvil
