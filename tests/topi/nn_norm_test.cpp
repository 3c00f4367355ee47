// The normalization computes against the reference kernels, naive and under the default
// schedule: batch norm (with its passed-through statistics), layer, group and instance norm
// over different axes, with and without scale and center, lrn, dropout and nll_loss.
#include <gtest/gtest.h>

#include "topi/topi_test_util.h"

namespace anvil {
namespace {

using topi_test::attrs;
using topi_test::check_op;
using topi_test::random_tensor;
using Fields = std::vector<std::pair<std::string, ir::AttrValue>>;

const topi_test::Tolerance kNorm{1e-4, 1e-5};

Tensor f32(std::vector<int64_t> shape, uint64_t seed, double lo = -1, double hi = 1) {
  return random_tensor(std::move(shape), DataType::float32(), seed, lo, hi);
}

TEST(NnBatchNorm, ChannelAxisOne) {
  check_op("nn.batch_norm",
           {f32({2, 3, 4, 5}, 1), f32({3}, 2), f32({3}, 3), f32({3}, 4), f32({3}, 5, 0.1, 2)},
           attrs("nn.batch_norm", Fields{{"epsilon", 1e-3}}), kNorm);
}

TEST(NnBatchNorm, LastAxisWithoutScaleOrCenter) {
  for (bool scale : {false, true}) {
    check_op(
        "nn.batch_norm",
        {f32({2, 5, 4}, 6), f32({4}, 7), f32({4}, 8), f32({4}, 9), f32({4}, 10, 0.1, 2)},
        attrs("nn.batch_norm", Fields{{"axis", int64_t(-1)}, {"scale", scale}, {"center", !scale}}),
        kNorm);
  }
}

TEST(NnLayerNorm, LastAxis) {
  check_op("nn.layer_norm", {f32({3, 4, 9}, 11), f32({9}, 12), f32({9}, 13)}, nullptr, kNorm);
}

TEST(NnLayerNorm, MiddleAxisNoAffine) {
  check_op(
      "nn.layer_norm", {f32({2, 7, 3}, 14, -3, 5), f32({7}, 15), f32({7}, 16)},
      attrs("nn.layer_norm", Fields{{"axis", int64_t(1)}, {"scale", false}, {"center", false}}),
      kNorm);
}

TEST(NnGroupNorm, ChannelsInGroups) {
  check_op("nn.group_norm", {f32({2, 6, 3, 4}, 17), f32({6}, 18), f32({6}, 19)},
           attrs("nn.group_norm", Fields{{"num_groups", int64_t(3)}}), kNorm);
}

TEST(NnGroupNorm, LastAxisOneGroup) {
  check_op("nn.group_norm", {f32({3, 2, 8}, 20), f32({8}, 21), f32({8}, 22)},
           attrs("nn.group_norm",
                 Fields{{"num_groups", int64_t(1)}, {"axis", int64_t(-1)}, {"epsilon", 1e-2}}),
           kNorm);
}

TEST(NnInstanceNorm, ChannelAxisOne) {
  check_op("nn.instance_norm", {f32({2, 3, 5, 4}, 23), f32({3}, 24), f32({3}, 25)}, nullptr, kNorm);
}

TEST(NnInstanceNorm, ChannelsLast) {
  check_op("nn.instance_norm", {f32({2, 5, 3}, 26), f32({3}, 27), f32({3}, 28)},
           attrs("nn.instance_norm", Fields{{"axis", int64_t(-1)}, {"center", false}}), kNorm);
}

TEST(NnLrn, EvenAndOddWindows) {
  for (int64_t size : {3, 4}) {
    check_op("nn.lrn", {f32({2, 7, 3, 2}, 29, -3, 3)},
             attrs("nn.lrn", Fields{{"size", size}, {"alpha", 0.5}, {"beta", 0.75}, {"bias", 1.5}}),
             kNorm);
  }
}

TEST(NnLrn, LastAxis) {
  check_op("nn.lrn", {f32({3, 2, 6}, 30, -2, 2)},
           attrs("nn.lrn", Fields{{"size", int64_t(5)}, {"axis", int64_t(-1)}, {"alpha", 0.1}}),
           kNorm);
}

TEST(NnDropout, PassesThroughWithMaskOfOnes) {
  check_op("nn.dropout", {f32({3, 5}, 31)}, attrs("nn.dropout", Fields{{"rate", 0.25}}));
}

TEST(NnNllLoss, EveryReductionWithIgnoredTargets) {
  Tensor predictions = f32({3, 4, 2}, 37, -3, 0);
  Tensor targets = random_tensor({3, 2}, DataType::int64(), 38, 0, 3);
  Tensor weights = f32({4}, 39, 0.5, 2);
  for (const char* reduction : {"none", "sum", "mean"}) {
    SCOPED_TRACE(reduction);
    check_op("nn.nll_loss", {predictions, targets, weights},
             attrs("nn.nll_loss",
                   Fields{{"reduction", std::string(reduction)}, {"ignore_index", int64_t(2)}}),
             kNorm);
    check_op("nn.nll_loss", {predictions, targets, weights},
             attrs("nn.nll_loss", Fields{{"reduction", std::string(reduction)}}), kNorm);
  }
}

TEST(NnBatchNorm, TupleGetItemGroup) {
  topi_test::check_group(
      R"(fn (%x: Tensor[(1, 3, 4, 4), float32], %g: Tensor[(3), float32],
      %b: Tensor[(3), float32], %m: Tensor[(3), float32], %v: Tensor[(3), float32]) {
    %0 = nn.batch_norm(%x, %g, %b, %m, %v);
    %1 = %0.0;
    nn.relu(%1)
  })",
      {f32({1, 3, 4, 4}, 32), f32({3}, 33), f32({3}, 34), f32({3}, 35), f32({3}, 36, 0.1, 2)},
      kNorm);
}

}  // namespace
}  // namespace anvil
