// SimplifyInference: batch_norm written out as a per-channel multiply and add, dropout gone.
#include "anvil/transform/passes.h"
#include "transform/pass_test_util.h"

namespace anvil::transform {
namespace {

using testing::parse;
using testing::print;

// Per channel: scale = gamma / sqrt(var + eps), shift = beta - mean * scale. With eps 1:
// channel 0: 2 / sqrt(3 + 1) = 1, 1 - 0.5 * 1 = 0.5; channel 1: 4 / 2 = 2, -1 - 0.25 * 2 = -1.5.
TEST(SimplifyInference, ConstantStatisticsBecomeScaleAndShiftConstants) {
  ir::IRModule mod = parse(R"(
def @main(%x: Tensor[(1, 2, 3, 3), float32]) {
  %0 = nn.batch_norm(%x, const([2, 4], shape=(2), dtype=float32), const([1, -1], shape=(2), dtype=float32), const([0.5, 0.25], shape=(2), dtype=float32), const([3, 3], shape=(2), dtype=float32), epsilon=1f);
  %1 = %0.0;
  nn.relu(%1)
}
)");
  EXPECT_EQ(print(simplify_inference(mod)), R"(#[version = "0.0.5"]
def @main(%x: Tensor[(1, 2, 3, 3), float32]) -> Tensor[(1, 2, 3, 3), float32] {
  %0 = multiply(%x, const([1, 2], shape=(2, 1, 1), dtype=float32));
  %1 = add(%0, const([0.5, -1.5], shape=(2, 1, 1), dtype=float32));
  nn.relu(%1)
}
)");
}

// Without center and scale, gamma and beta are ignored: scale = 1 / sqrt(var + eps) and
// shift = -mean * scale. The last axis is the channel axis, so no unit dims are appended.
TEST(SimplifyInference, LastAxisWithoutCenterOrScale) {
  ir::IRModule mod = parse(R"(
def @main(%x: Tensor[(2, 3, 2), float32]) {
  %0 = nn.batch_norm(%x, const([7, 7], shape=(2), dtype=float32), const([9, 9], shape=(2), dtype=float32), const([2, -1], shape=(2), dtype=float32), const([0, 15], shape=(2), dtype=float32), axis=-1, epsilon=1f, center=False, scale=False);
  %0.0
}
)");
  EXPECT_EQ(print(simplify_inference(mod)), R"(#[version = "0.0.5"]
def @main(%x: Tensor[(2, 3, 2), float32]) -> Tensor[(2, 3, 2), float32] {
  %0 = multiply(%x, const([1, 0.25], shape=(2), dtype=float32));
  add(%0, const([-2, 0.25], shape=(2), dtype=float32))
}
)");
}

// Statistics that are parameters become graph arithmetic, broadcast along axis 1 through
// expand_dims; FoldConstant folds it once the parameters are bound.
TEST(SimplifyInference, ParameterStatisticsBecomeGraphArithmetic) {
  ir::IRModule mod = parse(R"(
def @main(%x: Tensor[(1, 2, 3, 3), float32], %g: Tensor[(2), float32], %b: Tensor[(2), float32], %m: Tensor[(2), float32], %v: Tensor[(2), float32]) {
  %0 = nn.batch_norm(%x, %g, %b, %m, %v, epsilon=0.001f);
  %1 = %0.0;
  nn.relu(%1)
}
)");
  ir::IRModule after = simplify_inference(mod);
  EXPECT_EQ(print(after), R"(#[version = "0.0.5"]
def @main(%x: Tensor[(1, 2, 3, 3), float32], %g: Tensor[(2), float32], %b: Tensor[(2), float32], %m: Tensor[(2), float32], %v: Tensor[(2), float32]) -> Tensor[(1, 2, 3, 3), float32] {
  %0 = add(%v, 0.001f);
  %1 = rsqrt(%0);
  %2 = multiply(%1, %g);
  %3 = expand_dims(%2, axis=1, num_newaxis=2);
  %4 = multiply(%x, %3);
  %5 = multiply(%m, %2);
  %6 = negative(%5);
  %7 = add(%6, %b);
  %8 = expand_dims(%7, axis=1, num_newaxis=2);
  %9 = add(%4, %8);
  nn.relu(%9)
}
)");
  // The variance must be positive; every other input may be anything.
  std::vector<Tensor> inputs = testing::random_inputs(mod, 11);
  inputs[4] = testing::random_tensor({2}, 99, 0.1, 2.0);
  testing::expect_same_outputs(mod, after, inputs, inputs);
}

// Numerically the rewritten graph matches the reference batch_norm kernel on every layout
// the attrs allow, with constant statistics.
TEST(SimplifyInference, MatchesReferenceBatchNormNumerically) {
  for (const char* attrs : {"axis=1", "axis=3, center=False", "axis=-2, scale=False"}) {
    SCOPED_TRACE(attrs);
    ir::IRModule mod = parse(std::string(R"(
def @main(%x: Tensor[(2, 3, 3, 3), float32]) {
  %0 = nn.batch_norm(%x, const([0.5, -2, 3], shape=(3), dtype=float32), const([1, 0.25, -4], shape=(3), dtype=float32), const([0.1, 0.2, -0.3], shape=(3), dtype=float32), const([0.5, 1.5, 2.5], shape=(3), dtype=float32), )") +
                             attrs + R"();
  %0.0
}
)");
    ir::IRModule after = simplify_inference(mod);
    EXPECT_EQ(print(after).find("batch_norm"), std::string::npos);
    std::vector<Tensor> inputs = testing::random_inputs(mod, 5);
    testing::expect_same_outputs(mod, after, inputs, inputs);
  }
}

// The statistics fields of an inference batch_norm are its moving statistics.
TEST(SimplifyInference, StatisticsFieldsAreTheInputs) {
  ir::IRModule mod = parse(R"(
def @main(%x: Tensor[(1, 2), float32], %g: Tensor[(2), float32], %b: Tensor[(2), float32], %m: Tensor[(2), float32], %v: Tensor[(2), float32]) {
  %0 = nn.batch_norm(%x, %g, %b, %m, %v);
  %1 = %0.1;
  %2 = %0.2;
  (%1, %2)
}
)");
  EXPECT_EQ(print(simplify_inference(mod)), R"(#[version = "0.0.5"]
def @main(%x: Tensor[(1, 2), float32], %g: Tensor[(2), float32], %b: Tensor[(2), float32], %m: Tensor[(2), float32], %v: Tensor[(2), float32]) -> (Tensor[(2), float32], Tensor[(2), float32]) {
  (%m, %v)
}
)");
}

TEST(SimplifyInference, DropoutIsTheIdentity) {
  ir::IRModule mod = parse(R"(
def @main(%x: Tensor[(4, 8), float32]) {
  %0 = nn.dropout(%x, rate=0.25f);
  %1 = %0.0;
  nn.relu(%1)
}
)");
  EXPECT_EQ(print(simplify_inference(mod)), R"(#[version = "0.0.5"]
def @main(%x: Tensor[(4, 8), float32]) -> Tensor[(4, 8), float32] {
  nn.relu(%x)
}
)");
}

TEST(SimplifyInference, OtherNormalizationsStay) {
  const char* text = R"(#[version = "0.0.5"]
def @main(%x: Tensor[(2, 4), float32], %g: Tensor[(4), float32], %b: Tensor[(4), float32]) -> Tensor[(2, 4), float32] {
  nn.layer_norm(%x, %g, %b)
}
)";
  ir::IRModule mod = parse(text);
  ir::IRModule after = simplify_inference(mod);
  EXPECT_EQ(print(after), text);
  EXPECT_EQ(after.get_function("main")->body, mod.get_function("main")->body);
}

}  // namespace
}  // namespace anvil::transform
