// unroll_loops: unrolled loops of constant extent become copies of their body,
// checked node by node and numerically through the test interpreter.
#include <gtest/gtest.h>

#include <set>

#include "anvil/tir/functor.h"
#include "anvil/tir/transform.h"
#include "loop_interpreter.h"
#include "prim_func_util.h"

namespace anvil::tir {
namespace {

using transform::unroll_loops;

PrimExpr f32(double value) { return make_const(DataType::float32(), value); }

using testing::func_of;

Stmt unrolled_loop(Var var, PrimExpr min, PrimExpr extent, Stmt body) {
  return ForNode::make(std::move(var), std::move(min), std::move(extent), ForKind::Unrolled,
                       std::move(body));
}

TEST(UnrollLoops, ConstantExtentBecomesCopies) {
  // unroll i in [2, 6): X[i] = i  ->  X[2] = 2; X[3] = 3; X[4] = 4; X[5] = 5 (as casts)
  Buffer x = BufferNode::make("X", DataType::float32(), {8});
  Var i = VarNode::make("i");
  PrimFunc func = func_of({x}, unrolled_loop(i, 2, 4, store(x, cast(DataType::float32(), i), {i})));
  PrimFunc out = unroll_loops(func);
  const auto* seq = as<SeqStmtNode>(out->body);
  ASSERT_TRUE(seq);
  ASSERT_EQ(seq->seq.size(), 4u);
  for (int n = 0; n < 4; ++n) {
    const auto* st = as<BufferStoreNode>(seq->seq[n]);
    ASSERT_TRUE(st);
    EXPECT_EQ(*as_const_int(st->indices[0]), 2 + n);
    // The value is cast(float32, 2 + n): folding it is the simplifier's job.
    const auto* value = as<CastNode>(st->value);
    ASSERT_TRUE(value);
    EXPECT_EQ(*as_const_int(value->value), 2 + n);
  }
}

TEST(UnrollLoops, SymbolicExtentStaysASerialLoop) {
  Buffer x = BufferNode::make("X", DataType::float32(), {8});
  Var i = VarNode::make("i"), n = VarNode::make("n");
  PrimFunc out = unroll_loops(func_of({x}, unrolled_loop(i, 0, n, store(x, f32(0), {i}))));
  const auto* loop = as<ForNode>(out->body);
  ASSERT_TRUE(loop);
  EXPECT_EQ(loop->for_kind, ForKind::Serial);
  EXPECT_EQ(loop->extent.get(), n.get());
}

TEST(UnrollLoops, LongLoopStaysASerialLoop) {
  Buffer x = BufferNode::make("X", DataType::float32(), {1000});
  Var i = VarNode::make("i");
  PrimFunc out = unroll_loops(func_of({x}, unrolled_loop(i, 0, 1000, store(x, f32(0), {i}))));
  const auto* loop = as<ForNode>(out->body);
  ASSERT_TRUE(loop);
  EXPECT_EQ(loop->for_kind, ForKind::Serial);
}

TEST(UnrollLoops, SerialLoopsAreUntouched) {
  Buffer x = BufferNode::make("X", DataType::float32(), {4});
  Var i = VarNode::make("i");
  PrimFunc func = func_of({x}, for_loop(i, 0, 4, store(x, f32(0), {i})));
  EXPECT_EQ(unroll_loops(func).get(), func.get());
}

TEST(UnrollLoops, CopiesDefineFreshVariables) {
  // unroll i in [0, 3): for j in [0, 4): let t = i * 4 + j in X[t] = t
  Buffer x = BufferNode::make("X", DataType::float32(), {12});
  Var i = VarNode::make("i"), j = VarNode::make("j"), t = VarNode::make("t");
  Stmt inner = for_loop(
      j, 0, 4, LetStmtNode::make(t, i * 4 + j, store(x, cast(DataType::float32(), t), {t})));
  PrimFunc out = unroll_loops(func_of({x}, unrolled_loop(i, 0, 3, inner)));
  const auto* seq = as<SeqStmtNode>(out->body);
  ASSERT_TRUE(seq);
  ASSERT_EQ(seq->seq.size(), 3u);
  std::set<const VarNode*> loop_vars, let_vars;
  for (const Stmt& copy : seq->seq) {
    const auto* loop = as<ForNode>(copy);
    ASSERT_TRUE(loop);
    loop_vars.insert(loop->loop_var.get());
    let_vars.insert(as<LetStmtNode>(loop->body)->var.get());
  }
  EXPECT_EQ(loop_vars.size(), 3u);
  EXPECT_EQ(let_vars.size(), 3u);
  EXPECT_FALSE(loop_vars.count(j.get()));

  std::vector<double> xv(12, -1);
  testing::LoopInterpreter interp;
  interp.run(out, {&xv});
  for (int n = 0; n < 12; ++n) EXPECT_EQ(xv[n], n);
}

TEST(UnrollLoops, AllocationsInsideACopyAreRenamed) {
  Buffer x = BufferNode::make("X", DataType::float32(), {2});
  Buffer tmp = BufferNode::make("tmp", DataType::float32(), {1}, "local");
  Var i = VarNode::make("i");
  Stmt body =
      AllocateNode::make(tmp, seq_stmt({store(tmp, cast(DataType::float32(), i) + f32(10), {0}),
                                        store(x, load(tmp, {0}), {i})}));
  PrimFunc out = unroll_loops(func_of({x}, unrolled_loop(i, 0, 2, body)));
  const auto* seq = as<SeqStmtNode>(out->body);
  ASSERT_TRUE(seq);
  const auto* a0 = as<AllocateNode>(seq->seq[0]);
  const auto* a1 = as<AllocateNode>(seq->seq[1]);
  ASSERT_TRUE(a0 && a1);
  EXPECT_NE(a0->buffer->data.get(), a1->buffer->data.get());
  const auto* use = as<BufferStoreNode>(as<SeqStmtNode>(a1->body)->seq[1]);
  EXPECT_EQ(as<BufferLoadNode>(use->value)->buffer.get(), a1->buffer.get());

  std::vector<double> xv(2, -1);
  testing::LoopInterpreter interp;
  interp.run(out, {&xv});
  EXPECT_EQ(xv, (std::vector<double>{10, 11}));
}

TEST(UnrollLoops, NestedUnrolledLoopsExpandFully) {
  // unroll i in [0, 2): unroll j in [0, 3): X[i * 3 + j] = X[i * 3 + j] + 1
  Buffer x = BufferNode::make("X", DataType::float32(), {6});
  Var i = VarNode::make("i"), j = VarNode::make("j");
  PrimExpr idx = i * 3 + j;
  Stmt body =
      unrolled_loop(i, 0, 2, unrolled_loop(j, 0, 3, store(x, load(x, {idx}) + f32(1), {idx})));
  PrimFunc out = unroll_loops(func_of({x}, body));
  const auto* seq = as<SeqStmtNode>(out->body);
  ASSERT_TRUE(seq);
  EXPECT_EQ(seq->seq.size(), 6u);
  int loops = 0;
  pre_order_visit(out->body, nullptr, [&](const Stmt& s) { loops += s->kind == StmtKind::For; });
  EXPECT_EQ(loops, 0);
  std::vector<double> xv(6, 1);
  testing::LoopInterpreter interp;
  interp.run(out, {&xv});
  EXPECT_EQ(xv, (std::vector<double>(6, 2)));
}

}  // namespace
}  // namespace anvil::tir
