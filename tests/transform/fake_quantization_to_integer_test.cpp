// FakeQuantizationToInteger: QDQ convolutions, dense layers and residual adds become integer
// ops, with results within one quantization step of the float form they replace; what does
// not match (run-time scales, shared intermediates, per-axis outputs, float weights) stays.
#include <cmath>
#include <string>

#include "anvil/transform/passes.h"
#include "transform/pass_test_util.h"

namespace anvil::transform {
namespace {

using testing::count_calls;
using testing::parse;

// The module of `text` with its parameter %w bound to seeded weights in [-127, 127] of its
// shape and dtype (constants of more than a few elements have no inline text form).
ir::IRModule with_weights(const std::string& text) {
  ir::IRModule mod = parse(text);
  for (const ir::Var& p : mod.get_function("main")->params) {
    if (p->name != "w") continue;
    const auto* type = ir::as<ir::TensorTypeNode>(p->annotation);
    Tensor w = testing::random_tensor(*type->static_shape(), 17, -127, 127, type->dtype);
    return bind_params(mod, {{"w", w}});
  }
  return mod;
}

// quantize(relu(conv(dequantize(x), dequantize(W)) + dequantize(B))) with per-channel int8
// weights and an int32 bias, as ONNX Runtime's quantizer writes a convolution.
// `output` is the quantize's scale, zero point and attrs; `result` what @main returns.
std::string conv_block(const std::string& output = "0.05f, 3u8", const std::string& result = "%6") {
  return R"(
def @main(%x: Tensor[(1, 2, 5, 5), uint8], %w: Tensor[(3, 2, 3, 3), int8]) {
  %0 = qnn.dequantize(%x, 0.02f, 120u8);
  %1 = qnn.dequantize(%w, const([0.01, 0.004, 0.02], shape=(3), dtype=float32), const([0, 0, 0], shape=(3), dtype=int8), axis=0);
  %2 = qnn.dequantize(const([500, -300, 70], shape=(3), dtype=int32), const([0.0002, 0.00008, 0.0004], shape=(3), dtype=float32), const([0, 0, 0], shape=(3), dtype=int32), axis=0);
  %3 = nn.conv2d(%0, %1, padding=[1, 1, 1, 1], channels=3, kernel_size=[3, 3]);
  %4 = nn.bias_add(%3, %2);
  %5 = nn.relu(%4);
  %6 = qnn.quantize(%5, )" +
         output + R"();
  )" + result +
         R"(
}
)";
}

// Every output element of the two modules within `steps` of each other (uint8 outputs).
void expect_within_steps(const ir::IRModule& before, const ir::IRModule& after, double steps) {
  std::vector<Tensor> inputs;
  for (const ir::Var& p : before.get_function("main")->params) {
    const auto* type = ir::as<ir::TensorTypeNode>(p->annotation);
    inputs.push_back(
        testing::random_tensor(*type->static_shape(), 5 + inputs.size(), 0, 255, type->dtype));
  }
  std::vector<Tensor> want = reference::Interpreter(before).run(inputs);
  std::vector<Tensor> got = reference::Interpreter(after).run(inputs);
  ASSERT_EQ(want.size(), got.size());
  for (size_t k = 0; k < want.size(); ++k) {
    ASSERT_EQ(want[k].dtype(), got[k].dtype());
    int64_t differing = 0;
    for (int64_t i = 0; i < want[k].numel(); ++i) {
      double d = std::fabs(want[k].get_as_double(i) - got[k].get_as_double(i));
      ASSERT_LE(d, steps) << "output " << k << " element " << i;
      differing += d > 0;
    }
    // Float and integer arithmetic round apart only near halves.
    EXPECT_LE(differing, want[k].numel() / 20) << "output " << k;
  }
}

TEST(FakeQuantizationToInteger, ConvBlockBecomesIntegerConvolutionWithReluAsBound) {
  ir::IRModule before = with_weights(conv_block());
  ir::IRModule after = fake_quantization_to_integer(before);
  EXPECT_EQ(count_calls(after, "qnn.conv2d"), 1);
  EXPECT_EQ(count_calls(after, "nn.conv2d"), 0);
  EXPECT_EQ(count_calls(after, "nn.relu"), 0);
  // relu then quantize with zero point 3: the output never goes below 3.
  EXPECT_NE(testing::print(after).find("clip("), std::string::npos) << testing::print(after);
  EXPECT_NE(testing::print(after).find("a_min=3f"), std::string::npos) << testing::print(after);
  expect_within_steps(before, after, 1);
}

TEST(FakeQuantizationToInteger, WhatDoesNotMatchStaysInFloat) {
  // The output quantized per axis.
  ir::IRModule per_axis = with_weights(
      conv_block("const([0.05, 0.04, 0.03], shape=(3), dtype=float32), const([3, 3, 3], shape=(3), "
                 "dtype=uint8), axis=1"));
  // The convolution's float result read by a second consumer.
  ir::IRModule shared = with_weights(conv_block("0.05f, 3u8", "(%6, %3)"));
  // A scale computed at run time.
  ir::IRModule runtime_scale = with_weights(R"(
def @main(%x: Tensor[(1, 2, 4, 4), uint8], %s: float32, %w: Tensor[(4, 2, 1, 1), int8]) {
  %0 = qnn.dequantize(%x, %s, 0u8);
  %1 = nn.conv2d(%0, qnn.dequantize(%w, 0.1f, 0i8), channels=4, kernel_size=[1, 1]);
  qnn.quantize(%1, 0.1f, 0u8)
}
)");
  // Weights that are plain floats.
  ir::IRModule float_weight = with_weights(R"(
def @main(%x: Tensor[(1, 2, 4, 4), uint8], %w: Tensor[(4, 2, 1, 1), float32]) {
  %0 = qnn.dequantize(%x, 0.1f, 0u8);
  %1 = nn.conv2d(%0, %w, channels=4, kernel_size=[1, 1]);
  qnn.quantize(%1, 0.1f, 0u8)
}
)");
  for (const auto* mod : {&per_axis, &shared, &runtime_scale, &float_weight}) {
    ir::IRModule after = fake_quantization_to_integer(*mod);
    EXPECT_EQ(count_calls(after, "qnn.conv2d"), 0) << testing::print(after);
    EXPECT_EQ(count_calls(after, "nn.conv2d"), 1) << testing::print(after);
  }
}

TEST(FakeQuantizationToInteger, ResidualAddBecomesQnnAdd) {
  ir::IRModule before = parse(R"(
def @main(%a: Tensor[(1, 4, 3, 3), uint8], %b: Tensor[(1, 4, 3, 3), uint8]) {
  %0 = qnn.dequantize(%a, 0.05f, 128u8);
  %1 = qnn.dequantize(%b, 0.03f, 100u8);
  %2 = add(%0, %1);
  qnn.quantize(%2, 0.07f, 90u8)
}
)");
  ir::IRModule after = fake_quantization_to_integer(before);
  EXPECT_EQ(count_calls(after, "qnn.add"), 1);
  EXPECT_EQ(count_calls(after, "qnn.dequantize"), 0);
  expect_within_steps(before, after, 1);

  // int8 and uint8 inputs to a uint8 output: no integer add, the float form stays.
  ir::IRModule mixed = parse(R"(
def @main(%a: Tensor[(1, 4), int8], %b: Tensor[(1, 4), uint8]) {
  %0 = qnn.dequantize(%a, 0.05f, 0i8);
  %1 = qnn.dequantize(%b, 0.03f, 100u8);
  qnn.quantize(add(%0, %1), 0.07f, 90u8)
}
)");
  EXPECT_EQ(count_calls(fake_quantization_to_integer(mixed), "qnn.add"), 0);
}

TEST(FakeQuantizationToInteger, SiluMultiplyBecomesQnnMul) {
  // x * sigmoid(x) as a QDQ SiLU writes it, and a squeeze-and-excitation gate broadcast over
  // the channels: both multiplies become qnn.mul, relu after one folds into its bounds.
  ir::IRModule before = parse(R"(
def @main(%a: Tensor[(1, 4, 3, 3), uint8], %g: Tensor[(1, 4, 1, 1), uint8]) {
  %0 = qnn.dequantize(%a, 0.05f, 128u8);
  %1 = sigmoid(%0);
  %2 = qnn.quantize(%1, 0.0039f, 0u8);
  %3 = qnn.dequantize(%2, 0.0039f, 0u8);
  %4 = multiply(%0, %3);
  %5 = qnn.quantize(%4, 0.03f, 20u8);
  %6 = qnn.dequantize(%g, 0.004f, 3u8);
  %7 = multiply(%0, %6);
  %8 = nn.relu(%7);
  %9 = qnn.quantize(%8, 0.01f, 10u8);
  (%5, %9)
}
)");
  ir::IRModule after = fake_quantization_to_integer(before);
  EXPECT_EQ(count_calls(after, "qnn.mul"), 2) << testing::print(after);
  EXPECT_EQ(count_calls(after, "multiply"), 0) << testing::print(after);
  expect_within_steps(before, after, 1);
}

TEST(FakeQuantizationToInteger, DenseAndMatmulBecomeQnnDense) {
  ir::IRModule dense = with_weights(
      R"(
def @main(%x: Tensor[(2, 6), uint8], %w: Tensor[(4, 6), int8]) {
  %0 = qnn.dequantize(%x, 0.02f, 7u8);
  %1 = qnn.dequantize(%w, const([0.01, 0.02, 0.005, 0.03], shape=(4), dtype=float32), const([0, 0, 0, 0], shape=(4), dtype=int8), axis=0);
  %2 = nn.dense(%0, %1);
  %3 = nn.bias_add(%2, const([0.5, -0.25, 1, 0], shape=(4), dtype=float32), axis=-1);
  qnn.quantize(%3, 0.1f, 128u8)
}
)");
  ir::IRModule after = fake_quantization_to_integer(dense);
  EXPECT_EQ(count_calls(after, "qnn.dense"), 1) << testing::print(after);
  expect_within_steps(dense, after, 1);

  // MatMul's (K, N) weight, quantized per column (axis 1), is transposed into qnn.dense's (N, K).
  ir::IRModule matmul = with_weights(
      R"(
def @main(%x: Tensor[(3, 6), uint8], %w: Tensor[(6, 4), int8]) {
  %0 = qnn.dequantize(%x, 0.02f, 7u8);
  %1 = qnn.dequantize(%w, const([0.01, 0.02, 0.005, 0.03], shape=(4), dtype=float32), const([0, 0, 0, 0], shape=(4), dtype=int8), axis=1);
  qnn.quantize(nn.matmul(%0, %1), 0.1f, 128u8)
}
)");
  ir::IRModule matmul_after = fake_quantization_to_integer(matmul);
  EXPECT_EQ(count_calls(matmul_after, "qnn.dense"), 1) << testing::print(matmul_after);
  expect_within_steps(matmul, matmul_after, 1);
}

}  // namespace
}  // namespace anvil::transform
