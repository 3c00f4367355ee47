// nn.contrib_conv2d_winograd_NCHWc compiled with its x86 schedule (applied directly, so a
// refused primitive fails instead of falling back) against the reference of the direct
// blocked convolution of the same OIHW weight: maps not divisible by 4, padding 0 and 1,
// 16 and 32 channels, with and without a fused epilogue, AVX-512 and AVX2 blocks.
#include <gtest/gtest.h>

#include "anvil/ir/winograd.h"
#include "topi/x86/nn_conv_winograd.h"
#include "topi/x86_schedule_check.h"

namespace anvil {
namespace {

struct Case {
  int64_t batch, in_channels, out_channels, height, width, pad, block;
  std::string epilogue;  // "", "bias_relu" or "residual_relu"
  int vector_bits = 512;
  int64_t dilation = 1;
};

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string text = "(";
  for (size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + ")";
}

// The group as text with the convolution `op` (weight type and kernel layout given).
std::string group_text(const Case& c, const std::string& op, const std::vector<int64_t>& weight,
                       const std::string& kernel_layout) {
  const int64_t b = c.block, out_h = c.height + 2 * c.pad - 2 * c.dilation,
                out_w = c.width + 2 * c.pad - 2 * c.dilation;
  std::string params = "%x: Tensor[" +
                       shape_text({c.batch, c.in_channels / b, c.height, c.width, b}) +
                       ", float32], %w: Tensor[" + shape_text(weight) + ", float32]";
  if (c.epilogue == "bias_relu")
    params += ", %e: Tensor[" + shape_text({c.out_channels / b, 1, 1, b}) + ", float32]";
  if (c.epilogue == "residual_relu")
    params +=
        ", %e: Tensor[" + shape_text({c.batch, c.out_channels / b, out_h, out_w, b}) + ", float32]";
  const std::string layout = "\"NCHW" + std::to_string(b) + "c\"";
  std::string conv = op + "(%x, %w, padding=[" + std::to_string(c.pad) + ", " +
                     std::to_string(c.pad) + ", " + std::to_string(c.pad) + ", " +
                     std::to_string(c.pad) + "], dilation=[" + std::to_string(c.dilation) + ", " +
                     std::to_string(c.dilation) + "], kernel_size=[3, 3], data_layout=" + layout +
                     ", kernel_layout=\"" + kernel_layout + "\")";
  if (c.epilogue.empty()) return "fn (" + params + ") { " + conv + " }";
  return "fn (" + params + ") { %0 = " + conv + "; %1 = add(%0, %e); nn.relu(%1) }";
}

// OIHW -> OIHW{ib}i{ob}o, the direct blocked convolution's weight.
Tensor blocked_weight(const Tensor& w, int64_t ib, int64_t ob) {
  std::vector<int64_t> s = w.shape_vector();
  Tensor out = Tensor::empty({s[0] / ob, s[1] / ib, 3, 3, ib, ob}, DataType::float32());
  for (int64_t o = 0; o < s[0]; ++o)
    for (int64_t i = 0; i < s[1]; ++i)
      for (int64_t t = 0; t < 9; ++t)
        out.set_from_double(
            ((((o / ob) * (s[1] / ib) + i / ib) * 9 + t) * ib + i % ib) * ob + o % ob,
            w.get_as_double((o * s[1] + i) * 9 + t));
  return out;
}

void check_against_direct(const Case& c) {
  const int64_t b = c.block;
  Tensor oihw =
      topi_test::random_tensor({c.out_channels, c.in_channels, 3, 3}, DataType::float32(), 101);
  const std::string winograd_text =
      group_text(c, "nn.contrib_conv2d_winograd_NCHWc",
                 {6, 6, c.out_channels / b, c.in_channels, b}, "HWOI" + std::to_string(b) + "o");
  const std::string direct_text =
      group_text(c, "nn.contrib_conv2d_NCHWc", {c.out_channels / b, c.in_channels / b, 3, 3, b, b},
                 "OIHW" + std::to_string(b) + "i" + std::to_string(b) + "o");

  std::vector<Tensor> inputs, unused;
  tir::PrimFunc scheduled;
  try {
    scheduled = x86_test::schedule_group_with(winograd_text, "nn.contrib_conv2d_winograd_NCHWc",
                                              inputs, unused, c.vector_bits);
  } catch (const std::exception& e) {
    FAIL() << "scheduling: " << e.what();
  }
  // inputs: random data (and epilogue operand) from the helper; the weight replaced.
  std::vector<Tensor> direct_inputs = inputs;
  inputs[1] = winograd::transform_weight(oihw, b);
  direct_inputs[1] = blocked_weight(oihw, b, b);
  ir::IRModule direct;
  direct.add("main", topi_test::primitive_function(direct_text));
  Tensor expected = reference::Interpreter(direct).run(direct_inputs).at(0);

  Module module = codegen::jit_compile({tir::transform::lower(scheduled)});
  Tensor out = Tensor::zeros(expected.shape_vector(), expected.dtype());
  std::vector<Value> call_args;
  for (const Tensor& t : inputs) call_args.emplace_back(t);
  call_args.emplace_back(out);
  module.function("kernel").call(call_args);
  double scale = 0;
  for (int64_t i = 0; i < expected.numel(); ++i)
    scale = std::max(scale, std::fabs(expected.get_as_double(i)));
  for (int64_t i = 0; i < out.numel(); ++i)
    ASSERT_NEAR(out.get_as_double(i), expected.get_as_double(i), 1e-4 * scale) << "element " << i;
}

TEST(X86Conv2dWinograd, Map14NotDivisibleBy4WithBiasRelu) {
  check_against_direct({1, 16, 16, 14, 14, 1, 16, "bias_relu"});
}

TEST(X86Conv2dWinograd, Unpadded32ChannelsOddMap) {
  // 11 x 9 input, 9 x 7 output: the last tile row and column are partial.
  check_against_direct({1, 32, 32, 11, 9, 0, 16, ""});
}

TEST(X86Conv2dWinograd, MoreOutputChannelsResidualRelu) {
  check_against_direct({1, 16, 32, 8, 8, 1, 16, "residual_relu"});
}

TEST(X86Conv2dWinograd, BatchOfTwoFewerOutputChannels) {
  check_against_direct({2, 32, 16, 13, 10, 1, 16, ""});
}

TEST(X86Conv2dWinograd, Avx2BlocksOf8) {
  check_against_direct({1, 16, 24, 10, 12, 1, 8, "bias_relu", 256});
}

// Dilated: one class of outputs per (oh % d, ow % d), each an undilated Winograd convolution
// over the inputs of its class; classes of unequal size on odd maps.
TEST(X86Conv2dWinograd, DilatedRate2WithBiasRelu) {
  check_against_direct({1, 16, 32, 14, 14, 2, 16, "bias_relu", 512, 2});
}

TEST(X86Conv2dWinograd, DilatedRate4ResidualRelu) {
  check_against_direct({1, 32, 16, 28, 28, 4, 16, "residual_relu", 512, 4});
}

TEST(X86Conv2dWinograd, DilatedRate3OddMap) {
  check_against_direct({1, 16, 16, 17, 13, 3, 16, "", 512, 3});
}

TEST(X86Conv2dWinograd, ManyTilesWithPanelSplit) {
  // 256 input channels: the GEMM's reduction runs in two panels of 128.
  check_against_direct({1, 256, 16, 6, 6, 1, 16, "bias_relu"});
}

}  // namespace
// The heuristic's picks: ResNet-18's 3x3 256 -> 256 on 14x14 (16 tiles of 4x4) takes 4
// output vectors x 6 tiles on AVX-512 (3 with AVX2's blocks of 8) and panels of 128 input channels.
TEST(X86WinogradKnobs, HeuristicPicks) {
  topi::x86::WinogradShape shape;
  shape.tiles = 16, shape.oc_chunks = 16, shape.oc_bn = 16, shape.ic_chunks = 16, shape.ic_bn = 16;
  topi::x86::WinogradKnobs k = topi::x86::default_winograd_knobs(shape, 512);
  EXPECT_EQ(k.oc_tile, 4);
  EXPECT_EQ(k.rows, 6);
  EXPECT_EQ(k.ic_panel, 8);
  shape.oc_bn = 8, shape.oc_chunks = 32;  // AVX2: blocks of 8
  EXPECT_EQ(topi::x86::default_winograd_knobs(shape, 256).rows, 3);
  shape.oc_bn = 16;
  shape.oc_chunks = 6;  // the tile divides the chunks
  EXPECT_EQ(topi::x86::default_winograd_knobs(shape, 512).oc_tile, 3);
  shape.oc_bn = 32;
  EXPECT_THROW(topi::x86::default_winograd_knobs(shape, 512), Error);
}

}  // namespace anvil
