// DynamicToStatic on the ONNX Resize and Pad features beyond the basic ones: antialias,
// half_pixel_symmetric, keep_aspect_ratio_policy (one scale for the listed axes, the sizes
// rounded from it) and wrap padding become static ops that compute what the dyn ops do.
#include "anvil/transform/passes.h"
#include "transform/pass_test_util.h"

namespace anvil::transform {
namespace {

using testing::parse;
using testing::print;

// x is (1, 2, 5, 8). Scales 0.5 and 0.375 give 2 x 3; 1.5 and 0.625 give 7 x 5. Sizes 7 x 10
// fit by min(7 / 5, 10 / 8) = 1.25 (6.25 -> 6 rows, 10 columns) and cover by 1.4 (7 rows,
// 11.2 -> 11 columns); axes [3, 2] list the width first: min(3 / 8, 5 / 5) = 0.375 gives
// 1.875 -> 2 rows and 3 columns.
TEST(DynamicToStaticResize, AntialiasSymmetricAndAspectRatioPolicies) {
  ir::IRModule mod = parse(R"(
def @main(%x: Tensor[(1, 2, 5, 8), float32]) {
  %0 = dyn.image.resize(%x, const([], shape=(0), dtype=float32), const([1, 1, 0.5, 0.375], shape=(4), dtype=float32), target="scales", antialias=True);
  %1 = dyn.image.resize(%x, const([], shape=(0), dtype=float32), const([1, 1, 1.5, 0.625], shape=(4), dtype=float32), target="scales", coordinate_transformation_mode="half_pixel_symmetric", method="cubic");
  %2 = dyn.image.resize(%x, const([], shape=(0), dtype=float32), const([7, 10], shape=(2), dtype=int64), target="sizes", axes=[2, 3], keep_aspect_ratio_policy="not_larger", method="nearest_neighbor");
  %3 = dyn.image.resize(%x, const([], shape=(0), dtype=float32), const([7, 10], shape=(2), dtype=int64), target="sizes", axes=[2, 3], keep_aspect_ratio_policy="not_smaller");
  %4 = dyn.image.resize(%x, const([], shape=(0), dtype=float32), const([3, 5], shape=(2), dtype=int64), target="sizes", axes=[3, 2], keep_aspect_ratio_policy="not_larger", antialias=True);
  (%0, %1, %2, %3, %4)
}
)");
  ir::IRModule after = dynamic_to_static(mod);
  EXPECT_EQ(print(after), R"(#[version = "0.0.5"]
def @main(%x: Tensor[(1, 2, 5, 8), float32]) -> (Tensor[(1, 2, 2, 3), float32], Tensor[(1, 2, 7, 5), float32], Tensor[(1, 2, 6, 10), float32], Tensor[(1, 2, 7, 11), float32], Tensor[(1, 2, 2, 3), float32]) {
  %0 = image.resize2d(%x, scales=[0.5f, 0.375f], cubic_alpha=-0.75f, antialias=True);
  %1 = image.resize2d(%x, scales=[1.5f, 0.625f], method="cubic", coordinate_transformation_mode="half_pixel_symmetric", cubic_alpha=-0.75f);
  %2 = image.resize2d(%x, size=[6, 10], method="nearest_neighbor", cubic_alpha=-0.75f, coordinate_scales=[1.25f, 1.25f]);
  %3 = image.resize2d(%x, size=[7, 11], cubic_alpha=-0.75f, coordinate_scales=[1.4f, 1.4f]);
  %4 = image.resize2d(%x, size=[2, 3], cubic_alpha=-0.75f, antialias=True, coordinate_scales=[0.375f, 0.375f]);
  (%0, %1, %2, %3, %4)
}
)");
  std::vector<Tensor> inputs = testing::random_inputs(mod, 1);
  // The dyn kernel resizes the listed axes in their order, the static one rows first.
  testing::expect_same_outputs(mod, after, inputs, inputs, 1e-5);
}

// An aspect-ratio policy that lists the channel axis keeps the call dynamic unless its scale
// is 1; wrap padding of (1, 2, 5, 8) by 1 / 2 rows and 5 / 0 columns wraps the columns.
TEST(DynamicToStaticResize, ChannelScaleStaysDynamicAndWrapPad) {
  ir::IRModule mod = parse(R"(
def @main(%x: Tensor[(1, 2, 5, 8), float32]) {
  %0 = dyn.image.resize(%x, const([], shape=(0), dtype=float32), const([4, 10], shape=(2), dtype=int64), target="sizes", axes=[1, 3], keep_aspect_ratio_policy="not_larger");
  %1 = dyn.nn.pad(%x, const([1, 5, 2, 0], shape=(4), dtype=int64), 0f, const([2, 3], shape=(2), dtype=int64), pad_mode="wrap");
  (%0, %1)
}
)");
  ir::IRModule after = dynamic_to_static(mod);
  EXPECT_EQ(print(after), R"(#[version = "0.0.5"]
def @main(%x: Tensor[(1, 2, 5, 8), float32]) -> (Tensor[(1, ?, 5, ?), float32], Tensor[(1, 2, 8, 13), float32]) {
  %0 = dyn.image.resize(%x, const([], shape=(0), dtype=float32), const([4, 10], shape=(2), dtype=int64), target="sizes", axes=[1, 3], keep_aspect_ratio_policy="not_larger");
  %1 = nn.pad(%x, 0f, pad_width=[0, 0, 0, 0, 1, 2, 5, 0], pad_mode="wrap");
  (%0, %1)
}
)");
  std::vector<Tensor> inputs = testing::random_inputs(mod, 2);
  testing::expect_same_outputs(mod, after, inputs, inputs, 0);
}

}  // namespace
}  // namespace anvil::transform
