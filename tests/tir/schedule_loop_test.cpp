// The Schedule lookups and split, fuse and reorder on TE operators with odd
// shapes: the loop structure and bindings of the result, and its numbers
// against the unscheduled function.
#include <gtest/gtest.h>

#include <initializer_list>

#include "anvil/support/error.h"
#include "anvil/tir/parser.h"
#include "anvil/tir/schedule.h"
#include "anvil/tir/structural_equal.h"
#include "schedule_loop_programs.h"

namespace anvil::tir {
namespace {

using namespace loop_testing;

TEST(ScheduleLookup, UnscheduledMatmulMatchesPlainCpp) {
  // Anchors the numeric comparisons of these tests: the unscheduled function
  // computes the product.
  PrimFunc func = matmul(37, 53, 19);
  auto inputs = random_inputs(func, 2);
  auto out = run(func, inputs);
  for (int i = 0; i < 37; ++i)
    for (int j = 0; j < 53; ++j) {
      float acc = 0;
      for (int k = 0; k < 19; ++k)
        acc += float(inputs[0][i * 19 + k]) * float(inputs[1][k * 53 + j]);
      ASSERT_NEAR(out[2][i * 53 + j], acc, 1e-5) << i << ", " << j;
    }
}

TEST(ScheduleLookup, BlocksAndLoops) {
  Schedule sch(two_stage(10));
  std::vector<BlockRV> children = sch.get_child_blocks(sch.get_block("root"));
  ASSERT_EQ(children.size(), 2u);
  EXPECT_EQ(children[0].name, "B");
  EXPECT_EQ(children[1].name, "C");
  EXPECT_EQ(loop_names(sch, "C"), (std::vector<std::string>{"i"}));
  EXPECT_TRUE(sch.get_child_blocks(sch.get_block("B")).empty());

  Schedule mm(matmul(37, 53, 19));
  EXPECT_EQ(loop_names(mm, "C"), (std::vector<std::string>{"i", "j", "k"}));
  EXPECT_EQ(loop_extents(mm, "C"), (std::vector<int64_t>{37, 53, 19}));
}

// sch.get and loop_extent follow a handle through rewrites: the same block and loop
// variables denote the rebuilt nodes; a loop that a primitive replaced is gone.
TEST(ScheduleLookup, GetByHandle) {
  Schedule sch(matmul(37, 53, 19));
  BlockRV c = sch.get_block("C");
  EXPECT_EQ(sch.get(c)->name, "C");
  EXPECT_EQ(sch.get(c)->iter_vars.size(), 3u);
  std::vector<LoopRV> loops = sch.get_loops(c);
  EXPECT_EQ(sch.get(loops[1])->loop_var.get(), loops[1].var.get());
  EXPECT_EQ(sch.loop_extent(loops[2]), 19);
  std::vector<LoopRV> parts = sch.split(loops[1], {nullptr, 8});
  EXPECT_EQ(sch.loop_extent(parts[0]), 7);  // ceil(53 / 8), the tail guarded
  EXPECT_EQ(sch.loop_extent(parts[1]), 8);
  EXPECT_EQ(loop_extents(sch, "C"), (std::vector<int64_t>{37, 7, 8, 19}));
  EXPECT_THROW(sch.get(loops[1]), Error);
  EXPECT_THROW(sch.get(BlockRV{"missing"}), Error);
}

TEST(ScheduleLookup, FunctionWithoutBlocksGetsARootBlock) {
  Buffer a = BufferNode::make("A", DataType::float32(), {8});
  Var pa = VarNode::make("a", DataType::handle());
  Var i = VarNode::make("i");
  Stmt body = for_loop(i, 0, 8, store(a, f32(0), {i}));
  Schedule sch(PrimFuncNode::make({pa}, {{pa, a}}, body));
  const auto* root = as<BlockRealizeNode>(sch.func()->body);
  ASSERT_TRUE(root);
  EXPECT_EQ(root->block->name, "root");
  EXPECT_EQ(root->block->body.get(), body.get());
  // Its loops are reachable and schedulable.
  std::vector<LoopRV> parts = sch.split(LoopRV{i}, {nullptr, 4});
  EXPECT_EQ(parts[0].var->name, "i_0");
}

TEST(Split, DividingFactorsNeedNoPredicate) {
  PrimFunc func = add_one(1001);
  Schedule sch(func);
  LoopRV i = sch.get_loops(sch.get_block("B"))[0];
  std::vector<LoopRV> parts = sch.split(i, {nullptr, 13});
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(loop_names(sch, "B"), (std::vector<std::string>{"i_0", "i_1"}));
  EXPECT_EQ(loop_extents(sch, "B"), (std::vector<int64_t>{77, 13}));
  BlockRealize b = realize_of(sch.func(), "B");
  EXPECT_TRUE(is_one(b->predicate));
  // vi = i_0 * 13 + i_1
  const auto* add = as<AddNode>(b->iter_values[0]);
  ASSERT_TRUE(add);
  EXPECT_EQ(add->b.get(), parts[1].var.get());
  const auto* mul = as<MulNode>(add->a);
  ASSERT_TRUE(mul);
  EXPECT_EQ(mul->a.get(), parts[0].var.get());
  EXPECT_TRUE(is_const_int(mul->b, 13));
  // The old loop is gone.
  EXPECT_FALSE(loop_of(sch.func(), i.var));
  expect_same_results(func, sch.func(), 1);
}

TEST(Split, NonDividingFactorGuardsTheBlock) {
  PrimFunc func = add_one(1001);
  Schedule sch(func);
  LoopRV i = sch.get_loops(sch.get_block("B"))[0];
  std::vector<LoopRV> parts = sch.split(i, {nullptr, 16});
  EXPECT_EQ(loop_extents(sch, "B"), (std::vector<int64_t>{63, 16}));
  BlockRealize b = realize_of(sch.func(), "B");
  const auto* lt = as<LTNode>(b->predicate);
  ASSERT_TRUE(lt) << "expected i_0 * 16 + i_1 < 1001";
  EXPECT_TRUE(is_const_int(lt->b, 1001));
  expect_same_results(func, sch.func(), 1);
}

TEST(Split, InferredMiddleFactorOfAReductionLoop) {
  PrimFunc func = matmul(37, 53, 19);
  Schedule sch(func);
  LoopRV k = sch.get_loops(sch.get_block("C"))[2];
  std::vector<LoopRV> parts = sch.split(k, {2, nullptr, 4});
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(loop_names(sch, "C"), (std::vector<std::string>{"i", "j", "k_0", "k_1", "k_2"}));
  EXPECT_EQ(loop_extents(sch, "C"), (std::vector<int64_t>{37, 53, 2, 3, 4}));
  EXPECT_FALSE(is_one(realize_of(sch.func(), "C")->predicate));
  expect_same_results(func, sch.func(), 2);
}

TEST(Split, SplittingASplitLoopKeepsNamesUnique) {
  PrimFunc func = add_one(1001);
  Schedule sch(func);
  std::vector<LoopRV> parts = sch.split(sch.get_loops(sch.get_block("B"))[0], {nullptr, 32});
  std::vector<LoopRV> inner = sch.split(parts[1], {4, 8});
  EXPECT_EQ(loop_names(sch, "B"), (std::vector<std::string>{"i_0", "i_1_0", "i_1_1"}));
  EXPECT_EQ(loop_extents(sch, "B"), (std::vector<int64_t>{32, 4, 8}));
  expect_same_results(func, sch.func(), 1);
}

// Runs func, B = A + 1 over n elements (n a size variable), at each size and checks every
// element of B.
void expect_adds_one_at_sizes(const PrimFunc& func, const Var& n,
                              std::initializer_list<int64_t> sizes) {
  for (int64_t size : sizes) {
    std::vector<double> in(static_cast<size_t>(size)), out(static_cast<size_t>(size), std::nan(""));
    for (int64_t x = 0; x < size; ++x) in[size_t(x)] = double(x) * 0.5;
    tir::testing::LoopInterpreter interpreter;
    interpreter.bind(n, size);
    interpreter.run(transform::convert_blocks_to_loops(func), {&in, &out});
    for (int64_t x = 0; x < size; ++x)
      EXPECT_EQ(out[size_t(x)], double(x) * 0.5 + 1) << "size " << size << ", element " << x;
  }
}

TEST(Split, SymbolicExtent) {
  Var n = VarNode::make("n");
  te::Tensor a = te::placeholder({n}, DataType::float32(), "A");
  te::Tensor b = te::compute(
      {n}, [&](const std::vector<Var>& i) { return a(i[0]) + f32(1); }, "B");
  PrimFunc func = te::create_prim_func({a, b}, "add_one_n");
  Schedule sch(func);
  std::vector<LoopRV> parts = sch.split(sch.get_loops(sch.get_block("B"))[0], {nullptr, 8});
  // The outer extent is ceildiv(n, 8) and the block is guarded.
  EXPECT_TRUE(as<FloorDivNode>(loop_of(sch.func(), parts[0].var)->extent));
  EXPECT_TRUE(as<LTNode>(realize_of(sch.func(), "B")->predicate));
  expect_adds_one_at_sizes(sch.func(), n, {1, 8, 21});
}

TEST(Fuse, TwoSpatialLoops) {
  PrimFunc func = matmul(37, 53, 19);
  Schedule sch(func);
  std::vector<LoopRV> loops = sch.get_loops(sch.get_block("C"));
  LoopRV fused = sch.fuse({loops[0], loops[1]});
  EXPECT_EQ(fused.var->name, "i_j_fused");
  EXPECT_EQ(loop_names(sch, "C"), (std::vector<std::string>{"i_j_fused", "k"}));
  EXPECT_EQ(loop_extents(sch, "C"), (std::vector<int64_t>{37 * 53, 19}));
  BlockRealize c = realize_of(sch.func(), "C");
  // vi = floordiv(fused, 53), vj = floormod(fused, 53)
  const auto* div = as<FloorDivNode>(c->iter_values[0]);
  ASSERT_TRUE(div);
  EXPECT_EQ(div->a.get(), fused.var.get());
  EXPECT_TRUE(is_const_int(div->b, 53));
  const auto* mod = as<FloorModNode>(c->iter_values[1]);
  ASSERT_TRUE(mod);
  EXPECT_EQ(mod->a.get(), fused.var.get());
  EXPECT_TRUE(is_const_int(mod->b, 53));
  expect_same_results(func, sch.func(), 2);
}

TEST(Fuse, ThreeLoops) {
  PrimFunc func = multiply3d(5, 7, 9);
  Schedule sch(func);
  std::vector<LoopRV> loops = sch.get_loops(sch.get_block("C"));
  LoopRV fused = sch.fuse(loops);
  EXPECT_EQ(fused.var->name, "i_j_k_fused");
  EXPECT_EQ(loop_extents(sch, "C"), (std::vector<int64_t>{315}));
  expect_same_results(func, sch.func(), 2);
}

// Under an outer loop of extent 1 (a batch of 1 fused with a symbolic row count), the rows'
// value is the fused value itself, without a floormod by the size variable, which would stay in
// every address of the kernel.
TEST(Fuse, NoFloormodBelowUnitLoops) {
  Var n = VarNode::make("n");
  te::Tensor a = te::placeholder({make_int(1), n}, DataType::float32(), "A");
  te::Tensor b = te::compute(
      {make_int(1), n}, [&](const std::vector<Var>& i) { return a(i[0], i[1]) + f32(1); }, "B");
  PrimFunc func = te::create_prim_func({a, b}, "add_one_1n");
  Schedule sch(func);
  LoopRV fused = sch.fuse(sch.get_loops(sch.get_block("B")));
  BlockRealize realize = realize_of(sch.func(), "B");
  EXPECT_TRUE(is_const_int(realize->iter_values[0], 0));
  EXPECT_EQ(realize->iter_values[1].get(), fused.var.get());
  expect_adds_one_at_sizes(sch.func(), n, {1, 8, 21});
}

TEST(Fuse, UndoesASplit) {
  PrimFunc func = add_one(1001);
  Schedule sch(func);
  std::vector<LoopRV> parts = sch.split(sch.get_loops(sch.get_block("B"))[0], {7, 143});
  LoopRV fused = sch.fuse(parts);
  EXPECT_EQ(fused.var->name, "i_0_i_1_fused");
  EXPECT_EQ(loop_extents(sch, "B"), (std::vector<int64_t>{1001}));
  expect_same_results(func, sch.func(), 1);
}

TEST(Fuse, SingleLoopIsLeftAlone) {
  PrimFunc func = add_one(10);
  Schedule sch(func);
  LoopRV i = sch.get_loops(sch.get_block("B"))[0];
  EXPECT_EQ(sch.fuse({i}).var.get(), i.var.get());
  EXPECT_EQ(sch.func().get(), func.get());
}

TEST(Reorder, SwapsTwoLoopsAndLeavesTheOtherInPlace) {
  PrimFunc func = matmul(37, 53, 19);
  Schedule sch(func);
  std::vector<LoopRV> loops = sch.get_loops(sch.get_block("C"));
  sch.reorder({loops[2], loops[0]});
  EXPECT_EQ(loop_names(sch, "C"), (std::vector<std::string>{"k", "j", "i"}));
  EXPECT_EQ(loop_extents(sch, "C"), (std::vector<int64_t>{19, 53, 37}));
  expect_same_results(func, sch.func(), 2);
}

TEST(Reorder, TilesAMatmul) {
  PrimFunc func = matmul(37, 53, 19);
  Schedule sch(func);
  std::vector<LoopRV> loops = sch.get_loops(sch.get_block("C"));
  std::vector<LoopRV> i = sch.split(loops[0], {nullptr, 8});
  std::vector<LoopRV> j = sch.split(loops[1], {nullptr, 16});
  sch.reorder({i[0], j[0], loops[2], i[1], j[1]});
  EXPECT_EQ(loop_names(sch, "C"), (std::vector<std::string>{"i_0", "j_0", "k", "i_1", "j_1"}));
  EXPECT_EQ(loop_extents(sch, "C"), (std::vector<int64_t>{5, 4, 19, 8, 16}));
  expect_same_results(func, sch.func(), 2);
}

TEST(Reorder, SameOrderChangesNothing) {
  PrimFunc func = matmul(4, 5, 6);
  Schedule sch(func);
  std::vector<LoopRV> loops = sch.get_loops(sch.get_block("C"));
  sch.reorder({loops[0], loops[2]});
  EXPECT_EQ(loop_names(sch, "C"), (std::vector<std::string>{"i", "j", "k"}));
}

// ---------------------------------------------------------------- golden text

TEST(ScheduleGolden, SplitThatDoesNotDivide) {
  Schedule sch(add_one(1001));
  sch.split(sch.get_loops(sch.get_block("B"))[0], {nullptr, 16});
  EXPECT_EQ(body_text(sch.func()), R"(for i_0, i_1 in T.grid(63, 16):
    with T.block("B"):
        vi = T.axis.spatial(1001, i_0 * 16 + i_1)
        T.where(i_0 * 16 + i_1 < 1001)
        T.reads(A[vi])
        T.writes(B[vi])
        B[vi] = A[vi] + T.float32(1)
)");
}

TEST(ScheduleGolden, FuseThreeLoops) {
  Schedule sch(multiply3d(5, 7, 9));
  sch.fuse(sch.get_loops(sch.get_block("C")));
  EXPECT_EQ(body_text(sch.func()), R"(for i_j_k_fused in range(315):
    with T.block("C"):
        vi = T.axis.spatial(5, i_j_k_fused // 63)
        vj = T.axis.spatial(7, i_j_k_fused % 63 // 9)
        vk = T.axis.spatial(9, i_j_k_fused % 9)
        T.reads(A[vi, vj, vk], B[vi, vj, vk])
        T.writes(C[vi, vj, vk])
        C[vi, vj, vk] = A[vi, vj, vk] * B[vi, vj, vk]
)");
}

TEST(ScheduleGolden, ThreeWaySplitOfTheReductionThenFuse) {
  Schedule sch(matmul(4, 5, 6));
  std::vector<LoopRV> l = sch.get_loops(sch.get_block("C"));
  sch.split(l[2], {2, nullptr, 2});
  sch.fuse({l[0], l[1]});
  EXPECT_EQ(body_text(sch.func()), R"(for i_j_fused, k_0, k_1, k_2 in T.grid(20, 2, 2, 2):
    with T.block("C"):
        vi = T.axis.spatial(4, i_j_fused // 5)
        vj = T.axis.spatial(5, i_j_fused % 5)
        vk = T.axis.reduce(6, k_0 * 4 + k_1 * 2 + k_2)
        T.where(k_0 * 4 + k_1 * 2 + k_2 < 6)
        T.reads(A[vi, vk], B[vk, vj])
        T.writes(C[vi, vj])
        with T.init():
            C[vi, vj] = T.float32(0)
        C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
)");
}

TEST(ScheduleGolden, Reorder) {
  Schedule sch(matmul(4, 5, 6));
  std::vector<LoopRV> l = sch.get_loops(sch.get_block("C"));
  sch.reorder({l[2], l[0]});
  EXPECT_EQ(body_text(sch.func()), R"(for k, j, i in T.grid(6, 5, 4):
    with T.block("C"):
        vi, vj, vk = T.axis.remap("SSR", [i, j, k])
        T.reads(A[vi, vk], B[vk, vj])
        T.writes(C[vi, vj])
        with T.init():
            C[vi, vj] = T.float32(0)
        C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
)");
}

TEST(ScheduleGolden, ParsedProgramSplitAndReordered) {
  PrimFunc func = parse_prim_func(R"(@T.prim_func
def scale(A: T.handle, B: T.handle):
    A_1 = T.match_buffer(A, (37, 53), "float32")
    B_1 = T.match_buffer(B, (37, 53), "float32")
    for i, j in T.grid(37, 53):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(A_1[vi, vj])
            T.writes(B_1[vi, vj])
            B_1[vi, vj] = A_1[vi, vj] * T.float32(3)
)");
  Schedule sch(func);
  std::vector<LoopRV> l = sch.get_loops(sch.get_block("B"));
  std::vector<LoopRV> j = sch.split(l[1], {nullptr, 8});
  sch.reorder({j[0], l[0]});
  const std::string expected = R"(@T.prim_func
def scale(A: T.handle, B: T.handle):
    T.func_attr({"global_symbol": "scale"})
    A_1 = T.match_buffer(A, (37, 53), "float32")
    B_1 = T.match_buffer(B, (37, 53), "float32")
    for j_0, i, j_1 in T.grid(7, 37, 8):
        with T.block("B"):
            vi = T.axis.spatial(37, i)
            vj = T.axis.spatial(53, j_0 * 8 + j_1)
            T.where(j_0 * 8 + j_1 < 53)
            T.reads(A_1[vi, vj])
            T.writes(B_1[vi, vj])
            B_1[vi, vj] = A_1[vi, vj] * T.float32(3)
)";
  EXPECT_EQ(print(sch.func()), expected);
  EXPECT_TRUE(structural_equal(sch.func(), parse_prim_func(expected)));
  expect_same_results(func, sch.func(), 1);
}

}  // namespace
}  // namespace anvil::tir
