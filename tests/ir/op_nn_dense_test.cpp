// Type relations of the matrix-product family: dense, nn.matmul,
// batch_matmul, numpy matmul and bias_add.
#include <gtest/gtest.h>

#include "anvil/ir/attrs/nn.h"
#include "nn_test_util.h"

namespace anvil::ir {
namespace {

using testing::infer_call;
using testing::is_tensor;
using testing::pattern_of;
using testing::round_trips;
using testing::tensor_var;
using testing::type_error_mentions;
using testing::with;

const DataType f32 = DataType::float32();
const Dim n = Dim::var("n");
const Dim b = Dim::var("batch");

// ---------------------------------------------------------------- dense

TEST(NnDense, DenseReplacesTheLastAxis) {
  auto x = tensor_var("x", {n, 7, 64});
  auto k = tensor_var("k", {10, 64});
  EXPECT_TRUE(is_tensor(infer_call("nn.dense", {x, k}), {n, 7, 10}, f32));
  auto v = tensor_var("v", {64});
  EXPECT_TRUE(is_tensor(infer_call("nn.dense", {v, k}), {10}, f32));
  Attrs units = with<DenseAttrs>([](auto& a) { a.units = 10; });
  EXPECT_TRUE(is_tensor(infer_call("nn.dense", {x, k}, units), {n, 7, 10}, f32));
  EXPECT_EQ(pattern_of("nn.dense"), OpPattern::OutEWiseFusable);
}

TEST(NnDense, DensePackReadsColumnsFromTheBlocks) {
  // (N / b, K, b) = (3, 64, 16): 48 output columns.
  auto x = tensor_var("x", {n, 7, 64});
  auto w = tensor_var("w", {3, 64, 16});
  EXPECT_TRUE(is_tensor(infer_call("nn.contrib_dense_pack", {x, w}), {n, 7, 48}, f32));
  Attrs units = with<DenseAttrs>([](auto& a) { a.units = 48; });
  EXPECT_TRUE(is_tensor(infer_call("nn.contrib_dense_pack", {x, w}, units), {n, 7, 48}, f32));
  EXPECT_EQ(pattern_of("nn.contrib_dense_pack"), OpPattern::OutEWiseFusable);
  EXPECT_TRUE(
      type_error_mentions(call_op("nn.contrib_dense_pack", {x, tensor_var("k", {3, 32, 16})}),
                          {"argument 'weight' has 32 input features but argument 'data' has 64"}));
  EXPECT_TRUE(type_error_mentions(call_op("nn.contrib_dense_pack", {x, tensor_var("k", {48, 64})}),
                                  {"argument 'weight' must have rank 3"}));
  Attrs wrong_units = with<DenseAttrs>([](auto& a) { a.units = 40; });
  EXPECT_TRUE(type_error_mentions(call_op("nn.contrib_dense_pack", {x, w}, wrong_units),
                                  {"attribute 'units' = 40", "48"}));
}

TEST(NnDense, DenseSymbolicWeightTakesUnits) {
  auto x = tensor_var("x", {2, 64});
  auto k = tensor_var("k", {Dim::var("u"), 64});
  EXPECT_TRUE(is_tensor(infer_call("nn.dense", {x, k}), {2, Dim::var("u")}, f32));
  Attrs units = with<DenseAttrs>([](auto& a) { a.units = 5; });
  EXPECT_TRUE(is_tensor(infer_call("nn.dense", {x, k}, units), {2, 5}, f32));
}

TEST(NnDense, DenseOutDtypeAndUnknownRank) {
  auto q = tensor_var("q", {2, 16}, DataType::uint8());
  auto qk = tensor_var("qk", {4, 16}, DataType::int8());
  Attrs i32 = with<DenseAttrs>([](auto& a) { a.out_dtype = DataType::int32(); });
  EXPECT_TRUE(is_tensor(infer_call("nn.dense", {q, qk}, i32), {2, 4}, DataType::int32()));
  auto u = VarNode::make("u", TensorTypeNode::make_unknown_rank(f32));
  Type type = infer_call("nn.dense", {u, tensor_var("k", {4, 16})});
  EXPECT_TRUE(types_equal(type, TensorTypeNode::make_unknown_rank(f32))) << type_to_string(type);
}

TEST(NnDense, DenseErrors) {
  auto x = tensor_var("x", {2, 64});
  EXPECT_TRUE(type_error_mentions(
      call_op("nn.dense", {x, tensor_var("k", {10, 32})}),
      {"nn.dense", "argument 'weight' has 32 input features but argument 'data' has 64",
       "data Tensor[(2, 64), float32]", "weight Tensor[(10, 32), float32]"}));
  EXPECT_TRUE(type_error_mentions(call_op("nn.dense", {x, tensor_var("k", {10, 64, 1})}),
                                  {"argument 'weight' must have rank 2", "(10, 64, 1)"}));
  auto scalar = tensor_var("s", {});
  EXPECT_TRUE(type_error_mentions(call_op("nn.dense", {scalar, tensor_var("k", {10, 64})}),
                                  {"argument 'data' must have rank at least 1"}));
  Attrs units = with<DenseAttrs>([](auto& a) { a.units = 12; });
  EXPECT_TRUE(type_error_mentions(call_op("nn.dense", {x, tensor_var("k", {10, 64})}, units),
                                  {"'units' = 12", "10 output features"}));
  EXPECT_TRUE(
      type_error_mentions(call_op("nn.dense", {x, tensor_var("k", {10, 64}, DataType::float16())}),
                          {"argument 'weight' has dtype float16", "float32"}));
}

TEST(NnDense, AttrsSurviveTheTextForm) {
  auto x = tensor_var("x", {2, 3, 4});
  auto y = tensor_var("y", {2, 4, 5});
  auto k = tensor_var("k", {6, 4});
  auto bias = tensor_var("bias", {4});
  EXPECT_TRUE(
      round_trips({x, y}, call_op("nn.batch_matmul", {x, y}, with<BatchMatmulAttrs>([](auto& a) {
                                    a.transpose_b = false;
                                    a.out_dtype = DataType::float16();
                                  }))));
  EXPECT_TRUE(round_trips(
      {x, k}, call_op("nn.dense", {x, k}, with<DenseAttrs>([](auto& a) { a.units = 6; }))));
  EXPECT_TRUE(round_trips({x, bias}, call_op("nn.bias_add", {x, bias},
                                             with<BiasAddAttrs>([](auto& a) { a.axis = -1; }))));
}

// ---------------------------------------------------------------- nn.matmul

TEST(NnDense, MatmulPlainAndTransposed) {
  auto a = tensor_var("a", {n, 3, 8});
  auto kn = tensor_var("kn", {8, 5});
  EXPECT_TRUE(is_tensor(infer_call("nn.matmul", {a, kn}), {n, 3, 5}, f32));
  auto nk = tensor_var("nk", {5, 8});
  Attrs tb = with<MatmulAttrs>([](auto& m) { m.transpose_b = true; });
  EXPECT_TRUE(is_tensor(infer_call("nn.matmul", {a, nk}, tb), {n, 3, 5}, f32));
  auto at = tensor_var("at", {n, 8, 3});
  Attrs ta = with<MatmulAttrs>([](auto& m) { m.transpose_a = true; });
  EXPECT_TRUE(is_tensor(infer_call("nn.matmul", {at, kn}, ta), {n, 3, 5}, f32));
  EXPECT_EQ(pattern_of("nn.matmul"), OpPattern::OutEWiseFusable);
}

TEST(NnDense, MatmulErrors) {
  auto a = tensor_var("a", {4, 8});
  EXPECT_TRUE(type_error_mentions(call_op("nn.matmul", {a, tensor_var("k", {6, 5})}),
                                  {"argument 'tensor_b' has 6 rows but argument 'tensor_a' has 8 "
                                   "columns"}));
  Attrs tb = with<MatmulAttrs>([](auto& m) { m.transpose_b = true; });
  EXPECT_TRUE(type_error_mentions(call_op("nn.matmul", {a, tensor_var("k", {5, 6})}, tb),
                                  {"6 columns", "8 columns"}));
  Attrs ta = with<MatmulAttrs>([](auto& m) { m.transpose_a = true; });
  EXPECT_TRUE(
      type_error_mentions(call_op("nn.matmul", {tensor_var("v", {8}), tensor_var("k", {8, 5})}, ta),
                          {"argument 'tensor_a' must have rank at least 2", "transpose_a"}));
  EXPECT_TRUE(type_error_mentions(call_op("nn.matmul", {a, tensor_var("k", {2, 8, 5})}),
                                  {"argument 'tensor_b' must have rank 2"}));
  Attrs units = with<MatmulAttrs>([](auto& m) { m.units = 3; });
  EXPECT_TRUE(type_error_mentions(call_op("nn.matmul", {a, tensor_var("k", {8, 5})}, units),
                                  {"'units' = 3", "5 output features"}));
}

// ---------------------------------------------------------------- batch_matmul

TEST(NnDense, BatchMatmulDefaultsToTransposedY) {
  auto x = tensor_var("x", {b, 3, 8});
  auto y = tensor_var("y", {b, 5, 8});
  EXPECT_TRUE(is_tensor(infer_call("nn.batch_matmul", {x, y}), {b, 3, 5}, f32));
  Attrs nn_form = with<BatchMatmulAttrs>([](auto& a) { a.transpose_b = false; });
  EXPECT_TRUE(is_tensor(infer_call("nn.batch_matmul", {x, tensor_var("y", {b, 8, 5})}, nn_form),
                        {b, 3, 5}, f32));
  Attrs tn = with<BatchMatmulAttrs>([](auto& a) {
    a.transpose_a = true;
    a.transpose_b = false;
  });
  EXPECT_TRUE(is_tensor(
      infer_call("nn.batch_matmul", {tensor_var("x", {2, 8, 3}), tensor_var("y", {2, 8, 5})}, tn),
      {2, 3, 5}, f32));
  EXPECT_EQ(pattern_of("nn.batch_matmul"), OpPattern::OutEWiseFusable);
}

TEST(NnDense, BatchMatmulBroadcastsABatchOfOne) {
  auto x = tensor_var("x", {4, 3, 8});
  EXPECT_TRUE(
      is_tensor(infer_call("nn.batch_matmul", {x, tensor_var("y", {1, 5, 8})}), {4, 3, 5}, f32));
  EXPECT_TRUE(is_tensor(
      infer_call("nn.batch_matmul", {tensor_var("x1", {1, 3, 8}), tensor_var("y", {b, 5, 8})}),
      {b, 3, 5}, f32));
}

TEST(NnDense, BatchMatmulErrors) {
  auto x = tensor_var("x", {4, 3, 8});
  EXPECT_TRUE(type_error_mentions(
      call_op("nn.batch_matmul", {x, tensor_var("y", {3, 5, 8})}),
      {"batch dims (4) of argument 'x' and (3) of argument 'y'", "do not broadcast"}));
  EXPECT_TRUE(type_error_mentions(call_op("nn.batch_matmul", {x, tensor_var("y", {4, 5, 6})}),
                                  {"argument 'y' has 6 columns but argument 'x' has 8 columns"}));
  EXPECT_TRUE(type_error_mentions(call_op("nn.batch_matmul", {tensor_var("x", {3, 8}), x}),
                                  {"argument 'x' must have rank 3", "(3, 8)"}));
}

// ---------------------------------------------------------------- numpy matmul

TEST(NnDense, NumpyMatmulBroadcastsBatchDims) {
  auto a = tensor_var("a", {2, 1, 3, 4});
  auto c = tensor_var("c", {5, 4, 6});
  EXPECT_TRUE(is_tensor(infer_call("matmul", {a, c}), {2, 5, 3, 6}, f32));
  auto s = tensor_var("s", {b, Dim::var("seq"), 64});
  auto wt = tensor_var("w", {64, 64});
  EXPECT_TRUE(is_tensor(infer_call("matmul", {s, wt}), {b, Dim::var("seq"), 64}, f32));
  EXPECT_EQ(pattern_of("matmul"), OpPattern::OutEWiseFusable);
}

TEST(NnDense, NumpyMatmulVectorOperands) {
  auto v = tensor_var("v", {4});
  auto m = tensor_var("m", {3, 4, 6});
  EXPECT_TRUE(is_tensor(infer_call("matmul", {v, m}), {3, 6}, f32));
  auto u = tensor_var("u", {6});
  EXPECT_TRUE(is_tensor(infer_call("matmul", {m, u}), {3, 4}, f32));
  auto v2 = tensor_var("v2", {4});
  EXPECT_TRUE(is_tensor(infer_call("matmul", {v, v2}), {}, f32));
}

TEST(NnDense, NumpyMatmulOutDtypeAndUnknownRank) {
  Attrs i32 = with<NumpyMatmulAttrs>([](auto& a) { a.out_dtype = DataType::int32(); });
  EXPECT_TRUE(is_tensor(infer_call("matmul",
                                   {tensor_var("a", {2, 4}, DataType::int8()),
                                    tensor_var("c", {4, 3}, DataType::int8())},
                                   i32),
                        {2, 3}, DataType::int32()));
  auto unknown = VarNode::make("u", TensorTypeNode::make_unknown_rank(f32));
  Type type = infer_call("matmul", {unknown, tensor_var("c", {4, 3})});
  EXPECT_TRUE(types_equal(type, TensorTypeNode::make_unknown_rank(f32))) << type_to_string(type);
}

TEST(NnDense, NumpyMatmulErrors) {
  EXPECT_TRUE(type_error_mentions(
      call_op("matmul", {tensor_var("a", {3, 4}), tensor_var("c", {5, 6})}),
      {"argument 'b' has 5 rows but argument 'a' has 4 columns", "a Tensor[(3, 4), float32]"}));
  EXPECT_TRUE(type_error_mentions(
      call_op("matmul", {tensor_var("a", {2, 3, 4}), tensor_var("c", {3, 4, 6})}),
      {"batch dims (2) of argument 'a' and (3) of argument 'b' do not broadcast"}));
  EXPECT_TRUE(type_error_mentions(call_op("matmul", {tensor_var("a", {}), tensor_var("c", {4})}),
                                  {"argument 'a' must have rank at least 1", "no scalars"}));
  EXPECT_TRUE(type_error_mentions(
      call_op("matmul", {tensor_var("a", {4}), tensor_var("c", {4}, DataType::float64())}),
      {"argument 'b' has dtype float64"}));
}

// ---------------------------------------------------------------- bias_add

TEST(NnDense, BiasAddAlongChannelsAndNegativeAxis) {
  auto x = tensor_var("x", {n, 16, 8, 8});
  auto bias = tensor_var("bias", {16});
  EXPECT_TRUE(is_tensor(infer_call("nn.bias_add", {x, bias}), {n, 16, 8, 8}, f32));
  auto nhwc = tensor_var("nhwc", {n, 8, 8, 16});
  Attrs last = with<BiasAddAttrs>([](auto& a) { a.axis = -1; });
  EXPECT_TRUE(is_tensor(infer_call("nn.bias_add", {nhwc, bias}, last), {n, 8, 8, 16}, f32));
  auto sym = tensor_var("sym", {Dim::var("c")});
  EXPECT_TRUE(is_tensor(infer_call("nn.bias_add", {x, sym}), {n, 16, 8, 8}, f32));
  EXPECT_EQ(pattern_of("nn.bias_add"), OpPattern::Broadcast);
}

TEST(NnDense, BiasAddErrors) {
  auto x = tensor_var("x", {1, 16, 8, 8});
  EXPECT_TRUE(type_error_mentions(
      call_op("nn.bias_add", {x, tensor_var("b", {8})}),
      {"argument 'bias' has 8 elements but axis 1 of 'data' has 16", "bias Tensor[(8), float32]"}));
  Attrs far = with<BiasAddAttrs>([](auto& a) { a.axis = -5; });
  EXPECT_TRUE(type_error_mentions(call_op("nn.bias_add", {x, tensor_var("b", {16})}, far),
                                  {"'axis' = -5", "out of range for rank 4"}));
  EXPECT_TRUE(type_error_mentions(call_op("nn.bias_add", {x, tensor_var("b", {1, 16})}),
                                  {"argument 'bias' must have rank 1"}));
  EXPECT_TRUE(
      type_error_mentions(call_op("nn.bias_add", {x, tensor_var("b", {16}, DataType::float16())}),
                          {"argument 'bias' has dtype float16"}));
}

}  // namespace
}  // namespace anvil::ir
