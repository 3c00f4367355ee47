// Reference kernels of the normalization family on small hand-computed cases.
#include <gtest/gtest.h>

#include <cmath>

#include "anvil/ir/attrs/nn_norm.h"
#include "anvil/ir/infer_type.h"
#include "anvil/ir/op.h"
#include "reference/kernel_util.h"

namespace anvil::reference {
namespace {

using namespace ir;

const DataType f32 = DataType::float32();

Tensor tensor_of(std::vector<int64_t> shape, std::vector<double> values, DataType dtype = f32) {
  return from_doubles(values, std::move(shape), dtype);
}

// Types a call of op on constant inputs and runs its reference kernel.
std::vector<Tensor> run_op(std::string_view op, std::vector<Tensor> inputs, Attrs attrs = nullptr) {
  std::vector<Expr> args;
  for (const Tensor& t : inputs) args.push_back(ConstantNode::make(t));
  Call call = call_op(op, args, attrs);
  infer_expr_type(call);
  return evaluate_call(*call, inputs);
}

// Succeeds when the tensor holds these values to within float32 rounding.
::testing::AssertionResult holds(const Tensor& t, const std::vector<double>& expected) {
  std::vector<double> got = to_doubles(t);
  if (got.size() != expected.size())
    return ::testing::AssertionFailure() << got.size() << " values, expected " << expected.size();
  for (size_t i = 0; i < got.size(); ++i)
    if (std::fabs(got[i] - expected[i]) > 1e-6 * (1 + std::fabs(expected[i])))
      return ::testing::AssertionFailure()
             << "value " << i << " is " << got[i] << ", expected " << expected[i];
  return ::testing::AssertionSuccess();
}

TEST(NormKernels, BatchNormUsesTheMovingStatistics) {
  // Channel 0 holds [1, 3], channel 1 holds [2, 4].
  Tensor x = tensor_of({1, 2, 1, 2}, {1, 3, 2, 4});
  Tensor gamma = tensor_of({2}, {2, 1}), beta = tensor_of({2}, {0, 1});
  Tensor mean = tensor_of({2}, {2, 3}), var = tensor_of({2}, {1, 4});
  auto attrs = make_attrs<BatchNormAttrs>();
  attrs->epsilon = 0;
  std::vector<Tensor> out = run_op("nn.batch_norm", {x, gamma, beta, mean, var}, attrs);
  ASSERT_EQ(out.size(), 3u);
  // (1 - 2) / 1 * 2 = -2; (2 - 3) / 2 * 1 + 1 = 0.5.
  EXPECT_TRUE(holds(out[0], {-2, 2, 0.5, 1.5}));
  EXPECT_TRUE(holds(out[1], {2, 3}));
  EXPECT_TRUE(holds(out[2], {1, 4}));
  attrs->center = false;
  attrs->scale = false;
  EXPECT_TRUE(
      holds(run_op("nn.batch_norm", {x, gamma, beta, mean, var}, attrs)[0], {-1, 1, -0.5, 0.5}));
}

TEST(NormKernels, LayerNormOverOneAxis) {
  // Rows [1, 2, 3] and [2, 4, 6] both normalize to [-sqrt(1.5), 0, sqrt(1.5)].
  Tensor x = tensor_of({2, 3}, {1, 2, 3, 2, 4, 6});
  auto attrs = make_attrs<LayerNormAttrs>();
  attrs->epsilon = 0;
  double r = std::sqrt(1.5);
  std::vector<Tensor> out =
      run_op("nn.layer_norm", {x, tensor_of({3}, {1, 1, 2}), tensor_of({3}, {0, 0, 1})}, attrs);
  EXPECT_TRUE(holds(out[0], {-r, 0, 2 * r + 1, -r, 0, 2 * r + 1}));
  // Along axis 0 each column [a, 2a] normalizes to [-1, 1].
  attrs->axis = 0;
  out = run_op("nn.layer_norm", {x, tensor_of({2}, {1, 1}), tensor_of({2}, {0, 10})}, attrs);
  EXPECT_TRUE(holds(out[0], {-1, -1, -1, 11, 11, 11}));
}

TEST(NormKernels, GroupNormNormalizesEachGroupOfChannels) {
  // Groups {1, 2} and {3, 6} both normalize to [-1, 1].
  Tensor x = tensor_of({1, 4, 1, 1}, {1, 2, 3, 6});
  auto attrs = make_attrs<GroupNormAttrs>();
  attrs->num_groups = 2;
  attrs->epsilon = 0;
  std::vector<Tensor> out = run_op(
      "nn.group_norm", {x, tensor_of({4}, {1, 2, 3, 4}), tensor_of({4}, {0, 0, 0, 1})}, attrs);
  EXPECT_TRUE(holds(out[0], {-1, 2, -3, 5}));
}

TEST(NormKernels, InstanceNormTakesStatisticsPerSampleAndChannel) {
  // (2 samples, 2 channels, 2 positions); every pair normalizes to [-1, 1].
  Tensor x = tensor_of({2, 2, 2}, {1, 3, 2, 6, 0, 4, 10, 12});
  Tensor gamma = tensor_of({2}, {1, 2}), beta = tensor_of({2}, {0, 1});
  auto attrs = make_attrs<InstanceNormAttrs>();
  attrs->epsilon = 0;
  EXPECT_TRUE(
      holds(run_op("nn.instance_norm", {x, gamma, beta}, attrs)[0], {-1, 1, -1, 3, -1, 1, -1, 3}));
  // Channels last: (1 sample, 2 positions, 2 channels); channel 0 is [1, 3], channel 1 [2, 6].
  attrs->axis = -1;
  Tensor nhwc = tensor_of({1, 2, 2}, {1, 2, 3, 6});
  EXPECT_TRUE(holds(run_op("nn.instance_norm", {nhwc, gamma, beta}, attrs)[0], {-1, -1, 1, 3}));
}

TEST(NormKernels, LrnWindowFollowsOnnxForEvenSizes) {
  // size 2: the window of channel c is [c, c + 1]. alpha / size = 1, bias 1, beta 1:
  // y = x / (1 + sum of squares) = 1/6, 2/14, 3/10.
  Tensor x = tensor_of({1, 3, 1, 1}, {1, 2, 3});
  auto attrs = make_attrs<LRNAttrs>();
  attrs->size = 2;
  attrs->alpha = 2;
  attrs->bias = 1;
  attrs->beta = 1;
  EXPECT_TRUE(holds(run_op("nn.lrn", {x}, attrs)[0], {1.0 / 6, 2.0 / 14, 3.0 / 10}));
}

TEST(NormKernels, SoftmaxAndLogSoftmaxAreStable) {
  auto attrs = make_attrs<SoftmaxAttrs>();
  // softmax([1000, 1001]) = [1 / (1 + e), e / (1 + e)] without overflow.
  Tensor big = tensor_of({1, 2}, {1000, 1001});
  double e = std::exp(1.0);
  EXPECT_TRUE(holds(run_op("nn.softmax", {big}, attrs)[0], {1 / (1 + e), e / (1 + e)}));
  EXPECT_TRUE(
      holds(run_op("nn.log_softmax", {big}, attrs)[0], {-std::log(1 + e), 1 - std::log(1 + e)}));
  // Along axis 0 of [[0, 1], [0, 3]]: columns [0.5, 0.5] and [1, e^2] / (1 + e^2).
  attrs->axis = 0;
  Tensor x = tensor_of({2, 2}, {0, 1, 0, 3});
  double e2 = std::exp(2.0);
  EXPECT_TRUE(holds(run_op("nn.softmax", {x}, attrs)[0], {0.5, 1 / (1 + e2), 0.5, e2 / (1 + e2)}));
}

TEST(NormKernels, HardmaxMarksTheFirstMaximum) {
  Tensor x = tensor_of({2, 3}, {3, 1, 3, 0, 2, 1});
  auto attrs = make_attrs<SoftmaxAttrs>();
  EXPECT_TRUE(holds(run_op("nn.hardmax", {x}, attrs)[0], {1, 0, 0, 0, 1, 0}));
  attrs->axis = 0;
  EXPECT_TRUE(holds(run_op("nn.hardmax", {x}, attrs)[0], {1, 0, 1, 0, 1, 0}));
}

TEST(NormKernels, DropoutInInferenceKeepsEverything) {
  Tensor x = tensor_of({3}, {1, -2, 3});
  std::vector<Tensor> out = run_op("nn.dropout", {x});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_TRUE(holds(out[0], {1, -2, 3}));
  EXPECT_EQ(out[1].dtype(), f32);
  EXPECT_TRUE(holds(out[1], {1, 1, 1}));
}

Ref<NLLLossAttrs> nll_attrs(std::string reduction, std::optional<int64_t> ignore_index = {}) {
  auto attrs = make_attrs<NLLLossAttrs>();
  attrs->reduction = std::move(reduction);
  attrs->ignore_index = ignore_index;
  return attrs;
}

TEST(NormKernels, NllLossWeightsReducesAndIgnores) {
  // Losses: -(-3) * w[2] = 9 and -(-4) * w[0] = 4; the weighted mean divides by 3 + 1.
  Tensor log_prob = tensor_of({2, 3}, {-1, -2, -3, -4, -5, -6});
  Tensor targets = from_int64s({2, 0}, {2}, DataType::int64());
  Tensor weights = tensor_of({3}, {1, 2, 3});
  auto run = [&](Ref<NLLLossAttrs> attrs) {
    return run_op("nn.nll_loss", {log_prob, targets, weights}, attrs)[0];
  };
  EXPECT_TRUE(holds(run(nll_attrs("none")), {9, 4}));
  EXPECT_TRUE(holds(run(nll_attrs("sum")), {13}));
  EXPECT_TRUE(holds(run(nll_attrs("mean")), {3.25}));
  // Ignoring class 0 drops the second loss and its weight.
  EXPECT_TRUE(holds(run(nll_attrs("none", 0)), {9, 0}));
  EXPECT_TRUE(holds(run(nll_attrs("mean", 0)), {3}));
}

TEST(NormKernels, NllLossWithSpatialDims) {
  // (1 sample, 2 classes, 2 positions): class 1 at position 0, class 0 at position 1.
  Tensor log_prob = tensor_of({1, 2, 2}, {-1, -2, -3, -4});
  Tensor targets = from_int64s({1, 0}, {1, 2}, DataType::int32());
  Tensor weights = tensor_of({2}, {1, 1});
  std::vector<Tensor> none = run_op("nn.nll_loss", {log_prob, targets, weights}, nll_attrs("none"));
  EXPECT_EQ(none[0].shape_vector(), (std::vector<int64_t>{1, 2}));
  EXPECT_TRUE(holds(none[0], {3, 2}));
  EXPECT_TRUE(
      holds(run_op("nn.nll_loss", {log_prob, targets, weights}, nll_attrs("mean"))[0], {2.5}));
  Tensor out_of_range = from_int64s({2, 0}, {1, 2}, DataType::int32());
  EXPECT_THROW(run_op("nn.nll_loss", {log_prob, out_of_range, weights}, nll_attrs("sum")), Error);
}

TEST(NormKernels, EveryNormOpHasAKernel) {
  for (const char* op :
       {"nn.batch_norm", "nn.layer_norm", "nn.group_norm", "nn.instance_norm", "nn.lrn",
        "nn.softmax", "nn.log_softmax", "nn.hardmax", "nn.dropout", "nn.nll_loss"})
    EXPECT_NE(find_kernel(op), nullptr) << op;
}

}  // namespace
}  // namespace anvil::reference
