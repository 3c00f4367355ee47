// decompose_reduction: where the init block goes, which loops it gets, what
// its predicate keeps, and the numbers against the unscheduled function.
#include <gtest/gtest.h>

#include "anvil/support/error.h"
#include "anvil/tir/parser.h"
#include "anvil/tir/schedule.h"
#include "anvil/tir/structural_equal.h"
#include "schedule_loop_programs.h"

namespace anvil::tir {
namespace {

using namespace loop_testing;

TEST(DecomposeReduction, AtTheReductionLoop) {
  PrimFunc func = matmul(37, 53, 19);
  Schedule sch(func);
  std::vector<LoopRV> loops = sch.get_loops(sch.get_block("C"));
  BlockRV init = sch.decompose_reduction(sch.get_block("C"), loops[2]);
  EXPECT_EQ(init.name, "C_init");
  // The init sits in j's body before the k loop and needs no loop of its own.
  EXPECT_EQ(loop_names(sch, "C_init"), (std::vector<std::string>{"i", "j"}));
  EXPECT_EQ(loop_names(sch, "C"), (std::vector<std::string>{"i", "j", "k"}));
  const auto* body = as<SeqStmtNode>(loop_of(sch.func(), loops[1].var)->body);
  ASSERT_TRUE(body);
  ASSERT_EQ(body->seq.size(), 2u);
  const auto* init_realize = as<BlockRealizeNode>(body->seq[0]);
  ASSERT_TRUE(init_realize);
  EXPECT_EQ(init_realize->block->name, "C_init");
  EXPECT_EQ(as<ForNode>(body->seq[1])->loop_var.get(), loops[2].var.get());

  const Block& init_block = init_realize->block;
  ASSERT_EQ(init_block->iter_vars.size(), 2u);
  EXPECT_EQ(init_block->iter_vars[0].var->name, "vi_init");
  EXPECT_EQ(init_block->iter_vars[1].var->name, "vj_init");
  for (const IterVar& iv : init_block->iter_vars) EXPECT_EQ(iv.kind, IterKind::Spatial);
  EXPECT_EQ(init_realize->iter_values[0].get(), loops[0].var.get());
  EXPECT_EQ(init_realize->iter_values[1].get(), loops[1].var.get());
  EXPECT_TRUE(init_block->reads.empty());
  ASSERT_EQ(init_block->writes.size(), 1u);
  EXPECT_EQ(init_block->writes[0].buffer->name, "C");
  const auto* st = as<BufferStoreNode>(init_block->body);
  ASSERT_TRUE(st);
  EXPECT_EQ(st->indices[0].get(), init_block->iter_vars[0].var.get());
  EXPECT_TRUE(as<FloatImmNode>(st->value));

  EXPECT_FALSE(realize_of(sch.func(), "C")->block->init);
  expect_same_results(func, sch.func(), 2);
}

TEST(DecomposeReduction, AtTheOutermostLoopCopiesTheSpatialLoops) {
  PrimFunc func = matmul(37, 53, 19);
  Schedule sch(func);
  std::vector<LoopRV> loops = sch.get_loops(sch.get_block("C"));
  sch.decompose_reduction(sch.get_block("C"), loops[0]);
  EXPECT_EQ(loop_names(sch, "C_init"), (std::vector<std::string>{"i_init", "j_init"}));
  EXPECT_EQ(loop_extents(sch, "C_init"), (std::vector<int64_t>{37, 53}));
  // Root body: the init nest, then the original nest.
  const auto* root = as<BlockRealizeNode>(sch.func()->body);
  const auto* seq = as<SeqStmtNode>(root->block->body);
  ASSERT_TRUE(seq);
  ASSERT_EQ(seq->seq.size(), 2u);
  EXPECT_EQ(as<ForNode>(seq->seq[1])->loop_var.get(), loops[0].var.get());
  expect_same_results(func, sch.func(), 2);
}

TEST(DecomposeReduction, ReductionLoopOutermost) {
  PrimFunc func = matmul(7, 9, 5);
  Schedule sch(func);
  std::vector<LoopRV> loops = sch.get_loops(sch.get_block("C"));
  sch.reorder({loops[2], loops[0], loops[1]});
  sch.decompose_reduction(sch.get_block("C"), loops[2]);
  EXPECT_EQ(loop_names(sch, "C_init"), (std::vector<std::string>{"i_init", "j_init"}));
  EXPECT_EQ(loop_names(sch, "C"), (std::vector<std::string>{"k", "i", "j"}));
  expect_same_results(func, sch.func(), 2);
}

TEST(DecomposeReduction, DropsThePredicateOfASplitReductionLoop) {
  PrimFunc func = matmul(6, 10, 19);
  Schedule sch(func);
  std::vector<LoopRV> loops = sch.get_loops(sch.get_block("C"));
  std::vector<LoopRV> k = sch.split(loops[2], {nullptr, 4});
  sch.decompose_reduction(sch.get_block("C"), k[0]);
  EXPECT_TRUE(is_one(realize_of(sch.func(), "C_init")->predicate));
  EXPECT_FALSE(is_one(realize_of(sch.func(), "C")->predicate));
  expect_same_results(func, sch.func(), 2);
}

TEST(DecomposeReduction, KeepsThePredicateOfASplitSpatialLoop) {
  PrimFunc func = matmul(37, 10, 6);
  Schedule sch(func);
  std::vector<LoopRV> loops = sch.get_loops(sch.get_block("C"));
  std::vector<LoopRV> i = sch.split(loops[0], {nullptr, 8});
  sch.decompose_reduction(sch.get_block("C"), i[0]);
  EXPECT_EQ(loop_names(sch, "C_init"),
            (std::vector<std::string>{"i_0_init", "i_1_init", "j_init"}));
  const auto* lt = as<LTNode>(realize_of(sch.func(), "C_init")->predicate);
  ASSERT_TRUE(lt);
  EXPECT_TRUE(is_const_int(lt->b, 37));
  // The init's predicate speaks of its own loops.
  EXPECT_FALSE(uses_var(lt->a, [&](const VarNode* v) { return v == i[0].var.get(); }));
  expect_same_results(func, sch.func(), 2);
}

TEST(DecomposeReduction, TileThenDecomposeInsideTheTile) {
  PrimFunc func = matmul(37, 53, 19);
  Schedule sch(func);
  std::vector<LoopRV> loops = sch.get_loops(sch.get_block("C"));
  std::vector<LoopRV> i = sch.split(loops[0], {nullptr, 8});
  std::vector<LoopRV> j = sch.split(loops[1], {nullptr, 16});
  sch.reorder({i[0], j[0], loops[2], i[1], j[1]});
  sch.decompose_reduction(sch.get_block("C"), loops[2]);
  EXPECT_EQ(loop_names(sch, "C_init"),
            (std::vector<std::string>{"i_0", "j_0", "i_1_init", "j_1_init"}));
  expect_same_results(func, sch.func(), 2);
}

TEST(DecomposeReduction, InitNamesStayUnique) {
  // A block already called C_init makes the new one C_init_1.
  te::Tensor a = te::placeholder({4, 5}, DataType::float32(), "A");
  IterVar k = te::reduce_axis(5, "k");
  te::Tensor first = te::compute(
      {4}, [&](const std::vector<Var>& i) { return sum(a(i[0], k.var), {k}); }, "C_init");
  IterVar k2 = te::reduce_axis(4, "k");
  te::Tensor second = te::compute(
      {1}, [&](const std::vector<Var>&) { return sum(first(k2.var), {k2}); }, "C");
  PrimFunc func = te::create_prim_func({a, second}, "nested");
  Schedule sch(func);
  BlockRV init = sch.decompose_reduction(sch.get_block("C"), sch.get_loops(sch.get_block("C"))[0]);
  EXPECT_EQ(init.name, "C_init_1");
  expect_same_results(func, sch.func(), 1);
}

TEST(DecomposeReductionGolden, AtTheReductionLoop) {
  Schedule sch(matmul(4, 5, 6));
  sch.decompose_reduction(sch.get_block("C"), sch.get_loops(sch.get_block("C"))[2]);
  EXPECT_EQ(body_text(sch.func()), R"(for i, j in T.grid(4, 5):
    with T.block("C_init"):
        vi_init, vj_init = T.axis.remap("SS", [i, j])
        T.reads()
        T.writes(C[vi_init, vj_init])
        C[vi_init, vj_init] = T.float32(0)
    for k in range(6):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            T.reads(A[vi, vk], B[vk, vj])
            T.writes(C[vi, vj])
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
)");
}

TEST(DecomposeReductionGolden, ParsedRowSum) {
  PrimFunc func = parse_prim_func(R"(@T.prim_func
def row_sum(A: T.handle, B: T.handle):
    A_1 = T.match_buffer(A, (19, 1001), "float32")
    B_1 = T.match_buffer(B, (19,), "float32")
    for i, k in T.grid(19, 1001):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            T.reads(A_1[vi, vk])
            T.writes(B_1[vi])
            with T.init():
                B_1[vi] = T.float32(0)
            B_1[vi] = B_1[vi] + A_1[vi, vk]
)");
  Schedule sch(func);
  std::vector<LoopRV> l = sch.get_loops(sch.get_block("B"));
  std::vector<LoopRV> k = sch.split(l[1], {nullptr, 16});
  sch.reorder({k[0], l[0]});
  sch.decompose_reduction(sch.get_block("B"), k[0]);
  const std::string expected = R"(@T.prim_func
def row_sum(A: T.handle, B: T.handle):
    T.func_attr({"global_symbol": "row_sum"})
    A_1 = T.match_buffer(A, (19, 1001), "float32")
    B_1 = T.match_buffer(B, (19,), "float32")
    for i_init in range(19):
        with T.block("B_init"):
            vi_init = T.axis.spatial(19, i_init)
            T.reads()
            T.writes(B_1[vi_init])
            B_1[vi_init] = T.float32(0)
    for k_0, i, k_1 in T.grid(63, 19, 16):
        with T.block("B"):
            vi = T.axis.spatial(19, i)
            vk = T.axis.reduce(1001, k_0 * 16 + k_1)
            T.where(k_0 * 16 + k_1 < 1001)
            T.reads(A_1[vi, vk])
            T.writes(B_1[vi])
            B_1[vi] = B_1[vi] + A_1[vi, vk]
)";
  EXPECT_EQ(print(sch.func()), expected);
  EXPECT_TRUE(structural_equal(sch.func(), parse_prim_func(expected)));
  expect_same_results(func, sch.func(), 1);
}

}  // namespace
}  // namespace anvil::tir
