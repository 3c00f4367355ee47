// compact_buffer_allocation: root-block buffers move under the innermost loop
// enclosing their accesses and shrink to the region used there.
#include <gtest/gtest.h>

#include "anvil/tir/functor.h"
#include "anvil/tir/transform.h"

namespace anvil::tir {
namespace {

const DataType f32 = DataType::float32();

// A block named name with the given spatial/reduce iteration variables bound to values.
Stmt realize(const std::string& name, std::vector<IterVar> ivs, std::vector<PrimExpr> values,
             Stmt body, Stmt init = nullptr) {
  return BlockRealizeNode::make(std::move(values), nullptr,
                                BlockNode::make(std::move(ivs), {}, {}, name, body, init));
}

PrimFunc with_root(std::vector<Var> params, std::vector<std::pair<Var, Buffer>> map, Stmt body,
                   std::vector<Buffer> allocs) {
  Block root = BlockNode::make({}, {}, {}, "root", body, nullptr, std::move(allocs));
  return PrimFuncNode::make(std::move(params), std::move(map),
                            BlockRealizeNode::make({}, nullptr, root));
}

// The Allocate nodes of a function body, outermost first.
std::vector<const AllocateNode*> allocations(const Stmt& s) {
  std::vector<const AllocateNode*> out;
  pre_order_visit(s, nullptr, [&](const Stmt& x) {
    if (const auto* a = as<AllocateNode>(x)) out.push_back(a);
  });
  return out;
}

// out[i] = tmp[i] + 1 with tmp[i] = a[i] * 2, both computed per 16-element chunk.
PrimFunc chunked_pipeline(ForKind outer_kind) {
  Var a = VarNode::make("a", DataType::handle()), o = VarNode::make("o", DataType::handle());
  Buffer A = BufferNode::make("A", f32, {PrimExpr(64)});
  Buffer Out = BufferNode::make("Out", f32, {PrimExpr(64)});
  Buffer tmp = BufferNode::make("tmp", f32, {PrimExpr(64)});
  Var io = VarNode::make("io"), i1 = VarNode::make("i1"), i2 = VarNode::make("i2");
  IterVar v1 = iter_var("v", 64), v2 = iter_var("v", 64);
  Stmt produce = for_loop(i1, 0, 16,
                          realize("P", {v1}, {io * 16 + i1},
                                  store(tmp, load(A, {v1.var}) * make_const(f32, 2), {v1.var})));
  Stmt consume = for_loop(i2, 0, 16,
                          realize("C", {v2}, {io * 16 + i2},
                                  store(Out, load(tmp, {v2.var}) + make_const(f32, 1), {v2.var})));
  Stmt body = ForNode::make(io, 0, 4, outer_kind, seq_stmt({produce, consume}));
  return with_root({a, o}, {{a, A}, {o, Out}}, body, {tmp});
}

TEST(CompactBufferAllocation, MovesIntoTheCommonLoopAndShrinks) {
  PrimFunc out = transform::compact_buffer_allocation(chunked_pipeline(ForKind::Serial));
  const auto* root = as<BlockRealizeNode>(out->body);
  ASSERT_TRUE(root);
  EXPECT_TRUE(root->block->alloc_buffers.empty());
  const auto* io = as<ForNode>(root->block->body);
  ASSERT_TRUE(io);
  const auto* alloc = as<AllocateNode>(io->body);
  ASSERT_TRUE(alloc) << "the buffer belongs at the top of the chunk loop";
  ASSERT_EQ(alloc->buffer->shape.size(), 1u);
  EXPECT_TRUE(is_const_int(alloc->buffer->shape[0], 16));
  // Every access now indexes the 16-element tile: v - io * 16.
  int accesses = 0;
  pre_order_visit(
      out->body,
      [&](const PrimExpr& e) {
        if (const auto* l = as<BufferLoadNode>(e); l && l->buffer->name == "tmp") {
          EXPECT_EQ(l->buffer.get(), alloc->buffer.get());
          ++accesses;
        }
      },
      [&](const Stmt& s) {
        if (const auto* st = as<BufferStoreNode>(s); st && st->buffer->name == "tmp") {
          EXPECT_EQ(st->buffer.get(), alloc->buffer.get());
          ++accesses;
        }
      });
  EXPECT_EQ(accesses, 2);
}

TEST(CompactBufferAllocation, ParallelChunksGetPrivateTiles) {
  PrimFunc out = transform::compact_buffer_allocation(chunked_pipeline(ForKind::Parallel));
  const auto* io = as<ForNode>(as<BlockRealizeNode>(out->body)->block->body);
  ASSERT_TRUE(io);
  EXPECT_EQ(io->for_kind, ForKind::Parallel);
  EXPECT_TRUE(as<AllocateNode>(io->body));
}

TEST(CompactBufferAllocation, AccumulatorStaysAboveItsReductionLoop) {
  // acc[i] accumulates over k in block S, then Out[i] = acc[i]; both under loop i.
  Var a = VarNode::make("a", DataType::handle()), o = VarNode::make("o", DataType::handle());
  Buffer A = BufferNode::make("A", f32, {PrimExpr(8), PrimExpr(8)});
  Buffer Out = BufferNode::make("Out", f32, {PrimExpr(8)});
  Buffer acc = BufferNode::make("acc", f32, {PrimExpr(8)});
  Var i = VarNode::make("i"), k = VarNode::make("k");
  IterVar vi = iter_var("vi", 8), vk = iter_var("vk", 8, IterKind::Reduce), vo = iter_var("vo", 8);
  Stmt sum = for_loop(k, 0, 8,
                      realize("S", {vi, vk}, {i, k},
                              store(acc, load(acc, {vi.var}) + load(A, {vi.var, vk.var}), {vi.var}),
                              store(acc, make_const(f32, 0), {vi.var})));
  Stmt copy = realize("O", {vo}, {i}, store(Out, load(acc, {vo.var}), {vo.var}));
  PrimFunc f =
      with_root({a, o}, {{a, A}, {o, Out}}, for_loop(i, 0, 8, seq_stmt({sum, copy})), {acc});
  PrimFunc out = transform::compact_buffer_allocation(f);
  std::vector<const AllocateNode*> allocs = allocations(out->body);
  ASSERT_EQ(allocs.size(), 1u);
  EXPECT_TRUE(is_const_int(allocs[0]->buffer->shape[0], 1));
  // The allocation wraps the body of loop i, so the k loop is inside it.
  const auto* loop_i = as<ForNode>(as<BlockRealizeNode>(out->body)->block->body);
  ASSERT_TRUE(loop_i);
  EXPECT_EQ(as<AllocateNode>(loop_i->body), allocs[0]);

  // With the reduction loop outermost, the accumulator cannot move inside it.
  Stmt sum_outer = for_loop(
      k, 0, 8,
      for_loop(i, 0, 8,
               realize("S", {vi, vk}, {i, k},
                       store(acc, load(acc, {vi.var}) + load(A, {vi.var, vk.var}), {vi.var}),
                       store(acc, make_const(f32, 0), {vi.var}))));
  Var j = VarNode::make("j");
  Stmt copy_all =
      for_loop(j, 0, 8, realize("O", {vo}, {j}, store(Out, load(acc, {vo.var}), {vo.var})));
  PrimFunc g = with_root({a, o}, {{a, A}, {o, Out}}, seq_stmt({sum_outer, copy_all}), {acc});
  PrimFunc out_g = transform::compact_buffer_allocation(g);
  EXPECT_EQ(as<BlockRealizeNode>(out_g->body)->block->alloc_buffers.size(), 1u);
  EXPECT_TRUE(allocations(out_g->body).empty());
}

}  // namespace
}  // namespace anvil::tir
