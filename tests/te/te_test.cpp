// te::placeholder/compute and create_prim_func: the scheduled form of the
// result (root block, loop nests, block iteration variables, regions, init),
// checked node by node against what the conventions of the scheduled form
// prescribe.
#include "anvil/te/te.h"

#include <gtest/gtest.h>

#include "anvil/support/error.h"
#include "anvil/tir/functor.h"
#include "anvil/tir/printer.h"
#include "anvil/tir/verifier.h"

namespace anvil::te {
namespace {

using tir::as;
using tir::BlockNode;
using tir::BlockRealizeNode;
using tir::ForNode;
using tir::IterKind;
using tir::Stmt;

// The root block of a function in scheduled form.
const BlockNode* root_block(const tir::PrimFunc& func) {
  const auto* realize = as<BlockRealizeNode>(func->body);
  if (!realize) return nullptr;
  EXPECT_TRUE(realize->iter_values.empty());
  EXPECT_TRUE(tir::is_one(realize->predicate));
  return realize->block.get();
}

// The top-level statements under the root block (one loop nest per compute).
std::vector<Stmt> nests(const tir::PrimFunc& func) {
  const BlockNode* root = root_block(func);
  if (!root) return {};
  if (const auto* seq = as<tir::SeqStmtNode>(root->body)) return seq->seq;
  return {root->body};
}

// Follows a perfect loop nest down to its BlockRealize, collecting the loops.
const BlockRealizeNode* innermost(const Stmt& nest, std::vector<const ForNode*>* loops) {
  Stmt s = nest;
  while (const auto* loop = as<ForNode>(s)) {
    loops->push_back(loop);
    s = loop->body;
  }
  return as<BlockRealizeNode>(s);
}

PrimExpr f32(double value) { return tir::make_const(DataType::float32(), value); }

bool is_var(const PrimExpr& e, const tir::Var& var) { return e.get() == var.get(); }

// e is the load buffer[indices...] with each index being the given var.
bool is_load_of(const PrimExpr& e, const tir::Buffer& buffer, std::vector<tir::Var> indices) {
  const auto* load = as<tir::BufferLoadNode>(e);
  if (!load || load->buffer.get() != buffer.get() || load->indices.size() != indices.size())
    return false;
  for (size_t d = 0; d < indices.size(); ++d)
    if (!is_var(load->indices[d], indices[d])) return false;
  return true;
}

Tensor matmul(const Tensor& a, const Tensor& b, const std::string& name = "C") {
  IterVar k = reduce_axis(a.shape()[1], "k");
  return compute(
      {a.shape()[0], b.shape()[1]},
      [&](const std::vector<Var>& i) { return tir::sum(a(i[0], k.var) * b(k.var, i[1]), {k}); },
      name);
}

TEST(TeCompute, RecordsAxesBodyAndInputs) {
  Tensor a = placeholder({4, 5}, DataType::float32(), "A");
  Tensor b = placeholder({5, 6}, DataType::float32(), "B");
  Tensor c = matmul(a, b);
  EXPECT_FALSE(c->is_placeholder);
  EXPECT_EQ(c.dtype(), DataType::float32());
  ASSERT_EQ(c.ndim(), 2);
  EXPECT_EQ(*tir::as_const_int(c.shape()[1]), 6);
  ASSERT_EQ(c->axis.size(), 2u);
  EXPECT_EQ(c->axis[0].var->name, "i");
  EXPECT_EQ(c->axis[1].var->name, "j");
  ASSERT_EQ(c->inputs.size(), 2u);
  EXPECT_EQ(c->inputs[0].get(), a.get());
  EXPECT_EQ(c->inputs[1].get(), b.get());
  EXPECT_EQ(c->buffer->name, "C");
  EXPECT_TRUE(as<tir::ReduceNode>(c->body));
}

TEST(TeCompute, IndexingChecksTheRank) {
  Tensor a = placeholder({4, 5}, DataType::float32(), "A");
  try {
    a(1);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "tensor 'A' has 2 dimensions but is indexed with 1");
  }
}

TEST(TeCompute, ReductionMustBeAtTheTop) {
  Tensor a = placeholder({4, 5}, DataType::float32(), "A");
  IterVar k = reduce_axis(5, "k");
  try {
    compute(
        {4}, [&](const std::vector<Var>& i) { return tir::sum(a(i[0], k.var), {k}) + 1; }, "S");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("compute 'S' uses a reduction below the top"),
              std::string::npos)
        << e.what();
  }
}

TEST(TeCompute, ReadOfADeadTensorIsAnError) {
  tir::Buffer orphan = tir::BufferNode::make("orphan", DataType::float32(), {4});
  try {
    compute(
        {4}, [&](const std::vector<Var>& i) { return tir::load(orphan, {i[0]}); }, "T");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "compute 'T' reads buffer 'orphan', which belongs to no live tensor");
  }
}

TEST(TeCreatePrimFunc, MatmulIsOneReductionBlock) {
  Tensor a = placeholder({4, 5}, DataType::float32(), "A");
  Tensor b = placeholder({5, 6}, DataType::float32(), "B");
  Tensor c = matmul(a, b);
  tir::PrimFunc func = create_prim_func({a, b, c}, "matmul");

  EXPECT_EQ(func->global_symbol(), "matmul");
  const auto* noalias = func->func_attrs.find("tir.noalias");
  ASSERT_TRUE(noalias);
  EXPECT_EQ(std::get<int64_t>(*noalias), 1);
  ASSERT_EQ(func->params.size(), 3u);
  EXPECT_EQ(func->params[0]->name, "A");
  EXPECT_TRUE(func->params[0]->dtype.is_handle());
  EXPECT_EQ(func->buffer_of(func->params[0]).get(), a->buffer.get());
  EXPECT_EQ(func->buffer_of(func->params[2]).get(), c->buffer.get());

  const BlockNode* root = root_block(func);
  ASSERT_TRUE(root);
  EXPECT_EQ(root->name, "root");
  EXPECT_TRUE(root->iter_vars.empty());
  EXPECT_TRUE(root->alloc_buffers.empty());

  std::vector<const ForNode*> loops;
  const BlockRealizeNode* realize = innermost(root->body, &loops);
  ASSERT_TRUE(realize);
  ASSERT_EQ(loops.size(), 3u);
  EXPECT_EQ(loops[0]->loop_var->name, "i");
  EXPECT_EQ(loops[1]->loop_var->name, "j");
  EXPECT_EQ(loops[2]->loop_var->name, "k");
  EXPECT_EQ(*tir::as_const_int(loops[0]->extent), 4);
  EXPECT_EQ(*tir::as_const_int(loops[1]->extent), 6);
  EXPECT_EQ(*tir::as_const_int(loops[2]->extent), 5);
  for (const ForNode* loop : loops) {
    EXPECT_TRUE(tir::is_zero(loop->min));
    EXPECT_EQ(loop->for_kind, tir::ForKind::Serial);
  }

  const BlockNode& block = *realize->block;
  EXPECT_EQ(block.name, "C");
  ASSERT_EQ(block.iter_vars.size(), 3u);
  const tir::Var vi = block.iter_vars[0].var, vj = block.iter_vars[1].var,
                 vk = block.iter_vars[2].var;
  EXPECT_EQ(vi->name, "vi");
  EXPECT_EQ(vk->name, "vk");
  EXPECT_EQ(block.iter_vars[0].kind, IterKind::Spatial);
  EXPECT_EQ(block.iter_vars[1].kind, IterKind::Spatial);
  EXPECT_EQ(block.iter_vars[2].kind, IterKind::Reduce);
  EXPECT_EQ(*tir::as_const_int(block.iter_vars[1].dom.extent), 6);
  EXPECT_EQ(*tir::as_const_int(block.iter_vars[2].dom.extent), 5);
  ASSERT_EQ(realize->iter_values.size(), 3u);
  for (size_t l = 0; l < 3; ++l) EXPECT_TRUE(is_var(realize->iter_values[l], loops[l]->loop_var));

  // reads A[vi, vk], B[vk, vj] as points; writes C[vi, vj].
  ASSERT_EQ(block.reads.size(), 2u);
  EXPECT_EQ(block.reads[0].buffer.get(), a->buffer.get());
  EXPECT_TRUE(is_var(block.reads[0].region[0].min, vi));
  EXPECT_TRUE(is_var(block.reads[0].region[1].min, vk));
  EXPECT_TRUE(tir::is_one(block.reads[0].region[1].extent));
  EXPECT_EQ(block.reads[1].buffer.get(), b->buffer.get());
  EXPECT_TRUE(is_var(block.reads[1].region[0].min, vk));
  EXPECT_TRUE(is_var(block.reads[1].region[1].min, vj));
  ASSERT_EQ(block.writes.size(), 1u);
  EXPECT_EQ(block.writes[0].buffer.get(), c->buffer.get());
  EXPECT_TRUE(is_var(block.writes[0].region[0].min, vi));
  EXPECT_TRUE(is_var(block.writes[0].region[1].min, vj));
  EXPECT_TRUE(tir::is_one(block.writes[0].region[0].extent));

  // init: C[vi, vj] = 0; body: C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj].
  const auto* init = as<tir::BufferStoreNode>(block.init);
  ASSERT_TRUE(init);
  EXPECT_EQ(init->buffer.get(), c->buffer.get());
  ASSERT_TRUE(as<tir::FloatImmNode>(init->value));
  EXPECT_EQ(as<tir::FloatImmNode>(init->value)->value, 0.0);
  const auto* update = as<tir::BufferStoreNode>(block.body);
  ASSERT_TRUE(update);
  EXPECT_TRUE(is_var(update->indices[0], vi));
  EXPECT_TRUE(is_var(update->indices[1], vj));
  const auto* add = as<tir::AddNode>(update->value);
  ASSERT_TRUE(add);
  EXPECT_TRUE(is_load_of(add->a, c->buffer, {vi, vj}));
  const auto* mul = as<tir::MulNode>(add->b);
  ASSERT_TRUE(mul);
  EXPECT_TRUE(is_load_of(mul->a, a->buffer, {vi, vk}));
  EXPECT_TRUE(is_load_of(mul->b, b->buffer, {vk, vj}));
}

TEST(TeCreatePrimFunc, MatmulReluPrintsInScheduledForm) {
  Tensor a = placeholder({4, 5}, DataType::float32(), "A");
  Tensor b = placeholder({5, 6}, DataType::float32(), "B");
  Tensor c = matmul(a, b);
  Tensor d = compute(
      c.shape(), [&](const std::vector<Var>& i) { return tir::max(c(i[0], i[1]), f32(0)); }, "D");
  EXPECT_EQ(tir::print(create_prim_func({a, b, d}, "mm")),
            R"(@T.prim_func
def mm(A: T.handle, B: T.handle, D: T.handle):
    T.func_attr({"global_symbol": "mm", "tir.noalias": 1})
    A_1 = T.match_buffer(A, (4, 5), "float32")
    B_1 = T.match_buffer(B, (5, 6), "float32")
    D_1 = T.match_buffer(D, (4, 6), "float32")
    C = T.alloc_buffer((4, 6), "float32")
    for i, j, k in T.grid(4, 6, 5):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            T.reads(A_1[vi, vk], B_1[vk, vj])
            T.writes(C[vi, vj])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A_1[vi, vk] * B_1[vk, vj]
    for i_1, j_1 in T.grid(4, 6):
        with T.block("D"):
            vi_1, vj_1 = T.axis.remap("SS", [i_1, j_1])
            T.reads(C[vi_1, vj_1])
            T.writes(D_1[vi_1, vj_1])
            D_1[vi_1, vj_1] = T.max(C[vi_1, vj_1], T.float32(0))
)");
}

TEST(TeCreatePrimFunc, SymbolicShapePrintsItsSizeVariable) {
  tir::Var n = tir::VarNode::make("n");
  Tensor x = placeholder({n, 3}, DataType::float32(), "X");
  Tensor y = compute(
      {n, 3}, [&](const std::vector<Var>& i) { return x(i[0], i[1]) * f32(2); }, "Y");
  EXPECT_EQ(tir::print(create_prim_func({x, y}, "scale")), R"(@T.prim_func
def scale(X: T.handle, Y: T.handle):
    T.func_attr({"global_symbol": "scale", "tir.noalias": 1})
    n = T.int64()
    X_1 = T.match_buffer(X, (n, 3), "float32")
    Y_1 = T.match_buffer(Y, (n, 3), "float32")
    for i, j in T.grid(n, 3):
        with T.block("Y"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(X_1[vi, vj])
            T.writes(Y_1[vi, vj])
            Y_1[vi, vj] = X_1[vi, vj] * T.float32(2)
)");
}

TEST(TeCreatePrimFunc, IntermediatesAreAllocatedInTheRootBlock) {
  Tensor a = placeholder({4, 5}, DataType::float32(), "A");
  Tensor b = placeholder({5, 6}, DataType::float32(), "B");
  Tensor c = matmul(a, b);
  Tensor d = compute(
      c.shape(), [&](const std::vector<Var>& i) { return tir::max(c(i[0], i[1]), f32(0)); }, "D");
  tir::PrimFunc func = create_prim_func({a, b, d}, "matmul_relu");
  ASSERT_EQ(func->params.size(), 3u);
  const BlockNode* root = root_block(func);
  ASSERT_TRUE(root);
  ASSERT_EQ(root->alloc_buffers.size(), 1u);
  EXPECT_EQ(root->alloc_buffers[0].get(), c->buffer.get());

  std::vector<Stmt> parts = nests(func);
  ASSERT_EQ(parts.size(), 2u);
  std::vector<const ForNode*> loops_c, loops_d;
  const BlockRealizeNode* block_c = innermost(parts[0], &loops_c);
  const BlockRealizeNode* block_d = innermost(parts[1], &loops_d);
  ASSERT_TRUE(block_c && block_d);
  EXPECT_EQ(block_c->block->name, "C");
  EXPECT_EQ(block_d->block->name, "D");
  EXPECT_EQ(loops_d.size(), 2u);
  // The elementwise block: all spatial, no init, reads C at the point it writes.
  const BlockNode& relu = *block_d->block;
  EXPECT_FALSE(relu.init);
  ASSERT_EQ(relu.iter_vars.size(), 2u);
  EXPECT_EQ(relu.iter_vars[1].kind, IterKind::Spatial);
  ASSERT_EQ(relu.reads.size(), 1u);
  EXPECT_EQ(relu.reads[0].buffer.get(), c->buffer.get());
  EXPECT_TRUE(is_var(relu.reads[0].region[0].min, relu.iter_vars[0].var));
  const auto* store = as<tir::BufferStoreNode>(relu.body);
  ASSERT_TRUE(store);
  const auto* mx = as<tir::MaxNode>(store->value);
  ASSERT_TRUE(mx);
  EXPECT_TRUE(is_load_of(mx->a, c->buffer, {relu.iter_vars[0].var, relu.iter_vars[1].var}));
}

TEST(TeCreatePrimFunc, SymbolicShapesUseTheShapeVars) {
  tir::Var n = tir::VarNode::make("n");
  Tensor a = placeholder({n, 8}, DataType::float32(), "A");
  Tensor b = compute(
      {n, 8}, [&](const std::vector<Var>& i) { return a(i[0], i[1]) * f32(2); }, "B");
  tir::PrimFunc func = create_prim_func({a, b}, "scale");
  EXPECT_EQ(func->buffer_of(func->params[0])->shape[0].get(), n.get());
  std::vector<const ForNode*> loops;
  const BlockRealizeNode* realize = innermost(nests(func)[0], &loops);
  ASSERT_TRUE(realize);
  ASSERT_EQ(loops.size(), 2u);
  EXPECT_EQ(loops[0]->extent.get(), n.get());
  EXPECT_EQ(realize->block->iter_vars[0].dom.extent.get(), n.get());
  EXPECT_EQ(*tir::as_const_int(loops[1]->extent), 8);
}

TEST(TeCreatePrimFunc, MultipleOutputsShareTheirInput) {
  Tensor a = placeholder({7}, DataType::float32(), "A");
  Tensor plus = compute(
      {7}, [&](const std::vector<Var>& i) { return a(i[0]) + f32(1); }, "Plus");
  Tensor times = compute(
      {7}, [&](const std::vector<Var>& i) { return a(i[0]) * f32(3); }, "Times");
  tir::PrimFunc func = create_prim_func({a, plus, times}, "two_outputs");
  EXPECT_EQ(func->params.size(), 3u);
  EXPECT_TRUE(root_block(func)->alloc_buffers.empty());
  std::vector<Stmt> parts = nests(func);
  ASSERT_EQ(parts.size(), 2u);
  std::vector<const ForNode*> loops;
  EXPECT_EQ(innermost(parts[0], &loops)->block->name, "Plus");
  EXPECT_EQ(innermost(parts[1], &loops)->block->name, "Times");
}

TEST(TeCreatePrimFunc, ConditionalReductionGuardsTheUpdate) {
  Tensor a = placeholder({6, 6}, DataType::float32(), "A");
  IterVar k = reduce_axis(6, "k");
  // Sum of the lower triangle of each row.
  Tensor s = compute(
      {6}, [&](const std::vector<Var>& i) { return tir::sum(a(i[0], k.var), {k}, k.var <= i[0]); },
      "S");
  tir::PrimFunc func = create_prim_func({a, s});
  std::vector<const ForNode*> loops;
  const BlockRealizeNode* realize = innermost(nests(func)[0], &loops);
  ASSERT_TRUE(realize);
  const BlockNode& block = *realize->block;
  const auto* guard = as<tir::IfThenElseNode>(block.body);
  ASSERT_TRUE(guard);
  const auto* le = as<tir::LENode>(guard->condition);
  ASSERT_TRUE(le);
  EXPECT_TRUE(is_var(le->a, block.iter_vars[1].var));
  EXPECT_TRUE(is_var(le->b, block.iter_vars[0].var));
  EXPECT_TRUE(as<tir::BufferStoreNode>(guard->then_case));
  EXPECT_FALSE(guard->else_case);
  EXPECT_TRUE(as<tir::BufferStoreNode>(block.init));
}

TEST(TeCreatePrimFunc, MaxReductionStartsFromTheLowestValue) {
  Tensor a = placeholder({3, 9}, DataType::int32(), "A");
  IterVar k = reduce_axis(9, "k");
  Tensor m = compute(
      {3}, [&](const std::vector<Var>& i) { return tir::max_reduce(a(i[0], k.var), {k}); }, "M");
  tir::PrimFunc func = create_prim_func({a, m});
  std::vector<const ForNode*> loops;
  const BlockNode& block = *innermost(nests(func)[0], &loops)->block;
  const auto* init = as<tir::BufferStoreNode>(block.init);
  ASSERT_TRUE(init);
  ASSERT_TRUE(as<tir::IntImmNode>(init->value));
  EXPECT_EQ(init->value.dtype(), DataType::int32());
  EXPECT_EQ(as<tir::IntImmNode>(init->value)->value, -2147483648LL);
  const auto* update = as<tir::BufferStoreNode>(block.body);
  ASSERT_TRUE(update);
  EXPECT_TRUE(as<tir::MaxNode>(update->value));
}

TEST(TeCreatePrimFunc, ReduceAxisWithAnOffsetBindsLoopPlusMin) {
  Tensor a = placeholder({10}, DataType::float32(), "A");
  IterVar k = reduce_axis(tir::Range{2, 5}, "k");
  Tensor s = compute(
      {1}, [&](const std::vector<Var>&) { return tir::sum(a(k.var), {k}); }, "S");
  tir::PrimFunc func = create_prim_func({a, s});
  std::vector<const ForNode*> loops;
  const BlockRealizeNode* realize = innermost(nests(func)[0], &loops);
  ASSERT_EQ(loops.size(), 2u);
  EXPECT_TRUE(tir::is_zero(loops[1]->min));
  EXPECT_EQ(*tir::as_const_int(loops[1]->extent), 5);
  const IterVar& vk = realize->block->iter_vars[1];
  EXPECT_EQ(*tir::as_const_int(vk.dom.min), 2);
  EXPECT_EQ(*tir::as_const_int(vk.dom.extent), 5);
  const auto* value = as<tir::AddNode>(realize->iter_values[1]);
  ASSERT_TRUE(value);
  EXPECT_TRUE(is_var(value->a, loops[1]->loop_var));
  EXPECT_EQ(*tir::as_const_int(value->b), 2);
}

TEST(TeCreatePrimFunc, Conv2dHasThreeReduceAxes) {
  // NCHW input already padded, OIHW weights, stride 2.
  Tensor data = placeholder({1, 3, 17, 17}, DataType::float32(), "data");
  Tensor weight = placeholder({8, 3, 3, 3}, DataType::float32(), "weight");
  IterVar rc = reduce_axis(3, "rc"), ry = reduce_axis(3, "ry"), rx = reduce_axis(3, "rx");
  Tensor conv = compute({1, 8, 8, 8},
                        [&](const std::vector<Var>& i) {
                          return tir::sum(data(i[0], rc.var, i[2] * 2 + ry.var, i[3] * 2 + rx.var) *
                                              weight(i[1], rc.var, ry.var, rx.var),
                                          {rc, ry, rx});
                        },
                        "conv", {"n", "f", "y", "x"});
  tir::PrimFunc func = create_prim_func({data, weight, conv}, "conv2d");
  std::vector<const ForNode*> loops;
  const BlockRealizeNode* realize = innermost(nests(func)[0], &loops);
  ASSERT_TRUE(realize);
  std::vector<std::string> names;
  for (const ForNode* loop : loops) names.push_back(loop->loop_var->name);
  EXPECT_EQ(names, (std::vector<std::string>{"n", "f", "y", "x", "rc", "ry", "rx"}));
  const BlockNode& block = *realize->block;
  std::string kinds;
  for (const IterVar& iv : block.iter_vars) kinds += iv.kind == IterKind::Spatial ? 'S' : 'R';
  EXPECT_EQ(kinds, "SSSSRRR");
  // data[vn, vrc, vy * 2 + vry, vx * 2 + vrx]: a point region with affine minima.
  ASSERT_EQ(block.reads.size(), 2u);
  EXPECT_EQ(block.reads[0].buffer.get(), data->buffer.get());
  const auto* row = as<tir::AddNode>(block.reads[0].region[2].min);
  ASSERT_TRUE(row);
  EXPECT_TRUE(is_var(row->b, block.iter_vars[5].var));
  EXPECT_TRUE(tir::is_one(block.reads[0].region[2].extent));
}

TEST(TeCreatePrimFunc, PaddingReadsThroughIfThenElse) {
  Tensor a = placeholder({5, 5}, DataType::float32(), "A");
  Tensor padded = compute(
      {7, 7},
      [&](const std::vector<Var>& i) {
        PrimExpr inside = tir::logical_and(tir::logical_and(i[0] >= 1, i[0] < 6),
                                           tir::logical_and(i[1] >= 1, i[1] < 6));
        return tir::call_intrin(
            DataType::float32(), "if_then_else",
            {inside, a(i[0] - 1, i[1] - 1), tir::make_const(DataType::float32(), 0)});
      },
      "pad");
  tir::PrimFunc func = create_prim_func({a, padded});
  std::vector<const ForNode*> loops;
  const BlockNode& block = *innermost(nests(func)[0], &loops)->block;
  EXPECT_FALSE(block.init);
  ASSERT_EQ(block.reads.size(), 1u);
  const auto* min = as<tir::SubNode>(block.reads[0].region[0].min);
  ASSERT_TRUE(min);
  EXPECT_TRUE(is_var(min->a, block.iter_vars[0].var));
}

TEST(TeCreatePrimFunc, DifferentIndicesOfOneBufferReadTheWholeBuffer) {
  Tensor a = placeholder({8, 8}, DataType::float32(), "A");
  Tensor t = compute(
      {8, 8}, [&](const std::vector<Var>& i) { return a(i[0], i[1]) + a(i[1], i[0]); }, "T");
  tir::PrimFunc func = create_prim_func({a, t});
  std::vector<const ForNode*> loops;
  const BlockNode& block = *innermost(nests(func)[0], &loops)->block;
  ASSERT_EQ(block.reads.size(), 1u);
  EXPECT_TRUE(tir::is_zero(block.reads[0].region[0].min));
  EXPECT_EQ(*tir::as_const_int(block.reads[0].region[0].extent), 8);
  EXPECT_EQ(*tir::as_const_int(block.reads[0].region[1].extent), 8);
}

TEST(TeCreatePrimFunc, BlockNamesAreMadeUnique) {
  Tensor a = placeholder({4}, DataType::float32(), "A");
  Tensor t1 = compute(
      {4}, [&](const std::vector<Var>& i) { return a(i[0]) + f32(1); }, "T");
  Tensor t2 = compute(
      {4}, [&](const std::vector<Var>& i) { return t1(i[0]) * f32(2); }, "T");
  Tensor root = compute(
      {4}, [&](const std::vector<Var>& i) { return t2(i[0]); }, "root");
  tir::PrimFunc func = create_prim_func({a, root});
  std::vector<std::string> names;
  for (const Stmt& nest : nests(func)) {
    std::vector<const ForNode*> loops;
    names.push_back(innermost(nest, &loops)->block->name);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"T", "T_1", "root_1"}));
}

TEST(TeCreatePrimFunc, PlaceholderMissingFromTheArgumentsIsAnError) {
  Tensor a = placeholder({4}, DataType::float32(), "A");
  Tensor b = compute(
      {4}, [&](const std::vector<Var>& i) { return a(i[0]) + f32(1); }, "B");
  try {
    create_prim_func({b}, "f");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "create_prim_func 'f': placeholder 'A' read by 'B' is not an argument");
  }
  try {
    create_prim_func({a, b, a}, "g");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "create_prim_func 'g': tensor 'A' is passed twice");
  }
}

TEST(TeCreatePrimFunc, ScalarOutputHasNoSpatialLoops) {
  Tensor a = placeholder({10}, DataType::float32(), "A");
  IterVar k = reduce_axis(10, "k");
  Tensor total = compute(
      {}, [&](const std::vector<Var>&) { return tir::sum(a(k.var), {k}); }, "total");
  tir::PrimFunc func = create_prim_func({a, total});
  std::vector<const ForNode*> loops;
  const BlockRealizeNode* realize = innermost(nests(func)[0], &loops);
  ASSERT_TRUE(realize);
  EXPECT_EQ(loops.size(), 1u);
  ASSERT_EQ(realize->block->iter_vars.size(), 1u);
  EXPECT_EQ(realize->block->iter_vars[0].kind, IterKind::Reduce);
  EXPECT_TRUE(as<tir::BufferStoreNode>(realize->block->init)->indices.empty());
}

TEST(TeCreatePrimFunc, ResultsPassTheScheduledFormVerifier) {
  tir::Var n = tir::VarNode::make("n");
  Tensor a = placeholder({n, 5}, DataType::float32(), "A");
  Tensor b = placeholder({5, 6}, DataType::float32(), "B");
  Tensor c = matmul(a, b);
  Tensor d = compute(
      c.shape(), [&](const std::vector<Var>& i) { return tir::max(c(i[0], i[1]), f32(0)); }, "D");
  Tensor e = compute(
      {6, n}, [&](const std::vector<Var>& i) { return d(i[1], i[0]) + c(i[1], i[0]); }, "E");
  EXPECT_NO_THROW(tir::verify(create_prim_func({a, b, d, e}, "two_outputs")));
  EXPECT_NO_THROW(tir::verify(create_prim_func({a, b, e}, "one_output")));
  IterVar k = reduce_axis(tir::Range{1, 4}, "k");
  Tensor s = compute(
      {n},
      [&](const std::vector<Var>& i) { return tir::min_reduce(a(i[0], k.var), {k}, k.var < 3); },
      "S");
  EXPECT_NO_THROW(tir::verify(create_prim_func({a, s}, "masked_min")));
}

}  // namespace
}  // namespace anvil::te

namespace anvil::te {
namespace {

TEST(CreatePrimFunc, IndexThroughALetVariableReadsTheWholeBuffer) {
  // B[i] = let v = i + 1 in A[v]: v exists only inside the body, so the block's read region
  // cannot be the point A[v].
  Tensor a = placeholder({tir::make_int(9)}, DataType::float32(), "A");
  Tensor b = compute(
      {tir::make_int(8)},
      [&](const std::vector<Var>& i) {
        Var v = tir::VarNode::make("v");
        return tir::let(v, i[0] + 1, a(v));
      },
      "B");
  tir::PrimFunc func = create_prim_func({a, b});
  std::vector<const ForNode*> loops;
  const BlockRealizeNode* realize = innermost(nests(func).at(0), &loops);
  ASSERT_NE(realize, nullptr);
  ASSERT_EQ(realize->block->reads.size(), 1u);
  const tir::BufferRegion& read = realize->block->reads[0];
  ASSERT_EQ(read.region.size(), 1u);
  EXPECT_TRUE(tir::is_zero(read.region[0].min));
  const auto* extent = as<tir::IntImmNode>(read.region[0].extent);
  ASSERT_NE(extent, nullptr);
  EXPECT_EQ(extent->value, 9);
}

}  // namespace
}  // namespace anvil::te
