// The tensor IR's node constructors, builders and the generic visitor/mutator.
#include <gtest/gtest.h>

#include "anvil/support/error.h"
#include "anvil/tir/functor.h"
#include "anvil/tir/intrinsics.h"
#include "anvil/tir/tir.h"

namespace anvil::tir {
namespace {

TEST(TirBuilders, FoldIntegerConstants) {
  PrimExpr e = PrimExpr(2) + 3;
  ASSERT_TRUE(as<IntImmNode>(e));
  EXPECT_EQ(as<IntImmNode>(e)->value, 5);
  EXPECT_EQ(*as_const_int(floordiv(-7, 2)), -4);
  EXPECT_EQ(*as_const_int(floormod(-7, 2)), 1);
  EXPECT_EQ(*as_const_int(truncdiv(-7, 2)), -3);
  EXPECT_EQ(*as_const_int(truncmod(-7, 2)), -1);
  EXPECT_EQ(*as_const_int(min(4, 9)), 4);
  EXPECT_EQ(*as_const_int(PrimExpr(3) < 4), 1);
}

TEST(TirBuilders, IdentitiesKeepTheOperand) {
  Var x = VarNode::make("x");
  EXPECT_EQ((x + 0).get(), x.get());
  EXPECT_EQ((x * 1).get(), x.get());
  EXPECT_TRUE(is_zero(x * 0));
  EXPECT_EQ(floordiv(x, 1).get(), x.get());
  EXPECT_EQ((x + 1).kind(), ExprKind::Add);
}

TEST(TirBuilders, LiteralsAdaptToTheOtherOperand) {
  Var f = VarNode::make("f", DataType::float32());
  PrimExpr e = f * 2;
  EXPECT_EQ(e.dtype(), DataType::float32());
  const auto* mul = as<MulNode>(e);
  ASSERT_TRUE(mul);
  ASSERT_TRUE(as<FloatImmNode>(mul->b));
  EXPECT_EQ(as<FloatImmNode>(mul->b)->value, 2.0);
  Var i = VarNode::make("i", DataType::int32());
  EXPECT_EQ((i + 1).dtype(), DataType::int32());
}

TEST(TirBuilders, ScalarMeetsVectorByBroadcast) {
  PrimExpr r = ramp(VarNode::make("base"), 1, 8);
  PrimExpr e = r + 4;
  EXPECT_EQ(e.dtype(), kIndexType.with_lanes(8));
  ASSERT_TRUE(as<AddNode>(e));
  EXPECT_TRUE(as<BroadcastNode>(as<AddNode>(e)->b));
}

TEST(TirBuilders, ComparisonsAreBool) {
  Var x = VarNode::make("x");
  EXPECT_TRUE((x < 3).dtype().is_bool());
  EXPECT_TRUE(logical_and(x<3, x> 1).dtype().is_bool());
  EXPECT_EQ(logical_and(const_true(), x < 3).kind(), ExprKind::LT);
}

TEST(TirBuilders, MismatchedTypesAreABug) {
  Var x = VarNode::make("x");
  Var f = VarNode::make("f", DataType::float32());
  EXPECT_THROW(x + f, InternalError);
}

TEST(TirNodes, BufferLoadTakesLanesFromARampIndex) {
  Buffer b = BufferNode::make("A", DataType::float32(), {PrimExpr(64)});
  PrimExpr v = load(b, {ramp(VarNode::make("i"), 1, 16)});
  EXPECT_EQ(v.dtype(), DataType::float32().with_lanes(16));
  EXPECT_THROW(store(b, make_const(DataType::float32(), 1), {ramp(VarNode::make("i"), 1, 16)}),
               InternalError);
}

TEST(TirNodes, EffectiveStridesAreRowMajor) {
  Var n = VarNode::make("n");
  Buffer b = BufferNode::make("A", DataType::float32(), {PrimExpr(2), n, PrimExpr(4)});
  std::vector<PrimExpr> s = b->effective_strides();
  ASSERT_EQ(s.size(), 3u);
  EXPECT_TRUE(is_const_int(s[2], 1));
  EXPECT_TRUE(is_const_int(s[1], 4));
  EXPECT_EQ(s[0].kind(), ExprKind::Mul);
}

TEST(TirNodes, SeqStmtFlattens) {
  Stmt a = evaluate(1), b = evaluate(2), c = evaluate(3);
  Stmt s = seq_stmt({seq_stmt({a, b}), c});
  const auto* seq = as<SeqStmtNode>(s);
  ASSERT_TRUE(seq);
  EXPECT_EQ(seq->seq.size(), 3u);
  EXPECT_EQ(seq_stmt({a}).get(), a.get());
}

TEST(TirNodes, BlockRealizeChecksValueCount) {
  IterVar vi = iter_var("vi", 4);
  Buffer b = BufferNode::make("A", DataType::float32(), {PrimExpr(4)});
  Block block = BlockNode::make({vi}, {}, {BufferRegion::full(b)}, "B",
                                store(b, make_const(DataType::float32(), 0), {vi.var}));
  EXPECT_THROW(BlockRealizeNode::make({}, nullptr, block), InternalError);
  EXPECT_NO_THROW(BlockRealizeNode::make({PrimExpr(0)}, nullptr, block));
}

TEST(TirNodes, IntrinsicArityIsChecked) {
  Var f = VarNode::make("f", DataType::float32());
  EXPECT_NO_THROW(call_intrin(DataType::float32(), "exp", {f}));
  EXPECT_THROW(call_intrin(DataType::float32(), "exp", {f, f}), InternalError);
  EXPECT_THROW(call_intrin(DataType::float32(), "no_such_intrinsic", {f}), InternalError);
  EXPECT_NO_THROW(call_extern(DataType::float32(), "anything", {f, f}));
  EXPECT_TRUE(find_intrinsic("anvil.dltensor_shape"));
}

TEST(TirNodes, ReduceIdentities) {
  EXPECT_EQ(as<FloatImmNode>(reduce_identity(ReduceKind::Sum, DataType::float32()))->value, 0.0);
  EXPECT_EQ(*as_const_int(reduce_identity(ReduceKind::Max, DataType::int8())), -128);
  EXPECT_EQ(*as_const_int(reduce_identity(ReduceKind::Min, DataType::uint8())), 255);
}

TEST(TirFunctor, SubstituteReplacesByIdentity) {
  Var x = VarNode::make("x"), y = VarNode::make("x");
  PrimExpr e = x * 2 + y;
  PrimExpr out = substitute(e, {{x.get(), PrimExpr(5)}});
  // 5 * 2 is not re-folded by the mutator (it rebuilds with make), but x is gone and y is not.
  EXPECT_FALSE(uses_var(out, [&](const VarNode* v) { return v == x.get(); }));
  EXPECT_TRUE(uses_var(out, [&](const VarNode* v) { return v == y.get(); }));
}

TEST(TirFunctor, MutatorReturnsTheSameNodeWhenNothingChanges) {
  Var i = VarNode::make("i");
  Buffer b = BufferNode::make("A", DataType::float32(), {PrimExpr(8)});
  Stmt body = store(b, load(b, {i}) * make_const(DataType::float32(), 2), {i});
  Stmt loop = for_loop(i, 0, 8, body);
  Mutator m;
  EXPECT_EQ(m.mutate(loop).get(), loop.get());
}

TEST(TirFunctor, VisitorSeesEveryLoad) {
  Var i = VarNode::make("i");
  Buffer a = BufferNode::make("A", DataType::float32(), {PrimExpr(8)});
  Buffer c = BufferNode::make("C", DataType::float32(), {PrimExpr(8)});
  Stmt s = for_loop(i, 0, 8, store(c, load(a, {i}) + load(a, {i}), {i}));
  int loads = 0;
  pre_order_visit(
      s, [&](const PrimExpr& e) { loads += e.kind() == ExprKind::BufferLoad; }, nullptr);
  EXPECT_EQ(loads, 2);
}

TEST(TirPrimFunc, BufferMapAndSymbol) {
  Var x = VarNode::make("x", DataType::handle());
  Buffer b = BufferNode::make("X", DataType::float32(), {PrimExpr(4)});
  PrimFunc f = PrimFuncNode::make({x}, {{x, b}}, evaluate(0),
                                  ir::DictAttrs{}.with("global_symbol", std::string("f")));
  EXPECT_EQ(f->buffer_of(x).get(), b.get());
  EXPECT_EQ(f->global_symbol(), "f");
  Var other = VarNode::make("y", DataType::handle());
  EXPECT_THROW(PrimFuncNode::make({x}, {{other, b}}, evaluate(0)), InternalError);
}

}  // namespace
}  // namespace anvil::tir
