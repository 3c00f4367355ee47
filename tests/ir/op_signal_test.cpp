// Type relations of the signal family.
#include <gtest/gtest.h>

#include "relation_test_util.h"

namespace anvil::ir {
namespace {

using testing::is_tensor;
using testing::pattern_of;
using testing::tensor_var;
using testing::type_error_mentions;

const DataType f32 = DataType::float32(), i64 = DataType::int64();

Expr stft(std::vector<Dim> signal, DataType dtype = f32, std::vector<Dim> window = {16},
          DataType window_dtype = f32) {
  return call_op("signal.stft",
                 {tensor_var("signal", std::move(signal), dtype), tensor_var("frame_step", {}, i64),
                  tensor_var("window", std::move(window), window_dtype),
                  tensor_var("frame_length", {1}, i64), tensor_var("onesided", {}, i64)});
}

TEST(SignalStft, FramesAndBinsAreKnownAtRunTime) {
  EXPECT_TRUE(is_tensor(infer_expr_type(stft({2, 100, 1})), {2, Dim::any(), Dim::any(), 2}, f32));
  EXPECT_TRUE(is_tensor(
      infer_expr_type(stft({Dim::var("b"), 64, 2}, DataType::float64(), {0}, DataType::float64())),
      {Dim::var("b"), Dim::any(), Dim::any(), 2}, DataType::float64()));
  EXPECT_EQ(pattern_of("signal.stft"), OpPattern::Opaque);
}

TEST(SignalStft, BadInputIsNamed) {
  EXPECT_TRUE(type_error_mentions(stft({2, 100, 3}), {"signal", "1 (real) or 2 (complex)"}));
  EXPECT_TRUE(type_error_mentions(stft({2, 100}), {"signal", "rank"}));
  EXPECT_TRUE(type_error_mentions(stft({2, 100, 1}, DataType::int32()), {"float32 or float64"}));
  EXPECT_TRUE(type_error_mentions(stft({2, 100, 1}, f32, {16}, DataType::float64()), {"window"}));
}

TEST(SignalMelWeightMatrix, ShapeIsKnownAtRunTime) {
  Expr call = call_op("signal.mel_weight_matrix",
                      {tensor_var("n", {}, i64), tensor_var("d", {}, i64), tensor_var("r", {}, i64),
                       tensor_var("lo", {}, f32), tensor_var("hi", {1}, f32)});
  EXPECT_TRUE(is_tensor(infer_expr_type(call), {Dim::any(), Dim::any()}, f32));
  Expr bad = call_op("signal.mel_weight_matrix",
                     {tensor_var("n", {}, f32), tensor_var("d", {}, i64), tensor_var("r", {}, i64),
                      tensor_var("lo", {}, f32), tensor_var("hi", {}, f32)});
  EXPECT_TRUE(type_error_mentions(bad, {"num_mel_bins"}));
}

TEST(SignalDft, RankKeptDimsKnownAtRunTime) {
  Expr call = call_op("signal.dft", {tensor_var("x", {3, 10, 4, 1}), tensor_var("n", {}, i64),
                                     tensor_var("axis", {}, i64), tensor_var("flags", {2}, i64)});
  EXPECT_TRUE(is_tensor(infer_expr_type(call), {3, Dim::any(), Dim::any(), Dim::any()}, f32));
  Expr flat = call_op("signal.dft", {tensor_var("x", {3, 10}), tensor_var("n", {}, i64),
                                     tensor_var("axis", {}, i64), tensor_var("flags", {2}, i64)});
  EXPECT_TRUE(type_error_mentions(flat, {"rank 3 or more"}));
}

}  // namespace
}  // namespace anvil::ir
