// The simplify pass: expressions simplified with loop and block ranges known,
// extent-1 loops removed, provable branches and asserts resolved, unchanged
// functions returned as the same node. Expectations are written by hand.
#include <gtest/gtest.h>

#include "anvil/tir/functor.h"
#include "anvil/tir/transform.h"
#include "prim_func_util.h"
#include "tir/arith_test_util.h"

namespace anvil::tir {
namespace {

using testing::show;
using transform::simplify;

PrimExpr f32(double value) { return make_const(DataType::float32(), value); }

using testing::func_of;

// The indices of a store as text, "i, j".
std::string indices_of(const Stmt& s) {
  const auto* st = as<BufferStoreNode>(s);
  if (!st) return std::string("<not a store: ") + stmt_kind_name(s->kind) + ">";
  std::string out;
  for (size_t i = 0; i < st->indices.size(); ++i) out += (i ? ", " : "") + show(st->indices[i]);
  return out;
}

TEST(SimplifyPass, SplitIndicesBecomeLoopVariables) {
  // for io in [0, 16): for ii in [0, 8): B[floordiv(io*8 + ii, 8), floormod(io*8 + ii, 8)] = A[...]
  Buffer a = BufferNode::make("A", DataType::float32(), {128});
  Buffer b = BufferNode::make("B", DataType::float32(), {16, 8});
  Var io = VarNode::make("io"), ii = VarNode::make("ii");
  PrimExpr fused = io * 8 + ii;
  Stmt body = store(b, load(a, {fused}), {floordiv(fused, 8), floormod(fused, 8)});
  PrimFunc func = func_of({a, b}, for_loop(io, 0, 16, for_loop(ii, 0, 8, body)));
  PrimFunc out = simplify(func);
  const auto* outer = as<ForNode>(out->body);
  ASSERT_TRUE(outer);
  const auto* inner = as<ForNode>(outer->body);
  ASSERT_TRUE(inner);
  EXPECT_EQ(indices_of(inner->body), "io, ii");
  const auto* st = as<BufferStoreNode>(inner->body);
  EXPECT_EQ(show(st->value), "A[io * 8 + ii]");
}

TEST(SimplifyPass, ExtentOneLoopIsReplacedByItsMin) {
  // for i in [3, 4): for j in [0, 4): B[i*4 + j] = 0  ->  for j: B[j + 12] = 0
  Buffer b = BufferNode::make("B", DataType::float32(), {32});
  Var i = VarNode::make("i"), j = VarNode::make("j");
  PrimFunc func = func_of({b}, for_loop(i, 3, 1, for_loop(j, 0, 4, store(b, f32(0), {i * 4 + j}))));
  PrimFunc out = simplify(func);
  const auto* loop = as<ForNode>(out->body);
  ASSERT_TRUE(loop);
  EXPECT_EQ(loop->loop_var.get(), j.get());
  EXPECT_EQ(indices_of(loop->body), "j + 12");
}

TEST(SimplifyPass, EmptyLoopDisappearsFromASequence) {
  Buffer b = BufferNode::make("B", DataType::float32(), {8});
  Var i = VarNode::make("i"), j = VarNode::make("j");
  Stmt first = for_loop(i, 0, 0, store(b, f32(1), {i}));
  Stmt second = for_loop(j, 0, 8, store(b, f32(2), {j}));
  PrimFunc out = simplify(func_of({b}, seq_stmt({first, second})));
  const auto* loop = as<ForNode>(out->body);
  ASSERT_TRUE(loop) << stmt_kind_name(out->body->kind);
  EXPECT_EQ(loop->loop_var.get(), j.get());
}

TEST(SimplifyPass, ProvableBranchesAreResolved) {
  Buffer b = BufferNode::make("B", DataType::float32(), {8});
  Var i = VarNode::make("i");
  Stmt then_store = store(b, f32(1), {i});
  Stmt else_store = store(b, f32(2), {i});
  // i < 8 always holds in [0, 8): only the then branch is left.
  PrimFunc out = simplify(
      func_of({b}, for_loop(i, 0, 8, IfThenElseNode::make(i < 8, then_store, else_store))));
  const auto* loop = as<ForNode>(out->body);
  ASSERT_TRUE(loop);
  EXPECT_EQ(loop->body.get(), then_store.get());
  // i >= 8 never holds: the else branch is left.
  out = simplify(
      func_of({b}, for_loop(i, 0, 8, IfThenElseNode::make(i >= 8, then_store, else_store))));
  loop = as<ForNode>(out->body);
  ASSERT_TRUE(loop);
  EXPECT_EQ(loop->body.get(), else_store.get());
  // No else branch and never true: nothing is left of the loop.
  out = simplify(func_of({b}, for_loop(i, 0, 8, IfThenElseNode::make(i > 20, then_store))));
  EXPECT_TRUE(as<EvaluateNode>(out->body)) << stmt_kind_name(out->body->kind);
}

TEST(SimplifyPass, BranchConditionIsKnownInsideTheBranch) {
  // for i in [0, 16): if i < 8: B[floordiv(i, 8)] = 1 else: B[floordiv(i, 8)] = 2
  Buffer b = BufferNode::make("B", DataType::float32(), {2});
  Var i = VarNode::make("i");
  Stmt branch = IfThenElseNode::make(i < 8, store(b, f32(1), {floordiv(i, 8)}),
                                     store(b, f32(2), {floordiv(i, 8)}));
  PrimFunc out = simplify(func_of({b}, for_loop(i, 0, 16, branch)));
  const auto* loop = as<ForNode>(out->body);
  ASSERT_TRUE(loop);
  const auto* ite = as<IfThenElseNode>(loop->body);
  ASSERT_TRUE(ite);
  EXPECT_EQ(show(ite->condition), "i < 8");
  EXPECT_EQ(indices_of(ite->then_case), "0");
  EXPECT_EQ(indices_of(ite->else_case), "1");
}

TEST(SimplifyPass, ProvableAssertsAreDropped) {
  Buffer b = BufferNode::make("B", DataType::float32(), {8});
  Var i = VarNode::make("i");
  Stmt st = store(b, f32(1), {i});
  Stmt checked = AssertStmtNode::make(i < 8, "index out of range", st);
  PrimFunc out = simplify(func_of({b}, for_loop(i, 0, 8, checked)));
  const auto* loop = as<ForNode>(out->body);
  ASSERT_TRUE(loop);
  EXPECT_EQ(loop->body.get(), st.get());
  // An assert that cannot be proven stays, with its message.
  Var n = VarNode::make("n");
  Stmt unknown = AssertStmtNode::make(n < 8, "n too large", st);
  out = simplify(func_of({b}, for_loop(i, 0, 8, unknown)));
  const auto* kept = as<AssertStmtNode>(as<ForNode>(out->body)->body);
  ASSERT_TRUE(kept);
  EXPECT_EQ(kept->message, "n too large");
}

TEST(SimplifyPass, BlockIterVarsAreBoundToTheirDomains) {
  // for i in [0, 8): block(vi in [0, 8) = i, predicate i < 8): B[floormod(vi, 8)] = 1
  Buffer b = BufferNode::make("B", DataType::float32(), {8});
  Var i = VarNode::make("i");
  IterVar vi = iter_var("vi", 8);
  Stmt body = store(b, f32(1), {floormod(vi.var, 8)});
  BufferRegion write{b, {Range::from_min_extent(floormod(vi.var, 8), 1)}};
  Block block = BlockNode::make({vi}, {}, {write}, "B", body);
  Stmt realize = BlockRealizeNode::make({i * 2 - i}, i < 8, block);
  PrimFunc out = simplify(func_of({b}, for_loop(i, 0, 8, realize)));
  const auto* loop = as<ForNode>(out->body);
  ASSERT_TRUE(loop);
  const auto* br = as<BlockRealizeNode>(loop->body);
  ASSERT_TRUE(br);
  EXPECT_EQ(show(br->predicate), "true");
  EXPECT_EQ(show(br->iter_values[0]), "i");
  EXPECT_EQ(indices_of(br->block->body), "vi");
  EXPECT_EQ(show(br->block->writes[0].region[0].min), "vi");
  EXPECT_EQ(br->block->name, "B");
}

TEST(SimplifyPass, LetValuesBoundTheirVariable) {
  // for i in [0, 4): let x = i * 2 in B[floordiv(x, 8)] = 1  ->  B[0]
  Buffer b = BufferNode::make("B", DataType::float32(), {8});
  Var i = VarNode::make("i"), x = VarNode::make("x");
  Stmt let_stmt = LetStmtNode::make(x, i * 2, store(b, f32(1), {floordiv(x, 8) + x}));
  PrimFunc out = simplify(func_of({b}, for_loop(i, 0, 4, let_stmt)));
  const auto* loop = as<ForNode>(out->body);
  ASSERT_TRUE(loop);
  const auto* kept = as<LetStmtNode>(loop->body);
  ASSERT_TRUE(kept);
  EXPECT_EQ(indices_of(kept->body), "x");
  // A constant value is inlined.
  Stmt const_let = LetStmtNode::make(x, make_int(5), store(b, f32(1), {x + 1}));
  out = simplify(func_of({b}, const_let));
  EXPECT_EQ(indices_of(out->body), "6");
}

TEST(SimplifyPass, SymbolicShapesAndLoopBounds) {
  // B has shape (n,): for i in [0, n): if i < n: B[i] = 1  ->  the test goes.
  Var n = VarNode::make("n");
  Buffer b = BufferNode::make("B", DataType::float32(), {n});
  Var i = VarNode::make("i");
  Stmt st = store(b, f32(1), {i});
  PrimFunc out = simplify(func_of({b}, for_loop(i, 0, n, IfThenElseNode::make(i < n, st))));
  const auto* loop = as<ForNode>(out->body);
  ASSERT_TRUE(loop);
  EXPECT_EQ(loop->body.get(), st.get());
  // Shape dims are never negative: floordiv(n, n + 1) is 0.
  Var j = VarNode::make("j");
  out = simplify(func_of({b}, for_loop(j, 0, 4, store(b, f32(1), {floordiv(n, n + 1) + j}))));
  EXPECT_EQ(indices_of(as<ForNode>(out->body)->body), "j");
}

TEST(SimplifyPass, UnchangedFunctionIsTheSameNode) {
  Buffer a = BufferNode::make("A", DataType::float32(), {16});
  Buffer b = BufferNode::make("B", DataType::float32(), {16});
  Var i = VarNode::make("i");
  PrimFunc func =
      func_of({a, b}, for_loop(i, 0, 16, store(b, load(a, {i}) * f32(2) + f32(1), {i})));
  EXPECT_EQ(simplify(func).get(), func.get());
}

TEST(SimplifyPass, ValuesAreSimplifiedToo) {
  // Float arithmetic is only folded; integer parts of values are simplified.
  Buffer b = BufferNode::make("B", DataType::float32(), {16});
  Var i = VarNode::make("i");
  PrimExpr value = cast(DataType::float32(), floordiv(i * 4 + 3, 4)) + f32(1) * f32(2);
  PrimFunc out = simplify(func_of({b}, for_loop(i, 0, 16, store(b, value, {i}))));
  const auto* st = as<BufferStoreNode>(as<ForNode>(out->body)->body);
  ASSERT_TRUE(st);
  const auto* add = as<AddNode>(st->value);
  ASSERT_TRUE(add) << show(st->value);
  EXPECT_EQ(show(add->a), "float32(i)");
  ASSERT_TRUE(as<FloatImmNode>(add->b));
  EXPECT_EQ(as<FloatImmNode>(add->b)->value, 2.0);
}

TEST(SimplifyPass, VectorIndices) {
  // A lowered vector store: B[ramp(i*4, 1, 4)] with floordiv by 4 lane-wise.
  Buffer b = BufferNode::make("B", DataType::float32(), {64});
  Buffer a = BufferNode::make("A", DataType::float32(), {16});
  Var i = VarNode::make("i");
  PrimExpr lanes_index = ramp(i * 4, 1, 4);
  PrimExpr src = load(a, {floordiv(lanes_index, broadcast(make_int(4), 4))});
  PrimFunc out = simplify(func_of({a, b}, for_loop(i, 0, 16, store(b, src, {lanes_index}))));
  const auto* st = as<BufferStoreNode>(as<ForNode>(out->body)->body);
  ASSERT_TRUE(st);
  EXPECT_EQ(show(st->value), "A[broadcast(i, 4)]");
  EXPECT_EQ(indices_of(Stmt(st)), "ramp(i * 4, 1, 4)");
}

}  // namespace
}  // namespace anvil::tir
