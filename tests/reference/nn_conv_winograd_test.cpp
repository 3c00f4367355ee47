// The reference kernel of nn.contrib_conv2d_winograd_NCHWc against the direct nn.conv2d
// reference on odd shapes (maps not divisible by 4, padding 0 and 1, asymmetric padding), and
// the op's shape errors.
#include <random>

#include "anvil/ir/winograd.h"
#include "nn_kernel_test_util.h"

namespace anvil::reference {
namespace {

using namespace testing;
using ints = std::vector<int64_t>;

Tensor random_values(std::vector<int64_t> shape, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<double> v(size_t(shape_numel(shape)));
  for (double& x : v) x = dist(gen);
  return make(std::move(shape), v);
}

// NCHW -> NCHW{b}c.
Tensor block_channels(const Tensor& x, int64_t b) {
  ints s = x.shape_vector();
  Tensor out = Tensor::empty({s[0], s[1] / b, s[2], s[3], b}, x.dtype());
  for (int64_t n = 0; n < s[0]; ++n)
    for (int64_t c = 0; c < s[1]; ++c)
      for (int64_t h = 0; h < s[2]; ++h)
        for (int64_t w = 0; w < s[3]; ++w)
          out.set_from_double((((n * (s[1] / b) + c / b) * s[2] + h) * s[3] + w) * b + c % b,
                              x.get_as_double(((n * s[1] + c) * s[2] + h) * s[3] + w));
  return out;
}

AttrList winograd_attrs(const ints& padding, int64_t ib, int64_t ob) {
  return {{"padding", padding},
          {"kernel_size", ints{3, 3}},
          {"data_layout", "NCHW" + std::to_string(ib) + "c"},
          {"kernel_layout", "HWOI" + std::to_string(ob) + "o"},
          {"out_layout", "NCHW" + std::to_string(ob) + "c"}};
}

void expect_matches_direct(ints data_shape, int64_t out_channels, const ints& padding, int64_t ib,
                           int64_t ob, unsigned seed) {
  Tensor x = random_values(data_shape, seed);
  Tensor w = random_values({out_channels, data_shape[1], 3, 3}, seed + 1);
  Tensor direct = run("nn.conv2d", {x, w}, {{"padding", padding}});
  Tensor got = run("nn.contrib_conv2d_winograd_NCHWc",
                   {block_channels(x, ib), winograd::transform_weight(w, ob)},
                   winograd_attrs(padding, ib, ob));
  Tensor want = block_channels(direct, ob);
  ASSERT_EQ(got.shape_vector(), want.shape_vector());
  double scale = 0;
  for (int64_t i = 0; i < want.numel(); ++i)
    scale = std::max(scale, std::fabs(want.get_as_double(i)));
  for (int64_t i = 0; i < want.numel(); ++i)
    ASSERT_NEAR(got.get_as_double(i), want.get_as_double(i), 1e-4 * scale) << "element " << i;
}

TEST(NnConvWinogradKernel, MatchesDirectConvPaddedOddMap) {
  // 7x9 output: tiles of 4 cover 8x12, the last ones cut.
  expect_matches_direct({1, 4, 7, 9}, 8, {1, 1, 1, 1}, 4, 8, 1);
}

TEST(NnConvWinogradKernel, MatchesDirectConvUnpaddedBatchOfTwo) {
  // 10x6 input, 8x4 output: whole tiles.
  expect_matches_direct({2, 8, 10, 6}, 4, {0, 0, 0, 0}, 8, 2, 3);
}

TEST(NnConvWinogradKernel, MatchesDirectConvAsymmetricPadding) {
  expect_matches_direct({1, 2, 5, 5}, 2, {0, 1, 2, 0}, 1, 1, 5);
}

TEST(NnConvWinogradKernel, RejectsWeightOfWrongInputChannels) {
  Tensor x = random_values({1, 2, 6, 6, 4}, 7);
  Tensor u = random_values({6, 6, 1, 4, 4}, 8);  // 4 input channels, data has 8
  try {
    run("nn.contrib_conv2d_winograd_NCHWc", {x, u}, winograd_attrs({1, 1, 1, 1}, 4, 4));
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("input channels"), std::string::npos) << e.what();
  }
}

TEST(NnConvWinogradKernel, RejectsStride) {
  Tensor x = random_values({1, 1, 6, 6, 4}, 9);
  Tensor u = random_values({6, 6, 1, 4, 4}, 10);
  AttrList attrs = winograd_attrs({1, 1, 1, 1}, 4, 4);
  attrs.emplace_back("strides", ints{2, 2});
  try {
    run("nn.contrib_conv2d_winograd_NCHWc", {x, u}, attrs);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'strides'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace anvil::reference
