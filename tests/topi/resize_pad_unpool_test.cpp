// The resize features ONNX Resize adds over the basic modes (antialiased downsampling,
// half_pixel_symmetric, sizes reached through an aspect-preserving scale), nn.pad's wrap mode
// and nn.max_unpool1d/2d/3d, each compiled naive and under the default schedule and checked
// against its reference kernel on odd shapes. Unpooling scatters the indices max pooling
// reports (from the reference max_pool*_with_argmax), with overlapping windows, padding and
// outputs larger than the pooled input implies.
#include <gtest/gtest.h>

#include <set>

#include "anvil/ir/infer_type.h"
#include "anvil/ir/parser.h"
#include "anvil/reference/reference.h"
#include "topi/topi_test_util.h"

namespace anvil {
namespace {

using topi_test::attrs;
using topi_test::check_op;
using topi_test::random_tensor;
using Fields = std::vector<std::pair<std::string, ir::AttrValue>>;
using Ints = std::vector<int64_t>;
using Doubles = std::vector<double>;

const topi_test::Tolerance kBlend{1e-5, 1e-6};

Tensor f32(std::vector<int64_t> shape, uint64_t seed) {
  return random_tensor(std::move(shape), DataType::float32(), seed);
}

Fields resize(const std::string& method, const std::string& mode) {
  return {{"method", method}, {"coordinate_transformation_mode", mode}};
}

// ---------------------------------------------------------------- resize

TEST(ResizeAntialias, DownsamplesLinearAndCubicByScales) {
  Tensor data = f32({1, 2, 9, 13}, 1);
  auto check = [&](const char* method, const char* mode) {
    SCOPED_TRACE(std::string(method) + " " + mode);
    // 0.6 and 0.45 widen the filter to 2 and 3 taps each way (cubic: 4 and 5).
    Fields fields = resize(method, mode);
    fields.emplace_back("scales", Doubles{0.6, 0.45});
    fields.emplace_back("antialias", true);
    check_op("image.resize2d", {data}, attrs("image.resize2d", fields), kBlend);
  };
  for (const char* mode : {"half_pixel", "pytorch_half_pixel", "align_corners"})
    check("linear", mode);
  check("cubic", "half_pixel");
}

TEST(ResizeAntialias, SizesExcludeOutsideAndUpsampling) {
  // One axis shrinks (widened filter), the other grows (antialias changes nothing there).
  Fields fields = resize("cubic", "half_pixel");
  fields.emplace_back("size", Ints{3, 11});
  fields.emplace_back("antialias", true);
  fields.emplace_back("cubic_alpha", -0.5);
  check_op("image.resize2d", {f32({2, 1, 7, 5}, 2)}, attrs("image.resize2d", fields), kBlend);
  fields.emplace_back("cubic_exclude", int64_t(1));
  check_op("image.resize2d", {f32({2, 1, 7, 5}, 3)}, attrs("image.resize2d", fields), kBlend);
}

TEST(ResizeAntialias, OneAndThreeAxesAndNhwc) {
  Fields one = resize("linear", "asymmetric");
  one.emplace_back("scales", Doubles{0.45});
  one.emplace_back("antialias", true);
  check_op("image.resize1d", {f32({1, 3, 11}, 4)}, attrs("image.resize1d", one), kBlend);
  Fields three = resize("linear", "half_pixel");
  three.emplace_back("size", Ints{2, 5, 3});
  three.emplace_back("antialias", true);
  check_op("image.resize3d", {f32({1, 2, 5, 4, 7}, 5)}, attrs("image.resize3d", three), kBlend);
  Fields nhwc = resize("linear", "half_pixel");
  nhwc.emplace_back("size", Ints{3, 2});
  nhwc.emplace_back("antialias", true);
  nhwc.emplace_back("layout", std::string("NHWC"));
  check_op("image.resize2d", {f32({1, 7, 5, 3}, 6)}, attrs("image.resize2d", nhwc), kBlend);
}

// in * scale rounds down to the output, so the symmetric mode shifts the coordinates by half
// the lost fraction; with sizes it is half_pixel.
TEST(ResizeHalfPixelSymmetric, EveryMethodUpAndDown) {
  Tensor data = f32({1, 2, 5, 7}, 7);
  for (const char* method : {"nearest_neighbor", "linear", "cubic"}) {
    SCOPED_TRACE(method);
    Fields scaled = resize(method, "half_pixel_symmetric");
    scaled.emplace_back("scales", Doubles{2.3, 0.6});
    check_op("image.resize2d", {data}, attrs("image.resize2d", scaled), kBlend);
    Fields sized = resize(method, "half_pixel_symmetric");
    sized.emplace_back("size", Ints{3, 10});
    check_op("image.resize2d", {data}, attrs("image.resize2d", sized), kBlend);
  }
  Fields antialiased = resize("linear", "half_pixel_symmetric");
  antialiased.emplace_back("scales", Doubles{0.7, 0.55});
  antialiased.emplace_back("antialias", true);
  check_op("image.resize2d", {data}, attrs("image.resize2d", antialiased), kBlend);
}

// keep_aspect_ratio_policy: one scale for both axes, the sizes rounded from in * scale
// (3 * 1.4 = 4.2 -> 4, 5 * 1.4 = 7), the coordinates following the scale.
TEST(ResizeCoordinateScales, SizesRoundedFromOneScale) {
  Tensor data = f32({1, 2, 3, 5}, 8);
  for (const char* method : {"nearest_neighbor", "linear", "cubic"}) {
    for (const char* mode :
         {"half_pixel", "half_pixel_symmetric", "align_corners", "pytorch_half_pixel"}) {
      SCOPED_TRACE(std::string(method) + " " + mode);
      Fields fields = resize(method, mode);
      fields.emplace_back("size", Ints{4, 7});
      fields.emplace_back("coordinate_scales", Doubles{1.4, 1.4});
      check_op("image.resize2d", {data}, attrs("image.resize2d", fields), kBlend);
    }
  }
  // Shrinking: 0.45 gives 3 * 0.45 = 1.35 -> 1 and 5 * 0.45 = 2.25 -> 2.
  Fields down = resize("linear", "half_pixel");
  down.emplace_back("size", Ints{1, 2});
  down.emplace_back("coordinate_scales", Doubles{0.45, 0.45});
  down.emplace_back("antialias", true);
  check_op("image.resize2d", {data}, attrs("image.resize2d", down), kBlend);
}

// coordinate_scales only refines sizes, one positive scale per spatial axis.
TEST(ResizeCoordinateScales, RejectsMisuse) {
  auto error_of = [](Fields fields) -> std::string {
    ir::Var x = ir::VarNode::make("x", ir::TensorTypeNode::make({1, 2, 3, 5}, DataType::float32()));
    ir::IRModule mod;
    mod.add("main", ir::FunctionNode::make(
                        {x}, ir::call_op("image.resize2d", {x}, attrs("image.resize2d", fields))));
    try {
      ir::infer_type(mod);
    } catch (const Error& e) {
      return e.what();
    }
    return "no error";
  };
  EXPECT_NE(error_of({{"scales", Doubles{2, 2}}, {"coordinate_scales", Doubles{2, 2}}})
                .find("'coordinate_scales' needs 'size'"),
            std::string::npos);
  EXPECT_NE(error_of({{"size", Ints{4, 7}}, {"coordinate_scales", Doubles{1.4}}})
                .find("'coordinate_scales' must have 2 values"),
            std::string::npos);
  EXPECT_NE(error_of({{"size", Ints{4, 7}}, {"coordinate_scales", Doubles{1.4, 0}}})
                .find("must be positive and finite, got 0"),
            std::string::npos);
}

// ---------------------------------------------------------------- pad

Fields wrap(Ints pad_width) {
  return {{"pad_width", std::move(pad_width)}, {"pad_mode", std::string("wrap")}};
}

TEST(PadWrap, RepeatsTheAxisAsOftenAsNeeded) {
  // Padding beyond the axis size wraps around more than once; an axis of 1 repeats itself.
  Tensor value = random_tensor({}, DataType::float32(), 9);
  check_op("nn.pad", {f32({3, 4, 5}, 10), value}, attrs("nn.pad", wrap({2, 7, 0, 1, 5, 3})));
  check_op("nn.pad", {f32({1, 1, 3}, 11), value}, attrs("nn.pad", wrap({0, 0, 2, 3, 1, 0})));
}

TEST(PadWrap, IntegerDataAndTheOnnxCase) {
  Tensor ints = random_tensor({2, 5, 3}, DataType::int32(), 12, -100, 100);
  check_op("nn.pad", {ints, random_tensor({}, DataType::int32(), 13)},
           attrs("nn.pad", wrap({1, 1, 4, 0, 0, 2})));
  // ONNX's test_wrap_pad: (1, 3, 4, 5) padded by 1 on the last two axes.
  check_op("nn.pad", {f32({1, 3, 4, 5}, 14), random_tensor({}, DataType::float32(), 15)},
           attrs("nn.pad", wrap({0, 0, 0, 0, 1, 1, 1, 1})));
}

// ---------------------------------------------------------------- max_unpool

// The indices the reference max pooling with argmax reports for data under the pool fields.
Tensor argmax_indices(const Tensor& data, const std::string& pool_fields) {
  const int n = int(data.ndim()) - 2;
  std::string shape;
  for (int64_t d : data.shape_vector()) shape += (shape.empty() ? "" : ", ") + std::to_string(d);
  std::string text = "def @main(%x: Tensor[(" + shape + "), float32]) {\n  %0 = nn.max_pool" +
                     std::to_string(n) + "d_with_argmax(%x, " + pool_fields + ");\n  %0.1\n}\n";
  ir::IRModule mod = ir::infer_type(ir::parse_module(text));
  return reference::Interpreter(mod).run({data})[0];
}

// Unpools values (of the pooled shape, independent of the pooled data so that duplicate
// indices from overlapping windows show which write wins) at the argmax of pooling `pooled`,
// whose spatial size is the one the unpooling implies (so the flat indices agree).
void check_unpool(const Tensor& pooled, const Tensor& values, const std::string& pool_fields,
                  const Fields& unpool_fields, bool expect_duplicates = false) {
  const std::string op = "nn.max_unpool" + std::to_string(pooled.ndim() - 2) + "d";
  Tensor indices = argmax_indices(pooled, pool_fields);
  ASSERT_EQ(indices.shape_vector(), values.shape_vector());
  if (expect_duplicates) {
    std::set<double> seen;
    for (int64_t i = 0; i < indices.numel(); ++i) seen.insert(indices.get_as_double(i));
    EXPECT_LT(int64_t(seen.size()), indices.numel()) << "no two windows share their maximum";
  }
  check_op(op, {values, indices}, attrs(op, unpool_fields));
}

TEST(MaxUnpool, TwoDimsDisjointAndOverlappingWindows) {
  // The ONNX case: 2x2 windows, stride 2.
  Tensor data = f32({2, 3, 6, 8}, 16);
  check_unpool(data, f32({2, 3, 3, 4}, 17), "pool_size=[2, 2], strides=[2, 2]",
               {{"pool_size", Ints{2, 2}}, {"strides", Ints{2, 2}}});
  // 3x3 windows at stride 2 (and 1) overlap: neighbours often share their maximum, and the
  // later data element's value must win.
  Tensor odd = f32({1, 2, 7, 9}, 18);
  check_unpool(odd, f32({1, 2, 3, 4}, 19), "pool_size=[3, 3], strides=[2, 2]",
               {{"pool_size", Ints{3, 3}}, {"strides", Ints{2, 2}}}, true);
  check_unpool(odd, f32({1, 2, 5, 7}, 20), "pool_size=[3, 3], strides=[1, 1]",
               {{"pool_size", Ints{3, 3}}, {"strides", Ints{1, 1}}}, true);
}

TEST(MaxUnpool, PaddingAndLargerOutput) {
  // Padding 1 before and after: (3 - 1) * 2 + 3 - 2 = 5 rows, (4 - 1) * 2 + 3 - 2 = 7 columns.
  Tensor data = f32({1, 2, 5, 7}, 21);
  const char* pool = "pool_size=[3, 3], strides=[2, 2], padding=[1, 1, 1, 1]";
  Fields unpool = {
      {"pool_size", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"padding", Ints{1, 1, 1, 1}}};
  check_unpool(data, f32({1, 2, 3, 4}, 22), pool, unpool);
  // A larger output keeps the 5x7 block at its start and zeros the rest.
  unpool.emplace_back("output_size", Ints{6, 9});
  check_unpool(data, f32({1, 2, 3, 4}, 23), pool, unpool);
}

TEST(MaxUnpool, OneAndThreeDimsAndIntegerValues) {
  check_unpool(f32({2, 3, 10}, 24), f32({2, 3, 3}, 25), "pool_size=[4], strides=[3]",
               {{"pool_size", Ints{4}}, {"strides", Ints{3}}});
  check_unpool(
      f32({1, 2, 4, 4, 6}, 26), f32({1, 2, 2, 2, 3}, 27), "pool_size=[2, 2, 2], strides=[2, 2, 2]",
      {{"pool_size", Ints{2, 2, 2}}, {"strides", Ints{2, 2, 2}}, {"output_size", Ints{5, 4, 7}}});
  Tensor data = f32({1, 1, 6, 6}, 28);
  Tensor indices = argmax_indices(data, "pool_size=[2, 2], strides=[2, 2]");
  // int32 indices and int values.
  Tensor narrow = Tensor::empty(indices.shape_vector(), DataType::int32());
  for (int64_t i = 0; i < indices.numel(); ++i) narrow.set_from_double(i, indices.get_as_double(i));
  Tensor values = random_tensor({1, 1, 3, 3}, DataType::int32(), 29, -50, 50);
  check_op("nn.max_unpool2d", {values, narrow},
           attrs("nn.max_unpool2d", {{"pool_size", Ints{2, 2}}, {"strides", Ints{2, 2}}}));
}

}  // namespace
}  // namespace anvil
