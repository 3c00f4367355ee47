// rfactor: the partial and fold blocks it makes, the numbers against the unfactored function
// (sums within rounding, max exactly) on divisible and ragged splits, the schedule a
// cross-lane reduction uses after it, and the cases it refuses.
#include <gtest/gtest.h>

#include "anvil/support/error.h"
#include "anvil/tir/schedule.h"
#include "schedule_loop_programs.h"

namespace anvil::tir {
namespace {

using namespace loop_testing;

// B[i] = sum_k A[i, k] (or max).
PrimFunc row_reduce(int64_t rows, int64_t length, bool max = false) {
  te::Tensor a = te::placeholder({rows, length}, DataType::float32(), "A");
  IterVar k = te::reduce_axis(length, "k");
  te::Tensor b = te::compute(
      {rows},
      [&](const std::vector<Var>& i) {
        return max ? max_reduce(a(i[0], k.var), {k}) : sum(a(i[0], k.var), {k});
      },
      "B");
  return te::create_prim_func({a, b}, "row_reduce");
}

// B[n, g] = sum over (c, p) of A[n, g * channels + c, p]: a group norm's statistics.
PrimFunc group_sum(int64_t groups, int64_t channels, int64_t plane) {
  te::Tensor a = te::placeholder({2, groups * channels, plane}, DataType::float32(), "A");
  IterVar c = te::reduce_axis(channels, "c");
  IterVar p = te::reduce_axis(plane, "p");
  te::Tensor b = te::compute(
      {2, groups},
      [&](const std::vector<Var>& i) {
        return sum(a(i[0], i[1] * channels + c.var, p.var) * f32(0.5), {c, p});
      },
      "B");
  return te::create_prim_func({a, b}, "group_sum");
}

TEST(Rfactor, PartialAndFoldBlocks) {
  PrimFunc func = row_reduce(5, 37);
  Schedule sch(func);
  std::vector<LoopRV> loops = sch.get_loops(sch.get_block("B"));
  std::vector<LoopRV> k = sch.split(loops[1], {nullptr, 8});
  BlockRV rf = sch.rfactor(sch.get_block("B"), k[1]);
  EXPECT_EQ(rf.name, "B_rf");
  EXPECT_EQ(loop_names(sch, "B_rf"), (std::vector<std::string>{"i", "k_0", "k_1"}));
  const Block partial = sch.get(rf);
  ASSERT_EQ(partial->iter_vars.size(), 3u);
  // The spatial var, then one var per reduction loop in loop order: k_0 folds, k_1 is the lane.
  EXPECT_EQ(partial->iter_vars[0].kind, IterKind::Spatial);
  EXPECT_EQ(partial->iter_vars[1].kind, IterKind::Reduce);
  EXPECT_EQ(partial->iter_vars[2].kind, IterKind::Spatial);
  ASSERT_EQ(partial->writes.size(), 1u);
  EXPECT_EQ(partial->writes[0].buffer->name, "B_rf");
  // The ragged split's guard stays on the partial block.
  EXPECT_FALSE(is_one(realize_of(sch.func(), "B_rf")->predicate));
  // The fold keeps the name, the output and the init, over the rows and the 8 lanes.
  const Block fold = sch.get(sch.get_block("B"));
  ASSERT_TRUE(fold->init);
  EXPECT_EQ(fold->writes[0].buffer->name, "B");
  EXPECT_EQ(loop_extents(sch, "B"), (std::vector<int64_t>{5, 8}));
  expect_same_results(func, sch.func(), 1, 1e-5);
}

TEST(Rfactor, MaxIsExact) {
  PrimFunc func = row_reduce(3, 29, /*max=*/true);
  Schedule sch(func);
  std::vector<LoopRV> k = sch.split(sch.get_loops(sch.get_block("B"))[1], {nullptr, 4});
  sch.rfactor(sch.get_block("B"), k[1]);
  expect_same_results(func, sch.func(), 1);
}

TEST(Rfactor, InnerOfTwoReductionVariables) {
  PrimFunc func = group_sum(3, 5, 23);
  Schedule sch(func);
  std::vector<LoopRV> loops = sch.get_loops(sch.get_block("B"));
  ASSERT_EQ(loops.size(), 4u);
  std::vector<LoopRV> p = sch.split(loops[3], {nullptr, 16});
  sch.rfactor(sch.get_block("B"), p[1]);
  expect_same_results(func, sch.func(), 1, 1e-5);
}

// The outer part of a split (k = k_0 * 8 + k_1): one partial per chunk of 8, each folding
// the chunk's elements.
TEST(Rfactor, OuterPartOfASplit) {
  PrimFunc func = row_reduce(4, 30);
  Schedule sch(func);
  std::vector<LoopRV> k = sch.split(sch.get_loops(sch.get_block("B"))[1], {nullptr, 8});
  sch.rfactor(sch.get_block("B"), k[0]);
  EXPECT_EQ(loop_extents(sch, "B"), (std::vector<int64_t>{4, 4}));
  expect_same_results(func, sch.func(), 1, 1e-5);
}

// Two reduction loops fused and split: the lane is bound through floordiv and floormod.
TEST(Rfactor, FusedReductionLoops) {
  PrimFunc func = group_sum(2, 3, 10);
  Schedule sch(func);
  std::vector<LoopRV> loops = sch.get_loops(sch.get_block("B"));
  LoopRV fused = sch.fuse({loops[2], loops[3]});
  std::vector<LoopRV> f = sch.split(fused, {nullptr, 8});
  sch.rfactor(sch.get_block("B"), f[1]);
  expect_same_results(func, sch.func(), 1, 1e-5);
}

// The cross-lane schedule: the fold under the row loop, the partials' init split off, the
// lanes vectorized and the rows parallel; lowering compacts the partials to one row.
TEST(Rfactor, CrossLaneScheduleKeepsResults) {
  PrimFunc func = row_reduce(6, 70);
  Schedule sch(func);
  std::vector<LoopRV> loops = sch.get_loops(sch.get_block("B"));
  std::vector<LoopRV> k = sch.split(loops[1], {nullptr, 16});
  BlockRV rf = sch.rfactor(sch.get_block("B"), k[1]);
  sch.reverse_compute_at(sch.get_block("B"), loops[0]);
  BlockRV init = sch.decompose_reduction(rf, k[0]);
  sch.vectorize(sch.get_loops(init).back());
  sch.vectorize(k[1]);
  sch.parallel(loops[0]);
  EXPECT_EQ(loop_names(sch, "B"), (std::vector<std::string>{"i", "k_1_fold"}));
  expect_same_results(func, sch.func(), 1, 1e-5);
}

TEST(Rfactor, Refusals) {
  {
    // A loop bound to spatial and reduction variables both (a fuse across them).
    Schedule sch(row_reduce(4, 32));
    std::vector<LoopRV> loops = sch.get_loops(sch.get_block("B"));
    LoopRV fused = sch.fuse(loops);
    EXPECT_THROW(
        {
          try {
            sch.rfactor(sch.get_block("B"), fused);
          } catch (const Error& e) {
            EXPECT_NE(std::string(e.what()).find("spatial variable"), std::string::npos)
                << e.what();
            throw;
          }
        },
        Error);
  }
  {
    // A spatial loop.
    Schedule sch(row_reduce(4, 32));
    EXPECT_THROW(sch.rfactor(sch.get_block("B"), sch.get_loops(sch.get_block("B"))[0]), Error);
  }
  {
    // A block that is not a reduction.
    Schedule sch(add_one(16));
    EXPECT_THROW(sch.rfactor(sch.get_block("B"), sch.get_loops(sch.get_block("B"))[0]), Error);
  }
  {
    // A loop of another block.
    Schedule sch(two_stage(16));
    EXPECT_THROW(sch.rfactor(sch.get_block("B"), sch.get_loops(sch.get_block("C"))[0]), Error);
  }
}

}  // namespace
}  // namespace anvil::tir
