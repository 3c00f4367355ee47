// The x86 schedule of nn.matmul (the form AlterOpLayout gives dense layers with constant
// weights), applied directly and compared with the reference interpreter, on shapes that
// pick different vector widths, row tiles and epilogues.
#include <gtest/gtest.h>

#include "topi/topi_test_util.h"
#include "topi/x86/nn_dense.h"
#include "topi/x86_schedule_check.h"

namespace anvil {
namespace {

TEST(X86DenseSchedule, SingleRowWithBias) {
  // 40 columns: 8 lanes, 5 vectors per tile.
  x86_test::check_x86_schedule(R"(fn (%x: Tensor[(1, 96), float32],
      %w: Tensor[(96, 40), float32], %b: Tensor[(40), float32]) {
    %0 = nn.matmul(%x, %w);
    add(%0, %b)
  })",
                               "nn.matmul");
}

TEST(X86DenseSchedule, RowTilesAndRelu) {
  x86_test::check_x86_schedule(R"(fn (%x: Tensor[(6, 300), float32],
      %w: Tensor[(300, 64), float32]) {
    %0 = nn.matmul(%x, %w);
    nn.relu(%0)
  })",
                               "nn.matmul");
}

TEST(X86DenseSchedule, BatchedLeftOperand) {
  x86_test::check_x86_schedule(R"(fn (%x: Tensor[(2, 3, 16), float32],
      %w: Tensor[(16, 32), float32]) {
    nn.matmul(%x, %w)
  })",
                               "nn.matmul");
}

TEST(X86DenseSchedule, PackedWeightWithGelu) {
  // 96 columns in blocks of 32 (2 vectors of 16), 7 rows from (7, 1, 40) data, a gelu-like
  // epilogue as in a transformer's MLP.
  x86_test::check_x86_schedule(R"(fn (%x: Tensor[(7, 1, 40), float32],
      %w: Tensor[(3, 40, 32), float32], %b: Tensor[(96), float32]) {
    %0 = nn.contrib_dense_pack(%x, %w);
    %1 = add(%0, %b);
    %2 = erf(%1);
    multiply(%1, %2)
  })",
                               "nn.contrib_dense_pack");
}

TEST(X86DenseSchedule, BatchedActivationsWithAColumnTail) {
  // The attention product of a transformer: both operands activations, 37 columns = two full
  // vectors and a guarded one of 5, 11 rows = two tiles of 4 and a partial one; the batch is the
  // parallel loop.
  x86_test::check_x86_schedule(R"(fn (%a: Tensor[(4, 11, 24), float32],
      %b: Tensor[(4, 24, 37), float32]) {
    %0 = matmul(%a, %b);
    multiply(%0, 0.5f)
  })",
                               "matmul");
}

// Counts the 16-lane stores of s, and those of them under a guard.
void count_vector_stores(const tir::Stmt& s, bool guarded, int& stores, int& guarded_stores) {
  if (const auto* store = tir::as<tir::BufferStoreNode>(s)) {
    if (store->value.dtype().lanes == 16) {
      ++stores;
      guarded_stores += guarded;
    }
  } else if (const auto* loop = tir::as<tir::ForNode>(s)) {
    count_vector_stores(loop->body, guarded, stores, guarded_stores);
  } else if (const auto* seq = tir::as<tir::SeqStmtNode>(s)) {
    for (const tir::Stmt& child : seq->seq)
      count_vector_stores(child, guarded, stores, guarded_stores);
  } else if (const auto* branch = tir::as<tir::IfThenElseNode>(s)) {
    count_vector_stores(branch->then_case, true, stores, guarded_stores);
    if (branch->else_case) count_vector_stores(branch->else_case, true, stores, guarded_stores);
  } else if (const auto* let = tir::as<tir::LetStmtNode>(s)) {
    count_vector_stores(let->body, guarded, stores, guarded_stores);
  } else if (const auto* alloc = tir::as<tir::AllocateNode>(s)) {
    count_vector_stores(alloc->body, guarded, stores, guarded_stores);
  }
}

TEST(X86DenseSchedule, ColumnTailLeavesFullTilesWithoutGuards) {
  // Lowered, the full row and column tiles are vector code with no guard (the guards that the
  // two non-dividing splits leave are confined to the tails by partition_loops); the tail
  // columns stay scalar.
  std::vector<Tensor> inputs, expected;
  tir::PrimFunc scheduled = x86_test::schedule_group_with(R"(fn (%a: Tensor[(4, 11, 24), float32],
      %b: Tensor[(4, 24, 37), float32]) { matmul(%a, %b) })",
                                                          "matmul", inputs, expected);
  tir::transform::LowerOptions options;
  options.packed_api = false;
  tir::PrimFunc lowered = tir::transform::lower(scheduled, options);
  int stores = 0, guarded_stores = 0;
  count_vector_stores(lowered->body, false, stores, guarded_stores);
  EXPECT_GT(stores, 0) << tir::print(lowered);
  EXPECT_EQ(guarded_stores, 0) << tir::print(lowered);
}

TEST(X86DenseSchedule, RefusesColumnsWithoutFullVectors) {
  // 6 columns fit no vector of 4 or more lanes: the schedule declines and the group scheduler
  // falls back to the generic schedule, which check_group runs.
  std::vector<Tensor> inputs, expected;
  EXPECT_THROW(x86_test::schedule_group_with(R"(fn (%x: Tensor[(2, 5), float32],
      %w: Tensor[(5, 6), float32]) { nn.matmul(%x, %w) })",
                                             "nn.matmul", inputs, expected),
               Error);
  topi_test::check_group(R"(fn (%x: Tensor[(2, 5), float32], %w: Tensor[(5, 6), float32]) {
    nn.matmul(%x, %w)
  })",
                         {}, {1e-5, 1e-5});
}

}  // namespace
// The heuristic's picks: a packed 1000-class classifier takes its packed block of 5 x 8 half
// vectors; a ViT projection (197 x 768 by 768 x 768) takes 4 rows x 4 vectors and panels of
// 256; 197 columns take full vectors with a guarded tail over a batch of heads.
TEST(X86DenseKnobs, HeuristicPicks) {
  topi::x86::DenseShape classifier;
  classifier.rows = 1, classifier.cols = 1000, classifier.depth = 2048;
  classifier.packed_block = 40;
  topi::x86::DenseKnobs k = topi::x86::default_dense_knobs(classifier, 512);
  EXPECT_EQ(k.lanes, 8);
  EXPECT_EQ(k.vectors, 5);
  EXPECT_EQ(k.tile_rows, 1);
  EXPECT_EQ(k.k_panel, 256);
  EXPECT_FALSE(k.column_tail);

  topi::x86::DenseShape projection;
  projection.rows = 197, projection.cols = 768, projection.depth = 768;
  k = topi::x86::default_dense_knobs(projection, 512);
  EXPECT_EQ(k.lanes, 16);
  EXPECT_EQ(k.vectors, 4);
  EXPECT_EQ(k.tile_rows, 4);
  EXPECT_EQ(k.k_panel, 256);

  topi::x86::DenseShape scores;  // attention: (12 heads) x 197 x 197 by 64
  scores.rows = 197, scores.cols = 197, scores.depth = 64, scores.batch = 12;
  k = topi::x86::default_dense_knobs(scores, 512);
  EXPECT_TRUE(k.column_tail);
  EXPECT_EQ(k.lanes, 16);
  EXPECT_EQ(k.vectors, 4);
  EXPECT_EQ(k.k_panel, 64);
  scores.batch = 1;  // no batch to run in parallel: declined
  EXPECT_THROW(topi::x86::default_dense_knobs(scores, 512), Error);

  topi::x86::DenseShape symbolic;  // a size-variable reduction runs whole
  symbolic.rows = 8, symbolic.cols = 64;
  EXPECT_EQ(topi::x86::default_dense_knobs(symbolic, 256).k_panel, 0);
  EXPECT_EQ(topi::x86::default_dense_knobs(symbolic, 256).lanes, 8);
}

}  // namespace anvil
