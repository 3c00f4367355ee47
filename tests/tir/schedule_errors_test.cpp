// Every illegal use of the loop primitives and lookups: each is an
// anvil::Error whose one-line message names the primitive, the block or loop,
// and why.
#include <gtest/gtest.h>

#include <functional>

#include "anvil/support/error.h"
#include "anvil/tir/schedule.h"
#include "schedule_loop_programs.h"

namespace anvil::tir {
namespace {

using namespace loop_testing;

// The message of the anvil::Error fn throws ("" and a failure when none).
std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no anvil::Error was thrown";
  return "";
}

PrimFunc make_func(const std::vector<Buffer>& buffers, Stmt body, const std::string& name) {
  std::vector<Var> params;
  std::vector<std::pair<Var, Buffer>> buffer_map;
  for (const Buffer& b : buffers) {
    params.push_back(VarNode::make(b->name + "_handle", DataType::handle()));
    buffer_map.emplace_back(params.back(), b);
  }
  return PrimFuncNode::make(params, buffer_map, body,
                            ir::DictAttrs{}.with("global_symbol", std::string(name)));
}

// for i in 8: for j in i + 1: B[i, j] = 1 (a triangular nest).
PrimFunc triangular() {
  Buffer b = BufferNode::make("B", DataType::float32(), {8, 8});
  Var i = VarNode::make("i"), j = VarNode::make("j");
  IterVar vi = iter_var("vi", 8), vj = iter_var("vj", 8);
  Block block = BlockNode::make({vi, vj}, {}, {BufferRegion::full(b)}, "B",
                                store(b, f32(1), {vi.var, vj.var}));
  Stmt nest = for_loop(j, 0, i + 1, BlockRealizeNode::make({i, j}, const_true(), block));
  return make_func({b}, for_loop(i, 0, 8, nest), "triangular");
}

// for i in 8: for j in 4: block X with an opaque variable bound to i.
PrimFunc opaque_nest() {
  Buffer x = BufferNode::make("X", DataType::float32(), {8, 4});
  Var i = VarNode::make("i"), j = VarNode::make("j");
  IterVar v = iter_var("v", 8, IterKind::Opaque), w = iter_var("w", 4);
  Block block = BlockNode::make({v, w}, {BufferRegion::full(x)}, {BufferRegion::full(x)}, "X",
                                store(x, load(x, {v.var, w.var}) + f32(1), {v.var, w.var}));
  Stmt nest = for_loop(j, 0, 4, BlockRealizeNode::make({i, j}, const_true(), block));
  return make_func({x}, for_loop(i, 0, 8, nest), "opaque");
}

// for i in 8: block Y (no iteration variables) storing Y[i] = 1.
PrimFunc direct_use() {
  Buffer y = BufferNode::make("Y", DataType::float32(), {8});
  Var i = VarNode::make("i");
  Block block = BlockNode::make({}, {}, {BufferRegion::full(y)}, "Y", store(y, f32(1), {i}));
  return make_func({y}, for_loop(i, 0, 8, BlockRealizeNode::make({}, const_true(), block)),
                   "direct");
}

// C = A x B followed by D = C + 1.
PrimFunc matmul_then_add() {
  te::Tensor a = te::placeholder({5, 6}, DataType::float32(), "A");
  te::Tensor b = te::placeholder({6, 7}, DataType::float32(), "B");
  IterVar k = te::reduce_axis(6, "k");
  te::Tensor c = te::compute(
      {5, 7}, [&](const std::vector<Var>& i) { return sum(a(i[0], k.var) * b(k.var, i[1]), {k}); },
      "C");
  te::Tensor d = te::compute(
      {5, 7}, [&](const std::vector<Var>& i) { return c(i[0], i[1]) + f32(1); }, "D");
  return te::create_prim_func({a, b, d}, "matmul_add");
}

TEST(ScheduleErrors, Lookups) {
  Schedule sch(matmul(4, 5, 6));
  EXPECT_EQ(error_of([&] { sch.get_block("D"); }),
            "get_block: no block named 'D' in function 'matmul'");
  EXPECT_EQ(error_of([&] { sch.get_loops(BlockRV{"D"}); }),
            "get_loops: no block named 'D' in function 'matmul'");
  EXPECT_EQ(error_of([&] { sch.get_child_blocks(BlockRV{"D"}); }),
            "get_child_blocks: no block named 'D' in function 'matmul'");
  EXPECT_EQ(error_of([&] { Schedule bad{PrimFunc()}; }), "Schedule: the function is null");
}

TEST(ScheduleErrors, DuplicateBlockNames) {
  Buffer b = BufferNode::make("B", DataType::float32(), {2});
  Block block = BlockNode::make({}, {}, {}, "B", store(b, f32(0), {0}));
  Stmt twice = seq_stmt({BlockRealizeNode::make({}, const_true(), block),
                         BlockRealizeNode::make({}, const_true(), block)});
  PrimFunc func = make_func({b}, twice, "dup");
  EXPECT_EQ(error_of([&] { Schedule sch(func); }),
            "Schedule: block name 'B' is used twice in function 'dup'");
}

TEST(ScheduleErrors, Split) {
  Schedule sch(add_one(10));
  LoopRV i = sch.get_loops(sch.get_block("B"))[0];
  EXPECT_EQ(error_of([&] { sch.split(i, {5}); }),
            "split: loop 'i' needs at least two factors, got 1");
  EXPECT_EQ(error_of([&] {
              sch.split(i, {nullptr, nullptr});
            }),
            "split: loop 'i' has more than one inferred (null) factor");
  EXPECT_EQ(error_of([&] {
              sch.split(i, {nullptr, 0});
            }),
            "split: factor 1 of loop 'i' is not positive (it is 0)");
  EXPECT_EQ(error_of([&] {
              sch.split(i, {-2, nullptr});
            }),
            "split: factor 0 of loop 'i' is not positive (it is -2)");
  EXPECT_EQ(error_of([&] {
              sch.split(i, {nullptr, f32(2)});
            }),
            "split: factor 1 of loop 'i' is not an integer (it is float32)");
  EXPECT_EQ(error_of([&] {
              sch.split(i, {2, 3});
            }),
            "split: the factors of loop 'i' cover 6 iterations, fewer than its extent 10");
  EXPECT_EQ(error_of([&] {
              sch.split(LoopRV{VarNode::make("q")}, {2, 5});
            }),
            "split: no loop 'q' in function 'add_one'");
  EXPECT_EQ(error_of([&] { sch.split(LoopRV{}, {2, 5}); }), "split: the loop is not set");
  // A split loop is gone: its handle is stale.
  sch.split(i, {2, 5});
  EXPECT_EQ(error_of([&] { sch.split(i, {2, 5}); }), "split: no loop 'i' in function 'add_one'");
}

TEST(ScheduleErrors, Fuse) {
  Schedule sch(matmul(4, 5, 6));
  std::vector<LoopRV> l = sch.get_loops(sch.get_block("C"));
  EXPECT_EQ(error_of([&] { sch.fuse({}); }), "fuse: no loops given");
  EXPECT_EQ(error_of([&] {
              sch.fuse({l[0], l[2]});
            }),
            "fuse: loops 'i' and 'k' are not perfectly nested (the body of 'i' is not loop 'k')");
  EXPECT_EQ(error_of([&] {
              sch.fuse({l[1], l[0]});
            }),
            "fuse: loops 'j' and 'i' are not perfectly nested (the body of 'j' is not loop 'i')");
  EXPECT_EQ(error_of([&] { sch.fuse({l[0], l[0]}); }), "fuse: loop 'i' is listed twice");
  // A sequence between the loops (after decompose_reduction) breaks the nest.
  sch.decompose_reduction(sch.get_block("C"), l[2]);
  EXPECT_EQ(error_of([&] {
              sch.fuse({l[1], l[2]});
            }),
            "fuse: loops 'j' and 'k' are not perfectly nested (the body of 'j' is not loop 'k')");

  Schedule tri(triangular());
  std::vector<LoopRV> t = tri.get_loops(tri.get_block("B"));
  EXPECT_EQ(error_of([&] { tri.fuse(t); }), "fuse: the range of loop 'j' depends on loop 'i'");
}

TEST(ScheduleErrors, Reorder) {
  Schedule two(two_stage(10));
  LoopRV b = two.get_loops(two.get_block("B"))[0], c = two.get_loops(two.get_block("C"))[0];
  EXPECT_EQ(error_of([&] {
              two.reorder({b, c});
            }),
            "reorder: loops 'i' and 'i' are not in one loop nest (neither is inside the other)");

  Schedule sch(matmul(4, 5, 6));
  std::vector<LoopRV> l = sch.get_loops(sch.get_block("C"));
  EXPECT_EQ(error_of([&] { sch.reorder({l[1], l[1]}); }), "reorder: loop 'j' is listed twice");
  sch.decompose_reduction(sch.get_block("C"), l[2]);
  EXPECT_EQ(error_of([&] {
              sch.reorder({l[2], l[0]});
            }),
            "reorder: loop 'j' has more than one loop as its body (a block or a sequence lies "
            "between loops 'j' and 'k')");

  Schedule tri(triangular());
  std::vector<LoopRV> t = tri.get_loops(tri.get_block("B"));
  EXPECT_EQ(error_of([&] {
              tri.reorder({t[1], t[0]});
            }),
            "reorder: the range of loop 'j' depends on loop 'i', which would move outside it");

  Schedule opaque(opaque_nest());
  std::vector<LoopRV> o = opaque.get_loops(opaque.get_block("X"));
  EXPECT_EQ(error_of([&] {
              opaque.reorder({o[1], o[0]});
            }),
            "reorder: loop 'i' is bound to opaque iteration variable 'v' of block 'X'");
}

TEST(ScheduleErrors, ParallelAndVectorize) {
  Schedule sch(matmul(4, 5, 6));
  std::vector<LoopRV> l = sch.get_loops(sch.get_block("C"));
  EXPECT_EQ(error_of([&] { sch.parallel(l[2]); }),
            "parallel: loop 'k' is bound to reduction variable 'vk' of block 'C'; only loops over "
            "spatial variables may run in parallel");
  EXPECT_EQ(error_of([&] { sch.vectorize(l[2]); }),
            "vectorize: loop 'k' is bound to reduction variable 'vk' of block 'C'; only loops "
            "over spatial variables may run as vector lanes");
  // A fused loop that carries the reduction cannot run in parallel either.
  LoopRV jk = sch.fuse({l[1], l[2]});
  EXPECT_EQ(error_of([&] { sch.parallel(jk); }),
            "parallel: loop 'j_k_fused' is bound to reduction variable 'vk' of block 'C'; only "
            "loops over spatial variables may run in parallel");

  Schedule opaque(opaque_nest());
  LoopRV i = opaque.get_loops(opaque.get_block("X"))[0];
  EXPECT_EQ(error_of([&] { opaque.parallel(i); }),
            "parallel: loop 'i' is bound to opaque variable 'v' of block 'X'; only loops over "
            "spatial variables may run in parallel");

  Schedule direct(direct_use());
  EXPECT_EQ(error_of([&] { direct.parallel(direct.get_loops(direct.get_block("Y"))[0]); }),
            "parallel: block 'Y' uses loop 'i' directly instead of through an iteration "
            "variable, so its dependences are unknown");

  Var n = VarNode::make("n");
  te::Tensor a = te::placeholder({n}, DataType::float32(), "A");
  te::Tensor b = te::compute(
      {n}, [&](const std::vector<Var>& x) { return a(x[0]) + f32(1); }, "B");
  Schedule symbolic(te::create_prim_func({a, b}, "add_n"));
  EXPECT_EQ(error_of([&] { symbolic.vectorize(symbolic.get_loops(symbolic.get_block("B"))[0]); }),
            "vectorize: loop 'i' has no constant extent, so it cannot become vector lanes");
  EXPECT_EQ(error_of([&] { symbolic.annotate(LoopRV{n}, "x", int64_t(1)); }),
            "annotate: no loop 'n' in function 'add_n'");
  EXPECT_EQ(error_of([&] {
              symbolic.annotate(symbolic.get_loops(symbolic.get_block("B"))[0], "", int64_t(1));
            }),
            "annotate: empty annotation key on loop 'i'");
  EXPECT_EQ(error_of([&] { symbolic.unroll(LoopRV{n}); }),
            "unroll: no loop 'n' in function 'add_n'");
}

TEST(ScheduleErrors, DecomposeReduction) {
  Schedule add(add_one(10));
  LoopRV i = add.get_loops(add.get_block("B"))[0];
  EXPECT_EQ(error_of([&] { add.decompose_reduction(add.get_block("B"), i); }),
            "decompose_reduction: block 'B' has no init, so it is not a reduction block");

  Schedule sch(matmul_then_add());
  LoopRV d_loop = sch.get_loops(sch.get_block("D"))[0];
  EXPECT_EQ(error_of([&] { sch.decompose_reduction(sch.get_block("C"), d_loop); }),
            "decompose_reduction: loop 'i' is not an ancestor of block 'C'");
  EXPECT_EQ(error_of([&] { sch.decompose_reduction(sch.get_block("C"), LoopRV{}); }),
            "decompose_reduction: the loop is not set");
  EXPECT_EQ(
      error_of([&] { sch.decompose_reduction(sch.get_block("C"), LoopRV{VarNode::make("z")}); }),
      "decompose_reduction: no loop 'z' in function 'matmul_add'");
  std::vector<LoopRV> l = sch.get_loops(sch.get_block("C"));
  sch.reorder({l[2], l[0]});
  EXPECT_EQ(error_of([&] { sch.decompose_reduction(sch.get_block("C"), l[1]); }),
            "decompose_reduction: loop 'k' above loop 'j' is bound to reduction variable 'vk' of "
            "block 'C'; the init must be placed above every reduction loop");
  sch.decompose_reduction(sch.get_block("C"), l[2]);
  EXPECT_EQ(error_of([&] { sch.decompose_reduction(sch.get_block("C"), l[2]); }),
            "decompose_reduction: block 'C' has no init, so it is not a reduction block");
}

// ---------------------------------------------------------------- tensorize

Buffer intrin_buffer(const std::string& name, std::vector<PrimExpr> shape, bool symbolic) {
  if (!symbolic) return BufferNode::make(name, DataType::float32(), shape);
  std::vector<PrimExpr> strides;
  for (size_t d = 0; d < shape.size(); ++d)
    strides.push_back(VarNode::make(name + "_s" + std::to_string(d)));
  return BufferNode::make_full(VarNode::make(name, DataType::handle()), DataType::float32(), shape,
                               strides, VarNode::make(name + "_offset"), name, "global", 64);
}

// B[i] = A[i] op 1 over 8 elements, as an intrinsic description or implementation.
PrimFunc unary8(bool symbolic, bool multiply, bool with_init = false) {
  Buffer a = intrin_buffer("A", {8}, symbolic), b = intrin_buffer("B", {8}, symbolic);
  Var i = VarNode::make("i");
  IterVar vi = iter_var("vi", 8);
  PrimExpr value = multiply ? load(a, {vi.var}) * f32(2) : load(a, {vi.var}) + f32(1);
  Stmt init = with_init ? store(b, f32(0), {vi.var}) : Stmt();
  Block block = BlockNode::make({vi}, {BufferRegion::full(a)}, {BufferRegion::full(b)}, "op",
                                store(b, value, {vi.var}), init);
  return make_func({a, b}, for_loop(i, 0, 8, BlockRealizeNode::make({i}, const_true(), block)),
                   "unary8");
}

// C[i, j] += A[i, k] * B[k, j] over 4x4x4 with compact 4x4 buffers.
PrimFunc compact_gemm4() {
  Buffer a = intrin_buffer("A", {4, 4}, false), b = intrin_buffer("B", {4, 4}, false),
         c = intrin_buffer("C", {4, 4}, false);
  Var i = VarNode::make("i"), j = VarNode::make("j"), k = VarNode::make("k");
  IterVar vi = iter_var("vi", 4), vj = iter_var("vj", 4), vk = iter_var("vk", 4, IterKind::Reduce);
  Stmt update =
      store(c, load(c, {vi.var, vj.var}) + load(a, {vi.var, vk.var}) * load(b, {vk.var, vj.var}),
            {vi.var, vj.var});
  Block block = BlockNode::make({vi, vj, vk}, {}, {}, "update", update);
  Stmt nest = BlockRealizeNode::make({i, j, k}, const_true(), block);
  nest = for_loop(i, 0, 4, for_loop(j, 0, 4, for_loop(k, 0, 4, nest)));
  return make_func({a, b, c}, nest, "gemm4");
}

TEST(ScheduleErrors, RegisterTensorIntrin) {
  PrimFunc add8 = unary8(true, false);
  EXPECT_EQ(error_of([&] {
              register_tensor_intrin("", {add8, add8});
            }),
            "register_tensor_intrin: the name is empty");
  EXPECT_EQ(error_of([&] {
              register_tensor_intrin("bad", {add8, PrimFunc()});
            }),
            "register_tensor_intrin: intrinsic 'bad' needs both a description and an "
            "implementation");
  EXPECT_EQ(error_of([&] {
              register_tensor_intrin("bad", {add8, compact_gemm4()});
            }),
            "register_tensor_intrin: the description of 'bad' has 2 parameters but its "
            "implementation has 3");
  EXPECT_EQ(error_of([&] {
              register_tensor_intrin("bad", {unary8(true, false, true), add8});
            }),
            "register_tensor_intrin: the block of the description of 'bad' has an init; "
            "describe the update only");
  Buffer a = intrin_buffer("A", {8}, true), b = intrin_buffer("B", {8}, true);
  PrimFunc no_loops = make_func({a, b}, store(b, f32(0), {0}), "x");
  EXPECT_EQ(error_of([&] {
              register_tensor_intrin("bad", {no_loops, no_loops});
            }),
            "register_tensor_intrin: the description of 'bad' must be loops over one block, not "
            "0 loops over a BufferStore");
  Var i = VarNode::make("i");
  IterVar vi = iter_var("vi", 8);
  Block only_b = BlockNode::make({vi}, {}, {}, "op", store(b, f32(0), {vi.var}));
  PrimFunc unused =
      make_func({a, b}, for_loop(i, 0, 8, BlockRealizeNode::make({i}, const_true(), only_b)), "x");
  EXPECT_EQ(error_of([&] {
              register_tensor_intrin("bad", {unused, unused});
            }),
            "register_tensor_intrin: the description of 'bad' never accesses its buffer 'A'");
}

TEST(ScheduleErrors, Tensorize) {
  register_tensor_intrin("errors.add8", {unary8(true, false), unary8(true, false)});
  register_tensor_intrin("errors.compact_gemm4", {compact_gemm4(), compact_gemm4()});

  Schedule sch(add_one(1001));
  std::vector<LoopRV> i = sch.split(sch.get_loops(sch.get_block("B"))[0], {nullptr, 8});
  EXPECT_EQ(error_of([&] { sch.tensorize(i[1], "errors.nothing"); }),
            "tensorize: no tensor intrinsic named 'errors.nothing' is registered");
  EXPECT_EQ(error_of([&] { sch.tensorize(i[1], "errors.add8"); }),
            "tensorize: block 'B' under loop 'i_1' has a predicate (a split that does not "
            "divide); intrinsic 'errors.add8' covers whole tiles only");
  EXPECT_EQ(error_of([&] { sch.tensorize(i[0], "errors.add8"); }),
            "tensorize: the nest under loop 'i_0' (2 loops over block 'B') does not have the "
            "shape of intrinsic 'errors.add8' (1 loop over block 'op')");

  Schedule wide(add_one(1000));
  std::vector<LoopRV> w = wide.split(wide.get_loops(wide.get_block("B"))[0], {nullptr, 10});
  EXPECT_EQ(error_of([&] { wide.tensorize(w[1], "errors.add8"); }),
            "tensorize: loop 'i_1' has extent 10 where intrinsic 'errors.add8' has loop 'i' of "
            "extent 8");

  te::Tensor a = te::placeholder({64}, DataType::float32(), "A");
  te::Tensor doubled = te::compute(
      {64}, [&](const std::vector<Var>& x) { return a(x[0]) * f32(2); }, "D");
  Schedule mul(te::create_prim_func({a, doubled}, "double"));
  std::vector<LoopRV> m = mul.split(mul.get_loops(mul.get_block("D"))[0], {nullptr, 8});
  EXPECT_EQ(error_of([&] { mul.tensorize(m[1], "errors.add8"); }),
            "tensorize: block 'D' does not match intrinsic 'errors.add8': the description has "
            "Add where the block has Mul");

  // A reduction block still holding its init.
  Schedule mm(matmul(8, 8, 8));
  std::vector<LoopRV> l = mm.get_loops(mm.get_block("C"));
  std::vector<LoopRV> ti = mm.split(l[0], {nullptr, 4});
  std::vector<LoopRV> tj = mm.split(l[1], {nullptr, 4});
  std::vector<LoopRV> tk = mm.split(l[2], {nullptr, 4});
  mm.reorder({ti[0], tj[0], tk[0], ti[1], tj[1], tk[1]});
  EXPECT_EQ(error_of([&] { mm.tensorize(ti[1], "errors.compact_gemm4"); }),
            "tensorize: block 'C' has an init; separate it with decompose_reduction first");
  // An intrinsic that starts from the identity takes the init only with the whole reduction.
  register_tensor_intrin("errors.gemm4_from_zero", {compact_gemm4(), compact_gemm4(), true});
  EXPECT_EQ(error_of([&] { mm.tensorize(ti[1], "errors.gemm4_from_zero"); }),
            "tensorize: block 'C' keeps its init, but its reduction over 'vk' runs partly outside "
            "the loops of intrinsic 'errors.gemm4_from_zero', which start from the identity");
  // Compact 4x4 buffers cannot stand for a 4x4 window of an 8x8 matrix.
  mm.decompose_reduction(mm.get_block("C"), tk[0]);
  EXPECT_EQ(error_of([&] { mm.tensorize(ti[1], "errors.compact_gemm4"); }),
            "tensorize: intrinsic 'errors.compact_gemm4' description needs buffer 'A' to have "
            "stride 4 in dimension 0, but 'A' has stride 8 (declare symbolic strides to accept "
            "any)");
}

TEST(ScheduleErrors, TensorizeIndexMismatch) {
  register_tensor_intrin("errors.add8_b", {unary8(true, false), unary8(true, false)});
  // B[i] = A[7 - i] + 1 reads A backwards: its index does not move with the description's.
  te::Tensor a = te::placeholder({16}, DataType::float32(), "A");
  te::Tensor rev = te::compute(
      {16}, [&](const std::vector<Var>& x) { return a(PrimExpr(15) - x[0]) + f32(1); }, "R");
  Schedule sch(te::create_prim_func({a, rev}, "reverse"));
  std::vector<LoopRV> i = sch.split(sch.get_loops(sch.get_block("R"))[0], {nullptr, 8});
  EXPECT_EQ(error_of([&] { sch.tensorize(i[1], "errors.add8_b"); }),
            "tensorize: block 'R' does not match intrinsic 'errors.add8_b': index 0 of buffer 'A' "
            "does not move with the description's index 0 of 'A' inside the tensorized loops");
}

}  // namespace
}  // namespace anvil::tir
