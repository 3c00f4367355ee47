// The x86 int8 convolutions (qnn.contrib_conv2d_NCHWc, tensorized onto u8i8_dot4_accumulate,
// and qnn.contrib_depthwise_conv2d_NCHWc) with a requantizing epilogue, scheduled by their
// strategies and compared bit for bit with the reference interpreter over a grid of shapes,
// blocks, strides, paddings and zero points, on inputs that span the whole uint8 / int8 range.
// Each kernel runs three ways: the host's code (vpdpbusd where the CPU has AVX-512 VNNI), the
// host without VNNI (-mattr=-avx512vnni,-avxvnni: the widening fallback), and the C back end.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "anvil/codegen/c.h"
#include "anvil/codegen/target.h"
#include "anvil/runtime/module.h"
#include "anvil/tir/functor.h"
#include "anvil/tir/printer.h"
#include "support/test_util.h"
#include "topi/x86_schedule_check.h"

namespace anvil {
namespace {

using topi_test::random_tensor;
using topi_test::run_kernel;

// Inputs spanning each type's range: uint8 data, int8 weights, int32 and float32 epilogue terms.
std::vector<Tensor> full_range_inputs(const ir::Function& fn) {
  std::vector<Tensor> inputs;
  for (size_t i = 0; i < fn->params.size(); ++i) {
    const auto* type = ir::as<ir::TensorTypeNode>(fn->params[i]->checked_type);
    DataType t = type->dtype;
    double lo = t == DataType::uint8() ? 0 : t == DataType::int8() ? -128 : -1000;
    double hi = t == DataType::uint8() ? 255 : t == DataType::int8() ? 127 : 1000;
    if (t.is_float()) lo = 0.0005, hi = 0.002;  // requantization multipliers
    inputs.push_back(random_tensor(*type->static_shape(), t, 31 + i, lo, hi));
  }
  return inputs;
}

void expect_equal(const Tensor& got, const Tensor& want, const std::string& how) {
  for (int64_t i = 0; i < got.numel(); ++i) {
    if (got.get_as_double(i) != want.get_as_double(i)) {
      ADD_FAILURE() << how << ": element " << i << " is " << got.get_as_double(i) << ", reference "
                    << want.get_as_double(i);
      return;
    }
  }
}

// Schedules the group with `strategy` (a decline fails), then checks the host build, the
// build without VNNI and the C build against the reference interpreter.
void check_int8_group(const std::string& function_text, const std::string& strategy) {
  ir::Function fn = topi_test::primitive_function(function_text);
  ir::IRModule mod;
  mod.add("main", fn);
  std::vector<Tensor> inputs = full_range_inputs(fn);
  std::vector<Tensor> expected = reference::Interpreter(mod).run(inputs);
  ASSERT_EQ(expected.size(), 1u);

  tir::PrimFunc scheduled = lower::lower_primitive(fn, "kernel", {});
  const ir::AttrValue* ran = scheduled->func_attrs.find(topi::kScheduleAttr);
  ASSERT_TRUE(ran && std::get<std::string>(*ran) == strategy) << "declined: " << [&] {
    const ir::AttrValue* why = scheduled->func_attrs.find(topi::kScheduleDeclinedAttr);
    return why ? std::get<std::string>(*why) : std::string("(no reason)");
  }();
  tir::PrimFunc lowered = tir::transform::lower(scheduled);

  expect_equal(run_kernel(codegen::jit_compile({lowered}), inputs, expected[0]), expected[0],
               "host");
  codegen::Target no_vnni = codegen::Target::parse("llvm -mattr=-avx512vnni,-avxvnni");
  expect_equal(run_kernel(codegen::jit_compile({lowered}, no_vnni), inputs, expected[0]),
               expected[0], "without VNNI");
  testing::ScratchDir dir;
  std::string library = (dir / "kernel.so").string();
  codegen::write_c_library({lowered}, library);
  expect_equal(run_kernel(Module::load_shared(library), inputs, expected[0]), expected[0], "C");
}

struct Int8ConvCase {
  const char* name;
  int64_t in_blocks, in_block, out_blocks, out_block, height, width, kernel, stride, pad;
  int64_t zero_point;
  int64_t groups = 1;  // output block o reads the in_blocks / groups input blocks of its group
};

std::string conv_group(const Int8ConvCase& c) {
  auto dims = [](std::vector<int64_t> d) {
    std::string s;
    for (int64_t v : d) s += (s.empty() ? "" : ", ") + std::to_string(v);
    return s;
  };
  return "fn (%x: Tensor[(" + dims({1, c.in_blocks, c.height, c.width, c.in_block}) +
         "), uint8], %w: Tensor[(" +
         dims({c.out_blocks, c.in_blocks / c.groups, c.kernel, c.kernel, c.in_block / 4,
               c.out_block * 4}) +
         "), int8], %b: Tensor[(" + dims({1, c.out_blocks, 1, 1, c.out_block}) +
         "), int32], %m: Tensor[(" + dims({c.out_blocks, 1, 1, c.out_block}) +
         "), float32]) {\n"
         "  %0 = qnn.contrib_conv2d_NCHWc(%x, %w, " +
         std::to_string(c.zero_point) + "u8, strides=[" + dims({c.stride, c.stride}) +
         "], padding=[" + dims({c.pad, c.pad, c.pad, c.pad}) + "], kernel_size=[" +
         dims({c.kernel, c.kernel}) + "], groups=" + std::to_string(c.groups) +
         ", data_layout=\"NCHW" + std::to_string(c.in_block) + "c\", kernel_layout=\"OIHW" +
         std::to_string(c.in_block / 4) + "i" + std::to_string(c.out_block) +
         "o4i\", out_layout=\"NCHW" + std::to_string(c.out_block) +
         "c\");\n  %1 = add(%0, %b);\n  %2 = cast(%1, dtype=\"float32\");\n"
         "  %3 = multiply(%2, %m);\n  qnn.quantize(%3, 1f, 7u8)\n}";
}

class X86Int8Conv : public ::testing::TestWithParam<Int8ConvCase> {};

TEST_P(X86Int8Conv, MatchesTheReferenceBitExact) {
  check_int8_group(conv_group(GetParam()), "x86.conv2d_int8");
}

INSTANTIATE_TEST_SUITE_P(
    Grid, X86Int8Conv,
    ::testing::Values(
        // name, in blocks x block, out blocks x block, h, w, kernel, stride, pad, data zp
        Int8ConvCase{"pointwise", 2, 16, 2, 16, 7, 7, 1, 1, 0, 0},
        Int8ConvCase{"pointwise_zp", 1, 16, 3, 16, 5, 9, 1, 1, 0, 128},
        // a prime width and an odd count of output blocks: a tile of 13 pixels x 1 block
        Int8ConvCase{"prime_width_odd_blocks", 2, 16, 5, 8, 3, 13, 3, 1, 1, 11},
        Int8ConvCase{"k3_pad1_zp", 2, 16, 1, 16, 6, 6, 3, 1, 1, 3},
        Int8ConvCase{"k3_stride2", 1, 8, 2, 16, 9, 11, 3, 2, 1, 255},
        Int8ConvCase{"k7_stride2_rgb", 1, 4, 1, 16, 13, 13, 7, 2, 3, 77},
        Int8ConvCase{"half_vector_output", 1, 16, 3, 8, 5, 6, 3, 1, 1, 10},
        Int8ConvCase{"odd_width", 3, 8, 1, 16, 4, 17, 1, 1, 0, 1},
        // groups: each output block reads its group's input blocks
        Int8ConvCase{"groups2_k3", 4, 8, 2, 16, 6, 7, 3, 1, 1, 9, 2},
        Int8ConvCase{"groups4_pointwise", 4, 4, 4, 8, 5, 5, 1, 1, 0, 200, 4},
        Int8ConvCase{"groups2_stride2", 2, 16, 4, 8, 9, 9, 3, 2, 1, 0, 2},
        Int8ConvCase{"groups8_block4", 8, 4, 8, 4, 6, 6, 3, 1, 1, 60, 8}),
    [](const ::testing::TestParamInfo<Int8ConvCase>& info) { return info.param.name; });

// The dot products of one step of the scheduled kernel's register tile: its accumulators.
int dot_calls(const tir::PrimFunc& scheduled) {
  int dots = 0;
  tir::pre_order_visit(
      tir::transform::lower(scheduled)->body,
      [&](const tir::PrimExpr& e) {
        if (const auto* call = tir::as<tir::CallNode>(e))
          dots += call->op == "u8i8_dot4_accumulate";
      },
      nullptr);
  return dots;
}

// The register tile on a width with no divisor near 8 (SqueezeNet's 13 x 13 maps, 125
// output blocks of 8): each reduction step updates 13 accumulators, not one after the other
// on a single one (vpdpbusd's latency each).
TEST(X86Int8ConvTile, APrimeWidthStillGetsAWideTile) {
  Int8ConvCase c{"squeezenet_classifier", 2, 16, 125, 8, 13, 13, 1, 1, 0, 0};
  tir::PrimFunc scheduled =
      lower::lower_primitive(topi_test::primitive_function(conv_group(c)), "kernel", {});
  EXPECT_GE(dot_calls(scheduled), 13) << tir::print(scheduled);
}

// qnn.dense's rows as the batch of a 1x1 convolution with one pixel: the tile spans 8 rows
// (and the kernel still matches the reference bit for bit, also on 13 rows, no multiple).
TEST(X86Int8ConvTile, DenseRowsAreTiledLikePixels) {
  for (int64_t rows : {16, 13}) {
    SCOPED_TRACE(rows);
    const std::string r = std::to_string(rows);
    const std::string text =
        "fn (%x: Tensor[(" + r +
        ", 4, 1, 1, 16), uint8], %w: Tensor[(3, 4, 1, 1, 4, 64), int8], %b: Tensor[(1, 3, 1, 1, "
        "16), int32]) {\n  %0 = qnn.contrib_conv2d_NCHWc(%x, %w, 9u8, kernel_size=[1, 1], "
        "data_layout=\"NCHW16c\", kernel_layout=\"OIHW4i16o4i\", out_layout=\"NCHW16c\");\n"
        "  %1 = add(%0, %b);\n  %2 = cast(%1, dtype=\"float32\");\n"
        "  %3 = multiply(%2, 0.0007f);\n  qnn.quantize(%3, 1f, 3u8)\n}";
    check_int8_group(text, "x86.conv2d_int8");
    if (rows != 16) continue;
    tir::PrimFunc scheduled =
        lower::lower_primitive(topi_test::primitive_function(text), "kernel", {});
    EXPECT_GE(dot_calls(scheduled), 8) << tir::print(scheduled);
  }
}

struct DepthwiseCase {
  const char* name;
  int64_t blocks, block, height, width, kernel, stride, pad, zero_point;
};

class X86Int8Depthwise : public ::testing::TestWithParam<DepthwiseCase> {};

TEST_P(X86Int8Depthwise, MatchesTheReferenceBitExact) {
  const DepthwiseCase& c = GetParam();
  auto n = [](int64_t v) { return std::to_string(v); };
  std::string text =
      "fn (%x: Tensor[(1, " + n(c.blocks) + ", " + n(c.height) + ", " + n(c.width) + ", " +
      n(c.block) + "), uint8], %w: Tensor[(" + n(c.blocks) + ", 1, " + n(c.kernel) + ", " +
      n(c.kernel) + ", 1, " + n(c.block) + "), int8], %b: Tensor[(1, " + n(c.blocks) + ", 1, 1, " +
      n(c.block) + "), int32]) {\n  %0 = qnn.contrib_depthwise_conv2d_NCHWc(%x, %w, " +
      n(c.zero_point) + "u8, strides=[" + n(c.stride) + ", " + n(c.stride) + "], padding=[" +
      n(c.pad) + ", " + n(c.pad) + ", " + n(c.pad) + ", " + n(c.pad) +
      "], groups=" + n(c.blocks * c.block) + ", kernel_size=[" + n(c.kernel) + ", " + n(c.kernel) +
      "], data_layout=\"NCHW" + n(c.block) + "c\", kernel_layout=\"OIHW1i" + n(c.block) +
      "o\", out_layout=\"NCHW" + n(c.block) +
      "c\");\n  %1 = add(%0, %b);\n"
      "  %2 = cast(%1, dtype=\"float32\");\n  %3 = multiply(%2, 0.001f);\n"
      "  qnn.quantize(%3, 1f, 0u8)\n}";
  check_int8_group(text, "x86.depthwise_int8");
}

INSTANTIATE_TEST_SUITE_P(
    Grid, X86Int8Depthwise,
    ::testing::Values(DepthwiseCase{"k3_pad1", 2, 16, 7, 7, 3, 1, 1, 128},
                      DepthwiseCase{"k3_stride2", 1, 16, 10, 9, 3, 2, 1, 0},
                      DepthwiseCase{"k5_block8", 3, 8, 9, 12, 5, 1, 2, 200},
                      // tasks of 4, 3 and 1 output rows, and no padding
                      DepthwiseCase{"k3_rows4", 2, 16, 16, 11, 3, 1, 1, 3},
                      DepthwiseCase{"k3_stride2_rows3", 1, 16, 12, 12, 3, 2, 1, 255},
                      DepthwiseCase{"k3_prime_rows", 2, 16, 13, 5, 3, 1, 1, 40},
                      DepthwiseCase{"k3_pad0", 1, 16, 8, 8, 3, 1, 0, 9}),
    [](const ::testing::TestParamInfo<DepthwiseCase>& info) { return info.param.name; });

}  // namespace
}  // namespace anvil
