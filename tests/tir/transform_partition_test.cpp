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
  std::vector<double> x(12, -1.0);
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

}  // namespace
}  // namespace anvil::tir
