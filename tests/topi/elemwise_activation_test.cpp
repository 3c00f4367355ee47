// The activation computes and nn.bias_add compiled and run against the reference kernels, and
// small fused groups of elementwise ops.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "topi/topi_test_util.h"

namespace anvil {
namespace {

using topi_test::attrs;
using topi_test::check_group;
using topi_test::check_op;
using topi_test::random_tensor;

TEST(ElemwiseActivation, DefaultAttrs) {
  for (const char* op : {"nn.relu", "nn.leaky_relu", "nn.elu", "nn.selu", "nn.gelu", "nn.softplus",
                         "nn.hard_sigmoid", "nn.hard_swish", "nn.mish"}) {
    check_op(op, {random_tensor({3, 5, 7}, DataType::float32(), 1, -6, 6)});
    check_op(op, {random_tensor({1, 17}, DataType::float64(), 2, -6, 6)});
  }
}

TEST(ElemwiseActivation, SmallAndSpecialInputs) {
  // expm1 and log1p territory, and the softplus threshold.
  std::vector<double> values = {-1e-6, 1e-6, -0.02, 0.02, -30,
                                30,    -100, 25,    0,    std::numeric_limits<double>::quiet_NaN()};
  Tensor x = Tensor::zeros({int64_t(values.size())}, DataType::float32());
  for (size_t i = 0; i < values.size(); ++i) x.set_from_double(int64_t(i), values[i]);
  for (const char* op : {"nn.relu", "nn.elu", "nn.selu", "nn.gelu", "nn.softplus", "nn.mish",
                         "nn.hard_swish", "nn.hard_sigmoid"})
    check_op(op, {x});
}

TEST(ElemwiseActivation, WithAttrs) {
  Tensor x = random_tensor({2, 3, 9}, DataType::float32(), 3, -4, 4);
  check_op("nn.leaky_relu", {x}, attrs("nn.leaky_relu", {{"alpha", 0.01}}));
  check_op("nn.elu", {x}, attrs("nn.elu", {{"alpha", 0.5}}));
  check_op("nn.selu", {x}, attrs("nn.selu", {{"alpha", 1.5}, {"gamma", 2.0}}));
  check_op("nn.gelu", {x}, attrs("nn.gelu", {{"approximate", std::string("tanh")}}));
  check_op("nn.softplus", {x}, attrs("nn.softplus", {{"beta", 2.0}, {"threshold", 3.0}}));
  check_op("nn.hard_sigmoid", {x}, attrs("nn.hard_sigmoid", {{"alpha", 0.3}, {"beta", 0.4}}));
}

TEST(ElemwiseActivation, IntegerRelu) {
  check_op("nn.relu", {random_tensor({4, 7}, DataType::int32(), 4, -50, 50)});
  check_op("nn.relu", {random_tensor({4, 7}, DataType::int8(), 5, -50, 50)});
  check_op("nn.relu", {random_tensor({4, 7}, DataType::uint8(), 6, 0, 250)});
}

TEST(ElemwiseActivation, PreluAlongAxis) {
  check_op("nn.prelu", {random_tensor({2, 5, 3, 3}, DataType::float32(), 7),
                        random_tensor({5}, DataType::float32(), 8, 0, 0.5)});
  check_op("nn.prelu",
           {random_tensor({2, 3, 7}, DataType::float32(), 9),
            random_tensor({7}, DataType::float32(), 10, 0, 0.5)},
           attrs("nn.prelu", {{"axis", int64_t(-1)}}));
}

TEST(ElemwiseActivation, BiasAdd) {
  check_op("nn.bias_add", {random_tensor({2, 5, 3, 3}, DataType::float32(), 11),
                           random_tensor({5}, DataType::float32(), 12)});
  check_op("nn.bias_add",
           {random_tensor({4, 9}, DataType::int32(), 13, -20, 20),
            random_tensor({9}, DataType::int32(), 14, -20, 20)},
           attrs("nn.bias_add", {{"axis", int64_t(-1)}}));
}

TEST(ElemwiseActivation, FusedChains) {
  // A convolution-epilogue-like chain, and a chain mixing broadcast, compare and where.
  check_group(
      "fn (%x: Tensor[(2, 4, 5, 5), float32], %b: Tensor[(4), float32], %r: Tensor[(2, 4, 5, 5), "
      "float32]) { %0 = nn.bias_add(%x, %b); %1 = add(%0, %r); nn.relu(%1) }");
  check_group(
      "fn (%x: Tensor[(3, 1, 6), float32], %y: Tensor[(5, 1), float32]) { %0 = subtract(%x, %y); "
      "%1 = greater(%0, %y); %2 = exp(%0); %3 = where(%1, %2, %x); nn.gelu(%3) }");
  check_group(
      "fn (%x: Tensor[(4, 7), float32]) { %0 = cast(%x, dtype=\"int32\"); %1 = multiply(%0, %0); "
      "cast(%1, dtype=\"float64\") }");
}

}  // namespace
}  // namespace anvil
