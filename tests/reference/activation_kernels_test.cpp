// Reference kernels of the activation family. Expected values come from the
// formulas evaluated by hand or, where transcendental, printed by numpy in
// float32 (the comment gives the expression).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "tensor_kernel_test_util.h"

namespace anvil::reference {
namespace {

using testing::ints_of;
using testing::make_ints;
using testing::make_tensor;
using testing::run1;
using testing::values_of;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

Tensor floats(const std::vector<double>& values) {
  return make_tensor({int64_t(values.size())}, values);
}

// Element i of a float32 result, compared at float precision.
void expect_floats(const Tensor& out, const std::vector<double>& expected) {
  std::vector<double> got = values_of(out);
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_FLOAT_EQ(float(got[i]), float(expected[i])) << i;
}

TEST(ActivationKernels, ReluOnIntegersAndFloats) {
  EXPECT_EQ(ints_of(run1("nn.relu", {make_ints({3}, {-3, 0, 4}, DataType::int8())})),
            (std::vector<int64_t>{0, 0, 4}));
  // 2^64 - 1 in uint64 is positive even though its bit pattern is -1 as int64.
  EXPECT_EQ(ints_of(run1("nn.relu", {make_ints({1}, {-1}, DataType::uint64())})),
            (std::vector<int64_t>{-1}));
  std::vector<double> out = values_of(run1("nn.relu", {floats({-1.5, 2, kNaN})}));
  EXPECT_EQ(out[0], 0);
  EXPECT_EQ(out[1], 2);
  EXPECT_TRUE(std::isnan(out[2]));
}

TEST(ActivationKernels, LeakyRelu) {
  expect_floats(run1("nn.leaky_relu", {floats({-2, 3})}, {{"alpha", 0.1}}), {-0.2, 3});
}

TEST(ActivationKernels, PreluTakesTheSlopeOfEachChannel) {
  // Shape (1, 2, 2): channel 0 holds -1, -2 (slope 0.5), channel 1 holds -3, 4 (slope 0.25).
  Tensor x = make_tensor({1, 2, 2}, {-1, -2, -3, 4});
  Tensor alpha = make_tensor({2}, {0.5, 0.25});
  expect_floats(run1("nn.prelu", {x, alpha}, {{"axis", int64_t(1)}}), {-0.5, -1, -0.75, 4});
  // Along the last axis instead: columns take 0.5 and 0.25.
  expect_floats(run1("nn.prelu", {x, alpha}, {{"axis", int64_t(-1)}}), {-0.5, -0.5, -1.5, 4});
}

TEST(ActivationKernels, EluAndSelu) {
  // 2 * (exp(-1) - 1) = -1.2642411.
  expect_floats(run1("nn.elu", {floats({-1, 1})}, {{"alpha", 2.0}}), {-1.2642411, 1});
  // Default gamma 1.0507010, alpha 1.6732632: gamma * alpha * (exp(-1) - 1) = -1.1113307,
  // gamma * 2 = 2.101402.
  expect_floats(run1("nn.selu", {floats({-1, 2})}), {-1.1113307, 2.101402});
}

TEST(ActivationKernels, GeluExactAndTanh) {
  // x * Phi(x): Phi(1) = 0.5 * (1 + erf(1 / sqrt(2))) = 0.8413448, and
  // -0.5 * Phi(-0.5) = -0.5 * 0.30853754 = -0.15426877.
  expect_floats(run1("nn.gelu", {floats({1, -0.5})}), {0.8413448, -0.15426877});
  // 0.5 * (1 + tanh(sqrt(2 / pi) * (1 + 0.044715))) = 0.841192.
  expect_floats(run1("nn.gelu", {floats({1})}, {{"approximate", std::string("tanh")}}), {0.841192});
}

TEST(ActivationKernels, SoftplusWithBetaAndThreshold) {
  // log(1 + exp(0)) = log 2 = 0.6931472; beta * x = 30 > 20 returns x itself.
  expect_floats(run1("nn.softplus", {floats({0, 30})}), {0.6931472, 30});
  // log(1 + exp(2 * 1)) / 2 = 1.063464.
  expect_floats(run1("nn.softplus", {floats({1})}, {{"beta", 2.0}}), {1.063464});
  // No overflow to infinity for large inputs below the threshold.
  expect_floats(run1("nn.softplus", {floats({1000})}, {{"threshold", 1e9}}), {1000});
}

TEST(ActivationKernels, HardSigmoidClampsAndKeepsNaN) {
  std::vector<double> out = values_of(
      run1("nn.hard_sigmoid", {floats({-3, 0, 3, kNaN})}, {{"alpha", 0.2}, {"beta", 0.5}}));
  EXPECT_EQ(out[0], 0);
  EXPECT_EQ(out[1], 0.5);
  EXPECT_EQ(out[2], 1);
  EXPECT_TRUE(std::isnan(out[3]));
}

TEST(ActivationKernels, HardSwish) {
  // x * clamp(x / 6 + 1/2, 0, 1): -4 -> 0, 1 -> 1 * (1/6 + 1/2) = 2/3, 4 -> 4.
  expect_floats(run1("nn.hard_swish", {floats({-4, 0, 1, 4})}), {0, 0, 2.0 / 3.0, 4});
}

TEST(ActivationKernels, Mish) {
  // tanh(log(1 + e)) = 0.8650984; a large x gives x, not NaN from exp overflow.
  expect_floats(run1("nn.mish", {floats({1, 100})}), {0.8650984, 100});
}

}  // namespace
}  // namespace anvil::reference
