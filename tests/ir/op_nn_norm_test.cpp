// Type relations of the normalization family.
#include <gtest/gtest.h>

#include "anvil/ir/attrs/nn_norm.h"
#include "anvil/ir/printer.h"
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

// The five inputs of a batch_norm over channels c.
std::vector<Expr> batch_norm_args(std::vector<Dim> data_shape, Dim c, DataType dtype = f32) {
  return {tensor_var("data", std::move(data_shape), dtype), tensor_var("gamma", {c}, dtype),
          tensor_var("beta", {c}, dtype), tensor_var("moving_mean", {c}, dtype),
          tensor_var("moving_var", {c}, dtype)};
}

// ---------------------------------------------------------------- batch_norm

TEST(BatchNorm, ReturnsTupleOfOutputMeanAndVar) {
  Expr bn = call_op("nn.batch_norm", batch_norm_args({1, 64, 56, 56}, 64));
  Type type = infer_expr_type(bn);
  const auto* tuple = as<TupleTypeNode>(type);
  ASSERT_NE(tuple, nullptr) << type_to_string(type);
  ASSERT_EQ(tuple->fields.size(), 3u);
  EXPECT_TRUE(is_tensor(tuple->fields[0], {1, 64, 56, 56}, f32));
  EXPECT_TRUE(is_tensor(tuple->fields[1], {64}, f32));
  EXPECT_TRUE(is_tensor(tuple->fields[2], {64}, f32));
  // How graphs use it: %1 = %0.0.
  EXPECT_TRUE(is_tensor(infer_expr_type(TupleGetItemNode::make(bn, 0)), {1, 64, 56, 56}, f32));
  EXPECT_EQ(pattern_of("nn.batch_norm"), OpPattern::OutEWiseFusable);
}

TEST(BatchNorm, PrintsOnlyNonDefaultAttrsAsRelayDoes) {
  // Unannotated vars print as bare names.
  std::vector<Expr> args = {VarNode::make("data"), VarNode::make("g"), VarNode::make("b"),
                            VarNode::make("m"), VarNode::make("v")};
  auto attrs = make_attrs<BatchNormAttrs>();
  attrs->epsilon = 2e-5;
  attrs->scale = false;
  std::string text = print_expr(call_op("nn.batch_norm", args, attrs), {.show_types = false});
  EXPECT_NE(text.find("nn.batch_norm(%data, %g, %b, %m, %v, epsilon=2e-05f, scale=False)"),
            std::string::npos)
      << text;
}

TEST(BatchNorm, NegativeAxisAndSymbolicDims) {
  auto attrs = make_attrs<BatchNormAttrs>();
  attrs->axis = -1;
  Dim n = Dim::var("n"), c = Dim::var("c");
  Type type = infer_call("nn.batch_norm", batch_norm_args({n, 7, 7, c}, c), attrs);
  const auto* tuple = as<TupleTypeNode>(type);
  ASSERT_NE(tuple, nullptr);
  EXPECT_TRUE(is_tensor(tuple->fields[0], {n, 7, 7, c}, f32));
  EXPECT_TRUE(is_tensor(tuple->fields[1], {c}, f32));
  // A symbolic gamma length cannot be proven wrong against a static channel count.
  auto args = batch_norm_args({2, 16}, 16);
  args[1] = tensor_var("gamma", {Dim::var("k")});
  EXPECT_NO_THROW(infer_call("nn.batch_norm", args));
}

TEST(BatchNorm, Errors) {
  auto args = batch_norm_args({1, 64, 8, 8}, 64);
  args[1] = tensor_var("gamma", {32});
  EXPECT_TRUE(type_error_mentions(call_op("nn.batch_norm", args),
                                  {"nn.batch_norm", "argument 'gamma'", "64", "32", "axis 1"}));
  args = batch_norm_args({1, 64, 8, 8}, 64);
  args[4] = tensor_var("moving_var", {64}, DataType::float16());
  EXPECT_TRUE(type_error_mentions(call_op("nn.batch_norm", args),
                                  {"argument 'moving_var'", "dtype", "float16", "float32"}));
  args = batch_norm_args({1, 64, 8, 8}, 64);
  args[2] = tensor_var("beta", {1, 64});
  EXPECT_TRUE(type_error_mentions(call_op("nn.batch_norm", args),
                                  {"argument 'beta'", "rank 1", "(1, 64)"}));
  auto axis = make_attrs<BatchNormAttrs>();
  axis->axis = 4;
  EXPECT_TRUE(
      type_error_mentions(call_op("nn.batch_norm", batch_norm_args({1, 64, 8, 8}, 64), axis),
                          {"axis", "4", "out of range", "rank 4"}));
  auto eps = make_attrs<BatchNormAttrs>();
  eps->epsilon = -1;
  EXPECT_TRUE(type_error_mentions(call_op("nn.batch_norm", batch_norm_args({1, 64, 8, 8}, 64), eps),
                                  {"epsilon", "-1"}));
  EXPECT_TRUE(
      type_error_mentions(call_op("nn.batch_norm", batch_norm_args({1, 4}, 4, DataType::int32())),
                          {"argument 'data'", "floating-point", "int32"}));
  EXPECT_TRUE(type_error_mentions(call_op("nn.batch_norm", {tensor_var("data", {1, 4})}),
                                  {"expects 5 arguments"}));
}

// ---------------------------------------------------------------- layer, group, instance

TEST(LayerNorm, NormalizesTheLastAxisByDefault) {
  Dim n = Dim::var("n");
  auto data = tensor_var("data", {2, n, 768});
  auto gamma = tensor_var("gamma", {768});
  auto beta = tensor_var("beta", {768});
  EXPECT_TRUE(is_tensor(infer_call("nn.layer_norm", {data, gamma, beta}), {2, n, 768}, f32));
  auto attrs = make_attrs<LayerNormAttrs>();
  attrs->axis = -2;
  auto per_token = tensor_var("per_token", {n});
  EXPECT_TRUE(is_tensor(infer_call("nn.layer_norm", {data, per_token, per_token}, attrs),
                        {2, n, 768}, f32));
  EXPECT_EQ(pattern_of("nn.layer_norm"), OpPattern::Opaque);
}

TEST(LayerNorm, Errors) {
  auto data = tensor_var("data", {2, 10, 768});
  auto gamma = tensor_var("gamma", {768});
  auto short_beta = tensor_var("beta", {512});
  EXPECT_TRUE(type_error_mentions(call_op("nn.layer_norm", {data, gamma, short_beta}),
                                  {"argument 'beta'", "768", "512"}));
  auto half_gamma = tensor_var("gamma", {768}, DataType::float16());
  EXPECT_TRUE(type_error_mentions(call_op("nn.layer_norm", {data, half_gamma, gamma}),
                                  {"argument 'gamma'", "dtype", "float16"}));
  auto attrs = make_attrs<LayerNormAttrs>();
  attrs->axis = -4;
  EXPECT_TRUE(type_error_mentions(call_op("nn.layer_norm", {data, gamma, gamma}, attrs),
                                  {"axis", "-4", "out of range"}));
  auto eps = make_attrs<LayerNormAttrs>();
  eps->epsilon = -1e-5;
  EXPECT_TRUE(
      type_error_mentions(call_op("nn.layer_norm", {data, gamma, gamma}, eps), {"epsilon"}));
}

TEST(GroupNorm, SplitsChannelsIntoGroups) {
  auto attrs = make_attrs<GroupNormAttrs>();
  attrs->num_groups = 8;
  auto data = tensor_var("data", {2, 32, 8, 8});
  auto gamma = tensor_var("gamma", {32});
  EXPECT_TRUE(
      is_tensor(infer_call("nn.group_norm", {data, gamma, gamma}, attrs), {2, 32, 8, 8}, f32));
  // Divisibility of a symbolic channel count is left to run time.
  Dim c = Dim::var("c");
  auto sym = tensor_var("sym", {Dim::var("n"), c, 4});
  auto sym_gamma = tensor_var("sym_gamma", {c});
  EXPECT_TRUE(is_tensor(infer_call("nn.group_norm", {sym, sym_gamma, sym_gamma}, attrs),
                        {Dim::var("n"), c, 4}, f32));
  auto last = make_attrs<GroupNormAttrs>();
  last->num_groups = 4;
  last->axis = -1;
  auto nhwc = tensor_var("nhwc", {2, 8, 8, 32});
  EXPECT_TRUE(
      is_tensor(infer_call("nn.group_norm", {nhwc, gamma, gamma}, last), {2, 8, 8, 32}, f32));
  EXPECT_EQ(pattern_of("nn.group_norm"), OpPattern::Opaque);
}

TEST(GroupNorm, Errors) {
  auto data = tensor_var("data", {2, 30, 8, 8});
  auto gamma = tensor_var("gamma", {30});
  EXPECT_TRUE(type_error_mentions(call_op("nn.group_norm", {data, gamma, gamma}),
                                  {"num_groups", "positive", "0"}));
  auto four = make_attrs<GroupNormAttrs>();
  four->num_groups = 4;
  EXPECT_TRUE(type_error_mentions(call_op("nn.group_norm", {data, gamma, gamma}, four),
                                  {"30", "divisible", "num_groups", "4"}));
  auto three = make_attrs<GroupNormAttrs>();
  three->num_groups = 3;
  auto wrong = tensor_var("beta", {10});
  EXPECT_TRUE(type_error_mentions(call_op("nn.group_norm", {data, gamma, wrong}, three),
                                  {"argument 'beta'", "30", "10"}));
  three->axis = 5;
  EXPECT_TRUE(type_error_mentions(call_op("nn.group_norm", {data, gamma, gamma}, three),
                                  {"axis", "5", "out of range"}));
}

TEST(InstanceNorm, NormalizesEachChannelOfEachSample) {
  auto data = tensor_var("data", {Dim::var("n"), 3, 224, 224});
  auto gamma = tensor_var("gamma", {3});
  EXPECT_TRUE(is_tensor(infer_call("nn.instance_norm", {data, gamma, gamma}),
                        {Dim::var("n"), 3, 224, 224}, f32));
  auto attrs = make_attrs<InstanceNormAttrs>();
  attrs->axis = -1;
  auto nwc = tensor_var("nwc", {2, 100, 3});
  EXPECT_TRUE(
      is_tensor(infer_call("nn.instance_norm", {nwc, gamma, gamma}, attrs), {2, 100, 3}, f32));
  EXPECT_EQ(pattern_of("nn.instance_norm"), OpPattern::Opaque);
}

TEST(InstanceNorm, Errors) {
  auto flat = tensor_var("data", {2, 3});
  auto gamma = tensor_var("gamma", {3});
  EXPECT_TRUE(type_error_mentions(call_op("nn.instance_norm", {flat, gamma, gamma}),
                                  {"argument 'data'", "rank 3", "(2, 3)"}));
  auto data = tensor_var("data", {2, 3, 5});
  auto wrong = tensor_var("gamma", {5});
  EXPECT_TRUE(type_error_mentions(call_op("nn.instance_norm", {data, wrong, gamma}),
                                  {"argument 'gamma'", "3", "5"}));
}

TEST(NnNorm, AttrsRoundTripThroughText) {
  auto data = tensor_var("data", {2, 8, 4, 4});
  auto c = tensor_var("c", {8});
  auto bn = make_attrs<BatchNormAttrs>();
  bn->axis = -3;
  bn->epsilon = 1e-3;
  bn->center = false;
  EXPECT_TRUE(round_trips(
      {data, c}, TupleGetItemNode::make(call_op("nn.batch_norm", {data, c, c, c, c}, bn), 0)));
  auto gn = make_attrs<GroupNormAttrs>();
  gn->num_groups = 4;
  gn->scale = false;
  EXPECT_TRUE(round_trips({data, c}, call_op("nn.group_norm", {data, c, c}, gn)));
  auto lrn = make_attrs<LRNAttrs>();
  lrn->size = 3;
  lrn->alpha = 1e-4;
  lrn->bias = 1;
  EXPECT_TRUE(round_trips({data}, call_op("nn.lrn", {data}, lrn)));
  auto dropout = make_attrs<DropoutAttrs>();
  dropout->rate = 0.1;
  EXPECT_TRUE(
      round_trips({data}, TupleGetItemNode::make(call_op("nn.dropout", {data}, dropout), 0)));
  auto softmax = make_attrs<SoftmaxAttrs>();
  softmax->axis = 1;
  EXPECT_TRUE(round_trips({data}, call_op("nn.log_softmax", {data}, softmax)));
}

// ---------------------------------------------------------------- lrn, softmax, dropout

TEST(LRN, KeepsTypeAndChecksAttrs) {
  auto data = tensor_var("data", {Dim::var("n"), 96, 55, 55});
  EXPECT_TRUE(is_tensor(infer_call("nn.lrn", {data}), {Dim::var("n"), 96, 55, 55}, f32));
  auto attrs = make_attrs<LRNAttrs>();
  attrs->axis = -1;
  EXPECT_TRUE(is_tensor(infer_call("nn.lrn", {data}, attrs), {Dim::var("n"), 96, 55, 55}, f32));
  EXPECT_EQ(pattern_of("nn.lrn"), OpPattern::Opaque);

  auto size = make_attrs<LRNAttrs>();
  size->size = 0;
  EXPECT_TRUE(type_error_mentions(call_op("nn.lrn", {data}, size), {"size", "positive"}));
  auto axis = make_attrs<LRNAttrs>();
  axis->axis = 4;
  EXPECT_TRUE(type_error_mentions(call_op("nn.lrn", {data}, axis), {"axis", "out of range"}));
}

class SoftmaxOp : public ::testing::TestWithParam<const char*> {};

TEST_P(SoftmaxOp, KeepsTypeAlongAnyAxis) {
  Dim n = Dim::var("n");
  auto x = tensor_var("x", {n, 1000});
  EXPECT_TRUE(is_tensor(infer_call(GetParam(), {x}), {n, 1000}, f32));
  for (int64_t axis : {0, 1, -2}) {
    auto attrs = make_attrs<SoftmaxAttrs>();
    attrs->axis = axis;
    EXPECT_TRUE(is_tensor(infer_call(GetParam(), {x}, attrs), {n, 1000}, f32)) << axis;
  }
  EXPECT_EQ(pattern_of(GetParam()), OpPattern::OutEWiseFusable);
}

TEST_P(SoftmaxOp, Errors) {
  auto x = tensor_var("x", {4, 10});
  auto attrs = make_attrs<SoftmaxAttrs>();
  attrs->axis = 2;
  EXPECT_TRUE(type_error_mentions(call_op(GetParam(), {x}, attrs),
                                  {GetParam(), "axis", "2", "out of range", "rank 2"}));
  attrs->axis = -3;
  EXPECT_TRUE(type_error_mentions(call_op(GetParam(), {x}, attrs), {"axis", "-3"}));
  auto i = tensor_var("i", {4}, DataType::int32());
  EXPECT_TRUE(type_error_mentions(call_op(GetParam(), {i}), {"floating-point", "int32"}));
}

INSTANTIATE_TEST_SUITE_P(NnNorm, SoftmaxOp, ::testing::Values("nn.softmax", "nn.log_softmax"));
INSTANTIATE_TEST_SUITE_P(Hardmax, SoftmaxOp, ::testing::Values("nn.hardmax"));

TEST(Dropout, ReturnsOutputAndMask) {
  auto x = tensor_var("x", {Dim::var("n"), 512});
  Type type = infer_call("nn.dropout", {x});
  const auto* tuple = as<TupleTypeNode>(type);
  ASSERT_NE(tuple, nullptr) << type_to_string(type);
  ASSERT_EQ(tuple->fields.size(), 2u);
  EXPECT_TRUE(is_tensor(tuple->fields[0], {Dim::var("n"), 512}, f32));
  EXPECT_TRUE(is_tensor(tuple->fields[1], {Dim::var("n"), 512}, f32));
  EXPECT_EQ(pattern_of("nn.dropout"), OpPattern::Opaque);
}

TEST(Dropout, Errors) {
  auto x = tensor_var("x", {4});
  auto attrs = make_attrs<DropoutAttrs>();
  attrs->rate = 1.0;
  EXPECT_TRUE(type_error_mentions(call_op("nn.dropout", {x}, attrs), {"rate", "[0, 1)", "1"}));
  attrs->rate = -0.5;
  EXPECT_TRUE(type_error_mentions(call_op("nn.dropout", {x}, attrs), {"rate", "-0.5"}));
  auto i = tensor_var("i", {4}, DataType::int64());
  EXPECT_TRUE(type_error_mentions(call_op("nn.dropout", {i}), {"floating-point", "int64"}));
}

// ---------------------------------------------------------------- nll_loss

Ref<NLLLossAttrs> nll_attrs(std::string reduction) {
  auto attrs = make_attrs<NLLLossAttrs>();
  attrs->reduction = std::move(reduction);
  return attrs;
}

TEST(NLLLoss, LossHasTargetShapeOrIsScalar) {
  Dim n = Dim::var("n");
  auto predictions = tensor_var("predictions", {n, 5, 6, 7});
  auto targets = tensor_var("targets", {n, 6, 7}, DataType::int64());
  auto weights = tensor_var("weights", {5});
  EXPECT_TRUE(is_tensor(infer_call("nn.nll_loss", {predictions, targets, weights}), {}, f32));
  EXPECT_TRUE(is_tensor(
      infer_call("nn.nll_loss", {predictions, targets, weights}, nll_attrs("sum")), {}, f32));
  EXPECT_TRUE(
      is_tensor(infer_call("nn.nll_loss", {predictions, targets, weights}, nll_attrs("none")),
                {n, 6, 7}, f32));
  auto plain = tensor_var("plain", {3, 5});
  auto labels = tensor_var("labels", {3}, DataType::int32());
  EXPECT_TRUE(
      is_tensor(infer_call("nn.nll_loss", {plain, labels, weights}, nll_attrs("none")), {3}, f32));
}

TEST(NLLLoss, IgnoreIndexRoundTripsThroughText) {
  auto predictions = tensor_var("predictions", {3, 5});
  auto targets = tensor_var("targets", {3}, DataType::int64());
  auto weights = tensor_var("weights", {5});
  auto attrs = nll_attrs("sum");
  attrs->ignore_index = -1;
  EXPECT_TRUE(round_trips({predictions, targets, weights},
                          call_op("nn.nll_loss", {predictions, targets, weights}, attrs)));
}

TEST(NLLLoss, Errors) {
  auto predictions = tensor_var("predictions", {3, 5, 2});
  auto targets = tensor_var("targets", {3, 2}, DataType::int64());
  auto weights = tensor_var("weights", {5});
  EXPECT_TRUE(
      type_error_mentions(call_op("nn.nll_loss", {predictions, targets, weights}, nll_attrs("avg")),
                          {"reduction", "avg"}));
  auto flat_targets = tensor_var("flat_targets", {3}, DataType::int64());
  EXPECT_TRUE(type_error_mentions(call_op("nn.nll_loss", {predictions, flat_targets, weights}),
                                  {"argument 'targets'", "rank"}));
  auto other_targets = tensor_var("other_targets", {3, 4}, DataType::int64());
  EXPECT_TRUE(type_error_mentions(call_op("nn.nll_loss", {predictions, other_targets, weights}),
                                  {"argument 'targets'", "4", "2"}));
  auto float_targets = tensor_var("float_targets", {3, 2});
  EXPECT_TRUE(type_error_mentions(call_op("nn.nll_loss", {predictions, float_targets, weights}),
                                  {"argument 'targets'", "integer", "float32"}));
  auto short_weights = tensor_var("short_weights", {4});
  EXPECT_TRUE(type_error_mentions(call_op("nn.nll_loss", {predictions, targets, short_weights}),
                                  {"argument 'weights'", "5"}));
  auto vector = tensor_var("vector", {5});
  EXPECT_TRUE(type_error_mentions(call_op("nn.nll_loss", {vector, flat_targets, weights}),
                                  {"argument 'predictions'", "rank 2 or more"}));
}

}  // namespace
}  // namespace anvil::ir
