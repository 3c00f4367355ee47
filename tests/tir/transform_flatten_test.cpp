// flatten_buffers: multi-dimensional accesses become one-dimensional ones,
// checked node by node against hand-derived indices and numerically through
// the test interpreter against plain C++.
#include <gtest/gtest.h>

#include "anvil/support/error.h"
#include "anvil/te/te.h"
#include "anvil/tir/functor.h"
#include "anvil/tir/printer.h"
#include "anvil/tir/transform.h"
#include "loop_interpreter.h"
#include "prim_func_util.h"

namespace anvil::tir {
namespace {

using transform::convert_blocks_to_loops;
using transform::flatten_buffers;

PrimExpr f32(double value) { return make_const(DataType::float32(), value); }

using testing::func_of;

// Checks e is a + b (with a and b given as checkers).
const AddNode* as_add(const PrimExpr& e) { return as<AddNode>(e); }

TEST(FlattenBuffers, TwoDimensionalAccessUsesRowMajorStrides) {
  // Y[i, j] = X[i, j] with X, Y of shape (3, 5): both become [i * 5 + j] on (15,).
  Buffer x = BufferNode::make("X", DataType::float32(), {3, 5});
  Buffer y = BufferNode::make("Y", DataType::float32(), {3, 5});
  Var i = VarNode::make("i"), j = VarNode::make("j");
  PrimFunc func =
      func_of({x, y}, for_loop(i, 0, 3, for_loop(j, 0, 5, store(y, load(x, {i, j}), {i, j}))));
  PrimFunc flat = flatten_buffers(func);
  EXPECT_EQ(flat->buffer_map[0].second.get(), x.get());  // the parameters keep their shapes
  const auto* st = as<BufferStoreNode>(as<ForNode>(as<ForNode>(flat->body)->body)->body);
  ASSERT_TRUE(st);
  ASSERT_EQ(st->buffer->ndim(), 1);
  EXPECT_EQ(*as_const_int(st->buffer->shape[0]), 15);
  EXPECT_EQ(st->buffer->data.get(), y->data.get());
  EXPECT_EQ(st->buffer->name, "Y");
  ASSERT_EQ(st->indices.size(), 1u);
  const auto* add = as_add(st->indices[0]);
  ASSERT_TRUE(add);
  const auto* mul = as<MulNode>(add->a);
  ASSERT_TRUE(mul);
  EXPECT_EQ(mul->a.get(), i.get());
  EXPECT_EQ(*as_const_int(mul->b), 5);
  EXPECT_EQ(add->b.get(), j.get());
  const auto* ld = as<BufferLoadNode>(st->value);
  ASSERT_TRUE(ld);
  EXPECT_EQ(ld->buffer->data.get(), x->data.get());
  EXPECT_EQ(ld->indices.size(), 1u);
}

TEST(FlattenBuffers, TransposePrintsWithOneDimensionalAccesses) {
  // Y[j, i] = X[i, j] + T[i, j] with a local (3, 4) temporary T.
  Buffer x = BufferNode::make("X", DataType::float32(), {3, 4});
  Buffer y = BufferNode::make("Y", DataType::float32(), {4, 3});
  Buffer tmp = BufferNode::make("T", DataType::float32(), {3, 4}, "local");
  Var i = VarNode::make("i"), j = VarNode::make("j");
  Stmt body = AllocateNode::make(
      tmp, for_loop(i, 0, 3,
                    for_loop(j, 0, 4,
                             seq_stmt({store(tmp, f32(1), {i, j}),
                                       store(y, load(x, {i, j}) + load(tmp, {i, j}), {j, i})}))));
  EXPECT_EQ(print(flatten_buffers(func_of({x, y}, body))), R"(@T.prim_func(private=True)
def main(X: T.handle, Y: T.handle):
    X_1 = T.match_buffer(X, (3, 4), "float32")
    Y_1 = T.match_buffer(Y, (4, 3), "float32")
    T_ = T.decl_buffer((12,), "float32", scope="local")
    for i, j in T.grid(3, 4):
        T_[i * 4 + j] = T.float32(1)
        Y_2 = T.Buffer((12,), "float32", data=Y_1.data)
        X_2 = T.Buffer((12,), "float32", data=X_1.data)
        Y_2[j * 3 + i] = X_2[i * 4 + j] + T_[i * 4 + j]
)");
}

TEST(FlattenBuffers, EveryAccessOfABufferUsesOneFlattenedBuffer) {
  Buffer x = BufferNode::make("X", DataType::float32(), {2, 2});
  PrimFunc func = func_of({x}, seq_stmt({store(x, f32(1), {0, 1}), store(x, f32(2), {1, 0}),
                                         store(x, load(x, {0, 1}), {1, 1})}));
  PrimFunc flat = flatten_buffers(func);
  const auto* seq = as<SeqStmtNode>(flat->body);
  ASSERT_TRUE(seq);
  const BufferNode* first = as<BufferStoreNode>(seq->seq[0])->buffer.get();
  EXPECT_EQ(as<BufferStoreNode>(seq->seq[1])->buffer.get(), first);
  const auto* last = as<BufferStoreNode>(seq->seq[2]);
  EXPECT_EQ(last->buffer.get(), first);
  EXPECT_EQ(as<BufferLoadNode>(last->value)->buffer.get(), first);
  // Constant indices fold: [1, 1] -> [3].
  EXPECT_EQ(*as_const_int(last->indices[0]), 3);
  EXPECT_EQ(*as_const_int(as<BufferLoadNode>(last->value)->indices[0]), 1);
}

TEST(FlattenBuffers, StridesAndOffsetAreFoldedIntoTheIndex) {
  Var s0 = VarNode::make("s0"), off = VarNode::make("off");
  Buffer x = BufferNode::make_full(VarNode::make("X", DataType::handle()), DataType::float32(),
                                   {4, 3}, {s0, 1}, off, "X", "global", 64);
  Var i = VarNode::make("i"), j = VarNode::make("j");
  PrimFunc flat = flatten_buffers(func_of({x}, store(x, f32(0), {i, j})));
  const auto* st = as<BufferStoreNode>(flat->body);
  ASSERT_TRUE(st);
  EXPECT_TRUE(is_zero(st->buffer->elem_offset));
  EXPECT_TRUE(st->buffer->strides.empty());
  // off + i * s0 + j
  const auto* outer = as_add(st->indices[0]);
  ASSERT_TRUE(outer);
  EXPECT_EQ(outer->b.get(), j.get());
  const auto* inner = as_add(outer->a);
  ASSERT_TRUE(inner);
  EXPECT_EQ(inner->a.get(), off.get());
  const auto* mul = as<MulNode>(inner->b);
  ASSERT_TRUE(mul);
  EXPECT_EQ(mul->a.get(), i.get());
  EXPECT_EQ(mul->b.get(), s0.get());
}

TEST(FlattenBuffers, RampInTheLastDimensionStaysARamp) {
  // X[i, ramp(j, 1, 8)] on (4, 16) -> X[ramp(i * 16 + j, 1, 8)].
  Buffer x = BufferNode::make("X", DataType::float32(), {4, 16});
  Var i = VarNode::make("i"), j = VarNode::make("j");
  Stmt body = store(x, broadcast(f32(1), 8), {i, ramp(j, 1, 8)});
  PrimFunc flat = flatten_buffers(func_of({x}, body));
  const auto* st = as<BufferStoreNode>(flat->body);
  ASSERT_TRUE(st);
  const auto* r = as<RampNode>(st->indices[0]);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->lanes, 8);
  EXPECT_TRUE(is_one(r->stride));
  const auto* base = as_add(r->base);
  ASSERT_TRUE(base);
  EXPECT_EQ(base->b.get(), j.get());
  EXPECT_EQ(*as_const_int(as<MulNode>(base->a)->b), 16);
}

TEST(FlattenBuffers, RampInAnOuterDimensionScalesItsStride) {
  // X[ramp(i, 1, 4), j] on (8, 10) -> X[ramp(i * 10 + j, 10, 4)].
  Buffer x = BufferNode::make("X", DataType::float32(), {8, 10});
  Var i = VarNode::make("i"), j = VarNode::make("j");
  PrimFunc flat = flatten_buffers(func_of({x}, store(x, broadcast(f32(1), 4), {ramp(i, 1, 4), j})));
  const auto* r = as<RampNode>(as<BufferStoreNode>(flat->body)->indices[0]);
  ASSERT_TRUE(r);
  EXPECT_EQ(*as_const_int(r->stride), 10);
  EXPECT_EQ(r->lanes, 4);
}

TEST(FlattenBuffers, AllocateGetsTheFlattenedBuffer) {
  Buffer x = BufferNode::make("X", DataType::float32(), {6});
  Buffer tmp = BufferNode::make("tmp", DataType::float32(), {2, 3});
  Var i = VarNode::make("i");
  Stmt body = AllocateNode::make(
      tmp, seq_stmt({for_loop(i, 0, 6, store(tmp, f32(4), {floordiv(i, 3), floormod(i, 3)})),
                     for_loop(VarNode::make("k"), 0, 6, store(x, load(tmp, {1, 2}), {0}))}));
  PrimFunc flat = flatten_buffers(func_of({x}, body));
  const auto* alloc = as<AllocateNode>(flat->body);
  ASSERT_TRUE(alloc);
  ASSERT_EQ(alloc->buffer->ndim(), 1);
  EXPECT_EQ(*as_const_int(alloc->buffer->shape[0]), 6);
  EXPECT_EQ(alloc->buffer->data.get(), tmp->data.get());
  const auto* fill = as<BufferStoreNode>(as<ForNode>(as<SeqStmtNode>(alloc->body)->seq[0])->body);
  EXPECT_EQ(fill->buffer.get(), alloc->buffer.get());
}

TEST(FlattenBuffers, FlatBuffersAreLeftAlone) {
  Buffer x = BufferNode::make("X", DataType::float32(), {6});
  Var i = VarNode::make("i");
  PrimFunc func = func_of({x}, for_loop(i, 0, 6, store(x, load(x, {i}) + f32(1), {i})));
  EXPECT_EQ(flatten_buffers(func).get(), func.get());
  // Flattening is idempotent.
  Buffer y = BufferNode::make("Y", DataType::float32(), {2, 3});
  PrimFunc once = flatten_buffers(func_of({y}, store(y, f32(0), {1, 1})));
  EXPECT_EQ(flatten_buffers(once).get(), once.get());
}

TEST(FlattenBuffers, SymbolicShapesGiveSymbolicStrides) {
  Var n = VarNode::make("n");
  Buffer x = BufferNode::make("X", DataType::float32(), {n, n});
  Var i = VarNode::make("i"), j = VarNode::make("j");
  PrimFunc flat = flatten_buffers(func_of({x}, store(x, f32(0), {i, j})));
  const auto* st = as<BufferStoreNode>(flat->body);
  const auto* mul = as<MulNode>(as_add(st->indices[0])->a);
  ASSERT_TRUE(mul);
  EXPECT_EQ(mul->b.get(), n.get());
  const auto* size = as<MulNode>(st->buffer->shape[0]);
  ASSERT_TRUE(size);
  EXPECT_EQ(size->a.get(), n.get());
}

TEST(FlattenBuffers, BlocksMustBeConvertedFirst) {
  te::Tensor a = te::placeholder({2, 2}, DataType::float32(), "A");
  te::Tensor b = te::compute(
      {2, 2}, [&](const std::vector<Var>& i) { return a(i[0], i[1]); }, "B");
  EXPECT_THROW(flatten_buffers(te::create_prim_func({a, b})), InternalError);
}

TEST(FlattenBuffers, Conv2dComputesWhatPlainCppComputes) {
  // NCHW conv, 2 in channels, 3 out channels, 3x3 kernel, stride 1, zero padding 1, on 5x6.
  const int c_in = 2, c_out = 3, h = 5, w = 6;
  te::Tensor data = te::placeholder({1, c_in, h, w}, DataType::float32(), "data");
  te::Tensor weight = te::placeholder({c_out, c_in, 3, 3}, DataType::float32(), "weight");
  te::Tensor pad = te::compute(
      {1, c_in, h + 2, w + 2},
      [&](const std::vector<Var>& i) {
        PrimExpr inside =
            logical_and(logical_and(i[2] >= 1, i[2] < h + 1), logical_and(i[3] >= 1, i[3] < w + 1));
        return call_intrin(DataType::float32(), "if_then_else",
                           {inside, data(i[0], i[1], i[2] - 1, i[3] - 1), f32(0)});
      },
      "pad");
  IterVar rc = te::reduce_axis(c_in, "rc"), ry = te::reduce_axis(3, "ry"),
          rx = te::reduce_axis(3, "rx");
  te::Tensor conv = te::compute({1, c_out, h, w},
                                [&](const std::vector<Var>& i) {
                                  return sum(pad(i[0], rc.var, i[2] + ry.var, i[3] + rx.var) *
                                                 weight(i[1], rc.var, ry.var, rx.var),
                                             {rc, ry, rx});
                                },
                                "conv", {"n", "f", "y", "x"});
  PrimFunc func =
      flatten_buffers(convert_blocks_to_loops(te::create_prim_func({data, weight, conv})));
  pre_order_visit(
      func->body,
      [](const PrimExpr& e) {
        if (const auto* l = as<BufferLoadNode>(e)) {
          EXPECT_EQ(l->indices.size(), 1u);
        }
      },
      [](const Stmt& s) {
        if (const auto* st = as<BufferStoreNode>(s)) {
          EXPECT_EQ(st->indices.size(), 1u);
        }
      });

  std::vector<double> dv(c_in * h * w), wv(c_out * c_in * 9), out(c_out * h * w, -1);
  for (size_t i = 0; i < dv.size(); ++i) dv[i] = double(int(i * 7 % 17) - 8);
  for (size_t i = 0; i < wv.size(); ++i) wv[i] = double(int(i * 3 % 5) - 2);
  testing::LoopInterpreter interp;
  interp.run(func, {&dv, &wv, &out});
  for (int f = 0; f < c_out; ++f)
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) {
        double acc = 0;
        for (int c = 0; c < c_in; ++c)
          for (int ky = 0; ky < 3; ++ky)
            for (int kx = 0; kx < 3; ++kx) {
              int sy = y + ky - 1, sx = x + kx - 1;
              if (sy < 0 || sy >= h || sx < 0 || sx >= w) continue;
              acc += dv[(c * h + sy) * w + sx] * wv[((f * c_in + c) * 3 + ky) * 3 + kx];
            }
        EXPECT_EQ(out[(f * h + y) * w + x], acc) << f << "," << y << "," << x;
      }
}

}  // namespace
}  // namespace anvil::tir
