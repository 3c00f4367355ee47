// Reference kernels of the image ops: padding modes (static and run-time),
// sub-pixel rearrangement, batch_flatten, and resize in its coordinate modes,
// interpolations, antialiasing and extrapolation.
#include "nn_kernel_test_util.h"

namespace anvil::reference {
namespace {

using namespace testing;
using ints = std::vector<int64_t>;
const DataType i64 = DataType::int64();

Tensor scalar(double v, DataType dtype = DataType::float32()) { return make({}, {v}, dtype); }

TEST(NnImageKernels, PadModes) {
  Tensor x = make({3}, {1, 2, 3});
  auto pad = [&](const char* mode) {
    return values(run("nn.pad", {x, scalar(9)},
                      {{"pad_width", ints{2, 2}}, {"pad_mode", std::string(mode)}}));
  };
  EXPECT_EQ(pad("constant"), (std::vector<double>{9, 9, 1, 2, 3, 9, 9}));
  EXPECT_EQ(pad("edge"), (std::vector<double>{1, 1, 1, 2, 3, 3, 3}));
  // reflect mirrors without repeating the edge element (numpy's np.pad).
  EXPECT_EQ(pad("reflect"), (std::vector<double>{3, 2, 1, 2, 3, 2, 1}));
}

TEST(NnImageKernels, PadTwoAxesKeepsIntegersExact) {
  Tensor x = make({1, 2}, {5, 6}, i64);
  x.data_as<int64_t>()[1] = (int64_t(1) << 60) + 1;
  Tensor y = run("nn.pad", {x, scalar(-1, i64)}, {{"pad_width", ints{1, 0, 0, 1}}});
  EXPECT_EQ(y.shape_vector(), (ints{2, 3}));
  const int64_t* p = y.data_as<int64_t>();
  EXPECT_EQ(std::vector<int64_t>(p, p + 6),
            (std::vector<int64_t>{-1, -1, -1, 5, (int64_t(1) << 60) + 1, -1}));
}

TEST(NnImageKernels, DynamicPadWrapsReflectsRepeatedlyAndCrops) {
  Tensor x = make({3}, {1, 2, 3});
  auto pad = [&](std::vector<double> pads, const char* mode) {
    return values(run("dyn.nn.pad", {x, make({2}, pads, i64), scalar(0), make({1}, {0}, i64)},
                      {{"pad_mode", std::string(mode)}}));
  };
  // np.pad([1, 2, 3], 5, mode) for wrap and reflect.
  EXPECT_EQ(pad({5, 5}, "wrap"), (std::vector<double>{2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2}));
  EXPECT_EQ(pad({5, 5}, "reflect"), (std::vector<double>{2, 1, 2, 3, 2, 1, 2, 3, 2, 1, 2, 3, 2}));
  // A negative amount crops.
  EXPECT_EQ(pad({-1, 2}, "edge"), (std::vector<double>{2, 3, 3, 3}));
}

TEST(NnImageKernels, DynamicPadOnListedAxes) {
  // Pads only axis -1 of a 2x2 by (1, 0), with the fill value 7.
  Tensor y =
      run("dyn.nn.pad", {iota({2, 2}), make({2}, {1, 0}, i64), scalar(7), make({1}, {-1}, i64)});
  EXPECT_EQ(y.shape_vector(), (ints{2, 3}));
  EXPECT_EQ(values(y), (std::vector<double>{7, 0, 1, 7, 2, 3}));
}

TEST(NnImageKernels, DepthToSpaceModes) {
  // The ONNX operator documentation's example: 8 channels of 1x1 (values 0..7), block 2.
  Tensor x = iota({1, 8, 1, 1});
  Tensor dcr = run("nn.depth_to_space", {x}, {{"block_size", int64_t(2)}});
  EXPECT_EQ(dcr.shape_vector(), (ints{1, 2, 2, 2}));
  // DCR: channel (i * 2 + j) * 2 + c goes to output channel c, position (i, j).
  EXPECT_EQ(values(dcr), (std::vector<double>{0, 2, 4, 6, 1, 3, 5, 7}));
  Tensor crd =
      run("nn.depth_to_space", {x}, {{"block_size", int64_t(2)}, {"mode", std::string("CRD")}});
  // CRD: channel c * 4 + i * 2 + j.
  EXPECT_EQ(values(crd), (std::vector<double>{0, 1, 2, 3, 4, 5, 6, 7}));
}

TEST(NnImageKernels, SpaceToDepthUndoesDepthToSpace) {
  Tensor x = iota({2, 8, 3, 2});
  Tensor there = run("nn.depth_to_space", {x}, {{"block_size", int64_t(2)}});
  Tensor back = run("nn.space_to_depth", {there}, {{"block_size", int64_t(2)}});
  EXPECT_EQ(back.shape_vector(), x.shape_vector());
  EXPECT_EQ(values(back), values(x));
}

TEST(NnImageKernels, BatchFlatten) {
  Tensor y = run("nn.batch_flatten", {iota({2, 3, 2})});
  EXPECT_EQ(y.shape_vector(), (ints{2, 6}));
  EXPECT_EQ(values(y), values(iota({12})));
}

// Resizes the last axis of a (1, 1, n) tensor with image.resize1d.
Tensor resize_1d(const std::vector<double>& data, AttrList attrs) {
  return run("image.resize1d", {make({1, 1, int64_t(data.size())}, data)}, attrs);
}

TEST(NnImageKernels, ResizeLinearCoordinateModes) {
  // half_pixel: output x reads (x + 0.5) / 2 - 0.5 = -0.25, 0.25, 0.75, 1.25 (clamped at the ends).
  EXPECT_TRUE(near(resize_1d({1, 2}, {{"scales", std::vector<double>{2}}}), {1, 1.25, 1.75, 2}));
  // align_corners maps the end points onto each other: x * (2 - 1) / (4 - 1).
  EXPECT_TRUE(
      near(resize_1d({0, 3}, {{"size", ints{4}},
                              {"coordinate_transformation_mode", std::string("align_corners")}}),
           {0, 1, 2, 3}));
  // asymmetric: x / 2 = 0, 0.5, 1, 1.5.
  EXPECT_TRUE(
      near(resize_1d({0, 4}, {{"scales", std::vector<double>{2}},
                              {"coordinate_transformation_mode", std::string("asymmetric")}}),
           {0, 2, 4, 4}));
}

TEST(NnImageKernels, ResizeNearestRounding) {
  // asymmetric x / 2.5 = 0, 0.4, 0.8, 1.2, 1.6 over [10, 20, 30, 40].
  AttrList attrs = {{"scales", std::vector<double>{2.5}},
                    {"method", std::string("nearest_neighbor")},
                    {"coordinate_transformation_mode", std::string("asymmetric")}};
  auto with = [&](const char* rounding) {
    AttrList a = attrs;
    a.emplace_back("rounding_method", std::string(rounding));
    return values(resize_1d({10, 20}, a));
  };
  EXPECT_EQ(with("floor"), (std::vector<double>{10, 10, 10, 20, 20}));
  EXPECT_EQ(with("ceil"), (std::vector<double>{10, 20, 20, 20, 20}));
  EXPECT_EQ(with("round_prefer_floor"), (std::vector<double>{10, 10, 20, 20, 20}));
}

TEST(NnImageKernels, ResizeCubic) {
  // Expected values computed with onnx.reference's Resize (mode cubic, scales
  // [1, 1, 1, 2]); the second with cubic_coeff_a -0.5 and exclude_outside.
  std::vector<double> data = {1, 2, 4, 8};
  EXPECT_TRUE(
      near(resize_1d(data, {{"scales", std::vector<double>{2}},
                            {"method", std::string("cubic")},
                            {"cubic_alpha", -0.75}}),
           {0.89453125, 1.15625, 1.5625, 2.41796875, 3.16015625, 5.1171875, 7.1640625, 8.421875}));
  EXPECT_TRUE(near(resize_1d(data, {{"scales", std::vector<double>{2}},
                                    {"method", std::string("cubic")},
                                    {"cubic_alpha", -0.5},
                                    {"cubic_exclude", int64_t(1)}}),
                   {0.9117646813392639, 1.1459853649139404, 1.6412214040756226, 2.3828125,
                    3.3359375, 5.022900581359863, 7.284671306610107, 8.352941513061523}));
}

// dyn.image.resize of data with the given target and attributes, no roi.
Tensor dyn_resize(const Tensor& data, const Tensor& target, AttrList attrs) {
  return run("dyn.image.resize", {data, make({0}, {}), target}, attrs);
}

TEST(NnImageKernels, ResizeAntialiasWidensTheFilterWhenDownsampling) {
  // Expected values computed with onnx.reference's Resize (antialias=1, scales [1, 1, 1, 0.5]).
  Tensor x = iota({1, 1, 1, 8}, 1);
  Tensor scales = make({4}, {1, 1, 1, 0.5});
  EXPECT_TRUE(near(dyn_resize(x, scales, {{"antialias", true}}), {1.625, 3.5, 5.5, 7.375}));
  EXPECT_TRUE(near(dyn_resize(x, scales, {{"antialias", true}, {"method", std::string("cubic")}}),
                   {1.47265625, 3.482421875, 5.517578125, 7.52734375}));
}

TEST(NnImageKernels, ResizeCropAndResizeExtrapolates) {
  // Expected values computed with onnx.reference's Resize (tf_crop_and_resize,
  // roi [0, 0, 0.4, 0.6, 1, 1, 1.2, 1.7], sizes [1, 1, 3, 3], extrapolation 10).
  Tensor y = run("dyn.image.resize",
                 {iota({1, 1, 4, 4}, 1), make({8}, {0, 0, 0.4, 0.6, 1, 1, 1.2, 1.7}),
                  make({4}, {1, 1, 3, 3}, i64)},
                 {{"target", std::string("sizes")},
                  {"coordinate_transformation_mode", std::string("tf_crop_and_resize")},
                  {"extrapolation_value", 10.0}});
  EXPECT_EQ(y.shape_vector(), (ints{1, 1, 3, 3}));
  EXPECT_TRUE(near(y, {7.6, 10, 10, 12.4, 10, 10, 10, 10, 10}));
}

TEST(NnImageKernels, ResizeKeepAspectRatioPolicies) {
  // Sizes (1, 3) for a 2x4 image: not_larger scales both axes by min(1/2, 3/4) = 0.5
  // giving 1x2; not_smaller by 0.75 giving round(1.5) x round(3) = 2x3.
  Tensor x = iota({1, 1, 2, 4}, 1);
  AttrList attrs = {{"target", std::string("sizes")},
                    {"axes", ints{2, 3}},
                    {"method", std::string("nearest_neighbor")},
                    {"rounding_method", std::string("round_prefer_floor")}};
  AttrList not_larger = attrs, not_smaller = attrs;
  not_larger.emplace_back("keep_aspect_ratio_policy", std::string("not_larger"));
  not_smaller.emplace_back("keep_aspect_ratio_policy", std::string("not_smaller"));
  Tensor sizes = make({2}, {1, 3}, i64);
  Tensor small = dyn_resize(x, sizes, not_larger);
  EXPECT_EQ(small.shape_vector(), (ints{1, 1, 1, 2}));
  EXPECT_EQ(values(small), (std::vector<double>{1, 3}));
  Tensor large = dyn_resize(x, sizes, not_smaller);
  EXPECT_EQ(large.shape_vector(), (ints{1, 1, 2, 3}));
  EXPECT_EQ(values(large), (std::vector<double>{1, 2, 4, 5, 6, 8}));
}

TEST(NnImageKernels, GridSampleModes) {
  // Expected values computed with onnx.reference's GridSample on the same 2x3
  // image 1..6 and six points; the grid is given there as (N, H, W, 2).
  Tensor x = iota({1, 1, 2, 3}, 1);
  Tensor onnx_grid = make({1, 2, 3, 2}, {-1, -1, 1, 1, 0, 0, 1.5, -0.2, -1.3, 0.7, 0.25, 0.9});
  Tensor grid = permute(onnx_grid, {0, 3, 1, 2});
  struct Case {
    const char* method;
    const char* padding;
    bool align_corners;
    std::vector<double> expected;
  };
  const std::vector<Case> cases = {
      {"bilinear", "zeros", false, {0.25, 1.5, 3.5, 0.0, 0.1600002, 3.2250001}},
      {"bilinear", "reflection", true, {1.0, 6.0, 3.5, 3.7, 3.8500001, 5.0999999}},
      {"nearest", "zeros", false, {1.0, 0.0, 2.0, 0.0, 0.0, 5.0}},
      {"bicubic", "border", false, {0.625, 6.375, 3.5, 3.8370001, 4.2880001, 5.7942147}},
      {"bicubic", "reflection", false, {0.25, 6.75, 3.5, 3.6455939, 4.3243747, 6.0102148}},
      {"bicubic", "zeros", true, {1.0, 6.0, 4.15625, 2.5706248, 2.7317765, 5.6128216}},
  };
  for (const Case& c : cases) {
    Tensor y = run("image.grid_sample", {x, grid},
                   {{"method", std::string(c.method)},
                    {"padding_mode", std::string(c.padding)},
                    {"align_corners", c.align_corners}});
    EXPECT_EQ(y.shape_vector(), (ints{1, 1, 2, 3}));
    EXPECT_TRUE(near(y, c.expected)) << c.method << " " << c.padding << " " << c.align_corners;
  }
}

}  // namespace
}  // namespace anvil::reference
