// tir::transform::lower: the whole pipeline on TE functions. The result is in
// lowered form (no blocks, one-dimensional accesses, Allocate for
// intermediates), the passes run in their documented order, and the lowered
// function still computes what plain C++ computes (through the test
// interpreter, before the packed API).
#include <gtest/gtest.h>

#include "anvil/te/te.h"
#include "anvil/tir/functor.h"
#include "anvil/tir/transform.h"
#include "loop_interpreter.h"

namespace anvil::tir {
namespace {

using transform::LowerOptions;

PrimExpr f32(double value) { return make_const(DataType::float32(), value); }

struct MatmulRelu {
  te::Tensor a, b, c, d;
};

MatmulRelu matmul_relu(PrimExpr m, PrimExpr n, PrimExpr k_extent) {
  MatmulRelu t;
  t.a = te::placeholder({m, k_extent}, DataType::float32(), "A");
  t.b = te::placeholder({k_extent, n}, DataType::float32(), "B");
  IterVar k = te::reduce_axis(k_extent, "k");
  t.c = te::compute(
      {m, n},
      [&](const std::vector<Var>& i) { return sum(t.a(i[0], k.var) * t.b(k.var, i[1]), {k}); },
      "C");
  t.d = te::compute(
      {m, n}, [&](const std::vector<Var>& i) { return max(t.c(i[0], i[1]), f32(0)); }, "D");
  return t;
}

void expect_lowered_form(const Stmt& body) {
  pre_order_visit(
      body,
      [](const PrimExpr& e) {
        EXPECT_NE(e.kind(), ExprKind::Reduce);
        if (const auto* l = as<BufferLoadNode>(e)) {
          EXPECT_EQ(l->indices.size(), 1u) << l->buffer->name;
        }
      },
      [](const Stmt& s) {
        EXPECT_NE(s->kind, StmtKind::Block);
        EXPECT_NE(s->kind, StmtKind::BlockRealize);
        if (const auto* st = as<BufferStoreNode>(s)) {
          EXPECT_EQ(st->indices.size(), 1u) << st->buffer->name;
        }
      });
}

TEST(LowerPipeline, PassesRunInTheDocumentedOrder) {
  MatmulRelu t = matmul_relu(4, 6, 5);
  std::vector<std::string> passes;
  LowerOptions options;
  options.dump = [&](const std::string& pass, const PrimFunc& func) {
    passes.push_back(pass);
    EXPECT_TRUE(func);
  };
  transform::lower(te::create_prim_func({t.a, t.b, t.d}, "matmul_relu"), options);
  EXPECT_EQ(passes,
            (std::vector<std::string>{
                "legalize_minifloats", "compact_buffer_allocation", "convert_blocks_to_loops",
                "partition_loops", "flatten_buffers", "simplify", "vectorize_loops", "unroll_loops",
                "simplify", "storage_rewrite", "lower_intrinsics", "make_packed_api"}));
  passes.clear();
  options.packed_api = false;
  transform::lower(te::create_prim_func({t.a, t.b, t.d}, "matmul_relu"), options);
  ASSERT_FALSE(passes.empty());
  EXPECT_EQ(passes.back(), "lower_intrinsics");
}

TEST(LowerPipeline, MatmulReluLowersAndComputesLikePlainCpp) {
  const int m = 7, n = 5, kk = 9;
  MatmulRelu t = matmul_relu(m, n, kk);
  LowerOptions options;
  options.packed_api = false;
  PrimFunc func = transform::lower(te::create_prim_func({t.a, t.b, t.d}, "matmul_relu"), options);
  expect_lowered_form(func->body);
  int allocations = 0;
  pre_order_visit(func->body, nullptr,
                  [&](const Stmt& s) { allocations += s->kind == StmtKind::Allocate; });
  EXPECT_GE(allocations, 1);  // C lives in the function

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

TEST(LowerPipeline, SymbolicShapesLowerToThePackedApi) {
  Var m = VarNode::make("m"), n = VarNode::make("n");
  MatmulRelu t = matmul_relu(m, n, 16);
  PrimFunc func = transform::lower(te::create_prim_func({t.a, t.b, t.d}, "dyn"));
  expect_lowered_form(func->body);
  const auto* conv = func->func_attrs.find("calling_conv");
  ASSERT_TRUE(conv);
  EXPECT_EQ(std::get<std::string>(*conv), "packed");
  EXPECT_EQ(func->global_symbol(), "dyn");
  EXPECT_TRUE(func->buffer_map.empty());
}

}  // namespace
}  // namespace anvil::tir
