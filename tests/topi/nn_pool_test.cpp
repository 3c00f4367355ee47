// The pooling computes against the reference kernels, naive and under the default schedule:
// max/avg/lp pooling with padding, ceil_mode, dilation and count_include_pad in 1 to 3
// spatial axes and other layouts, global pooling, and adaptive pooling with uneven windows.
#include <gtest/gtest.h>

#include "topi/topi_test_util.h"

namespace anvil {
namespace {

using topi_test::attrs;
using topi_test::check_op;
using topi_test::random_tensor;
using Fields = std::vector<std::pair<std::string, ir::AttrValue>>;
using Ints = std::vector<int64_t>;

const topi_test::Tolerance kSum{1e-5, 1e-6};

Tensor f32(std::vector<int64_t> shape, uint64_t seed) {
  return random_tensor(std::move(shape), DataType::float32(), seed);
}

// The window attributes shared by the windowed pools.
Fields window(Ints pool, Ints strides, Ints padding, Ints dilation, bool ceil_mode) {
  return {{"pool_size", pool},
          {"strides", strides},
          {"padding", padding},
          {"dilation", dilation},
          {"ceil_mode", ceil_mode}};
}

Fields with(Fields fields, const std::string& name, ir::AttrValue value) {
  fields.emplace_back(name, std::move(value));
  return fields;
}

TEST(NnMaxPool2d, PaddedStrided) {
  check_op("nn.max_pool2d", {f32({1, 3, 9, 11}, 1)},
           attrs("nn.max_pool2d", window({3, 3}, {2, 2}, {1, 0, 2, 1}, {1, 1}, false)));
}

TEST(NnMaxPool2d, CeilModeDilated) {
  check_op("nn.max_pool2d", {f32({2, 2, 10, 9}, 2)},
           attrs("nn.max_pool2d", window({2, 3}, {3, 2}, {1, 1, 0, 1}, {2, 1}, true)));
}

TEST(NnMaxPool2d, WindowWhollyInPaddingGivesZero) {
  // Over a height of 1, the dilated window's two taps (rows -1 and 2) both miss the input.
  check_op("nn.max_pool2d", {f32({1, 2, 1, 5}, 3)},
           attrs("nn.max_pool2d", window({2, 1}, {1, 1}, {1, 0, 2, 0}, {3, 1}, false)));
}

TEST(NnMaxPool2d, NhwcInt32) {
  Tensor data = random_tensor({1, 6, 5, 3}, DataType::int32(), 4, -50, 50);
  check_op("nn.max_pool2d", {data},
           attrs("nn.max_pool2d", with(window({3, 2}, {1, 2}, {1, 1, 1, 0}, {1, 1}, false),
                                       "layout", std::string("NHWC"))));
}

TEST(NnMaxPoolWithArgmax, FirstMaximumOnTies) {
  // Integers in [-3, 3] tie often; the index is the first maximum in window order.
  Tensor data = random_tensor({2, 2, 7, 6}, DataType::int32(), 28, -3, 3);
  check_op("nn.max_pool2d_with_argmax", {data},
           attrs("nn.max_pool2d_with_argmax", window({3, 2}, {2, 2}, {1, 0, 1, 1}, {1, 1}, true)));
}

TEST(NnMaxPoolWithArgmax, EmptyWindowAndOtherRanks) {
  check_op("nn.max_pool2d_with_argmax", {f32({1, 2, 1, 5}, 29)},
           attrs("nn.max_pool2d_with_argmax", window({2, 1}, {1, 1}, {1, 0, 2, 0}, {3, 1}, false)));
  check_op("nn.max_pool1d_with_argmax", {f32({2, 3, 9}, 30)},
           attrs("nn.max_pool1d_with_argmax", window({3}, {2}, {1, 1}, {2}, false)));
  check_op("nn.max_pool3d_with_argmax", {f32({1, 2, 4, 3, 5}, 31)},
           attrs("nn.max_pool3d_with_argmax",
                 window({2, 2, 2}, {2, 1, 2}, {0, 1, 1, 1, 0, 0}, {1, 1, 1}, false)));
}

TEST(NnMaxPool1d, CeilMode) {
  check_op("nn.max_pool1d", {f32({2, 3, 10}, 5)},
           attrs("nn.max_pool1d", window({3}, {2}, {1, 0}, {1}, true)));
}

TEST(NnMaxPool3d, Padded) {
  check_op(
      "nn.max_pool3d", {f32({1, 2, 5, 6, 4}, 6)},
      attrs("nn.max_pool3d", window({2, 3, 2}, {2, 2, 1}, {1, 1, 0, 0, 1, 1}, {1, 1, 2}, false)));
}

TEST(NnAvgPool2d, ExcludePadCeilMode) {
  check_op("nn.avg_pool2d", {f32({1, 3, 9, 8}, 7)},
           attrs("nn.avg_pool2d", window({3, 3}, {2, 2}, {1, 0, 1, 1}, {1, 1}, true)), kSum);
}

TEST(NnAvgPool2d, IncludePadCeilMode) {
  check_op("nn.avg_pool2d", {f32({1, 3, 9, 8}, 8)},
           attrs("nn.avg_pool2d", with(window({3, 3}, {2, 2}, {1, 0, 1, 1}, {1, 1}, true),
                                       "count_include_pad", true)),
           kSum);
}

TEST(NnAvgPool2d, DilatedNhwc) {
  check_op("nn.avg_pool2d", {f32({2, 7, 8, 3}, 9)},
           attrs("nn.avg_pool2d", with(window({2, 3}, {1, 2}, {1, 2, 0, 1}, {2, 2}, false),
                                       "layout", std::string("NHWC"))),
           kSum);
}

TEST(NnAvgPool2d, Int32TruncatesLikeTheReference) {
  Tensor data = random_tensor({1, 2, 5, 6}, DataType::int32(), 27, -40, 40);
  check_op("nn.avg_pool2d", {data},
           attrs("nn.avg_pool2d", window({2, 3}, {2, 2}, {1, 1, 0, 1}, {1, 1}, true)));
}

TEST(NnAvgPool1d, IncludePad) {
  check_op(
      "nn.avg_pool1d", {f32({1, 2, 11}, 10)},
      attrs("nn.avg_pool1d", with(window({4}, {3}, {2, 1}, {1}, false), "count_include_pad", true)),
      kSum);
}

TEST(NnAvgPool3d, CeilModeExcludePad) {
  check_op(
      "nn.avg_pool3d", {f32({1, 2, 5, 4, 6}, 11)},
      attrs("nn.avg_pool3d", window({2, 2, 3}, {2, 1, 2}, {0, 1, 1, 1, 0, 0}, {1, 1, 1}, true)),
      kSum);
}

TEST(NnLpPool2d, SquareRootOfSumOfSquares) {
  check_op("nn.lp_pool2d", {f32({1, 2, 7, 6}, 12)},
           attrs("nn.lp_pool2d", window({2, 3}, {2, 1}, {1, 0, 0, 1}, {1, 1}, false)), kSum);
}

TEST(NnLpPool1d, OtherPowers) {
  for (double p : {1.0, 3.0}) {
    check_op("nn.lp_pool1d", {f32({2, 3, 9}, 13)},
             attrs("nn.lp_pool1d", with(window({3}, {2}, {1, 1}, {1}, true), "p_value", p)),
             {1e-5, 1e-6});
  }
}

TEST(NnLpPool3d, Plain) {
  check_op(
      "nn.lp_pool3d", {f32({1, 2, 4, 5, 3}, 14)},
      attrs("nn.lp_pool3d", window({2, 2, 2}, {1, 2, 1}, {0, 0, 0, 1, 1, 1}, {1, 1, 1}, false)),
      kSum);
}

TEST(NnGlobalPool2d, MaxAndAverage) {
  check_op("nn.global_max_pool2d", {f32({2, 3, 5, 7}, 15)});
  check_op("nn.global_avg_pool2d", {f32({2, 3, 5, 7}, 16)}, nullptr, kSum);
}

TEST(NnGlobalPool2d, Nhwc) {
  Fields nhwc = {{"layout", std::string("NHWC")}};
  check_op("nn.global_max_pool2d", {f32({1, 4, 3, 5}, 17)}, attrs("nn.global_max_pool2d", nhwc));
  check_op("nn.global_avg_pool2d", {f32({1, 4, 3, 5}, 18)}, attrs("nn.global_avg_pool2d", nhwc),
           kSum);
}

TEST(NnAdaptivePool2d, UnevenWindows) {
  // 7 -> 3 and 10 -> 4: windows of two sizes that overlap.
  Fields size = {{"output_size", Ints{3, 4}}};
  check_op("nn.adaptive_max_pool2d", {f32({1, 2, 7, 10}, 19)},
           attrs("nn.adaptive_max_pool2d", size));
  check_op("nn.adaptive_avg_pool2d", {f32({1, 2, 7, 10}, 20)},
           attrs("nn.adaptive_avg_pool2d", size), kSum);
}

TEST(NnAdaptivePool2d, EvenWindowsAndUpsampling) {
  // 8 -> 4 divides evenly; 3 -> 5 repeats input elements.
  Fields size = {{"output_size", Ints{4, 5}}};
  check_op("nn.adaptive_max_pool2d", {f32({2, 3, 8, 3}, 21)},
           attrs("nn.adaptive_max_pool2d", size));
  check_op("nn.adaptive_avg_pool2d", {f32({2, 3, 8, 3}, 22)}, attrs("nn.adaptive_avg_pool2d", size),
           kSum);
}

TEST(NnAdaptivePool1d, UnevenWindows) {
  Fields size = {{"output_size", Ints{4}}};
  check_op("nn.adaptive_max_pool1d", {f32({1, 3, 11}, 23)}, attrs("nn.adaptive_max_pool1d", size));
  check_op("nn.adaptive_avg_pool1d", {f32({1, 3, 11}, 24)}, attrs("nn.adaptive_avg_pool1d", size),
           kSum);
}

TEST(NnAdaptivePool3d, NdhwcUneven) {
  Fields fields = {{"output_size", Ints{2, 3, 2}}, {"layout", std::string("NDHWC")}};
  check_op("nn.adaptive_max_pool3d", {f32({1, 5, 4, 7, 2}, 25)},
           attrs("nn.adaptive_max_pool3d", fields));
  check_op("nn.adaptive_avg_pool3d", {f32({1, 5, 4, 7, 2}, 26)},
           attrs("nn.adaptive_avg_pool3d", fields), kSum);
}

TEST(NnMaxPool2d, ConvReluPoolGroup) {
  // A pool is its own group after a conv, but relu before it fuses into the pool.
  topi_test::check_group(R"(fn (%x: Tensor[(1, 3, 8, 7), float32]) {
    %0 = nn.relu(%x);
    nn.max_pool2d(%0, pool_size=[3, 3], strides=[2, 2], padding=[1, 1, 1, 1])
  })");
}

}  // namespace
}  // namespace anvil
