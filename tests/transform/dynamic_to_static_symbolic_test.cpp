// DynamicToStatic with symbolic dims: the shape computations of PyTorch's ONNX exports
// (Shape -> Gather -> Unsqueeze -> Concat -> Reshape, ConstantOfShape, Expand, Range) are
// evaluated as dim expressions, and the dyn calls get static forms whose types carry them.
// Whatever is not certain stays dynamic.
#include "anvil/transform/passes.h"
#include "transform/pass_test_util.h"

namespace anvil::transform {
namespace {

using testing::parse;
using testing::print;

// Runs both modules at each of the given input shapes (one list of shapes per run) with the
// reference interpreter and expects the same outputs; integer inputs get values in [0, 4).
void expect_same_values_at(const ir::IRModule& before, const ir::IRModule& after,
                           const std::vector<std::vector<std::vector<int64_t>>>& runs) {
  uint64_t seed = 1;
  for (const auto& shapes : runs) {
    std::vector<Tensor> inputs;
    const auto& params = before.get_function("main")->params;
    ASSERT_EQ(params.size(), shapes.size());
    for (size_t i = 0; i < params.size(); ++i) {
      DataType dtype = ir::as<ir::TensorTypeNode>(params[i]->annotation)->dtype;
      Tensor t = testing::random_tensor(shapes[i], seed++, -1.0, 1.0, dtype);
      if (!dtype.is_float())
        for (int64_t k = 0; k < t.numel(); ++k) t.set_from_double(k, double((k * 7 + seed) % 4));
      inputs.push_back(t);
    }
    testing::expect_same_outputs(before, after, inputs, inputs, 0);
  }
}

// The head split of an attention layer: the fused QKV projection is sliced by a third of its
// static width, and the slice reshaped to (seq, batch * heads, head_dim) from its own shape_of.
// The batch * 6 entry is the one -1; the seq entry copies the input dim (0).
TEST(DynamicToStaticSymbolic, AttentionHeadSplit) {
  ir::IRModule mod = parse(R"(
def @main(%x: Tensor[(seq, batch, 1152), float32]) {
  %0 = shape_of(%x);
  %1 = take(%0, const([-1], shape=(1), dtype=int64), axis=0, mode="wrap");
  %2 = add(%1, const([2], shape=(1), dtype=int64));
  %3 = divide(%2, const([3], shape=(1), dtype=int64));
  %4 = dyn.strided_slice(%x, const([0], shape=(1), dtype=int64), %3, const([1], shape=(1), dtype=int64), const([-1], shape=(1), dtype=int64));
  %5 = shape_of(%4);
  %6 = take(%5, 0i64, axis=0, mode="wrap");
  %7 = expand_dims(%6);
  %8 = take(%5, 1i64, axis=0, mode="wrap");
  %9 = multiply(%8, 6i64);
  %10 = expand_dims(%9);
  %11 = take(%5, 2i64, axis=0, mode="wrap");
  %12 = divide(%11, 6i64);
  %13 = expand_dims(%12);
  %14 = concatenate((%7, %10, %13));
  dyn.reshape(%4, %14)
}
)");
  ir::IRModule after = dynamic_to_static(mod);
  EXPECT_EQ(print(after), R"(#[version = "0.0.5"]
def @main(%x: Tensor[(seq, batch, 1152), float32]) -> Tensor[(seq, batch * 6, 64), float32] {
  %0 = strided_slice(%x, begin=[0], end=[384], strides=[1], axes=[-1]);
  reshape(%0, newshape=[0, -1, 64])
}
)");
  expect_same_values_at(mod, after, {{{3, 2, 1152}}, {{1, 5, 1152}}});
}

// The key padding mask: reshaped to (batch, 1, 1, seq), expanded over the heads (Expand's
// maximum with the shape: max(1, batch) is batch, as a dim is at least 1), merged to
// (batch * 6, 1, seq) with -3 (two input dims) and 0 (the next one), and ConstantOfShape of its
// shape_of is full_like of it (cast to the fill's dtype, whose values are not read).
TEST(DynamicToStaticSymbolic, PaddingMaskExpandAndConstantOfShape) {
  ir::IRModule mod = parse(R"(
def @main(%mask: Tensor[(batch, seq), bool], %scores: Tensor[(batch * 6, seq, seq), float32]) {
  %0 = shape_of(%mask);
  %1 = take(%0, 0i64, axis=0);
  %2 = expand_dims(%1);
  %3 = take(%0, 1i64, axis=0);
  %4 = expand_dims(%3);
  %5 = concatenate((%2, const([1, 1], shape=(2), dtype=int64), %4));
  %6 = dyn.reshape(%mask, %5);
  %7 = shape_of(%6);
  %8 = maximum(const([1, 6, 1, 1], shape=(4), dtype=int64), %7);
  %9 = dyn.broadcast_to(%6, %8);
  %10 = multiply(%1, 6i64);
  %11 = expand_dims(%10);
  %12 = concatenate((%11, const([1], shape=(1), dtype=int64), %4));
  %13 = dyn.reshape(%9, %12);
  %14 = shape_of(%13);
  %15 = dyn.full(0f, %14);
  %16 = where(%13, -1e+09f, %15);
  add(%scores, %16)
}
)");
  ir::IRModule after = dynamic_to_static(mod);
  EXPECT_EQ(print(after), R"(#[version = "0.0.5"]
def @main(%mask: Tensor[(batch, seq), bool], %scores: Tensor[(batch * 6, seq, seq), float32]) -> Tensor[(batch * 6, seq, seq), float32] {
  %0 = reshape(%mask, newshape=[0, 1, 1, -1]);
  %1 = repeat(%0, repeats=6, axis=1);
  %2 = reshape(%1, newshape=[-3, 1, 0]);
  %3 = cast(%2);
  %4 = full_like(%3, 0f);
  %5 = where(%2, -1e+09f, %4);
  add(%scores, %5)
}
)");
  expect_same_values_at(mod, after, {{{2, 5}, {12, 5, 5}}, {{1, 3}, {6, 3, 3}}});
}

// Position ids: range(0, seq) counts along an axis of length seq of a tensor in scope, then
// Expand (to maximum(shape_of(ids), shape_of(positions))) stretches the unit batch dim to a
// symbolic one, which only a tensor of that shape can give: where(true, x, x) shaped like ids.
// range(4, seq + 4) is the same count plus 4 (a second count: EliminateCommonSubexpr merges
// the two); range(2, seq, 3) has floordiv(seq, 3) elements, the length of no axis in scope,
// and stays.
TEST(DynamicToStaticSymbolic, RangeAndExpandToASymbolicDim) {
  ir::IRModule mod = parse(R"(
def @main(%ids: Tensor[(batch, seq), int64]) {
  %0 = shape_of(%ids);
  %1 = take(%0, 1i64, axis=0);
  %2 = range(0i64, %1, 1i64);
  %3 = expand_dims(%2);
  %4 = shape_of(%3);
  %5 = maximum(%0, %4);
  %6 = dyn.broadcast_to(%3, %5);
  %7 = add(%1, 4i64);
  %8 = range(4i64, %7, 1i64);
  %9 = range(2i64, %1, 3i64);
  (%6, %8, %9)
}
)");
  ir::IRModule after = dynamic_to_static(mod);
  EXPECT_EQ(print(after), R"(#[version = "0.0.5"]
def @main(%ids: Tensor[(batch, seq), int64]) -> (Tensor[(batch, seq), int64], Tensor[(seq), int64], Tensor[(?), int64]) {
  %0 = cast(%ids, dtype="bool");
  %1 = ones_like(%0);
  %2 = take(%ids, 0i64, axis=0);
  %3 = ones_like(%2);
  %4 = cumsum(%3, axis=0, exclusive=True);
  %5 = expand_dims(%4);
  %6 = where(%1, %5, %5);
  %7 = take(%ids, 0i64, axis=0);
  %8 = ones_like(%7);
  %9 = cumsum(%8, axis=0, exclusive=True);
  %10 = add(%9, 4i64);
  %11 = shape_of(%ids);
  %12 = take(%11, 1i64, axis=0);
  %13 = range(2i64, %12, 3i64);
  (%6, %10, %13)
}
)");
  expect_same_values_at(mod, after, {{{2, 5}}, {{3, 1}}});
}

// A dense layer on flattened tokens: the (batch * seq, n) result is restored to (batch, seq, n)
// with the token dims of the tensor the shape was read from, which no reshape entry can name.
// Slicing to the end of a symbolic axis, or short of it by k, has static bounds (the slice's
// relation keeps max(0, seq - 1), not knowing that seq is at least 1).
TEST(DynamicToStaticSymbolic, ReshapeLikeAndSliceBounds) {
  ir::IRModule mod = parse(R"(
def @main(%x: Tensor[(batch, seq, 16), float32], %w: Tensor[(16, 24), float32]) {
  %0 = reshape(%x, newshape=[-1, 16]);
  %1 = nn.matmul(%0, %w);
  %2 = shape_of(%x);
  %3 = strided_slice(%2, begin=[0], end=[2], strides=[1], axes=[0]);
  %4 = concatenate((%3, const([24], shape=(1), dtype=int64)));
  %5 = dyn.reshape(%1, %4);
  %6 = strided_slice(%2, begin=[1], end=[2], strides=[1], axes=[0]);
  %7 = subtract(%6, const([1], shape=(1), dtype=int64));
  %8 = dyn.strided_slice(%5, const([1], shape=(1), dtype=int64), %6, const([1], shape=(1), dtype=int64), const([1], shape=(1), dtype=int64));
  %9 = dyn.strided_slice(%5, const([0], shape=(1), dtype=int64), %7, const([1], shape=(1), dtype=int64), const([1], shape=(1), dtype=int64));
  (%8, %9)
}
)");
  ir::IRModule after = dynamic_to_static(mod);
  EXPECT_EQ(print(after), R"(#[version = "0.0.5"]
def @main(%x: Tensor[(batch, seq, 16), float32], %w: Tensor[(16, 24), float32]) -> (Tensor[(batch, max(0, seq - 1), 24), float32], Tensor[(batch, max(0, seq - 1), 24), float32]) {
  %0 = reshape(%x, newshape=[-1, 16]);
  %1 = nn.matmul(%0, %w);
  %2 = reshape_like(%1, %x, lhs_end=1, rhs_end=2);
  %3 = strided_slice(%2, begin=[1], end=[9223372036854775807], strides=[1], axes=[1]);
  %4 = strided_slice(%2, begin=[0], end=[-1], strides=[1], axes=[1]);
  (%3, %4)
}
)");
  expect_same_values_at(mod, after, {{{2, 3, 16}, {16, 24}}, {{1, 6, 16}, {16, 24}}});
}

// Values that are not certain keep the call dynamic: an entry that may be 0 or -1 at run time
// (seq - 2 copies or infers a dim there), a truncating division of a value that may be
// negative, a reshape needing two new symbolic dims with no tensor of that shape in scope, and
// a unit dim stretched to a symbolic size no tensor in scope has.
TEST(DynamicToStaticSymbolic, UncertainValuesStayDynamic) {
  const char* text = R"(
def @main(%x: Tensor[(n, m), float32], %y: Tensor[(1, 4), float32]) {
  %0 = shape_of(%x);
  %1 = take(%0, 0i64, axis=0);
  %2 = subtract(%1, 2i64);
  %3 = expand_dims(%2);
  %4 = concatenate((%3, const([-1], shape=(1), dtype=int64)));
  %5 = dyn.reshape(%x, %4);
  %6 = divide(%2, 2i64);
  %7 = expand_dims(%6);
  %8 = concatenate((%7, const([-1], shape=(1), dtype=int64)));
  %9 = dyn.reshape(%x, %8);
  %10 = reshape(%x, newshape=[-1]);
  %11 = take(%0, 1i64, axis=0);
  %12 = expand_dims(%11);
  %13 = expand_dims(%1);
  %14 = concatenate((%12, %13));
  %15 = dyn.reshape(%10, %14);
  %16 = multiply(%1, 2i64);
  %17 = expand_dims(%16);
  %18 = concatenate((%17, const([4], shape=(1), dtype=int64)));
  %19 = dyn.broadcast_to(%y, %18);
  (%5, %9, %15, %19)
}
)";
  ir::IRModule mod = parse(text);
  ir::IRModule after = dynamic_to_static(mod);
  EXPECT_EQ(print(after), print(mod));
}

// What the symbolic evaluation folds: parts of a shape that are integers even though the tensor
// has symbolic dims become constants, so the ordinary conversion applies; comparisons and where
// on shapes decide when the sign of a difference is certain (a dim is never -1).
TEST(DynamicToStaticSymbolic, IntegerPartsOfSymbolicShapesFold) {
  ir::IRModule mod = parse(R"(
def @main(%x: Tensor[(n, 3, 4), float32]) {
  %0 = shape_of(%x);
  %1 = strided_slice(%0, begin=[1], end=[3], strides=[1], axes=[0]);
  %2 = cast(%1, dtype="int32");
  %3 = dyn.reshape(%x, const([-1, 12], shape=(2), dtype=int64));
  %4 = dyn.tile(%3, %2);
  %5 = equal(%0, -1i64);
  %6 = where(%5, const([1], shape=(1), dtype=int64), %0);
  %7 = dyn.reshape(%x, %6);
  (%4, %7)
}
)");
  ir::IRModule after = dynamic_to_static(mod);
  EXPECT_EQ(print(after), R"(#[version = "0.0.5"]
def @main(%x: Tensor[(n, 3, 4), float32]) -> (Tensor[(n * 3, 48), float32], Tensor[(n, 3, 4), float32]) {
  %0 = reshape(%x, newshape=[-1, 12]);
  %1 = tile(%0, reps=[3, 4]);
  %2 = reshape(%x, newshape=[0, 3, 4]);
  (%1, %2)
}
)");
  expect_same_values_at(mod, after, {{{2, 3, 4}}, {{5, 3, 4}}});
}

// The numeric check of a whole chain at two sizes: shape_of / take / concatenate /
// dyn.reshape through a flatten and back, matching the reference interpreter's values. The
// shape_of of an output is no shape operand and is left to FoldConstant.
TEST(DynamicToStaticSymbolic, ShapeChainMatchesTheInterpreterAtTwoSizes) {
  ir::IRModule mod = parse(R"(
def @main(%x: Tensor[(b, s, 8), float32]) {
  %0 = shape_of(%x);
  %1 = take(%0, 0i64, axis=0);
  %2 = take(%0, 1i64, axis=0);
  %3 = multiply(%1, %2);
  %4 = expand_dims(%3);
  %5 = concatenate((%4, const([2, 4], shape=(2), dtype=int64)));
  %6 = dyn.reshape(%x, %5);
  %7 = transpose(%6, axes=[0, 2, 1]);
  %8 = shape_of(%7);
  %9 = take(%8, const([0, 2], shape=(2), dtype=int64), axis=0);
  %10 = take(%8, 1i64, axis=0);
  %11 = multiply(%9, const([1, 4], shape=(2), dtype=int64));
  %12 = floor_divide(%11, const([1, 1], shape=(2), dtype=int64));
  %13 = dyn.reshape(%7, %12);
  %14 = expand_dims(%1);
  %15 = expand_dims(%2);
  %16 = concatenate((%14, %15, const([-1], shape=(1), dtype=int64)));
  (%10, dyn.reshape(%13, %16))
}
)");
  ir::IRModule after = dynamic_to_static(mod);
  EXPECT_EQ(print(after), R"(#[version = "0.0.5"]
def @main(%x: Tensor[(b, s, 8), float32]) -> (int64, Tensor[(b, s, 8), float32]) {
  %0 = reshape(%x, newshape=[-3, 2, 4]);
  %1 = transpose(%0, axes=[0, 2, 1]);
  %2 = shape_of(%1);
  %3 = take(%2, 1i64, axis=0);
  %4 = reshape(%1, newshape=[0, 8]);
  %5 = reshape_like(%4, %x);
  (%3, %5)
}
)");
  expect_same_values_at(mod, after, {{{2, 3, 8}}, {{4, 1, 8}}});
}

// A decode step's shape chain: the positions range(past, past + 1) have one element, the causal
// mask's row [past, past + 1) is one row gathered at a run-time offset, and slicing that row to
// the past + 1 columns keeps its unit dim, so what broadcasts against it stays static.
TEST(DynamicToStaticSymbolic, DecodeStepPositionsAndMaskRow) {
  ir::IRModule mod = parse(R"(
def @main(%past_key: Tensor[(1, 2, past, 4), float32], %mask: Tensor[(16, 16), bool]) {
  %0 = shape_of(%past_key);
  %1 = take(%0, 2i64, axis=0);
  %2 = add(%1, 1i64);
  %3 = range(%1, %2, 1i64);
  %4 = expand_dims(%1);
  %5 = expand_dims(%2);
  %6 = dyn.strided_slice(%mask, %4, %5, const([1], shape=(1), dtype=int64), const([0], shape=(1), dtype=int64));
  %7 = dyn.strided_slice(%6, const([0], shape=(1), dtype=int64), %5, const([1], shape=(1), dtype=int64), const([1], shape=(1), dtype=int64));
  (%3, %7)
}
)");
  ir::IRModule after = dynamic_to_static(mod);
  const std::string text = print(after);
  EXPECT_NE(text.find("-> (Tensor[(1), int64], Tensor[(1, ?), bool])"), std::string::npos) << text;
  EXPECT_EQ(text.find("range("), std::string::npos) << text;
  expect_same_values_at(
      mod, after, {{{1, 2, 3, 4}, {16, 16}}, {{1, 2, 0, 4}, {16, 16}}, {{1, 2, 15, 4}, {16, 16}}});
}

// A prefill's causal mask cut to the sequence, [0, seq) on both axes of a static buffer: the
// indices are counted along the ids' sequence axis, so the mask is typed (seq, seq) and what
// broadcasts against it stays symbolic rather than unknown.
TEST(DynamicToStaticSymbolic, PrefillMaskCutToTheSequence) {
  ir::IRModule mod = parse(R"(
def @main(%ids: Tensor[(1, seq), int64], %mask: Tensor[(16, 16), bool]) {
  %0 = shape_of(%ids);
  %1 = take(%0, 1i64, axis=0);
  %2 = expand_dims(%1);
  %3 = dyn.strided_slice(%mask, const([0], shape=(1), dtype=int64), %2, const([1], shape=(1), dtype=int64), const([0], shape=(1), dtype=int64));
  dyn.strided_slice(%3, const([0], shape=(1), dtype=int64), %2, const([1], shape=(1), dtype=int64), const([1], shape=(1), dtype=int64))
}
)");
  ir::IRModule after = dynamic_to_static(mod);
  const std::string text = print(after);
  EXPECT_NE(text.find("-> Tensor[(seq, seq), bool]"), std::string::npos) << text;
  EXPECT_EQ(text.find("dyn.strided_slice"), std::string::npos) << text;
  expect_same_values_at(mod, after, {{{1, 3}, {16, 16}}, {{1, 1}, {16, 16}}, {{1, 16}, {16, 16}}});
}

}  // namespace
}  // namespace anvil::transform
