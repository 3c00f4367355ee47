// Reference kernels of the transform family. Expected values are worked out
// by hand (or with numpy, noted where so).
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

#include "tensor_kernel_test_util.h"

namespace anvil::reference {
namespace {

using testing::fails_with;
using testing::ints;
using testing::ints_of;
using testing::make_ints;
using testing::make_tensor;
using testing::run1;
using testing::run_op;
using testing::values_of;
using V = std::vector<double>;
using I = std::vector<int64_t>;

// 0, 1, 2, ... as float32 in the given shape.
Tensor iota(std::vector<int64_t> shape) {
  V values(size_t(shape_numel(shape)));
  for (size_t i = 0; i < values.size(); ++i) values[i] = double(i);
  return make_tensor(std::move(shape), values);
}

TEST(TransformKernels, ReshapeCopiesAndInfers) {
  Tensor out = run1("reshape", {iota({2, 3, 4})}, {{"newshape", I{0, -1}}});
  EXPECT_EQ(out.shape_vector(), (I{2, 12}));
  EXPECT_EQ(values_of(out), values_of(iota({24})));
}

TEST(TransformKernels, DynReshapeHonoursAllowzero) {
  // With allowzero the 0 is a literal size: (0, 3) -> (3, 0).
  Tensor empty = make_tensor({0, 3}, {});
  Tensor out = run1("dyn.reshape", {empty, ints({3, 0})}, {{"allowzero", true}});
  EXPECT_EQ(out.shape_vector(), (I{3, 0}));
  // Without it the 0 copies dim 0 of the input.
  Tensor copied = run1("dyn.reshape", {iota({2, 3}), ints({0, 3})});
  EXPECT_EQ(copied.shape_vector(), (I{2, 3}));
  EXPECT_TRUE(fails_with("dyn.reshape", {iota({2, 3}), ints({4, -1})}, {}, "cannot hold"));
}

TEST(TransformKernels, ReshapeLikeTakesDimsOfTheSecondInput) {
  // The whole shape of the (unread) second input, then dims 0..1 of it in place of dim 0.
  Tensor out = run1("reshape_like", {iota({6, 4}), make_ints({3, 8}, I(24, 0))});
  EXPECT_EQ(out.shape_vector(), (I{3, 8}));
  EXPECT_EQ(values_of(out), values_of(iota({24})));
  Tensor split = run1("reshape_like", {iota({6, 4}), iota({2, 3, 5})},
                      {{"lhs_end", int64_t(1)}, {"rhs_end", int64_t(2)}});
  EXPECT_EQ(split.shape_vector(), (I{2, 3, 4}));
  EXPECT_TRUE(fails_with("reshape_like", {iota({6, 4}), iota({5})}, {}, "cannot reshape"));
}

TEST(TransformKernels, TransposeMovesInt64Exactly) {
  // 2^60 + 1 is not a double; a byte copy keeps it.
  int64_t big = (int64_t(1) << 60) + 1;
  Tensor x = make_ints({2, 3}, {0, 1, 2, big, 4, 5});
  Tensor out = run1("transpose", {x}, {{"axes", I{1, 0}}});
  EXPECT_EQ(out.shape_vector(), (I{3, 2}));
  EXPECT_EQ(ints_of(out), (I{0, big, 1, 4, 2, 5}));
  // No axes reverses them.
  EXPECT_EQ(values_of(run1("transpose", {iota({2, 3})})), (V{0, 3, 1, 4, 2, 5}));
}

TEST(TransformKernels, TransposeThreeDims) {
  // numpy: np.arange(24).reshape(2, 3, 4).transpose(2, 0, 1)[1] = [[1, 5, 9], [13, 17, 21]]
  Tensor out = run1("transpose", {iota({2, 3, 4})}, {{"axes", I{2, 0, 1}}});
  EXPECT_EQ(out.shape_vector(), (I{4, 2, 3}));
  V values = values_of(out);
  EXPECT_EQ(V(values.begin() + 6, values.begin() + 12), (V{1, 5, 9, 13, 17, 21}));
}

TEST(TransformKernels, SqueezeAndUnsqueeze) {
  EXPECT_EQ(run1("squeeze", {iota({1, 3, 1})}).shape_vector(), (I{3}));
  EXPECT_EQ(run1("squeeze", {iota({1, 3, 1})}, {{"axis", I{-1}}}).shape_vector(), (I{1, 3}));
  EXPECT_EQ(run1("dyn.squeeze", {iota({1, 3, 1}), ints({0})}).shape_vector(), (I{3, 1}));
  EXPECT_TRUE(fails_with("dyn.squeeze", {iota({2, 3}), ints({0})}, {}, "not 1"));
  // ONNX Unsqueeze: positions in the output, in any order.
  Tensor out = run1("dyn.expand_dims", {iota({3, 4}), ints({3, 0})});
  EXPECT_EQ(out.shape_vector(), (I{1, 3, 4, 1}));
  EXPECT_EQ(run1("expand_dims", {iota({3})}, {{"axis", int64_t(-1)}, {"num_newaxis", int64_t(2)}})
                .shape_vector(),
            (I{3, 1, 1}));
}

TEST(TransformKernels, BroadcastTo) {
  Tensor out = run1("broadcast_to", {iota({3, 1})}, {{"shape", I{2, 3, 2}}});
  EXPECT_EQ(values_of(out), (V{0, 0, 1, 1, 2, 2, 0, 0, 1, 1, 2, 2}));
  EXPECT_EQ(values_of(run1("dyn.broadcast_to", {iota({2}), ints({2, 2})})), (V{0, 1, 0, 1}));
  EXPECT_TRUE(fails_with("dyn.broadcast_to", {iota({3}), ints({2})}, {}, "cannot broadcast"));
}

TEST(TransformKernels, FlattenTileRepeatReverse) {
  EXPECT_EQ(run1("flatten", {iota({2, 3, 4})}, {{"axis", int64_t(2)}}).shape_vector(), (I{6, 4}));
  EXPECT_EQ(run1("flatten", {iota({2, 3})}, {{"axis", int64_t(0)}}).shape_vector(), (I{1, 6}));
  // numpy: np.tile([[0, 1]], (2, 2)) = [[0, 1, 0, 1], [0, 1, 0, 1]]
  Tensor tiled = run1("tile", {iota({1, 2})}, {{"reps", I{2, 2}}});
  EXPECT_EQ(tiled.shape_vector(), (I{2, 4}));
  EXPECT_EQ(values_of(tiled), (V{0, 1, 0, 1, 0, 1, 0, 1}));
  // Shorter reps get leading 1s: np.tile(np.arange(4).reshape(2, 2), 2) repeats each row.
  EXPECT_EQ(values_of(run1("dyn.tile", {iota({2, 2}), ints({2})})), (V{0, 1, 0, 1, 2, 3, 2, 3}));
  EXPECT_EQ(values_of(run1("repeat", {iota({2})}, {{"repeats", int64_t(3)}})),
            (V{0, 0, 0, 1, 1, 1}));
  EXPECT_EQ(values_of(run1("reverse", {iota({2, 2})}, {{"axis", int64_t(1)}})), (V{1, 0, 3, 2}));
}

TEST(TransformKernels, ConcatenateAndSplit) {
  Tensor joined = run1("concatenate", {iota({2, 1}), iota({2, 2})}, {{"axis", int64_t(1)}}, true);
  EXPECT_EQ(joined.shape_vector(), (I{2, 3}));
  EXPECT_EQ(values_of(joined), (V{0, 0, 1, 1, 2, 3}));

  std::vector<Tensor> parts = run_op("split", {iota({5})}, {{"indices", I{1, 3}}});
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(values_of(parts[0]), (V{0}));
  EXPECT_EQ(values_of(parts[1]), (V{1, 2}));
  EXPECT_EQ(values_of(parts[2]), (V{3, 4}));
  parts = run_op("split", {iota({2, 4})}, {{"sections", int64_t(2)}, {"axis", int64_t(1)}});
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(values_of(parts[1]), (V{2, 3, 6, 7}));
}

TEST(TransformKernels, StridedSliceClampsLikeNumpy) {
  // numpy: np.arange(10)[8:2:-3] = [8, 5]
  Tensor x = iota({10});
  EXPECT_EQ(
      values_of(run1("strided_slice", {x}, {{"begin", I{8}}, {"end", I{2}}, {"strides", I{-3}}})),
      (V{8, 5}));
  // Out-of-range bounds clamp: x[-100:100:4] = [0, 4, 8].
  EXPECT_EQ(values_of(run1("strided_slice", {x},
                           {{"begin", I{-100}}, {"end", I{100}}, {"strides", I{4}}})),
            (V{0, 4, 8}));
  // ONNX's "to the start" for a negative step: begin -1, end INT64_MIN.
  int64_t lowest = std::numeric_limits<int64_t>::min();
  EXPECT_EQ(values_of(run1("strided_slice", {iota({3})},
                           {{"begin", I{-1}}, {"end", I{lowest}}, {"strides", I{lowest}}})),
            (V{2}));
  // Only axis 1 of a 2x3: x[:, 1:].
  EXPECT_EQ(values_of(run1("strided_slice", {iota({2, 3})},
                           {{"begin", I{1}}, {"end", I{3}}, {"axes", I{1}}})),
            (V{1, 2, 4, 5}));
  // Size mode: two elements from 1.
  EXPECT_EQ(values_of(run1("strided_slice", {x},
                           {{"begin", I{1}}, {"end", I{2}}, {"slice_mode", std::string("size")}})),
            (V{1, 2}));
}

TEST(TransformKernels, DynStridedSlice) {
  // x[:, ::-2] of a 2x5 through run-time begin, end, strides and axes.
  Tensor out = run1("dyn.strided_slice",
                    {iota({2, 5}), ints({-1}), ints({std::numeric_limits<int64_t>::min()}),
                     ints({-2}), ints({-1})});
  EXPECT_EQ(out.shape_vector(), (I{2, 3}));
  EXPECT_EQ(values_of(out), (V{4, 2, 0, 9, 7, 5}));
}

TEST(TransformKernels, ReverseSequence) {
  // ONNX's example: batch_axis 1, time_axis 0, lengths [4, 3, 2, 1].
  Tensor x = make_tensor({4, 4}, {0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15});
  Tensor out = run1("reverse_sequence", {x, ints({4, 3, 2, 1})},
                    {{"seq_axis", int64_t(0)}, {"batch_axis", int64_t(1)}});
  EXPECT_EQ(values_of(out), (V{3, 6, 9, 12, 2, 5, 8, 13, 1, 4, 10, 14, 0, 7, 11, 15}));
}

TEST(TransformKernels, Trilu) {
  Tensor x = make_tensor({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  Tensor k1 = make_ints({}, {1});
  EXPECT_EQ(values_of(run1("trilu", {x, k1}, {{"upper", true}})), (V{0, 2, 3, 0, 0, 6, 0, 0, 0}));
  Tensor km1 = make_ints({}, {-1});
  EXPECT_EQ(values_of(run1("trilu", {x, km1}, {{"upper", false}})), (V{0, 0, 0, 4, 0, 0, 7, 8, 0}));
}

TEST(TransformKernels, LayoutTransformBlocksChannels) {
  // NCHW (1, 4, 1, 2) -> NCHW2c (1, 2, 1, 2, 2): out[0][cb][0][w][ci] = in[0][2cb + ci][0][w].
  Tensor out = run1("layout_transform", {iota({1, 4, 1, 2})},
                    {{"src_layout", std::string("NCHW")}, {"dst_layout", std::string("NCHW2c")}});
  EXPECT_EQ(out.shape_vector(), (I{1, 2, 1, 2, 2}));
  EXPECT_EQ(values_of(out), (V{0, 2, 1, 3, 4, 6, 5, 7}));
  Tensor back = run1("layout_transform", {out},
                     {{"src_layout", std::string("NCHW2c")}, {"dst_layout", std::string("NCHW")}});
  EXPECT_EQ(values_of(back), values_of(iota({1, 4, 1, 2})));
}

TEST(TransformKernels, EinsumForms) {
  Tensor a = make_tensor({2, 2}, {1, 2, 3, 4});
  Tensor b = make_tensor({2, 2}, {5, 6, 7, 8});
  auto einsum = [](const std::string& eq, std::vector<Tensor> operands) {
    return run1("einsum", operands, {{"equation", eq}}, true);
  };
  EXPECT_EQ(values_of(einsum("ij,jk->ik", {a, b})), (V{19, 22, 43, 50}));
  EXPECT_EQ(values_of(einsum("ii->i", {a})), (V{1, 4}));
  EXPECT_EQ(values_of(einsum("ii", {a})), (V{5}));           // implicit: the trace
  EXPECT_EQ(values_of(einsum("ji", {a})), (V{1, 3, 2, 4}));  // implicit output "ij"
  EXPECT_EQ(values_of(einsum("i,j->ij", {make_tensor({2}, {1, 2}), make_tensor({2}, {3, 4})})),
            (V{3, 4, 6, 8}));
  // Broadcast batch dims: "...ij,...jk" with batch shapes (2) and (1).
  Tensor batch = make_tensor({2, 1, 2}, {1, 2, 3, 4});
  Tensor shared = make_tensor({1, 2, 1}, {10, 1});
  Tensor out = einsum("...ij,...jk->...ik", {batch, shared});
  EXPECT_EQ(out.shape_vector(), (I{2, 1, 1}));
  EXPECT_EQ(values_of(out), (V{12, 34}));
}

TEST(TransformKernels, EinsumIntegersStayExact) {
  int64_t big = int64_t(1) << 55;
  Tensor x = make_ints({2}, {big, 1});
  Tensor y = make_ints({2}, {1, 1});
  Tensor out = run1("einsum", {x, y}, {{"equation", std::string("i,i->")}}, true);
  EXPECT_EQ(ints_of(out), (I{big + 1}));
}

}  // namespace
}  // namespace anvil::reference
