// Type relations of qnn.quantize and qnn.dequantize: per-tensor, per-axis and
// blocked scales, and the errors a malformed quantization gets.
#include <gtest/gtest.h>

#include "anvil/ir/attrs/nn.h"
#include "anvil/ir/attrs/qnn.h"
#include "relation_test_util.h"

namespace anvil::ir {
namespace {

using testing::infer_call;
using testing::is_tensor;
using testing::pattern_of;
using testing::tensor_var;
using testing::type_error_mentions;

const DataType f32 = DataType::float32(), u8 = DataType::uint8(), i8 = DataType::int8();

Attrs granularity(int64_t axis, int64_t block_size = 0) {
  auto a = make_attrs<QuantizeAttrs>();
  a->axis = axis;
  a->block_size = block_size;
  return a;
}

Expr call(const char* op, std::vector<Dim> data, DataType data_dtype, std::vector<Dim> scale,
          DataType zp_dtype, Attrs attrs = nullptr, DataType scale_dtype = f32) {
  return call_op(op,
                 {tensor_var("x", std::move(data), data_dtype), tensor_var("s", scale, scale_dtype),
                  tensor_var("z", scale, zp_dtype)},
                 attrs);
}

TEST(QnnQuantize, OutputTakesTheZeroPointsType) {
  EXPECT_TRUE(is_tensor(infer_expr_type(call("qnn.quantize", {2, 3}, f32, {}, u8)), {2, 3}, u8));
  EXPECT_TRUE(is_tensor(infer_expr_type(call("qnn.quantize", {2, 3}, f32, {3}, i8, granularity(1))),
                        {2, 3}, i8));
  EXPECT_TRUE(
      is_tensor(infer_expr_type(call("qnn.quantize", {Dim::var("n"), 8}, f32, {Dim::var("n"), 2},
                                     DataType::int16(), granularity(1, 4))),
                {Dim::var("n"), 8}, DataType::int16()));
  EXPECT_EQ(pattern_of("qnn.quantize"), OpPattern::Broadcast);
}

TEST(QnnDequantize, OutputTakesTheScalesType) {
  EXPECT_TRUE(is_tensor(infer_expr_type(call("qnn.dequantize", {4}, u8, {}, u8)), {4}, f32));
  EXPECT_TRUE(is_tensor(infer_expr_type(call("qnn.dequantize", {4, 5}, i8, {4}, i8, granularity(0),
                                             DataType::float16())),
                        {4, 5}, DataType::float16()));
  // A one-element vector is per tensor whatever the axis's length.
  EXPECT_TRUE(is_tensor(infer_expr_type(call("qnn.dequantize", {4, 5}, i8, {1}, i8)), {4, 5}, f32));
}

TEST(QnnQuantize, MalformedParametersAreNamed) {
  EXPECT_TRUE(type_error_mentions(call("qnn.quantize", {2, 3}, f32, {4}, u8), {"has 4 elements"}));
  EXPECT_TRUE(type_error_mentions(call("qnn.quantize", {2, 3}, f32, {}, DataType::int32()),
                                  {"integer of 2 to 16 bits or a float8/float4"}));
  EXPECT_TRUE(type_error_mentions(call("qnn.quantize", {2, 3}, DataType::int8(), {}, u8),
                                  {"floating-point or int32"}));
  EXPECT_TRUE(
      type_error_mentions(call("qnn.quantize", {2, 3}, f32, {}, u8, nullptr, DataType::int32()),
                          {"'scale' must be a floating-point"}));
  EXPECT_TRUE(type_error_mentions(call("qnn.quantize", {2, 8}, f32, {2, 3}, u8, granularity(1, 4)),
                                  {"must be 2 (8 elements in blocks of 4)"}));
  EXPECT_TRUE(
      type_error_mentions(call("qnn.quantize", {2, 8}, f32, {2}, u8, granularity(1, 4)), {"rank"}));
  EXPECT_TRUE(
      type_error_mentions(call("qnn.quantize", {2, 3}, f32, {3}, u8, granularity(2)), {"axis"}));
  Expr mismatched = call_op("qnn.quantize", {tensor_var("x", {2, 3}, f32),
                                             tensor_var("s", {3}, f32), tensor_var("z", {2}, u8)});
  EXPECT_TRUE(type_error_mentions(mismatched, {"zero_point"}));
}

TEST(QnnDequantize, ZeroPointMustHaveTheDataType) {
  EXPECT_TRUE(
      type_error_mentions(call("qnn.dequantize", {4}, u8, {}, i8), {"must have data's dtype"}));
  EXPECT_TRUE(type_error_mentions(call("qnn.dequantize", {4}, f32, {}, f32),
                                  {"integer tensor of 2 to 16 bits"}));
}

TEST(QnnQuantize, AttrsPrintAndParseBack) {
  Var x = tensor_var("x", {2, 8}, f32), s = tensor_var("s", {2, 2}, f32),
      z = tensor_var("z", {2, 2}, i8);
  EXPECT_TRUE(
      testing::round_trips({x, s, z}, call_op("qnn.quantize", {x, s, z}, granularity(1, 4))));
}

TEST(QnnBlockedConv, OutputShapeAndMismatchedBlocks) {
  auto attrs = make_attrs<Conv2DAttrs>();
  attrs->padding = {1, 1, 1, 1};
  attrs->strides = {2, 2};
  Expr zp = ConstantNode::make(Tensor::zeros({}, u8));
  Expr conv = call_op(
      "qnn.contrib_conv2d_NCHWc",
      {tensor_var("x", {1, 2, 9, 9, 16}, u8), tensor_var("w", {3, 2, 3, 3, 4, 64}, i8), zp}, attrs);
  EXPECT_TRUE(is_tensor(infer_expr_type(conv), {1, 3, 5, 5, 16}, DataType::int32()));
  Expr bad = call_op(
      "qnn.contrib_conv2d_NCHWc",
      {tensor_var("x", {1, 2, 9, 9, 8}, u8), tensor_var("w", {3, 2, 3, 3, 4, 64}, i8), zp}, attrs);
  EXPECT_TRUE(type_error_mentions(bad, {"data blocks (2 x 8) do not match the weight's"}));
  Expr depthwise = call_op(
      "qnn.contrib_depthwise_conv2d_NCHWc",
      {tensor_var("x", {1, 4, 9, 9, 8}, u8), tensor_var("w", {4, 1, 3, 3, 1, 8}, i8), zp}, attrs);
  EXPECT_TRUE(is_tensor(infer_expr_type(depthwise), {1, 4, 5, 5, 8}, DataType::int32()));
  Expr float_data = call_op(
      "qnn.contrib_depthwise_conv2d_NCHWc",
      {tensor_var("x", {1, 4, 9, 9, 8}, f32), tensor_var("w", {4, 1, 3, 3, 1, 8}, i8), zp}, attrs);
  EXPECT_TRUE(type_error_mentions(float_data, {"expects uint8 data"}));
}

}  // namespace
}  // namespace anvil::ir
