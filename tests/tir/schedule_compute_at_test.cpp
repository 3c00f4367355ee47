// compute_at and reverse_compute_at: where the moved nest lands, how far its
// loops shrink, and that the numbers stay those of the unscheduled function.
#include <gtest/gtest.h>

#include "anvil/support/error.h"
#include "anvil/tir/schedule.h"
#include "schedule_dataflow_programs.h"

namespace anvil::tir {
namespace {

using namespace testing;

// The statement of loop's body at position index (the body itself when it is
// not a sequence and index is 0).
Stmt body_part(const PrimFunc& func, const LoopRV& loop, size_t index) {
  For f = find_loop(func, loop.var);
  if (const auto* seq = as<SeqStmtNode>(f->body))
    return index < seq->seq.size() ? seq->seq[index] : nullptr;
  return index == 0 ? f->body : nullptr;
}

// True when stmt is (or wraps in loops) the realize of block.
bool nest_of(const Stmt& stmt, const std::string& block) {
  Stmt s = stmt;
  while (const auto* f = as<ForNode>(s)) s = f->body;
  const auto* realize = as<BlockRealizeNode>(s);
  return realize && realize->block->name == block;
}

TEST(ComputeAt, ProducerRowUnderConsumerRowLoop) {
  PrimFunc func = elementwise_pipeline();
  Schedule sch(func);
  std::vector<LoopRV> loops = sch.get_loops(sch.get_block("C"));
  sch.compute_at(sch.get_block("B"), loops[0]);
  // for i: { for j': B; for j: C }
  EXPECT_EQ(loop_extents(sch, "B"), (std::vector<int64_t>{37, 53}));
  EXPECT_EQ(sch.get_loops(sch.get_block("B"))[0].var.get(), loops[0].var.get());
  EXPECT_TRUE(nest_of(body_part(sch.func(), loops[0], 0), "B"));
  EXPECT_TRUE(nest_of(body_part(sch.func(), loops[0], 1), "C"));
  BlockRealize b = find_realize(sch.func(), "B");
  EXPECT_EQ(b->iter_values[0].get(), loops[0].var.get());
  EXPECT_TRUE(is_one(b->predicate));
  // The new loop is named after B's old one, made unique.
  For inner = find_loop(sch.func(), sch.get_loops(sch.get_block("B"))[1].var);
  EXPECT_EQ(inner->loop_var->name, "j_1");
  expect_same_results(func, sch.func(), 1);
}

TEST(ComputeAt, ProducerPointUnderInnermostLoop) {
  PrimFunc func = elementwise_pipeline();
  Schedule sch(func);
  std::vector<LoopRV> loops = sch.get_loops(sch.get_block("C"));
  sch.compute_at(sch.get_block("B"), loops[1]);
  // No loops of its own: B runs once per (i, j), right before C.
  std::vector<LoopRV> b_loops = sch.get_loops(sch.get_block("B"));
  ASSERT_EQ(b_loops.size(), 2u);
  EXPECT_EQ(b_loops[1].var.get(), loops[1].var.get());
  BlockRealize b = find_realize(sch.func(), "B");
  EXPECT_EQ(b->iter_values[0].get(), loops[0].var.get());
  EXPECT_EQ(b->iter_values[1].get(), loops[1].var.get());
  EXPECT_EQ(block_names(sch.func()), (std::vector<std::string>{"B", "C"}));
  expect_same_results(func, sch.func(), 1);
}

TEST(ComputeAt, NonDividingSplitGuardsTheProducer) {
  PrimFunc func = elementwise_pipeline();
  Schedule sch(func);
  std::vector<LoopRV> loops = sch.get_loops(sch.get_block("C"));
  std::vector<LoopRV> parts = sch.split(loops[0], {nullptr, 8});
  sch.compute_at(sch.get_block("B"), parts[0]);
  // 37 rows in tiles of 8: the last tile would run past row 36.
  EXPECT_EQ(loop_extents(sch, "B"), (std::vector<int64_t>{5, 8, 53}));
  EXPECT_FALSE(is_one(find_realize(sch.func(), "B")->predicate));
  expect_same_results(func, sch.func(), 1);
}

TEST(ComputeAt, ReductionProducerUnderEpilogueColumn) {
  PrimFunc func = matmul_bias_relu();
  Schedule sch(func);
  sch.compute_inline(sch.get_block("E"));
  std::vector<LoopRV> loops = sch.get_loops(sch.get_block("F"));
  sch.compute_at(sch.get_block("D"), loops[1]);
  // Only the reduction loop is left to D.
  EXPECT_EQ(loop_extents(sch, "D"), (std::vector<int64_t>{37, 53, 19}));
  EXPECT_EQ(sch.get_loops(sch.get_block("D"))[1].var.get(), loops[1].var.get());
  expect_same_results(func, sch.func(), 3);
}

TEST(ComputeAt, ChainOfProducers) {
  PrimFunc func = matmul_bias_relu();
  Schedule sch(func);
  std::vector<LoopRV> loops = sch.get_loops(sch.get_block("F"));
  sch.compute_at(sch.get_block("E"), loops[0]);
  sch.compute_at(sch.get_block("D"), loops[0]);
  EXPECT_EQ(block_names(sch.func()), (std::vector<std::string>{"D", "E", "F"}));
  EXPECT_EQ(loop_extents(sch, "D"), (std::vector<int64_t>{37, 53, 19}));
  EXPECT_EQ(loop_extents(sch, "E"), (std::vector<int64_t>{37, 53}));
  expect_same_results(func, sch.func(), 3);
}

TEST(ComputeAt, PaddingComputesOnlyTheRowsAConvolutionRowNeeds) {
  PrimFunc func = padded_conv();
  Schedule sch(func);
  std::vector<LoopRV> loops = sch.get_loops(sch.get_block("C"));
  sch.compute_at(sch.get_block("P"), loops[0]);
  EXPECT_EQ(loop_extents(sch, "P"), (std::vector<int64_t>{10, 3, 14}));
  expect_same_results(func, sch.func(), 2);
}

TEST(ComputeAt, PaddingWindowUnderTheColumnLoop) {
  PrimFunc func = padded_conv();
  Schedule sch(func);
  std::vector<LoopRV> loops = sch.get_loops(sch.get_block("C"));
  sch.compute_at(sch.get_block("P"), loops[1]);
  EXPECT_EQ(loop_extents(sch, "P"), (std::vector<int64_t>{10, 12, 3, 3}));
  expect_same_results(func, sch.func(), 2);
}

TEST(ComputeAt, ProducerUnderTheReductionLoopOfItsConsumer) {
  PrimFunc func = padded_conv();
  Schedule sch(func);
  std::vector<LoopRV> loops = sch.get_loops(sch.get_block("C"));
  ASSERT_EQ(loops.size(), 4u);
  sch.compute_at(sch.get_block("P"), loops[2]);
  // Row i + r, columns j .. j + 2.
  EXPECT_EQ(loop_extents(sch, "P"), (std::vector<int64_t>{10, 12, 3, 3}));
  expect_same_results(func, sch.func(), 2);
}

TEST(ReverseComputeAt, ConsumerRowUnderProducerRowLoop) {
  PrimFunc func = elementwise_pipeline();
  Schedule sch(func);
  std::vector<LoopRV> loops = sch.get_loops(sch.get_block("B"));
  sch.reverse_compute_at(sch.get_block("C"), loops[0]);
  EXPECT_EQ(loop_extents(sch, "C"), (std::vector<int64_t>{37, 53}));
  EXPECT_TRUE(nest_of(body_part(sch.func(), loops[0], 0), "B"));
  EXPECT_TRUE(nest_of(body_part(sch.func(), loops[0], 1), "C"));
  expect_same_results(func, sch.func(), 1);
}

TEST(ReverseComputeAt, EpilogueAfterTheReductionOfEachElement) {
  PrimFunc func = matmul_bias_relu();
  Schedule sch(func);
  std::vector<LoopRV> loops = sch.get_loops(sch.get_block("D"));
  sch.reverse_compute_at(sch.get_block("E"), loops[1]);
  sch.reverse_compute_at(sch.get_block("F"), loops[1]);
  EXPECT_EQ(loop_extents(sch, "E"), (std::vector<int64_t>{37, 53}));
  EXPECT_EQ(loop_extents(sch, "F"), (std::vector<int64_t>{37, 53}));
  EXPECT_EQ(block_names(sch.func()), (std::vector<std::string>{"D", "E", "F"}));
  EXPECT_TRUE(nest_of(body_part(sch.func(), loops[1], 1), "E"));
  EXPECT_TRUE(nest_of(body_part(sch.func(), loops[1], 2), "F"));
  expect_same_results(func, sch.func(), 3);
}

TEST(ReverseComputeAt, TiledProducerCarriesItsConsumer) {
  PrimFunc func = elementwise_pipeline();
  Schedule sch(func);
  std::vector<LoopRV> loops = sch.get_loops(sch.get_block("B"));
  std::vector<LoopRV> rows = sch.split(loops[0], {nullptr, 8});
  std::vector<LoopRV> cols = sch.split(loops[1], {nullptr, 16});
  sch.reorder({rows[0], cols[0], rows[1], cols[1]});
  sch.reverse_compute_at(sch.get_block("C"), cols[0]);
  EXPECT_EQ(loop_extents(sch, "C"), (std::vector<int64_t>{5, 4, 8, 16}));
  EXPECT_FALSE(is_one(find_realize(sch.func(), "C")->predicate));
  expect_same_results(func, sch.func(), 1);
}

TEST(ComputeAt, GoldenTextOfAGuardedTile) {
  Schedule sch(elementwise_pipeline());
  std::vector<LoopRV> loops = sch.get_loops(sch.get_block("C"));
  std::vector<LoopRV> rows = sch.split(loops[0], {nullptr, 8});
  sch.compute_at(sch.get_block("B"), rows[0]);
  expect_func_text(sch.func(), R"(@T.prim_func
def pipeline(A: T.handle, C: T.handle):
    T.func_attr({"global_symbol": "pipeline", "tir.noalias": 1})
    A_1 = T.match_buffer(A, (37, 53), "float32")
    C_1 = T.match_buffer(C, (37, 53), "float32")
    B = T.alloc_buffer((37, 53), "float32")
    for i_0 in range(5):
        for i, j in T.grid(8, 53):
            with T.block("B"):
                vi = T.axis.spatial(37, i_0 * 8 + i)
                vj = T.axis.spatial(53, j)
                T.where(i_0 * 8 + i < 37)
                T.reads(A_1[vi, vj])
                T.writes(B[vi, vj])
                B[vi, vj] = A_1[vi, vj] * T.float32(2)
        for i_1, j in T.grid(8, 53):
            with T.block("C"):
                vi = T.axis.spatial(37, i_0 * 8 + i_1)
                vj = T.axis.spatial(53, j)
                T.where(i_0 * 8 + i_1 < 37)
                T.reads(B[vi, vj])
                T.writes(C_1[vi, vj])
                C_1[vi, vj] = B[vi, vj] + T.float32(1)
)");
}

TEST(ComputeAt, GoldenTextOfThePaddingWindow) {
  Schedule sch(padded_conv());
  std::vector<LoopRV> loops = sch.get_loops(sch.get_block("C"));
  sch.compute_at(sch.get_block("P"), loops[1]);
  expect_func_text(sch.func(), R"(@T.prim_func
def conv(A: T.handle, W: T.handle, C: T.handle):
    T.func_attr({"global_symbol": "conv", "tir.noalias": 1})
    A_1 = T.match_buffer(A, (10, 12), "float32")
    W_1 = T.match_buffer(W, (3, 3), "float32")
    C_1 = T.match_buffer(C, (10, 12), "float32")
    P = T.alloc_buffer((12, 14), "float32")
    for i, j in T.grid(10, 12):
        for di, dj in T.grid(3, 3):
            with T.block("P"):
                vi = T.axis.spatial(12, i + di)
                vj = T.axis.spatial(14, j + dj)
                T.reads(A_1[vi - 1, vj - 1])
                T.writes(P[vi, vj])
                P[vi, vj] = T.if_then_else(vi >= 1 and vi < 11 and (vj >= 1 and vj < 13), A_1[vi - 1, vj - 1], T.float32(0))
        for r, s in T.grid(3, 3):
            with T.block("C"):
                vi, vj, vr, vs = T.axis.remap("SSRR", [i, j, r, s])
                T.reads(P[vi + vr, vj + vs], W_1[vr, vs])
                T.writes(C_1[vi, vj])
                with T.init():
                    C_1[vi, vj] = T.float32(0)
                C_1[vi, vj] = C_1[vi, vj] + P[vi + vr, vj + vs] * W_1[vr, vs]
)");
}

TEST(ReverseComputeAt, GoldenTextOfATiledConsumer) {
  Schedule sch(elementwise_pipeline());
  std::vector<LoopRV> loops = sch.get_loops(sch.get_block("B"));
  std::vector<LoopRV> rows = sch.split(loops[0], {nullptr, 8});
  std::vector<LoopRV> cols = sch.split(loops[1], {nullptr, 16});
  sch.reorder({rows[0], cols[0], rows[1], cols[1]});
  sch.reverse_compute_at(sch.get_block("C"), cols[0]);
  expect_func_text(sch.func(), R"(@T.prim_func
def pipeline(A: T.handle, C: T.handle):
    T.func_attr({"global_symbol": "pipeline", "tir.noalias": 1})
    A_1 = T.match_buffer(A, (37, 53), "float32")
    C_1 = T.match_buffer(C, (37, 53), "float32")
    B = T.alloc_buffer((37, 53), "float32")
    for i_0, j_0 in T.grid(5, 4):
        for i_1, j_1 in T.grid(8, 16):
            with T.block("B"):
                vi = T.axis.spatial(37, i_0 * 8 + i_1)
                vj = T.axis.spatial(53, j_0 * 16 + j_1)
                T.where(i_0 * 8 + i_1 < 37 and j_0 * 16 + j_1 < 53)
                T.reads(A_1[vi, vj])
                T.writes(B[vi, vj])
                B[vi, vj] = A_1[vi, vj] * T.float32(2)
        for i, j in T.grid(8, 16):
            with T.block("C"):
                vi = T.axis.spatial(37, i_0 * 8 + i)
                vj = T.axis.spatial(53, j_0 * 16 + j)
                T.where(i_0 * 8 + i < 37 and j_0 * 16 + j < 53)
                T.reads(B[vi, vj])
                T.writes(C_1[vi, vj])
                C_1[vi, vj] = B[vi, vj] + T.float32(1)
)");
}

}  // namespace
}  // namespace anvil::tir
