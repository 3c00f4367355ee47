// convert_blocks_to_loops: blocks disappear into plain loops, checked node by
// node on small hand-built functions and numerically (through the test
// interpreter) on TE functions against plain C++.
#include <gtest/gtest.h>

#include <cmath>

#include "anvil/support/error.h"
#include "anvil/te/te.h"
#include "anvil/tir/functor.h"
#include "anvil/tir/printer.h"
#include "anvil/tir/transform.h"
#include "loop_interpreter.h"

namespace anvil::tir {
namespace {

using transform::convert_blocks_to_loops;

PrimExpr f32(double value) { return make_const(DataType::float32(), value); }

int count_kind(const Stmt& s, StmtKind kind) {
  int count = 0;
  pre_order_visit(s, nullptr, [&](const Stmt& x) { count += x->kind == kind; });
  return count;
}

// A function in scheduled form: the root block around body.
PrimFunc scheduled(std::vector<Buffer> params, Stmt body, std::vector<Buffer> allocs = {}) {
  std::vector<Var> vars;
  std::vector<std::pair<Var, Buffer>> map;
  for (const Buffer& b : params) {
    vars.push_back(VarNode::make(b->name, DataType::handle()));
    map.emplace_back(vars.back(), b);
  }
  Block root = BlockNode::make({}, {}, {}, "root", body, nullptr, std::move(allocs));
  return PrimFuncNode::make(vars, map, BlockRealizeNode::make({}, const_true(), root));
}

TEST(ConvertBlocksToLoops, ReductionInitRunsAtTheFirstReductionStep) {
  te::Tensor a = te::placeholder({4, 5}, DataType::float32(), "A");
  te::Tensor b = te::placeholder({5, 6}, DataType::float32(), "B");
  IterVar k = te::reduce_axis(5, "k");
  te::Tensor c = te::compute(
      {4, 6}, [&](const std::vector<Var>& i) { return sum(a(i[0], k.var) * b(k.var, i[1]), {k}); },
      "C");
  PrimFunc func = convert_blocks_to_loops(te::create_prim_func({a, b, c}));
  EXPECT_EQ(count_kind(func->body, StmtKind::Block), 0);
  EXPECT_EQ(count_kind(func->body, StmtKind::BlockRealize), 0);

  // for i: for j: for k: { if (k == 0) C[i, j] = 0; C[i, j] = C[i, j] + A[i, k] * B[k, j] }
  const auto* li = as<ForNode>(func->body);
  ASSERT_TRUE(li);
  const auto* lj = as<ForNode>(li->body);
  ASSERT_TRUE(lj);
  const auto* lk = as<ForNode>(lj->body);
  ASSERT_TRUE(lk);
  const auto* seq = as<SeqStmtNode>(lk->body);
  ASSERT_TRUE(seq);
  ASSERT_EQ(seq->seq.size(), 2u);
  const auto* guard = as<IfThenElseNode>(seq->seq[0]);
  ASSERT_TRUE(guard);
  const auto* first = as<EQNode>(guard->condition);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->a.get(), lk->loop_var.get());
  EXPECT_TRUE(is_zero(first->b));
  const auto* init = as<BufferStoreNode>(guard->then_case);
  ASSERT_TRUE(init);
  EXPECT_EQ(init->indices[0].get(), li->loop_var.get());
  EXPECT_EQ(init->indices[1].get(), lj->loop_var.get());
  const auto* update = as<BufferStoreNode>(seq->seq[1]);
  ASSERT_TRUE(update);
  EXPECT_EQ(update->indices[0].get(), li->loop_var.get());
  const auto* mul = as<MulNode>(as<AddNode>(update->value)->b);
  ASSERT_TRUE(mul);
  const auto* load_a = as<BufferLoadNode>(mul->a);
  ASSERT_TRUE(load_a);
  EXPECT_EQ(load_a->indices[1].get(), lk->loop_var.get());
}

TEST(ConvertBlocksToLoops, MatmulReluPrintsAsPlainLoops) {
  te::Tensor a = te::placeholder({4, 5}, DataType::float32(), "A");
  te::Tensor b = te::placeholder({5, 6}, DataType::float32(), "B");
  IterVar k = te::reduce_axis(5, "k");
  te::Tensor c = te::compute(
      {4, 6}, [&](const std::vector<Var>& i) { return sum(a(i[0], k.var) * b(k.var, i[1]), {k}); },
      "C");
  te::Tensor d = te::compute(
      {4, 6}, [&](const std::vector<Var>& i) { return max(c(i[0], i[1]), f32(0)); }, "D");
  EXPECT_EQ(print(convert_blocks_to_loops(te::create_prim_func({a, b, d}, "mm"))),
            R"(@T.prim_func
def mm(A: T.handle, B: T.handle, D: T.handle):
    T.func_attr({"global_symbol": "mm", "tir.noalias": 1})
    A_1 = T.match_buffer(A, (4, 5), "float32")
    B_1 = T.match_buffer(B, (5, 6), "float32")
    D_1 = T.match_buffer(D, (4, 6), "float32")
    C = T.decl_buffer((4, 6), "float32")
    for i, j, k in T.grid(4, 6, 5):
        if k == 0:
            C[i, j] = T.float32(0)
        C[i, j] = C[i, j] + A_1[i, k] * B_1[k, j]
    for i_1, j_1 in T.grid(4, 6):
        D_1[i_1, j_1] = T.max(C[i_1, j_1], T.float32(0))
)");
}

TEST(ConvertBlocksToLoops, PredicateBecomesAnIf) {
  Buffer x = BufferNode::make("X", DataType::float32(), {10});
  Var i = VarNode::make("i");
  IterVar vi = iter_var("vi", 12);
  Block block =
      BlockNode::make({vi}, {}, {BufferRegion{x, {{vi.var, 1}}}}, "B", store(x, f32(1), {vi.var}));
  Stmt body = for_loop(i, 0, 12, BlockRealizeNode::make({i}, i < 10, block));
  PrimFunc func = convert_blocks_to_loops(scheduled({x}, body));
  const auto* loop = as<ForNode>(func->body);
  ASSERT_TRUE(loop);
  const auto* guard = as<IfThenElseNode>(loop->body);
  ASSERT_TRUE(guard);
  const auto* lt = as<LTNode>(guard->condition);
  ASSERT_TRUE(lt);
  EXPECT_EQ(lt->a.get(), i.get());
  const auto* st = as<BufferStoreNode>(guard->then_case);
  ASSERT_TRUE(st);
  EXPECT_EQ(st->indices[0].get(), i.get());
}

TEST(ConvertBlocksToLoops, AllocBuffersBecomeAllocateAtTheBlock) {
  Buffer x = BufferNode::make("X", DataType::float32(), {4});
  Buffer root_tmp = BufferNode::make("root_tmp", DataType::float32(), {4});
  Buffer local = BufferNode::make("local", DataType::float32(), {1}, "local");
  Var i = VarNode::make("i");
  IterVar vi = iter_var("vi", 4);
  Stmt inner = seq_stmt(
      {store(local, load(root_tmp, {vi.var}), {0}), store(x, load(local, {0}) * f32(2), {vi.var})});
  Block block = BlockNode::make({vi}, {}, {}, "B", inner, nullptr, {local});
  Stmt fill = for_loop(i, 0, 4, store(root_tmp, cast(DataType::float32(), i), {i}));
  Var j = VarNode::make("j");
  Stmt body = seq_stmt({fill, for_loop(j, 0, 4, BlockRealizeNode::make({j}, const_true(), block))});
  PrimFunc func = convert_blocks_to_loops(scheduled({x}, body, {root_tmp}));
  const auto* outer = as<AllocateNode>(func->body);
  ASSERT_TRUE(outer);
  EXPECT_EQ(outer->buffer.get(), root_tmp.get());
  const auto* seq = as<SeqStmtNode>(outer->body);
  ASSERT_TRUE(seq);
  const auto* loop = as<ForNode>(seq->seq[1]);
  ASSERT_TRUE(loop);
  const auto* inner_alloc = as<AllocateNode>(loop->body);
  ASSERT_TRUE(inner_alloc);
  EXPECT_EQ(inner_alloc->buffer.get(), local.get());
  EXPECT_EQ(inner_alloc->buffer->scope, "local");

  std::vector<double> xv(4, -1);
  testing::LoopInterpreter interp;
  interp.run(func, {&xv});
  EXPECT_EQ(xv, (std::vector<double>{0, 2, 4, 6}));
}

TEST(ConvertBlocksToLoops, InitWithoutReduceVarsRunsUnconditionally) {
  Buffer x = BufferNode::make("X", DataType::float32(), {4});
  Var i = VarNode::make("i");
  IterVar vi = iter_var("vi", 4);
  Block block = BlockNode::make({vi}, {}, {}, "B", store(x, load(x, {vi.var}) + f32(1), {vi.var}),
                                store(x, f32(0), {vi.var}));
  PrimFunc func = convert_blocks_to_loops(
      scheduled({x}, for_loop(i, 0, 4, BlockRealizeNode::make({i}, const_true(), block))));
  const auto* loop = as<ForNode>(func->body);
  ASSERT_TRUE(loop);
  const auto* seq = as<SeqStmtNode>(loop->body);
  ASSERT_TRUE(seq);
  EXPECT_TRUE(as<BufferStoreNode>(seq->seq[0]));
  EXPECT_TRUE(as<BufferStoreNode>(seq->seq[1]));
}

TEST(ConvertBlocksToLoops, NestedBlocksSeeTheOuterValues) {
  // Outer block vo over 0..3 bound to io; inner block vi bound to vo * 4 + ii.
  Buffer x = BufferNode::make("X", DataType::float32(), {12});
  Var io = VarNode::make("io"), ii = VarNode::make("ii");
  IterVar vo = iter_var("vo", 3), vi = iter_var("vi", 12);
  Block inner = BlockNode::make({vi}, {}, {}, "inner", store(x, f32(5), {vi.var}));
  Stmt inner_nest =
      for_loop(ii, 0, 4, BlockRealizeNode::make({vo.var * 4 + ii}, const_true(), inner));
  Block outer = BlockNode::make({vo}, {}, {}, "outer", inner_nest);
  Stmt body = for_loop(io, 0, 3, BlockRealizeNode::make({io}, const_true(), outer));
  PrimFunc func = convert_blocks_to_loops(scheduled({x}, body));
  const auto* l_io = as<ForNode>(func->body);
  ASSERT_TRUE(l_io);
  const auto* l_ii = as<ForNode>(l_io->body);
  ASSERT_TRUE(l_ii);
  const auto* st = as<BufferStoreNode>(l_ii->body);
  ASSERT_TRUE(st);
  const auto* add = as<AddNode>(st->indices[0]);
  ASSERT_TRUE(add);
  const auto* mul = as<MulNode>(add->a);
  ASSERT_TRUE(mul);
  EXPECT_EQ(mul->a.get(), io.get());
  EXPECT_EQ(add->b.get(), ii.get());
}

TEST(ConvertBlocksToLoops, FunctionWithoutBlocksIsReturnedAsIs) {
  Buffer x = BufferNode::make("X", DataType::float32(), {4});
  Var i = VarNode::make("i");
  Var p = VarNode::make("X", DataType::handle());
  PrimFunc func = PrimFuncNode::make({p}, {{p, x}}, for_loop(i, 0, 4, store(x, f32(0), {i})));
  EXPECT_EQ(convert_blocks_to_loops(func).get(), func.get());
}

TEST(ConvertBlocksToLoops, MatmulReluComputesWhatPlainCppComputes) {
  const int m = 5, n = 7, kk = 3;
  te::Tensor a = te::placeholder({m, kk}, DataType::float32(), "A");
  te::Tensor b = te::placeholder({kk, n}, DataType::float32(), "B");
  IterVar k = te::reduce_axis(kk, "k");
  te::Tensor c = te::compute(
      {m, n}, [&](const std::vector<Var>& i) { return sum(a(i[0], k.var) * b(k.var, i[1]), {k}); },
      "C");
  te::Tensor d = te::compute(
      {m, n}, [&](const std::vector<Var>& i) { return max(c(i[0], i[1]), f32(0)); }, "D");
  PrimFunc func = convert_blocks_to_loops(te::create_prim_func({a, b, d}));
  ASSERT_TRUE(as<AllocateNode>(func->body));

  std::vector<double> av(m * kk), bv(kk * n), dv(m * n, -1);
  for (size_t i = 0; i < av.size(); ++i) av[i] = double(int(i * 7 % 11) - 5);
  for (size_t i = 0; i < bv.size(); ++i) bv[i] = double(int(i * 5 % 13) - 6);
  testing::LoopInterpreter interp;
  interp.run(func, {&av, &bv, &dv});
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double acc = 0;
      for (int r = 0; r < kk; ++r) acc += av[i * kk + r] * bv[r * n + j];
      EXPECT_EQ(dv[i * n + j], std::max(acc, 0.0)) << i << "," << j;
    }
}

TEST(ConvertBlocksToLoops, ConditionalReductionWithOffsetAxis) {
  // S[i] = sum over k in [1, 6) with k <= i of A[i, k].
  te::Tensor a = te::placeholder({6, 6}, DataType::float32(), "A");
  IterVar k = te::reduce_axis(Range{1, 5}, "k");
  te::Tensor s = te::compute(
      {6}, [&](const std::vector<Var>& i) { return sum(a(i[0], k.var), {k}, k.var <= i[0]); }, "S");
  PrimFunc func = convert_blocks_to_loops(te::create_prim_func({a, s}));
  std::vector<double> av(36), sv(6, -1);
  for (size_t i = 0; i < av.size(); ++i) av[i] = double(i);
  testing::LoopInterpreter interp;
  interp.run(func, {&av, &sv});
  for (int i = 0; i < 6; ++i) {
    double acc = 0;
    for (int r = 1; r < 6; ++r)
      if (r <= i) acc += av[i * 6 + r];
    EXPECT_EQ(sv[i], acc) << i;
  }
}

}  // namespace
}  // namespace anvil::tir
