// Reference kernels of the matrix products: transposes, broadcast batches,
// numpy's 1-D operands, bias_add's axis, and exact integer products.
#include "nn_kernel_test_util.h"

namespace anvil::reference {
namespace {

using namespace testing;
using ints = std::vector<int64_t>;

TEST(NnDenseKernels, DenseMultipliesByTheTransposedWeight) {
  // [[1, 2, 3], [4, 5, 6]] times [[1, 0, 1], [0, 1, -1]] transposed.
  Tensor y = run("nn.dense", {iota({2, 3}, 1), make({2, 3}, {1, 0, 1, 0, 1, -1})});
  EXPECT_EQ(y.shape_vector(), (ints{2, 2}));
  EXPECT_TRUE(near(y, {4, -1, 10, -1}));
}

TEST(NnDenseKernels, DenseKeepsLeadingAxes) {
  Tensor y = run("nn.dense", {iota({2, 1, 2}), make({3, 2}, {1, 1, 1, 0, 0, 1})});
  EXPECT_EQ(y.shape_vector(), (ints{2, 1, 3}));
  EXPECT_TRUE(near(y, {1, 0, 1, 5, 2, 3}));
}

TEST(NnDenseKernels, MatmulTransposeFlags) {
  // a = [[1, 2], [3, 4]], b = [[5, 6], [7, 8]].
  Tensor a = iota({2, 2}, 1), b = iota({2, 2}, 5);
  EXPECT_TRUE(near(run("nn.matmul", {a, b}), {19, 22, 43, 50}));
  // a^T b = [[1, 3], [2, 4]] b.
  EXPECT_TRUE(near(run("nn.matmul", {a, b}, {{"transpose_a", true}}), {26, 30, 38, 44}));
  // a b^T = a [[5, 7], [6, 8]].
  EXPECT_TRUE(near(run("nn.matmul", {a, b}, {{"transpose_b", true}}), {17, 23, 39, 53}));
  EXPECT_TRUE(near(run("nn.matmul", {a, b}, {{"transpose_a", true}, {"transpose_b", true}}),
                   {23, 31, 34, 46}));
}

TEST(NnDenseKernels, DensePackUnpacksTheColumnBlocks) {
  // B (K = 2, N = 4) = [[1, 2, 3, 4], [5, 6, 7, 8]] packed in blocks of 2 columns:
  // packed[n / 2, k, n % 2] = B[k, n] = [[[1, 2], [5, 6]], [[3, 4], [7, 8]]].
  Tensor packed = make({2, 2, 2}, {1, 2, 5, 6, 3, 4, 7, 8});
  // x = [[1, 0], [1, 1], [0, 2]] (and as one (1, 3, 2) batch): x B row by row.
  Tensor y = run("nn.contrib_dense_pack", {make({3, 2}, {1, 0, 1, 1, 0, 2}), packed});
  EXPECT_EQ(y.shape_vector(), (ints{3, 4}));
  EXPECT_TRUE(near(y, {1, 2, 3, 4, 6, 8, 10, 12, 10, 12, 14, 16}));
  Tensor batched = run("nn.contrib_dense_pack", {make({1, 3, 2}, {1, 0, 1, 1, 0, 2}), packed});
  EXPECT_EQ(batched.shape_vector(), (ints{1, 3, 4}));
  EXPECT_TRUE(near(batched, {1, 2, 3, 4, 6, 8, 10, 12, 10, 12, 14, 16}));
}

TEST(NnDenseKernels, BatchMatmulBroadcastsABatchOfOne) {
  // x: two 1x2 rows [0, 1] and [2, 3]; y: one (N=2, K=2) matrix [[1, 1], [1, -1]] (NT form).
  Tensor y = run("nn.batch_matmul", {iota({2, 1, 2}), make({1, 2, 2}, {1, 1, 1, -1})});
  EXPECT_EQ(y.shape_vector(), (ints{2, 1, 2}));
  EXPECT_TRUE(near(y, {1, -1, 5, -1}));
}

TEST(NnDenseKernels, NumpyMatmulVectorOperandsDropTheirAxis) {
  // A 1-D a is a row: [1, 2] times each of two 2x3 matrices (0..5 and 6..11).
  Tensor y = run("matmul", {iota({2}, 1), iota({2, 2, 3})});
  EXPECT_EQ(y.shape_vector(), (ints{2, 3}));
  EXPECT_TRUE(near(y, {6, 9, 12, 24, 27, 30}));
  // A 1-D b is a column.
  Tensor z = run("matmul", {iota({2, 3}), make({3}, {1, 0, -1})});
  EXPECT_EQ(z.shape_vector(), (ints{2}));
  EXPECT_TRUE(near(z, {-2, -2}));
}

TEST(NnDenseKernels, NumpyMatmulBroadcastsBatchAxes) {
  // (2, 1, 1, 2) times (3, 2, 1): every pair of batches, each [x0, x1] . [y0, y1].
  Tensor y = run("matmul", {iota({2, 1, 1, 2}), iota({3, 2, 1})});
  EXPECT_EQ(y.shape_vector(), (ints{2, 3, 1, 1}));
  // a batches [0, 1], [2, 3]; b batches [0, 1], [2, 3], [4, 5].
  EXPECT_TRUE(near(y, {1, 3, 5, 3, 13, 23}));
}

TEST(NnDenseKernels, BiasAddAlongAnAxis) {
  Tensor y = run("nn.bias_add", {make({2, 2, 2}, {0, 0, 0, 0, 0, 0, 0, 0}), make({2}, {1, 2})},
                 {{"axis", int64_t(-2)}});
  EXPECT_TRUE(near(y, {1, 1, 2, 2, 1, 1, 2, 2}));
}

TEST(NnDenseKernels, IntegerProductsAreExact) {
  // 2^53 + 1 has no double; int64 arithmetic keeps it.
  Tensor a = make({1, 2}, {0, 1}, DataType::int64());
  Tensor b = Tensor::empty({2, 1}, DataType::int64());
  b.data_as<int64_t>()[0] = 5;
  b.data_as<int64_t>()[1] = (int64_t(1) << 53) + 1;
  Tensor y = run("matmul", {a, b});
  EXPECT_EQ(y.data_as<int64_t>()[0], (int64_t(1) << 53) + 1);
  // uint8 x int8 into int32, as MatMulInteger produces.
  Tensor z = run(
      "matmul",
      {make({1, 2}, {255, 200}, DataType::uint8()), make({2, 1}, {-128, 127}, DataType::int8())},
      {{"out_dtype", DataType::int32()}});
  EXPECT_EQ(z.dtype(), DataType::int32());
  EXPECT_EQ(z.data_as<int32_t>()[0], 255 * -128 + 200 * 127);
}

TEST(NnDenseKernels, MatmulStacksBatchesAgainstOneWeight) {
  // Two batches of 2x3 (0..11) times [[1, 0], [0, 1], [1, 1]]: columns x0 + x2 and x1 + x2.
  Tensor w = make({3, 2}, {1, 0, 0, 1, 1, 1});
  Tensor expected_values = make({2, 2, 2}, {2, 3, 8, 9, 14, 15, 20, 21});
  Tensor y = run("nn.matmul", {iota({2, 2, 3}), w});
  EXPECT_EQ(y.shape_vector(), (ints{2, 2, 2}));
  EXPECT_TRUE(near(y, values(expected_values)));
  EXPECT_TRUE(near(run("matmul", {iota({2, 2, 3}), w}), values(expected_values)));
  // transpose_a reads each batch as (K, M) = (3, 2): batch 0 is [[0, 1], [2, 3], [4, 5]].
  Tensor t = run("nn.matmul", {iota({2, 3, 2}), w}, {{"transpose_a", true}});
  EXPECT_EQ(t.shape_vector(), (ints{2, 2, 2}));
  EXPECT_TRUE(near(t, {4, 6, 6, 8, 16, 18, 18, 20}));
}

TEST(NnDenseKernels, LongReductionsCrossColumnBlocks) {
  // k = 8192 makes the kernel work on columns a few at a time; column j of b
  // holds j everywhere, so output j is 8192 * j.
  const int64_t k = 8192, n = 10;
  std::vector<double> b(size_t(k * n));
  for (int64_t p = 0; p < k; ++p)
    for (int64_t j = 0; j < n; ++j) b[size_t(p * n + j)] = double(j);
  Tensor y = run("nn.matmul", {make({1, k}, std::vector<double>(size_t(k), 1.0)), make({k, n}, b)});
  std::vector<double> expected;
  for (int64_t j = 0; j < n; ++j) expected.push_back(double(k * j));
  EXPECT_TRUE(near(y, expected));
}

}  // namespace
}  // namespace anvil::reference
