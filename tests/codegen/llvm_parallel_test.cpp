// Parallel loops of the LLVM back end: outlined task functions launched on the runtime's thread
// pool must give the results of a serial run, propagate failures and run nested loops serially.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "anvil/codegen/llvm.h"
#include "anvil/runtime/thread_pool.h"
#include "anvil/support/error.h"
#include "codegen/c_test_kernels.h"

namespace anvil::codegen {
namespace {

using namespace tir;  // NOLINT
using testing::make_packed_kernel;
using testing::scalar_param;
using testing::tensor_of;
using testing::tensor_param;
using testing::values_of;

Var int_var(const char* name) { return VarNode::make(name, DataType::int64()); }
Buffer flat(const char* name, DataType dtype, PrimExpr extent) {
  return BufferNode::make(name, dtype, {std::move(extent)});
}

// Restores the thread count a test changed.
class ThreadCount {
 public:
  explicit ThreadCount(int n) { set_num_threads(n); }
  ~ThreadCount() { set_num_threads(0); }
};

// B[i, j] = A[i, j] * k + offset + i with rows in parallel; offset is a Let bound outside the
// loop and each task stages its row through a stack buffer, so the closure carries scalars,
// pointers and a let-bound value.
PrimFunc parallel_rows_kernel(ForKind inner_kind) {
  Var m = int_var("m"), n = int_var("n"), i = int_var("i"), j = int_var("j");
  Var k = VarNode::make("k", DataType::float32());
  Var offset = VarNode::make("offset", DataType::float32());
  Buffer a = flat("A", DataType::float32(), m * n), b = flat("B", DataType::float32(), m * n);
  Buffer row = BufferNode::make("row", DataType::float32(), {make_int(64)}, "local");
  PrimExpr value = load(a, {i * n + j}) * k + offset + cast(DataType::float32(), i);
  Stmt per_row =
      AllocateNode::make(row, seq_stmt({for_loop(j, 0, n, store(row, value, {j}), inner_kind),
                                        for_loop(j, 0, n, store(b, load(row, {j}), {i * n + j}))}));
  Stmt body =
      AssertStmtNode::make(n <= 64, "rows: n must be at most 64",
                           LetStmtNode::make(offset, k * make_const(DataType::float32(), 0.5),
                                             for_loop(i, 0, m, per_row, ForKind::Parallel)));
  return make_packed_kernel(
      "rows", {tensor_param(a, {m, n}), tensor_param(b, {m, n}), scalar_param(k)}, body);
}

std::vector<float> run_rows(const Module& module, int64_t m, int64_t n, std::vector<float>& input) {
  input.resize(size_t(m * n));
  for (int64_t q = 0; q < m * n; ++q) input[size_t(q)] = float(q % 13) - 4.5f;
  Tensor out = Tensor::zeros({m, n}, DataType::float32());
  module.function("rows")(tensor_of(input, DataType::float32(), {m, n}), out, 2.0);
  return values_of<float>(out);
}

TEST(LlvmParallel, MatchesSerialResultsOnTwoThreads) {
  Module module = jit_compile({parallel_rows_kernel(ForKind::Serial)});
  for (int64_t m : {0, 1, 2, 3, 37}) {
    std::vector<float> input;
    std::vector<float> serial, parallel;
    {
      ThreadCount one(1);
      serial = run_rows(module, m, 19, input);
    }
    {
      ThreadCount two(2);
      parallel = run_rows(module, m, 19, input);
    }
    ASSERT_EQ(parallel, serial) << m;
    for (int64_t r = 0; r < m; ++r)
      for (int64_t c = 0; c < 19; ++c) {
        size_t q = size_t(r * 19 + c);
        ASSERT_EQ(parallel[q], input[q] * 2.0f + 1.0f + float(r)) << r << " " << c;
      }
  }
}

TEST(LlvmParallel, NestedParallelLoopsRunSerially) {
  PrimFunc func = parallel_rows_kernel(ForKind::Parallel);
  std::string ir = emit_llvm_ir({func}, Target::parse("llvm -mcpu=znver4"));
  EXPECT_NE(ir.find("@rows_par0"), std::string::npos);
  EXPECT_EQ(ir.find("@rows_par1"), std::string::npos) << "the inner loop must not be outlined";
  EXPECT_NE(ir.find("@AnvilParallelLaunch"), std::string::npos);
  ThreadCount two(2);
  Module module = jit_compile({func});
  std::vector<float> input;
  std::vector<float> out = run_rows(module, 5, 7, input);
  for (size_t q = 0; q < out.size(); ++q) ASSERT_EQ(out[q], input[q] * 2.0f + 1.0f + float(q / 7));
}

TEST(LlvmParallel, FailureInATaskSurfacesItsMessage) {
  Var n = int_var("n"), i = int_var("i");
  Buffer a = flat("A", DataType::float32(), n), b = flat("B", DataType::float32(), n);
  Stmt body =
      for_loop(i, 0, n,
               AssertStmtNode::make(
                   load(a, {i}) >= make_const(DataType::float32(), 0), "psqrt: negative input",
                   store(b, call_intrin(DataType::float32(), "sqrt", {load(a, {i})}), {i})),
               ForKind::Parallel);
  Module module = jit_compile(
      {make_packed_kernel("psqrt", {tensor_param(a, {n}), tensor_param(b, {n})}, body)});
  ThreadCount two(2);
  std::vector<float> values = {4, 9, 16, 25, 36, 49, 64, 81};
  Tensor out = Tensor::zeros({8}, DataType::float32());
  module.function("psqrt")(tensor_of(values, DataType::float32(), {8}), out);
  for (size_t q = 0; q < values.size(); ++q)
    EXPECT_EQ(values_of<float>(out)[q], std::sqrt(values[q]));
  values[6] = -1;
  try {
    module.function("psqrt")(tensor_of(values, DataType::float32(), {8}), out);
    FAIL() << "a negative element must fail";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("psqrt: negative input"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace anvil::codegen
