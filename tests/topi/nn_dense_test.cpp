// The matrix-product computes (nn.dense, nn.matmul, nn.batch_matmul, numpy matmul) against
// the reference kernels, naive and under the default schedule, with transposes, broadcast
// batches, 1-D operands and int8 into int32.
#include <gtest/gtest.h>

#include "anvil/topi/topi.h"
#include "topi/topi_test_util.h"

namespace anvil {
namespace {

using topi_test::attrs;
using topi_test::check_op;
using topi_test::random_tensor;
using Fields = std::vector<std::pair<std::string, ir::AttrValue>>;

const topi_test::Tolerance kLongSum{1e-4, 1e-5};

Tensor f32(std::vector<int64_t> shape, uint64_t seed) {
  return random_tensor(std::move(shape), DataType::float32(), seed);
}

TEST(NnDense, OddShape) {
  check_op("nn.dense", {f32({5, 37}, 1), f32({11, 37}, 2)}, nullptr, kLongSum);
}

TEST(NnDense, ThreeDimensionalData) {
  check_op("nn.dense", {f32({2, 3, 9}, 3), f32({4, 9}, 4)}, nullptr, kLongSum);
}

TEST(NnDense, OneDimensionalData) {
  check_op("nn.dense", {f32({9}, 5), f32({6, 9}, 6)}, nullptr, kLongSum);
}

TEST(NnDense, Int8IntoInt32) {
  Tensor data = random_tensor({3, 20}, DataType::int8(), 7, -120, 120);
  Tensor weight = random_tensor({5, 20}, DataType::int8(), 8, -120, 120);
  check_op("nn.dense", {data, weight}, attrs("nn.dense", Fields{{"out_dtype", DataType::int32()}}));
}

TEST(NnDense, TNameAndOneReduction) {
  te::Tensor data = te::placeholder({2, 3}, DataType::float32(), "data");
  te::Tensor weight = te::placeholder({4, 3}, DataType::float32(), "weight");
  ir::Call call = ir::call_op("nn.dense", {}, nullptr);
  std::vector<te::Tensor> inputs = {data, weight};
  ir::Type out = ir::TensorTypeNode::make({2, 4}, DataType::float32());
  std::vector<te::Tensor> outputs = (*topi::find_compute("nn.dense"))({*call, inputs, out});
  ASSERT_EQ(outputs.size(), 1u);
  EXPECT_EQ(outputs[0].name(), "T_dense");
  EXPECT_NE(tir::as<tir::ReduceNode>(outputs[0]->body), nullptr);
  // Reads the inputs directly: no intermediate stage.
  for (const te::Tensor& input : outputs[0]->inputs) EXPECT_TRUE(input->is_placeholder);
}

TEST(NnMatmul, Plain) {
  check_op("nn.matmul", {f32({3, 7}, 9), f32({7, 5}, 10)}, nullptr, kLongSum);
}

TEST(NnMatmul, TransposeA) {
  check_op("nn.matmul", {f32({2, 7, 3}, 11), f32({7, 5}, 12)},
           attrs("nn.matmul", Fields{{"transpose_a", true}}), kLongSum);
}

TEST(NnMatmul, TransposeB) {
  check_op("nn.matmul", {f32({4, 6}, 13), f32({5, 6}, 14)},
           attrs("nn.matmul", Fields{{"transpose_b", true}}), kLongSum);
}

TEST(NnMatmul, BothTransposedBatched) {
  check_op("nn.matmul", {f32({2, 3, 6, 4}, 15), f32({5, 6}, 16)},
           attrs("nn.matmul", Fields{{"transpose_a", true}, {"transpose_b", true}}), kLongSum);
}

TEST(NnMatmul, VectorA) {
  check_op("nn.matmul", {f32({6}, 17), f32({6, 4}, 18)}, nullptr, kLongSum);
}

TEST(NnBatchMatmul, DefaultTransposedB) {
  check_op("nn.batch_matmul", {f32({3, 4, 7}, 19), f32({3, 5, 7}, 20)}, nullptr, kLongSum);
}

TEST(NnBatchMatmul, EveryTransposeFlag) {
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      Tensor x = ta ? f32({2, 6, 3}, 21) : f32({2, 3, 6}, 21);
      Tensor y = tb ? f32({2, 5, 6}, 22) : f32({2, 6, 5}, 22);
      check_op("nn.batch_matmul", {x, y},
               attrs("nn.batch_matmul", Fields{{"transpose_a", ta}, {"transpose_b", tb}}),
               kLongSum);
    }
  }
}

TEST(NnBatchMatmul, BroadcastBatchOfOne) {
  check_op("nn.batch_matmul", {f32({1, 4, 7}, 23), f32({3, 5, 7}, 24)}, nullptr, kLongSum);
  check_op("nn.batch_matmul", {f32({3, 4, 7}, 25), f32({1, 5, 7}, 26)}, nullptr, kLongSum);
}

TEST(NnNumpyMatmul, BroadcastBatchDims) {
  check_op("matmul", {f32({2, 1, 3, 5}, 27), f32({4, 5, 6}, 28)}, nullptr, kLongSum);
}

TEST(NnNumpyMatmul, VectorOperands) {
  check_op("matmul", {f32({5}, 29), f32({2, 5, 3}, 30)}, nullptr, kLongSum);
  check_op("matmul", {f32({2, 4, 5}, 31), f32({5}, 32)}, nullptr, kLongSum);
  check_op("matmul", {f32({7}, 33), f32({7}, 34)}, nullptr, kLongSum);
}

TEST(NnNumpyMatmul, TwoDimensional) {
  check_op("matmul", {f32({9, 17}, 35), f32({17, 13}, 36)}, nullptr, kLongSum);
}

TEST(NnDense, AddReluGroup) {
  topi_test::check_group(R"(fn (%x: Tensor[(3, 10), float32], %w: Tensor[(6, 10), float32],
      %b: Tensor[(6), float32]) {
    %0 = nn.dense(%x, %w);
    %1 = add(%0, %b);
    nn.relu(%1)
  })",
                         {}, kLongSum);
}

}  // namespace
}  // namespace anvil
