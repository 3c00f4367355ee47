// tensorize: a 4x4x4 matmul micro-kernel and an 8-wide add matched inside
// tiled operators; the implementation takes over the matched regions, and
// the result computes what the unscheduled function does.
#include <gtest/gtest.h>

#include "anvil/support/error.h"
#include "anvil/tir/schedule.h"
#include "schedule_loop_programs.h"

namespace anvil::tir {
namespace {

using namespace loop_testing;

// A buffer of an intrinsic: shape fixed, strides and elem_offset symbolic so
// that any region of a larger buffer can be bound to it.
Buffer strided_buffer(const std::string& name, std::vector<PrimExpr> shape) {
  std::vector<PrimExpr> strides;
  for (size_t d = 0; d < shape.size(); ++d)
    strides.push_back(VarNode::make(name + "_s" + std::to_string(d)));
  return BufferNode::make_full(VarNode::make(name, DataType::handle()), DataType::float32(), shape,
                               strides, VarNode::make(name + "_offset"), name, "global", 64);
}

PrimFunc make_func(const std::vector<Buffer>& buffers, Stmt body) {
  std::vector<Var> params;
  std::vector<std::pair<Var, Buffer>> buffer_map;
  for (const Buffer& b : buffers) {
    params.push_back(VarNode::make(b->name + "_handle", DataType::handle()));
    buffer_map.emplace_back(params.back(), b);
  }
  return PrimFuncNode::make(params, buffer_map, body);
}

// C[i, j] += A[i, k] * B[k, j] over 4x4x4, as one block.
PrimFunc gemm4_description() {
  Buffer a = strided_buffer("A", {4, 4}), b = strided_buffer("B", {4, 4}),
         c = strided_buffer("C", {4, 4});
  Var i = VarNode::make("i"), j = VarNode::make("j"), k = VarNode::make("k");
  IterVar vi = iter_var("vi", 4), vj = iter_var("vj", 4), vk = iter_var("vk", 4, IterKind::Reduce);
  Stmt update =
      store(c, load(c, {vi.var, vj.var}) + load(a, {vi.var, vk.var}) * load(b, {vk.var, vj.var}),
            {vi.var, vj.var});
  Block block = BlockNode::make(
      {vi, vj, vk}, {BufferRegion::full(c), BufferRegion::full(a), BufferRegion::full(b)},
      {BufferRegion::full(c)}, "update", update);
  Stmt nest = BlockRealizeNode::make({i, j, k}, const_true(), block);
  nest = for_loop(k, 0, 4, nest);
  nest = for_loop(j, 0, 4, nest);
  nest = for_loop(i, 0, 4, nest);
  return make_func({a, b, c}, nest);
}

// The same product with the reduction loop outermost: every element still
// sums over k in ascending order, so results are bit-identical.
PrimFunc gemm4_loop_implementation() {
  Buffer a = strided_buffer("A", {4, 4}), b = strided_buffer("B", {4, 4}),
         c = strided_buffer("C", {4, 4});
  Var i = VarNode::make("ii"), j = VarNode::make("jj"), k = VarNode::make("kk");
  Stmt update = store(c, load(c, {i, j}) + load(a, {i, k}) * load(b, {k, j}), {i, j});
  Stmt nest = for_loop(j, 0, 4, update, ForKind::Unrolled);
  nest = for_loop(i, 0, 4, nest);
  nest = for_loop(k, 0, 4, nest);
  return make_func({a, b, c}, nest);
}

// A call into an external micro-kernel with pointers, offsets and row strides.
PrimFunc gemm4_extern_implementation() {
  Buffer a = strided_buffer("A", {4, 4}), b = strided_buffer("B", {4, 4}),
         c = strided_buffer("C", {4, 4});
  std::vector<PrimExpr> args;
  for (const Buffer& buf : {c, a, b}) {
    args.push_back(buf->data);
    args.push_back(buf->elem_offset);
    args.push_back(buf->strides[0]);
  }
  return make_func({a, b, c}, evaluate(call_extern(DataType::int32(), "gemm4x4_f32", args)));
}

// B[i] = A[i] + 1 over 8 elements.
PrimFunc add8_description() {
  Buffer a = strided_buffer("A", {8}), b = strided_buffer("B", {8});
  Var i = VarNode::make("i");
  IterVar vi = iter_var("vi", 8);
  Block block = BlockNode::make({vi}, {BufferRegion::full(a)}, {BufferRegion::full(b)}, "add",
                                store(b, load(a, {vi.var}) + f32(1), {vi.var}));
  return make_func({a, b}, for_loop(i, 0, 8, BlockRealizeNode::make({i}, const_true(), block)));
}

PrimFunc add8_implementation() {
  Buffer a = strided_buffer("A", {8}), b = strided_buffer("B", {8});
  Var i = VarNode::make("lane");
  return make_func({a, b},
                   for_loop(i, 0, 8, store(b, load(a, {i}) + f32(1), {i}), ForKind::Vectorized));
}

// matmul(m, n, k) tiled by 4 in every dimension with the init split off, so
// the nest under i_1 is the 4x4x4 update.
Schedule tiled_matmul(const PrimFunc& func, std::vector<LoopRV>* tile_loops) {
  Schedule sch(func);
  std::vector<LoopRV> loops = sch.get_loops(sch.get_block("C"));
  std::vector<LoopRV> i = sch.split(loops[0], {nullptr, 4});
  std::vector<LoopRV> j = sch.split(loops[1], {nullptr, 4});
  std::vector<LoopRV> k = sch.split(loops[2], {nullptr, 4});
  sch.reorder({i[0], j[0], k[0], i[1], j[1], k[1]});
  sch.decompose_reduction(sch.get_block("C"), k[0]);
  *tile_loops = {i[0], j[0], k[0], i[1], j[1], k[1]};
  return sch;
}

class Tensorize : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    register_tensor_intrin("test.gemm4_loops", {gemm4_description(), gemm4_loop_implementation()});
    register_tensor_intrin("test.gemm4_extern",
                           {gemm4_description(), gemm4_extern_implementation()});
    register_tensor_intrin("test.add8", {add8_description(), add8_implementation()});
  }
};

TEST_F(Tensorize, MatmulTileBecomesTheImplementation) {
  PrimFunc func = matmul(16, 12, 8);
  std::vector<LoopRV> t;
  Schedule sch = tiled_matmul(func, &t);
  sch.tensorize(t[3], "test.gemm4_loops");

  EXPECT_FALSE(realize_of(sch.func(), "C"));
  BlockRealize wrapper = realize_of(sch.func(), "C_o");
  ASSERT_TRUE(wrapper);
  EXPECT_EQ(loop_names(sch, "C_o"), (std::vector<std::string>{"i_0", "j_0", "k_0"}));
  const Block& block = wrapper->block;
  ASSERT_EQ(block->iter_vars.size(), 3u);
  EXPECT_EQ(block->iter_vars[0].var->name, "vi_o");
  EXPECT_EQ(block->iter_vars[2].kind, IterKind::Reduce);
  // vi_o = i_0 * 4
  const auto* mul = as<MulNode>(wrapper->iter_values[0]);
  ASSERT_TRUE(mul);
  EXPECT_EQ(mul->a.get(), t[0].var.get());
  EXPECT_TRUE(is_const_int(mul->b, 4));
  // Reads A, B, C and writes C, each a 4x4 region starting at the outer variables.
  ASSERT_EQ(block->reads.size(), 3u);
  EXPECT_EQ(block->reads[0].buffer->name, "A");
  EXPECT_EQ(block->reads[0].region[0].min.get(), block->iter_vars[0].var.get());
  EXPECT_EQ(block->reads[0].region[1].min.get(), block->iter_vars[2].var.get());
  EXPECT_TRUE(is_const_int(block->reads[0].region[0].extent, 4));
  ASSERT_EQ(block->writes.size(), 1u);
  EXPECT_EQ(block->writes[0].buffer->name, "C");
  // The implementation's loops are there, with names that clash with nothing.
  const auto* kk = as<ForNode>(block->body);
  ASSERT_TRUE(kk);
  EXPECT_EQ(kk->loop_var->name, "kk");
  expect_same_results(func, sch.func(), 2);

  // The outer loops keep their meaning: the spatial ones may run in parallel.
  sch.parallel(t[0]);
  EXPECT_THROW(sch.parallel(t[2]), Error);
  expect_same_results(func, sch.func(), 2);
}

TEST_F(Tensorize, TwoUsesGetDistinctLoopVariables) {
  // E = (A x B) x D, both products 4x4x4.
  te::Tensor a = te::placeholder({4, 4}, DataType::float32(), "A");
  te::Tensor b = te::placeholder({4, 4}, DataType::float32(), "B");
  te::Tensor d = te::placeholder({4, 4}, DataType::float32(), "D");
  IterVar k1 = te::reduce_axis(4, "k");
  te::Tensor c = te::compute(
      {4, 4},
      [&](const std::vector<Var>& i) { return sum(a(i[0], k1.var) * b(k1.var, i[1]), {k1}); }, "C");
  IterVar k2 = te::reduce_axis(4, "k");
  te::Tensor e = te::compute(
      {4, 4},
      [&](const std::vector<Var>& i) { return sum(c(i[0], k2.var) * d(k2.var, i[1]), {k2}); }, "E");
  PrimFunc func = te::create_prim_func({a, b, d, e}, "two_products");
  Schedule sch(func);
  for (const char* name : {"C", "E"}) {
    LoopRV outer = sch.get_loops(sch.get_block(name))[0];
    sch.decompose_reduction(sch.get_block(name), outer);
    sch.tensorize(outer, "test.gemm4_loops");
  }
  const auto* first = as<ForNode>(realize_of(sch.func(), "C_o")->block->body);
  const auto* second = as<ForNode>(realize_of(sch.func(), "E_o")->block->body);
  ASSERT_TRUE(first && second);
  EXPECT_NE(first->loop_var.get(), second->loop_var.get());
  EXPECT_EQ(first->loop_var->name, "kk");
  EXPECT_EQ(second->loop_var->name, "kk_1");
  // No iteration variable is left for a product that covers the whole tensor.
  EXPECT_TRUE(realize_of(sch.func(), "C_o")->block->iter_vars.empty());
  expect_same_results(func, sch.func(), 3);
}

TEST_F(Tensorize, ExternImplementationGetsPointersOffsetsAndStrides) {
  PrimFunc func = matmul(16, 12, 8);
  std::vector<LoopRV> t;
  Schedule sch = tiled_matmul(func, &t);
  sch.tensorize(t[3], "test.gemm4_extern");
  BlockRealize wrapper = realize_of(sch.func(), "C_o");
  ASSERT_TRUE(wrapper);
  const auto* eval = as<EvaluateNode>(wrapper->block->body);
  ASSERT_TRUE(eval);
  const auto* call = as<CallNode>(eval->value);
  ASSERT_TRUE(call);
  EXPECT_EQ(call->op, "gemm4x4_f32");
  ASSERT_EQ(call->args.size(), 9u);
  Buffer c = func->buffer_map[2].second, a = func->buffer_map[0].second;
  EXPECT_EQ(call->args[0].get(), c->data.get());
  EXPECT_EQ(call->args[3].get(), a->data.get());
  // Row strides of the real buffers: C is 16x12, A is 16x8.
  EXPECT_TRUE(is_const_int(call->args[2], 12));
  EXPECT_TRUE(is_const_int(call->args[5], 8));
  // C's offset is vi_o * 12 + vj_o: evaluate it at vi_o = 8, vj_o = 4.
  tir::testing::LoopInterpreter interpreter;
  interpreter.bind(wrapper->block->iter_vars[0].var, 8);
  interpreter.bind(wrapper->block->iter_vars[1].var, 4);
  interpreter.bind(wrapper->block->iter_vars[2].var, 0);
  EXPECT_EQ(interpreter.eval_int(call->args[1]), 8 * 12 + 4);
}

TEST_F(Tensorize, ElementwiseAddOnA1000ElementVector) {
  PrimFunc func = add_one(1000);
  Schedule sch(func);
  std::vector<LoopRV> i = sch.split(sch.get_loops(sch.get_block("B"))[0], {nullptr, 8});
  sch.tensorize(i[1], "test.add8");
  BlockRealize wrapper = realize_of(sch.func(), "B_o");
  ASSERT_TRUE(wrapper);
  EXPECT_EQ(loop_names(sch, "B_o"), (std::vector<std::string>{"i_0"}));
  const auto* lanes = as<ForNode>(wrapper->block->body);
  ASSERT_TRUE(lanes);
  EXPECT_EQ(lanes->for_kind, ForKind::Vectorized);
  expect_same_results(func, sch.func(), 1);
}

TEST_F(Tensorize, GoldenExternCall) {
  std::vector<LoopRV> t;
  Schedule sch = tiled_matmul(matmul(16, 12, 8), &t);
  sch.tensorize(t[3], "test.gemm4_extern");
  EXPECT_EQ(print(sch.func()), R"(@T.prim_func
def matmul(A: T.handle, B: T.handle, C: T.handle):
    T.func_attr({"global_symbol": "matmul", "tir.noalias": 1})
    A_1 = T.match_buffer(A, (16, 8), "float32")
    B_1 = T.match_buffer(B, (8, 12), "float32")
    C_1 = T.match_buffer(C, (16, 12), "float32")
    for i_0, j_0 in T.grid(4, 3):
        for i_1_init, j_1_init in T.grid(4, 4):
            with T.block("C_init"):
                vi_init = T.axis.spatial(16, i_0 * 4 + i_1_init)
                vj_init = T.axis.spatial(12, j_0 * 4 + j_1_init)
                T.reads()
                T.writes(C_1[vi_init, vj_init])
                C_1[vi_init, vj_init] = T.float32(0)
        for k_0 in range(2):
            with T.block("C_o"):
                vi_o = T.axis.spatial(16, i_0 * 4)
                vj_o = T.axis.spatial(12, j_0 * 4)
                vk_o = T.axis.reduce(8, k_0 * 4)
                T.reads(A_1[vi_o:vi_o + 4, vk_o:vk_o + 4], B_1[vk_o:vk_o + 4, vj_o:vj_o + 4], C_1[vi_o:vi_o + 4, vj_o:vj_o + 4])
                T.writes(C_1[vi_o:vi_o + 4, vj_o:vj_o + 4])
                T.evaluate(T.call_extern("int32", "gemm4x4_f32", C_1.data, vi_o * 12 + vj_o, 12, A_1.data, vi_o * 8 + vk_o, 8, B_1.data, vk_o * 12 + vj_o, 12))
)");
}

}  // namespace
}  // namespace anvil::tir
