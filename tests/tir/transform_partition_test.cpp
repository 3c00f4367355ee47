// partition_loops: a guarded loop is cut into a guard-free main part and a guarded tail, checked
// on the structure and numerically through the test interpreter against the uncut loop.
#include <gtest/gtest.h>

#include "anvil/tir/functor.h"
#include "anvil/tir/printer.h"
#include "anvil/tir/transform.h"
#include "anvil/tir/verifier.h"
#include "loop_interpreter.h"
#include "prim_func_util.h"

namespace anvil::tir {
namespace {

using transform::partition_loops;

using testing::func_of;

int count_ifs(const Stmt& s) {
  int ifs = 0;
  pre_order_visit(s, nullptr, [&](const Stmt& st) { ifs += st->kind == StmtKind::IfThenElse; });
  return ifs;
}

// for i0 in [0, 4): for i1 in [0, 3): if i0 * 3 + i1 < 10: X[i0 * 3 + i1] = i0 * 3 + i1 + 1
// (a split of 10 by 3) writes X[0..9]; X[10] and X[11] stay untouched.
PrimFunc split_by_three(ForKind outer_kind) {
  Buffer x = BufferNode::make("X", DataType::float32(), {12});
  Var i0 = VarNode::make("i0"), i1 = VarNode::make("i1");
  PrimExpr index = i0 * 3 + i1;
  Stmt guarded =
      IfThenElseNode::make(index < 10, store(x, cast(DataType::float32(), index + 1), {index}));
  Stmt inner = ForNode::make(i1, 0, 3, ForKind::Unrolled, guarded);
  return func_of({x}, ForNode::make(i0, 0, 4, outer_kind, inner));
}

std::vector<double> run(const PrimFunc& func) {
  std::vector<double> x(size_t(*as_const_int(func->buffer_map[0].second->shape[0])), -1.0);
  testing::LoopInterpreter interp;
  interp.run(func, {&x});
  return x;
}

TEST(PartitionLoops, NonDividingSplitGetsAGuardFreeMainLoop) {
  PrimFunc func = split_by_three(ForKind::Serial);
  PrimFunc out = partition_loops(func);
  // i0 in [0, 3) holds i0 * 3 + i1 <= 8 < 10 for every i1: no guard. The tail i0 = 3 cuts its
  // inner loop again: i1 = 0 (index 9) without a guard, i1 in [1, 3) with it.
  const auto* seq = as<SeqStmtNode>(out->body);
  ASSERT_TRUE(seq) << print(out);
  ASSERT_EQ(seq->seq.size(), 2u) << print(out);
  const auto* main_loop = as<ForNode>(seq->seq[0]);
  const auto* tail_loop = as<ForNode>(seq->seq[1]);
  ASSERT_TRUE(main_loop && tail_loop) << print(out);
  EXPECT_EQ(*as_const_int(main_loop->extent), 3);
  EXPECT_EQ(count_ifs(main_loop->body), 0) << print(out);
  EXPECT_EQ(*as_const_int(tail_loop->min), 3);
  EXPECT_EQ(*as_const_int(tail_loop->extent), 1);
  EXPECT_EQ(count_ifs(tail_loop->body), 1) << print(out);
  EXPECT_NE(tail_loop->loop_var.get(), main_loop->loop_var.get());
  EXPECT_NO_THROW(verify(out, IrForm::Lowered));
  EXPECT_EQ(run(out), run(func));
  std::vector<double> expected = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, -1, -1};
  EXPECT_EQ(run(out), expected);
}

TEST(PartitionLoops, ParallelAndVectorizedLoopsAreNotCut) {
  for (ForKind kind : {ForKind::Parallel, ForKind::Vectorized}) {
    PrimFunc func = split_by_three(kind);
    PrimFunc out = partition_loops(func);
    const auto* loop = as<ForNode>(out->body);
    ASSERT_TRUE(loop) << print(out);
    EXPECT_EQ(*as_const_int(loop->extent), 4);
    EXPECT_EQ(run(out), run(func));
  }
}

TEST(PartitionLoops, GuardThatAlwaysHoldsIsRemoved) {
  Buffer x = BufferNode::make("X", DataType::float32(), {8});
  Var i = VarNode::make("i");
  PrimFunc func = func_of(
      {x}, ForNode::make(i, 0, 8, ForKind::Serial,
                         IfThenElseNode::make(i < 8, store(x, cast(DataType::float32(), i), {i}))));
  PrimFunc out = partition_loops(func);
  EXPECT_EQ(count_ifs(out->body), 0) << print(out);
  EXPECT_EQ(run(out), run(func));
}

TEST(PartitionLoops, GuardsItCannotProveStay) {
  // The guard reads X: nothing is provable, nothing changes.
  Buffer x = BufferNode::make("X", DataType::float32(), {8});
  Var i = VarNode::make("i");
  PrimFunc func = func_of(
      {x},
      ForNode::make(i, 0, 8, ForKind::Serial,
                    IfThenElseNode::make(
                        logical_and(load(x, {i}) < make_const(DataType::float32(), 0.5), i < 5),
                        store(x, cast(DataType::float32(), i), {i}))));
  PrimFunc out = partition_loops(func);
  EXPECT_EQ(count_ifs(out->body), 1) << print(out);
  EXPECT_EQ(run(out), run(func));
}

TEST(PartitionLoops, TileCutBothWaysProvesEachLoopItsOwnTerm) {
  // A 5 x 7 output in 2 x 4 tiles: for r0, c0, r1, c1: if r0*2+r1 < 5 and c0*4+c1 < 7. The row
  // loop can prove only the row term, the column loop only the column term; each cut keeps the
  // other term, so the full tiles end up with no guard at all.
  Buffer x = BufferNode::make("X", DataType::float32(), {40});
  Var r0 = VarNode::make("r0"), c0 = VarNode::make("c0"), r1 = VarNode::make("r1"),
      c1 = VarNode::make("c1");
  PrimExpr row = r0 * 2 + r1, col = c0 * 4 + c1;
  Stmt guarded =
      IfThenElseNode::make(logical_and(row < 5, col < 7),
                           store(x, cast(DataType::float32(), row * 7 + col + 1), {row * 7 + col}));
  Stmt nest = ForNode::make(
      r0, 0, 3, ForKind::Serial,
      ForNode::make(c0, 0, 2, ForKind::Serial,
                    ForNode::make(r1, 0, 2, ForKind::Unrolled,
                                  ForNode::make(c1, 0, 4, ForKind::Serial, guarded))));
  PrimFunc func = func_of({x}, nest);
  PrimFunc out = partition_loops(func);

  const auto* rows = as<SeqStmtNode>(out->body);
  ASSERT_TRUE(rows && rows->seq.size() == 2) << print(out);
  const auto* full_rows = as<ForNode>(rows->seq[0]);
  ASSERT_TRUE(full_rows) << print(out);
  EXPECT_EQ(*as_const_int(full_rows->extent), 2);
  // Under the full rows the column loop is cut again: c0 = 0 has no guard, c0 = 1 keeps only
  // the column term.
  const auto* cols = as<SeqStmtNode>(full_rows->body);
  ASSERT_TRUE(cols && cols->seq.size() == 2) << print(out);
  EXPECT_EQ(count_ifs(cols->seq[0]), 0) << print(out);
  int column_only = 0;
  pre_order_visit(cols->seq[1], nullptr, [&](const Stmt& st) {
    if (const auto* branch = as<IfThenElseNode>(st)) {
      EXPECT_FALSE(uses_var(branch->condition, [&](const VarNode* v) { return v == r0.get(); }))
          << print(out);
      ++column_only;
    }
  });
  EXPECT_GE(column_only, 1) << print(out);
  EXPECT_NO_THROW(verify(out, IrForm::Lowered));
  std::vector<double> result = run(out);
  EXPECT_EQ(result, run(func));
  for (int i = 0; i < 35; ++i) EXPECT_EQ(result[i], i + 1) << i;
  for (int i = 35; i < 40; ++i) EXPECT_EQ(result[i], -1) << i;
}

// The tiles of a size variable: for i0 in [0, ceildiv(n, 4)): for i1 in [0, 4): guarded by
// i0 * 4 + i1 < n. The full tiles, i0 < floordiv(n, 4), lose the guard; the last, partial tile
// keeps it.
TEST(PartitionLoops, SymbolicExtentIsCutAtTheLastFullTile) {
  Var n = VarNode::make("n");
  Buffer x = BufferNode::make("X", DataType::float32(), {n});
  Var i0 = VarNode::make("i0"), i1 = VarNode::make("i1");
  PrimExpr index = i0 * 4 + i1;
  Stmt guarded =
      IfThenElseNode::make(index < n, store(x, make_const(DataType::float32(), 1), {index}));
  Stmt inner = ForNode::make(i1, 0, 4, ForKind::Unrolled, guarded);
  PrimFunc func = func_of({x}, ForNode::make(i0, 0, floordiv(n + 3, 4), ForKind::Serial, inner));
  PrimFunc out = partition_loops(func);
  const auto* seq = as<SeqStmtNode>(out->body);
  ASSERT_TRUE(seq && seq->seq.size() == 2u) << print(out);
  const auto* main_loop = as<ForNode>(seq->seq[0]);
  const auto* tail_loop = as<ForNode>(seq->seq[1]);
  ASSERT_TRUE(main_loop && tail_loop) << print(out);
  EXPECT_EQ(print(main_loop->extent), "n // 4") << print(out);
  EXPECT_EQ(count_ifs(main_loop->body), 0) << print(out);
  EXPECT_EQ(print(tail_loop->min), "n // 4") << print(out);
  EXPECT_NE(tail_loop->loop_var.get(), main_loop->loop_var.get());
  // The partial tile is specialized per remainder r = n - i0 * 4 in [1, 4): once the inner loop
  // is unrolled, only the choice of copy is left (r == 1, else r == 2, else the copy for 3), and
  // each copy stores its r elements unguarded.
  PrimFunc unrolled = transform::simplify(transform::unroll_loops(out));
  const auto* unrolled_seq = as<SeqStmtNode>(unrolled->body);
  ASSERT_TRUE(unrolled_seq && unrolled_seq->seq.size() == 2u) << print(unrolled);
  const auto* tail = as<ForNode>(unrolled_seq->seq[1]);
  ASSERT_NE(tail, nullptr) << print(unrolled);
  EXPECT_EQ(count_ifs(tail->body), 2) << print(unrolled);
  int stores = 0;
  pre_order_visit(tail->body, nullptr,
                  [&](const Stmt& st) { stores += st->kind == StmtKind::BufferStore; });
  EXPECT_EQ(stores, 1 + 2 + 3) << print(unrolled);

  // A guard that does not hold over the full tiles (i0 * 4 + i1 < n - 1) is left alone.
  Stmt loose =
      IfThenElseNode::make(index < n - 1, store(x, make_const(DataType::float32(), 1), {index}));
  PrimFunc unproven =
      func_of({x}, ForNode::make(i0, 0, floordiv(n + 3, 4), ForKind::Serial,
                                 ForNode::make(i1, 0, 4, ForKind::Unrolled, loose)));
  EXPECT_EQ(count_ifs(partition_loops(unproven)->body), 1);
  EXPECT_EQ(as<SeqStmtNode>(partition_loops(unproven)->body), nullptr);

  // A guard over a serial inner loop keeps one guarded tail: copies per remainder pay only where
  // unrolling turns each into straight-line code.
  PrimFunc serial = func_of({x}, ForNode::make(i0, 0, floordiv(n + 3, 4), ForKind::Serial,
                                               ForNode::make(i1, 0, 4, ForKind::Serial, guarded)));
  PrimFunc serial_out = partition_loops(serial);
  const auto* serial_cut = as<SeqStmtNode>(serial_out->body);
  ASSERT_TRUE(serial_cut && serial_cut->seq.size() == 2u) << print(serial_out);
  EXPECT_EQ(count_ifs(serial_cut->seq[1]), 1) << print(serial_out);
}

// A reduction over a size variable that may be 0 runs max(n, 1) steps with `k < n` guarding
// the update (and `k == 0` the init): the loop is cut at n, the update's guard goes from the
// main part and the init's stays in both.
TEST(PartitionLoops, AtLeastOneStepLoopIsCutAtItsVariable) {
  Var n = VarNode::make("n");
  Buffer x = BufferNode::make("X", DataType::float32(), {1});
  Var k = VarNode::make("k");
  PrimExpr zero = make_int(0);
  Stmt init =
      IfThenElseNode::make(tir::eq(k, zero), store(x, make_const(DataType::float32(), 0), {zero}));
  Stmt update = IfThenElseNode::make(
      k < n, store(x, load(x, {zero}) + make_const(DataType::float32(), 1), {zero}));
  PrimFunc func = func_of({x}, ForNode::make(k, 0, tir::max(n, make_int(1)), ForKind::Serial,
                                             seq_stmt({init, update})));
  PrimFunc out = partition_loops(func);
  const auto* seq = as<SeqStmtNode>(out->body);
  ASSERT_TRUE(seq && seq->seq.size() == 2u) << print(out);
  const auto* main_loop = as<ForNode>(seq->seq[0]);
  const auto* tail_loop = as<ForNode>(seq->seq[1]);
  ASSERT_TRUE(main_loop && tail_loop) << print(out);
  EXPECT_EQ(print(main_loop->extent), "n") << print(out);
  EXPECT_EQ(count_ifs(main_loop->body), 1) << print(out);  // the init's
  EXPECT_EQ(count_ifs(tail_loop->body), 2) << print(out);
}

}  // namespace
}  // namespace anvil::tir
