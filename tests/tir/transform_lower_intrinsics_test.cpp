// lower_intrinsics: the rewritten intrinsics, checked node by node against
// the forms written in the pass's header comment.
#include <gtest/gtest.h>

#include "anvil/tir/functor.h"
#include "anvil/tir/transform.h"

namespace anvil::tir {
namespace {

using transform::lower_intrinsics;

// The value stored by the function's only statement, after the pass.
PrimExpr lowered_value(const PrimExpr& value) {
  Buffer out = BufferNode::make("out", value.dtype().element_of(), {make_int(16)});
  Stmt body = value.dtype().lanes > 1 ? store(out, value, {ramp(0, 1, value.dtype().lanes)})
                                      : store(out, value, {make_int(0)});
  PrimFunc func = lower_intrinsics(PrimFuncNode::make({}, {}, body));
  const auto* st = as<BufferStoreNode>(func->body);
  return st ? st->value : nullptr;
}

const CallNode* as_call(const PrimExpr& e, const char* op) {
  const auto* call = as<CallNode>(e);
  return call && call->op == op ? call : nullptr;
}

TEST(LowerIntrinsics, RsqrtBecomesOneOverSqrt) {
  Var x = VarNode::make("x", DataType::float32());
  PrimExpr e = lowered_value(call_intrin(DataType::float32(), "rsqrt", {x}));
  const auto* div = as<DivNode>(e);
  ASSERT_TRUE(div);
  const auto* one = as<FloatImmNode>(div->a);
  ASSERT_TRUE(one);
  EXPECT_EQ(one->value, 1.0);
  EXPECT_EQ(one->dtype, DataType::float32());
  const CallNode* root = as_call(div->b, "sqrt");
  ASSERT_TRUE(root);
  EXPECT_EQ(root->args[0].get(), x.get());
  EXPECT_EQ(root->dtype, DataType::float32());
}

TEST(LowerIntrinsics, VectorRsqrtUsesABroadcastOne) {
  Buffer a = BufferNode::make("A", DataType::float64(), {make_int(16)});
  PrimExpr v = load(a, {ramp(0, 1, 4)});
  PrimExpr e = lowered_value(call_intrin(DataType::float64().with_lanes(4), "rsqrt", {v}));
  const auto* div = as<DivNode>(e);
  ASSERT_TRUE(div);
  EXPECT_EQ(div->dtype, DataType::float64().with_lanes(4));
  const auto* one = as<BroadcastNode>(div->a);
  ASSERT_TRUE(one);
  EXPECT_EQ(one->lanes, 4);
  ASSERT_TRUE(as<FloatImmNode>(one->value));
  EXPECT_EQ(as<FloatImmNode>(one->value)->value, 1.0);
  ASSERT_TRUE(as_call(div->b, "sqrt"));
}

TEST(LowerIntrinsics, IsFiniteBecomesNeitherNanNorInf) {
  Var x = VarNode::make("x", DataType::float32());
  PrimExpr e = lowered_value(call_intrin(DataType::boolean(), "isfinite", {x}));
  const auto* no = as<NotNode>(e);
  ASSERT_TRUE(no);
  const auto* either = as<OrNode>(no->a);
  ASSERT_TRUE(either);
  const CallNode* nan = as_call(either->a, "isnan");
  const CallNode* inf = as_call(either->b, "isinf");
  ASSERT_TRUE(nan && inf);
  EXPECT_EQ(nan->args[0].get(), x.get());
  EXPECT_EQ(inf->args[0].get(), x.get());
}

TEST(LowerIntrinsics, HalfPrecisionMathRunsInFloat32) {
  Var h = VarNode::make("h", DataType::float16());
  PrimExpr e = lowered_value(call_intrin(DataType::float16(), "exp", {h}));
  const auto* narrow = as<CastNode>(e);
  ASSERT_TRUE(narrow);
  EXPECT_EQ(narrow->dtype, DataType::float16());
  const CallNode* exp = as_call(narrow->value, "exp");
  ASSERT_TRUE(exp);
  EXPECT_EQ(exp->dtype, DataType::float32());
  const auto* widen = as<CastNode>(exp->args[0]);
  ASSERT_TRUE(widen);
  EXPECT_EQ(widen->dtype, DataType::float32());
  EXPECT_EQ(widen->value.get(), h.get());

  // rsqrt on bfloat16 goes to float32 first, then is lowered there.
  Var b = VarNode::make("b", DataType::bfloat16());
  PrimExpr r = lowered_value(call_intrin(DataType::bfloat16(), "rsqrt", {b}));
  const auto* back = as<CastNode>(r);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->dtype, DataType::bfloat16());
  const auto* div = as<DivNode>(back->value);
  ASSERT_TRUE(div);
  EXPECT_EQ(div->dtype, DataType::float32());

  // A test keeps its bool result; only the argument is widened.
  PrimExpr t = lowered_value(call_intrin(DataType::boolean(), "isnan", {h}));
  const CallNode* isnan = as_call(t, "isnan");
  ASSERT_TRUE(isnan);
  EXPECT_EQ(isnan->dtype, DataType::boolean());
  ASSERT_TRUE(as<CastNode>(isnan->args[0]));
  EXPECT_EQ(isnan->args[0].dtype(), DataType::float32());
}

TEST(LowerIntrinsics, SupportedCallsAreLeftAlone) {
  Var x = VarNode::make("x", DataType::float32());
  Var c = VarNode::make("c", DataType::boolean());
  Buffer out = BufferNode::make("out", DataType::float32(), {make_int(4)});
  PrimExpr value =
      call_intrin(DataType::float32(), "sigmoid", {call_intrin(DataType::float32(), "exp", {x})}) +
      call_intrin(DataType::float32(), "if_then_else",
                  {call_intrin(DataType::boolean(), "likely", {c}), x, x}) +
      call_intrin(DataType::float32(), "pow", {x, x});
  PrimFunc func = PrimFuncNode::make({}, {}, store(out, value, {make_int(0)}));
  EXPECT_EQ(lower_intrinsics(func).get(), func.get());
}

TEST(LowerIntrinsics, NestedCallsAreLoweredInside) {
  Var x = VarNode::make("x", DataType::float32());
  PrimExpr e = lowered_value(
      call_intrin(DataType::float32(), "exp", {call_intrin(DataType::float32(), "rsqrt", {x})}));
  const CallNode* exp = as_call(e, "exp");
  ASSERT_TRUE(exp);
  EXPECT_TRUE(as<DivNode>(exp->args[0]));
}

}  // namespace
}  // namespace anvil::tir
