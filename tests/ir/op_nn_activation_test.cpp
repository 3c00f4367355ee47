// Type relations of the activation family.
#include <gtest/gtest.h>

#include "anvil/ir/attrs/nn_activation.h"
#include "relation_test_util.h"

namespace anvil::ir {
namespace {

using testing::infer_call;
using testing::is_tensor;
using testing::pattern_of;
using testing::round_trips;
using testing::tensor_var;
using testing::type_error_mentions;

const DataType f32 = DataType::float32();

class FloatActivation : public ::testing::TestWithParam<const char*> {};

TEST_P(FloatActivation, KeepsTypeAndFusesAsElemwise) {
  Dim n = Dim::var("n");
  auto x = tensor_var("x", {n, 3, n + 2});
  EXPECT_TRUE(is_tensor(infer_call(GetParam(), {x}), {n, 3, n + 2}, f32));
  auto h = tensor_var("h", {}, DataType::float16());
  EXPECT_TRUE(is_tensor(infer_call(GetParam(), {h}), {}, DataType::float16()));
  auto u = VarNode::make("u", TensorTypeNode::make_unknown_rank(f32));
  Type unknown_type = infer_call(GetParam(), {u});
  const auto* unknown = as<TensorTypeNode>(unknown_type);
  ASSERT_NE(unknown, nullptr);
  EXPECT_FALSE(unknown->has_shape());
  EXPECT_EQ(pattern_of(GetParam()), OpPattern::ElemWise);
}

TEST_P(FloatActivation, RejectsIntegers) {
  auto x = tensor_var("x", {4}, DataType::int8());
  EXPECT_TRUE(type_error_mentions(call_op(GetParam(), {x}),
                                  {GetParam(), "argument 'data'", "floating-point", "int8"}));
}

INSTANTIATE_TEST_SUITE_P(NnActivation, FloatActivation,
                         ::testing::Values("nn.leaky_relu", "nn.elu", "nn.selu", "nn.gelu",
                                           "nn.softplus", "nn.hard_sigmoid", "nn.hard_swish",
                                           "nn.mish"));

TEST(Relu, TakesAnyNumericDtype) {
  for (DataType dtype : {f32, DataType::int32(), DataType::uint8(), DataType::bfloat16()}) {
    auto x = tensor_var("x", {Dim::var("n"), 4}, dtype);
    EXPECT_TRUE(is_tensor(infer_call("nn.relu", {x}), {Dim::var("n"), 4}, dtype));
  }
  auto b = tensor_var("b", {4}, DataType::boolean());
  EXPECT_TRUE(type_error_mentions(call_op("nn.relu", {b}), {"numeric", "bool"}));
  EXPECT_EQ(pattern_of("nn.relu"), OpPattern::ElemWise);
}

TEST(Gelu, ApproximateIsNoneOrTanh) {
  auto x = tensor_var("x", {2, 8});
  auto tanh = make_attrs<GeluAttrs>();
  tanh->approximate = "tanh";
  EXPECT_TRUE(is_tensor(infer_call("nn.gelu", {x}, tanh), {2, 8}, f32));
  auto bad = make_attrs<GeluAttrs>();
  bad->approximate = "fast";
  EXPECT_TRUE(type_error_mentions(call_op("nn.gelu", {x}, bad),
                                  {"approximate", "\"none\"", "\"tanh\"", "\"fast\""}));
}

TEST(Softplus, BetaMustBeNonZero) {
  auto x = tensor_var("x", {2, 8});
  auto attrs = make_attrs<SoftplusAttrs>();
  attrs->beta = 2;
  EXPECT_TRUE(is_tensor(infer_call("nn.softplus", {x}, attrs), {2, 8}, f32));
  attrs->beta = 0;
  EXPECT_TRUE(type_error_mentions(call_op("nn.softplus", {x}, attrs), {"beta", "non-zero"}));
}

TEST(NnActivation, AttrsRoundTripThroughText) {
  auto x = tensor_var("x", {2, 8});
  auto gelu = make_attrs<GeluAttrs>();
  gelu->approximate = "tanh";
  EXPECT_TRUE(round_trips({x}, call_op("nn.gelu", {x}, gelu)));
  auto selu = make_attrs<SeluAttrs>();
  selu->alpha = 1.5;
  EXPECT_TRUE(round_trips({x}, call_op("nn.selu", {x}, selu)));
  auto leaky = make_attrs<LeakyReluAttrs>();
  leaky->alpha = 0.1;
  EXPECT_TRUE(round_trips({x}, call_op("nn.leaky_relu", {x}, leaky)));
  auto softplus = make_attrs<SoftplusAttrs>();
  softplus->threshold = 10;
  EXPECT_TRUE(round_trips({x}, call_op("nn.softplus", {x}, softplus)));
  auto hard = make_attrs<HardSigmoidAttrs>();
  hard->alpha = 1.0 / 6;
  EXPECT_TRUE(round_trips({x}, call_op("nn.hard_sigmoid", {x}, hard)));
  auto prelu = make_attrs<PReluAttrs>();
  prelu->axis = -1;
  auto alpha = tensor_var("alpha", {8});
  EXPECT_TRUE(round_trips({x, alpha}, call_op("nn.prelu", {x, alpha}, prelu)));
}

TEST(PRelu, OneSlopePerChannel) {
  auto data = tensor_var("data", {1, 64, 56, 56});
  auto alpha = tensor_var("alpha", {64});
  EXPECT_TRUE(is_tensor(infer_call("nn.prelu", {data, alpha}), {1, 64, 56, 56}, f32));
  auto last = make_attrs<PReluAttrs>();
  last->axis = -1;
  auto nhwc = tensor_var("nhwc", {1, 56, 56, 64});
  EXPECT_TRUE(is_tensor(infer_call("nn.prelu", {nhwc, alpha}, last), {1, 56, 56, 64}, f32));
  Dim n = Dim::var("n"), c = Dim::var("c");
  auto sym = tensor_var("sym", {n, c});
  auto sym_alpha = tensor_var("sym_alpha", {c});
  EXPECT_TRUE(is_tensor(infer_call("nn.prelu", {sym, sym_alpha}), {n, c}, f32));
  EXPECT_EQ(pattern_of("nn.prelu"), OpPattern::Broadcast);
}

TEST(PRelu, Errors) {
  auto data = tensor_var("data", {1, 64, 56, 56});
  auto short_alpha = tensor_var("alpha", {32});
  EXPECT_TRUE(type_error_mentions(call_op("nn.prelu", {data, short_alpha}),
                                  {"nn.prelu", "argument 'alpha'", "64", "32", "axis 1"}));
  auto matrix = tensor_var("alpha", {64, 1});
  EXPECT_TRUE(type_error_mentions(call_op("nn.prelu", {data, matrix}),
                                  {"argument 'alpha'", "rank 1", "(64, 1)"}));
  auto half = tensor_var("alpha", {64}, DataType::float16());
  EXPECT_TRUE(type_error_mentions(call_op("nn.prelu", {data, half}),
                                  {"argument 'alpha'", "dtype", "float16", "float32"}));
  auto attrs = make_attrs<PReluAttrs>();
  attrs->axis = -5;
  auto alpha = tensor_var("alpha", {64});
  EXPECT_TRUE(type_error_mentions(call_op("nn.prelu", {data, alpha}, attrs),
                                  {"axis", "-5", "out of range"}));
  auto idata = tensor_var("idata", {1, 64}, DataType::int32());
  EXPECT_TRUE(type_error_mentions(call_op("nn.prelu", {idata, alpha}),
                                  {"argument 'data'", "floating-point", "int32"}));
}

}  // namespace
}  // namespace anvil::ir
