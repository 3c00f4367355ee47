// The image.resize and image.grid_sample computes against the reference kernels, naive and
// under the default schedule: every method with every coordinate transformation mode, the
// nearest rounding methods, cubic with excluded outside weights, crop boxes with
// extrapolation, scales instead of sizes, other layouts and integer data; grid sampling with
// every method and padding mode, in 2-D and 3-D.
#include <gtest/gtest.h>

#include "topi/topi_test_util.h"

namespace anvil {
namespace {

using topi_test::attrs;
using topi_test::check_op;
using topi_test::random_tensor;
using Fields = std::vector<std::pair<std::string, ir::AttrValue>>;
using Ints = std::vector<int64_t>;

const topi_test::Tolerance kBlend{1e-5, 1e-6};

Tensor f32(std::vector<int64_t> shape, uint64_t seed) {
  return random_tensor(std::move(shape), DataType::float32(), seed);
}

Fields resize(const std::string& method, const std::string& mode, Ints size) {
  return {{"method", method}, {"coordinate_transformation_mode", mode}, {"size", size}};
}

const char* const kModes[] = {"half_pixel", "align_corners", "asymmetric", "pytorch_half_pixel",
                              "tf_half_pixel_for_nn"};

TEST(NnResize2d, EveryMethodAndMode) {
  Tensor data = f32({1, 2, 5, 4}, 1);
  for (const char* method : {"nearest_neighbor", "linear", "cubic"}) {
    for (const char* mode : kModes) {
      SCOPED_TRACE(std::string(method) + " " + mode);
      // Upsampling one axis and downsampling the other.
      check_op("image.resize2d", {data}, attrs("image.resize2d", resize(method, mode, {8, 3})),
               kBlend);
    }
  }
}

TEST(NnResize2d, NearestRoundingMethods) {
  Tensor data = f32({1, 1, 6, 5}, 2);
  for (const char* rounding :
       {"round", "floor", "ceil", "round_prefer_floor", "round_prefer_ceil"}) {
    for (const char* mode : {"half_pixel", "asymmetric"}) {
      SCOPED_TRACE(std::string(rounding) + " " + mode);
      Fields fields = resize("nearest_neighbor", mode, {9, 10});
      fields.emplace_back("rounding_method", std::string(rounding));
      check_op("image.resize2d", {data}, attrs("image.resize2d", fields));
    }
  }
}

TEST(NnResize2d, CubicExcludeOutsideAndAlpha) {
  Fields fields = resize("cubic", "half_pixel", {7, 9});
  fields.emplace_back("cubic_exclude", int64_t(1));
  fields.emplace_back("cubic_alpha", -0.75);
  check_op("image.resize2d", {f32({2, 2, 4, 5}, 3)}, attrs("image.resize2d", fields), kBlend);
}

TEST(NnResize2d, CropAndResizeWithExtrapolation) {
  for (const char* method : {"nearest_neighbor", "linear"}) {
    SCOPED_TRACE(method);
    Fields fields = resize(method, "tf_crop_and_resize", {6, 5});
    fields.emplace_back("roi", std::vector<double>{-0.2, 0.1, 0.9, 1.3});
    fields.emplace_back("extrapolation_value", 7.5);
    check_op("image.resize2d", {f32({1, 2, 5, 6}, 4)}, attrs("image.resize2d", fields), kBlend);
  }
}

TEST(NnResize2d, ScalesInsteadOfSize) {
  Fields fields = {{"method", std::string("linear")},
                   {"coordinate_transformation_mode", std::string("half_pixel")},
                   {"scales", std::vector<double>{1.7, 0.6}}};
  check_op("image.resize2d", {f32({1, 3, 5, 7}, 5)}, attrs("image.resize2d", fields), kBlend);
}

TEST(NnResize2d, NhwcLayout) {
  Fields fields = resize("linear", "align_corners", {7, 3});
  fields.emplace_back("layout", std::string("NHWC"));
  check_op("image.resize2d", {f32({2, 4, 5, 3}, 6)}, attrs("image.resize2d", fields), kBlend);
}

TEST(NnResize2d, IntegerData) {
  Tensor data = random_tensor({1, 2, 4, 4}, DataType::uint8(), 7, 0, 255);
  check_op("image.resize2d", {data},
           attrs("image.resize2d", resize("nearest_neighbor", "asymmetric", {8, 6})));
  check_op("image.resize2d", {data},
           attrs("image.resize2d", resize("linear", "half_pixel", {7, 6})));
}

TEST(NnResize1d, EveryMethod) {
  for (const char* method : {"nearest_neighbor", "linear", "cubic"}) {
    SCOPED_TRACE(method);
    check_op("image.resize1d", {f32({2, 3, 7}, 8)},
             attrs("image.resize1d", resize(method, "half_pixel", {11})), kBlend);
  }
}

TEST(NnResize3d, EveryMethod) {
  for (const char* method : {"nearest_neighbor", "linear", "cubic"}) {
    SCOPED_TRACE(method);
    check_op("image.resize3d", {f32({1, 2, 3, 4, 3}, 9)},
             attrs("image.resize3d", resize(method, "align_corners", {5, 3, 4})), kBlend);
  }
}

// Grid points from -1.3 to 1.3, so some fall outside the input and exercise the padding mode.
Tensor grid(std::vector<int64_t> shape, uint64_t seed) {
  return random_tensor(std::move(shape), DataType::float32(), seed, -1.3, 1.3);
}

TEST(NnGridSample, EveryMethodAndPaddingMode) {
  Tensor data = f32({2, 3, 5, 6}, 10);
  Tensor points = grid({2, 2, 4, 3}, 11);
  // Every method with every padding mode; each padding mode meets both corner modes.
  bool align_corners = false;
  for (const char* method : {"nearest", "bilinear", "bicubic"}) {
    for (const char* padding : {"zeros", "border", "reflection"}) {
      align_corners = !align_corners;
      SCOPED_TRACE(std::string(method) + " " + padding + (align_corners ? " align" : ""));
      check_op("image.grid_sample", {data, points},
               attrs("image.grid_sample", Fields{{"method", std::string(method)},
                                                 {"padding_mode", std::string(padding)},
                                                 {"align_corners", align_corners}}),
               kBlend);
    }
  }
}

TEST(NnGridSample, Volumetric) {
  Tensor data = f32({1, 2, 3, 4, 5}, 12);
  Tensor points = grid({1, 3, 2, 3, 2}, 13);
  for (const char* padding : {"zeros", "reflection"}) {
    SCOPED_TRACE(padding);
    check_op("image.grid_sample", {data, points},
             attrs("image.grid_sample", Fields{{"method", std::string("bilinear")},
                                               {"layout", std::string("NCDHW")},
                                               {"padding_mode", std::string(padding)},
                                               {"align_corners", false}}),
             kBlend);
  }
}

}  // namespace
}  // namespace anvil
