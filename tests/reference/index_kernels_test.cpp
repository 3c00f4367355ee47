// Reference kernels of the index family. Expected values are worked out by
// hand (or with numpy, noted where so).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

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

Tensor matrix_3x3() { return make_tensor({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}); }

TEST(IndexKernels, TakeModes) {
  Tensor x = make_tensor({4}, {10, 11, 12, 13});
  EXPECT_EQ(values_of(run1("take", {x, ints({-1, 5})}, {{"mode", std::string("clip")}})),
            (V{10, 13}));
  EXPECT_EQ(values_of(run1("take", {x, ints({-1, 5})}, {{"mode", std::string("wrap")}})),
            (V{13, 11}));
  EXPECT_EQ(values_of(run1("take", {x, ints({-4})}, {{"mode", std::string("fast")}})), (V{10}));
  EXPECT_TRUE(fails_with("take", {x, ints({4})}, {{"mode", std::string("fast")}}, "out of range"));
}

TEST(IndexKernels, TakeAlongAxis) {
  // numpy: np.take(m, [[2, 0]], axis=1) = [[[3, 1]], [[6, 4]], [[9, 7]]]
  Tensor out = run1("take", {matrix_3x3(), make_ints({1, 2}, {2, 0})}, {{"axis", int64_t(1)}});
  EXPECT_EQ(out.shape_vector(), (I{3, 1, 2}));
  EXPECT_EQ(values_of(out), (V{3, 1, 6, 4, 9, 7}));
  // A scalar index drops the axis.
  EXPECT_EQ(values_of(run1("take", {matrix_3x3(), make_ints({}, {1})}, {{"axis", int64_t(0)}})),
            (V{4, 5, 6}));
}

TEST(IndexKernels, TakeWithBatchDims) {
  // Row b picks its own columns: out[b][j] = m[b][idx[b][j]].
  Tensor idx = make_ints({3, 2}, {0, 2, 1, 1, 2, 0});
  Tensor out =
      run1("take", {matrix_3x3(), idx}, {{"axis", int64_t(1)}, {"batch_dims", int64_t(1)}});
  EXPECT_EQ(out.shape_vector(), (I{3, 2}));
  EXPECT_EQ(values_of(out), (V{1, 3, 5, 5, 9, 7}));
}

TEST(IndexKernels, GatherElementsWithNegativeIndices) {
  // ONNX GatherElements example with axis 0 and a -1.
  Tensor idx = make_ints({2, 3}, {-1, -2, 0, 2, 0, 0});
  Tensor out = run1("gather", {matrix_3x3(), idx}, {{"axis", int64_t(0)}});
  EXPECT_EQ(values_of(out), (V{7, 5, 3, 7, 2, 3}));
}

TEST(IndexKernels, GatherNdTvmLayout) {
  // Index tuples on the first axis: (2 components, 2 tuples) = tuples (0, 1) and (1, 0).
  Tensor data = make_tensor({2, 2}, {0, 1, 2, 3});
  Tensor idx = make_ints({2, 2}, {0, 1, 1, 0});
  EXPECT_EQ(values_of(run1("gather_nd", {data, idx})), (V{1, 2}));
  // batch_dims 1: data (2, 2, 2), indices (1, 2) pick row idx[b] of batch b.
  Tensor cube = make_tensor({2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
  Tensor out = run1("gather_nd", {cube, make_ints({1, 2}, {1, 0})}, {{"batch_dims", int64_t(1)}});
  EXPECT_EQ(out.shape_vector(), (I{2, 2}));
  EXPECT_EQ(values_of(out), (V{2, 3, 4, 5}));
}

TEST(IndexKernels, ScatterElementsReductions) {
  Tensor data = make_tensor({1, 5}, {1, 2, 3, 4, 5});
  Tensor idx = make_ints({1, 2}, {1, 1});
  Tensor upd = make_tensor({1, 2}, {1.5, 2.5});
  auto scatter = [&](const std::string& reduction) {
    return values_of(run1("scatter_elements", {data, idx, upd},
                          {{"axis", int64_t(1)}, {"reduction", reduction}}));
  };
  EXPECT_EQ(scatter("update"), (V{1, 2.5, 3, 4, 5}));  // the last duplicate wins
  EXPECT_EQ(scatter("add"), (V{1, 6, 3, 4, 5}));
  EXPECT_EQ(scatter("mul"), (V{1, 7.5, 3, 4, 5}));
  EXPECT_EQ(scatter("min"), (V{1, 1.5, 3, 4, 5}));
  EXPECT_EQ(scatter("max"), (V{1, 2.5, 3, 4, 5}));
  EXPECT_EQ(scatter("mean"), (V{1, 2, 3, 4, 5}));  // (2 + 1.5 + 2.5) / 3
  Tensor negative = make_ints({1, 1}, {-1});
  EXPECT_EQ(values_of(run1("scatter_elements", {data, negative, make_tensor({1, 1}, {9})},
                           {{"axis", int64_t(1)}})),
            (V{1, 2, 3, 4, 9}));
}

TEST(IndexKernels, ScatterNdAddsSlices) {
  // Tuples on the first axis: indices (1, 2) write rows 0 and 0 again of a 2x2.
  Tensor data = make_tensor({2, 2}, {1, 1, 1, 1});
  Tensor idx = make_ints({1, 2}, {0, 0});
  Tensor upd = make_tensor({2, 2}, {1, 2, 3, 4});
  EXPECT_EQ(values_of(run1("scatter_nd", {data, idx, upd}, {{"mode", std::string("add")}})),
            (V{5, 7, 1, 1}));
  EXPECT_EQ(values_of(run1("scatter_nd", {data, idx, upd})), (V{3, 4, 1, 1}));
}

TEST(IndexKernels, Col2ImSumsOverlappingBlocks) {
  // One channel, 1x2 blocks at 2 positions of a 1x3 image: the middle pixel is shared.
  Tensor data = make_tensor({1, 2, 2}, {1, 2, 10, 20});
  Tensor out = run1("col2im", {data}, {{"image_shape", I{1, 3}}, {"block_shape", I{1, 2}}});
  EXPECT_EQ(out.shape_vector(), (I{1, 1, 1, 3}));
  EXPECT_EQ(values_of(out), (V{1, 12, 20}));
  Tensor same = run1("dyn.col2im", {data, ints({1, 3}), ints({1, 2})});
  EXPECT_EQ(values_of(same), (V{1, 12, 20}));
}

TEST(IndexKernels, OneHotCountsNegativeIndicesFromDepth) {
  Tensor on = make_tensor({}, {5}), off = make_tensor({}, {0});
  Tensor out = run1("one_hot", {ints({0, -1, 7}), on, off}, {{"depth", int64_t(3)}});
  EXPECT_EQ(out.shape_vector(), (I{3, 3}));
  EXPECT_EQ(values_of(out), (V{5, 0, 0, 0, 0, 5, 0, 0, 0}));
  Tensor by_axis0 =
      run1("dyn.one_hot", {ints({1, 0}), on, off, make_ints({}, {2})}, {{"axis", int64_t(0)}});
  EXPECT_EQ(values_of(by_axis0), (V{0, 5, 5, 0}));
}

TEST(IndexKernels, TopkBreaksTiesByLowerIndex) {
  Tensor x = make_tensor({5}, {1, 3, 3, 2, 3});
  std::vector<Tensor> largest = run_op("topk", {x}, {{"k", int64_t(3)}});
  EXPECT_EQ(values_of(largest[0]), (V{3, 3, 3}));
  EXPECT_EQ(ints_of(largest[1]), (I{1, 2, 4}));
  std::vector<Tensor> smallest = run_op("topk", {x}, {{"k", int64_t(2)}, {"is_ascend", true}});
  EXPECT_EQ(values_of(smallest[0]), (V{1, 2}));
  EXPECT_EQ(ints_of(smallest[1]), (I{0, 3}));
  std::vector<Tensor> dynamic = run_op("dyn.topk", {x, ints({1})});
  EXPECT_EQ(ints_of(dynamic[1]), (I{1}));
}

TEST(IndexKernels, TopkAlongFirstAxis) {
  Tensor x = make_tensor({3, 2}, {1, 6, 5, 2, 3, 4});
  std::vector<Tensor> out = run_op("topk", {x}, {{"k", int64_t(2)}, {"axis", int64_t(0)}});
  EXPECT_EQ(values_of(out[0]), (V{5, 6, 3, 4}));
  EXPECT_EQ(ints_of(out[1]), (I{1, 0, 2, 2}));
}

TEST(IndexKernels, SortAndArgsort) {
  Tensor x = make_tensor({4}, {2, NAN, 1, 2});
  V sorted = values_of(run1("sort", {x}));
  EXPECT_EQ(V(sorted.begin(), sorted.begin() + 3), (V{1, 2, 2}));
  EXPECT_TRUE(std::isnan(sorted[3]));  // NaN last, as numpy
  EXPECT_EQ(ints_of(run1("argsort", {x})), (I{2, 0, 3, 1}));
  EXPECT_EQ(ints_of(run1("argsort", {make_tensor({3}, {2, 3, 2})}, {{"is_ascend", false}})),
            (I{1, 0, 2}));
}

TEST(IndexKernels, NonzeroListsCoordinatesPerDim) {
  Tensor x = make_ints({2, 2}, {1, 0, 1, 1}, DataType::boolean());
  Tensor out = run1("nonzero", {x});
  EXPECT_EQ(out.shape_vector(), (I{2, 3}));
  EXPECT_EQ(ints_of(out), (I{0, 1, 1, 0, 0, 1}));
}

TEST(IndexKernels, Scans) {
  Tensor x = make_tensor({4}, {1, 2, 3, 4});
  EXPECT_EQ(values_of(run1("cumsum", {x}, {{"axis", int64_t(0)}})), (V{1, 3, 6, 10}));
  EXPECT_EQ(values_of(run1("cumsum", {x}, {{"axis", int64_t(0)}, {"exclusive", true}})),
            (V{0, 1, 3, 6}));
  EXPECT_EQ(values_of(run1("cumsum", {x},
                           {{"axis", int64_t(0)}, {"exclusive", true}, {"reverse", true}})),
            (V{9, 7, 4, 0}));
  EXPECT_EQ(values_of(run1("cumprod", {x}, {{"axis", int64_t(0)}, {"reverse", true}})),
            (V{24, 24, 12, 4}));
  // No axis: over the flattened data.
  EXPECT_EQ(values_of(run1("cumsum", {make_tensor({2, 2}, {1, 2, 3, 4})})), (V{1, 3, 6, 10}));
  Tensor m = make_tensor({2, 2}, {1, 2, 3, 4});
  EXPECT_EQ(values_of(run1("dyn.cumsum", {m, make_ints({}, {-1}, DataType::int32())})),
            (V{1, 3, 3, 7}));
  EXPECT_EQ(values_of(run1("dyn.cumprod", {m, make_ints({}, {0}, DataType::int64())},
                           {{"exclusive", true}})),
            (V{1, 1, 1, 2}));
}

TEST(IndexKernels, UniqueSortedAndInFirstOccurrenceOrder) {
  // numpy: np.unique([2, 1, 1, 3, 4, 3], return_index, return_inverse, return_counts)
  Tensor x = make_tensor({6}, {2, 1, 1, 3, 4, 3});
  std::vector<Tensor> out = run_op("unique", {x});
  EXPECT_EQ(values_of(out[0]), (V{1, 2, 3, 4}));
  EXPECT_EQ(ints_of(out[1]), (I{1, 0, 3, 4}));
  EXPECT_EQ(ints_of(out[2]), (I{1, 0, 0, 2, 3, 2}));
  EXPECT_EQ(ints_of(out[3]), (I{2, 1, 2, 1}));
  out = run_op("unique", {x}, {{"sorted", false}});
  EXPECT_EQ(values_of(out[0]), (V{2, 1, 3, 4}));
  EXPECT_EQ(ints_of(out[2]), (I{0, 1, 1, 2, 3, 2}));
}

TEST(IndexKernels, UniqueRowsAlongAxis) {
  Tensor x = make_tensor({3, 2}, {1, 0, 0, 1, 1, 0});
  std::vector<Tensor> out = run_op("unique", {x}, {{"axis", int64_t(0)}});
  EXPECT_EQ(out[0].shape_vector(), (I{2, 2}));
  EXPECT_EQ(values_of(out[0]), (V{0, 1, 1, 0}));
  EXPECT_EQ(ints_of(out[1]), (I{1, 0}));
  EXPECT_EQ(ints_of(out[2]), (I{1, 0, 1}));
  EXPECT_EQ(ints_of(out[3]), (I{1, 2}));
}

}  // namespace
}  // namespace anvil::reference
