// The x86 bfloat16 convolution (nn.contrib_conv2d_NCHWc_bf16, tensorized onto
// bf16_dot2_accumulate) with a float32 epilogue, scheduled by its strategy and compared with the
// reference interpreter over a grid of shapes: odd widths and heights, remainder tiles in the
// pixels and the output blocks, input blocks whose channel count is no multiple of 32, strides,
// paddings, and a dense layer's rows. Each kernel runs three ways: the host's code (vdpbf16ps
// where the CPU has AVX-512 BF16), the host without it (-mattr=-avx512bf16: the widening
// fallback), and the C back end. The reference sums the same bfloat16 values in double, so the
// kernels differ from it only by float32 rounding.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "anvil/codegen/c.h"
#include "anvil/codegen/target.h"
#include "anvil/runtime/module.h"
#include "anvil/tir/functor.h"
#include "anvil/tir/printer.h"
#include "support/test_util.h"
#include "topi/x86_bf16_cases.h"
#include "topi/x86_schedule_check.h"

namespace anvil {
namespace {

using topi_test::bf16_conv_group;
using topi_test::Bf16ConvCase;
using topi_test::run_kernel;

// float32 sums of up to a few thousand products of values in [-1, 1): within 1e-4 of the exact
// sum, relative to the largest output.
void expect_close(const Tensor& got, const Tensor& want, const std::string& how) {
  topi_test::expect_close_to_max(got, want, 1e-4, how);
}

int dot_calls(const tir::PrimFunc& scheduled) {
  int dots = 0;
  tir::pre_order_visit(
      tir::transform::lower(scheduled)->body,
      [&](const tir::PrimExpr& e) {
        if (const auto* call = tir::as<tir::CallNode>(e))
          dots += call->op == "bf16_dot2_accumulate";
      },
      nullptr);
  return dots;
}

// Schedules the group with x86.conv2d_bf16 (a decline fails), then checks the host build, the
// build without AVX-512 BF16 and the C build against the reference interpreter. Returns the
// dot products of one step of the register tile.
int check_bf16_group(const std::string& function_text) {
  const topi_test::ReferenceRun run = topi_test::reference_run(function_text, 53);
  const ir::Function& fn = run.fn;
  const std::vector<Tensor>& inputs = run.inputs;
  const std::vector<Tensor> expected = {run.expected};

  tir::PrimFunc scheduled = lower::lower_primitive(fn, "kernel", {});
  const ir::AttrValue* ran = scheduled->func_attrs.find(topi::kScheduleAttr);
  EXPECT_TRUE(ran && std::get<std::string>(*ran) == "x86.conv2d_bf16") << "declined: " << [&] {
    const ir::AttrValue* why = scheduled->func_attrs.find(topi::kScheduleDeclinedAttr);
    return why ? std::get<std::string>(*why) : std::string("(no reason)");
  }();
  tir::PrimFunc lowered = tir::transform::lower(scheduled);

  expect_close(run_kernel(codegen::jit_compile({lowered}), inputs, expected[0]), expected[0],
               "host");
  codegen::Target no_bf16 = codegen::Target::parse("llvm -mattr=-avx512bf16");
  expect_close(run_kernel(codegen::jit_compile({lowered}, no_bf16), inputs, expected[0]),
               expected[0], "without AVX-512 BF16");
  testing::ScratchDir dir;
  std::string library = (dir / "kernel.so").string();
  codegen::write_c_library({lowered}, library);
  expect_close(run_kernel(Module::load_shared(library), inputs, expected[0]), expected[0], "C");
  return dot_calls(scheduled);
}

class X86Bf16Conv : public ::testing::TestWithParam<Bf16ConvCase> {};

TEST_P(X86Bf16Conv, MatchesTheReference) { check_bf16_group(bf16_conv_group(GetParam())); }

INSTANTIATE_TEST_SUITE_P(
    Grid, X86Bf16Conv,
    ::testing::Values(
        // name, batch, in blocks x block, out blocks x block, h, w, kernel, stride, pad
        Bf16ConvCase{"pointwise", 1, 2, 16, 2, 16, 7, 7, 1, 1, 0},
        // 48 input channels (no multiple of 32), three output blocks: a remainder oc tile
        Bf16ConvCase{"k3_pad1_48_channels", 1, 3, 16, 3, 16, 6, 6, 3, 1, 1},
        Bf16ConvCase{"k3_stride2_odd_size", 1, 1, 8, 2, 16, 9, 11, 3, 2, 1},
        // a prime width and five output blocks: a tile of 13 pixels
        Bf16ConvCase{"prime_width", 1, 2, 16, 5, 8, 3, 13, 3, 1, 1},
        Bf16ConvCase{"odd_width_17", 1, 3, 8, 1, 16, 4, 17, 1, 1, 0},
        // two input channels a block (a single pair), output blocks of four
        Bf16ConvCase{"pairs_block4", 1, 3, 2, 3, 4, 5, 5, 3, 1, 1},
        // six input channels a block: three pairs, K = 18 x 9 taps
        Bf16ConvCase{"block6", 1, 3, 6, 2, 8, 6, 7, 3, 1, 1},
        Bf16ConvCase{"k7_stride2", 1, 1, 4, 1, 16, 13, 13, 7, 2, 3},
        Bf16ConvCase{"batch3", 3, 2, 16, 1, 16, 5, 5, 3, 1, 1}),
    [](const ::testing::TestParamInfo<Bf16ConvCase>& info) { return info.param.name; });

// A dense layer's rows as the batch of a 1x1 convolution with one pixel: the tile spans 8 rows
// (and the kernel still matches the reference on 13 rows, no multiple).
TEST(X86Bf16Dense, RowsAreTiledLikePixels) {
  for (int64_t rows : {16, 13}) {
    SCOPED_TRACE(rows);
    const std::string r = std::to_string(rows);
    const int dots = check_bf16_group(
        "fn (%x: Tensor[(" + r +
        ", 6, 1, 1, 16), bfloat16], %w: Tensor[(3, 6, 1, 1, 8, 32), bfloat16]) {\n"
        "  nn.contrib_conv2d_NCHWc_bf16(%x, %w, kernel_size=[1, 1], data_layout=\"NCHW16c\", "
        "kernel_layout=\"OIHW8i16o2i\", out_layout=\"NCHW16c\", out_dtype=\"float32\")\n}");
    if (rows == 16) {
      EXPECT_GE(dots, 8);
    }
  }
}

}  // namespace
}  // namespace anvil
