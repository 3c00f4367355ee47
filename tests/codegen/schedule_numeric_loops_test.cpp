// The loop primitives end to end: for each one, an unscheduled and a scheduled
// function of the same tensor expression are lowered, JIT compiled and run on
// random inputs; the outputs must agree (and the unscheduled matmul agrees
// with plain C++).
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "anvil/codegen/llvm.h"
#include "anvil/runtime/packed_func.h"
#include "anvil/tir/schedule.h"
#include "anvil/tir/transform.h"
#include "tir/schedule_loop_programs.h"

namespace anvil::tir {
namespace {

using namespace loop_testing;

// Runs func through lower + JIT with the first inputs.size() parameters taken
// from inputs and the outputs starting as NaN; returns every parameter's values.
std::vector<std::vector<float>> run_jit(const PrimFunc& func,
                                        const std::vector<std::vector<float>>& inputs) {
  Module module = codegen::jit_compile({transform::lower(func)});
  std::vector<Tensor> tensors;
  for (size_t p = 0; p < func->buffer_map.size(); ++p) {
    const Buffer& buffer = func->buffer_map[p].second;
    std::vector<int64_t> shape;
    for (const PrimExpr& d : buffer->shape) shape.push_back(*as_const_int(d));
    Tensor t = Tensor::empty(shape, DataType::float32());
    float* data = t.data_as<float>();
    size_t n = size_t(element_count(buffer));
    for (size_t i = 0; i < n; ++i) data[i] = p < inputs.size() ? inputs[p][i] : std::nanf("");
    tensors.push_back(t);
  }
  std::vector<Value> args(tensors.begin(), tensors.end());
  module.function(func->global_symbol()).call(args);
  std::vector<std::vector<float>> out;
  for (size_t p = 0; p < tensors.size(); ++p) {
    const float* data = tensors[p].data_as<float>();
    out.emplace_back(data, data + element_count(func->buffer_map[p].second));
  }
  return out;
}

std::vector<std::vector<float>> random_float_inputs(const PrimFunc& func, size_t n_inputs) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<std::vector<float>> inputs;
  for (size_t p = 0; p < n_inputs; ++p) {
    std::vector<float> values(size_t(element_count(func->buffer_map[p].second)));
    for (float& v : values) v = dist(rng);
    inputs.push_back(std::move(values));
  }
  return inputs;
}

// Both functions computed on the same random inputs agree on every output.
void expect_same_jit_results(const PrimFunc& original, const PrimFunc& scheduled, size_t n_inputs) {
  auto inputs = random_float_inputs(original, n_inputs);
  auto expected = run_jit(original, inputs);
  auto actual = run_jit(scheduled, inputs);
  for (size_t p = n_inputs; p < expected.size(); ++p) {
    int mismatches = 0;
    for (size_t i = 0; i < expected[p].size(); ++i) {
      float e = expected[p][i], a = actual[p][i];
      if (std::fabs(e - a) <= 1e-5f * (1 + std::fabs(e))) continue;
      if (++mismatches <= 3)
        ADD_FAILURE() << "output " << p << " element " << i << ": expected " << e << ", got " << a;
    }
    EXPECT_EQ(mismatches, 0) << "of " << expected[p].size() << " elements";
  }
}

TEST(ScheduleNumeric, UnscheduledMatmulMatchesPlainCpp) {
  PrimFunc func = matmul(37, 53, 19);
  auto inputs = random_float_inputs(func, 2);
  auto out = run_jit(func, inputs);
  for (int i = 0; i < 37; ++i)
    for (int j = 0; j < 53; ++j) {
      float acc = 0;
      for (int k = 0; k < 19; ++k) acc += inputs[0][i * 19 + k] * inputs[1][k * 53 + j];
      ASSERT_NEAR(out[2][i * 53 + j], acc, 1e-4) << i << ", " << j;
    }
}

TEST(ScheduleNumeric, SplitDividingAndNot) {
  PrimFunc func = add_one(1001);
  for (PrimExpr factor : {PrimExpr(13), PrimExpr(16), PrimExpr(1), PrimExpr(2000)}) {
    Schedule sch(func);
    sch.split(sch.get_loops(sch.get_block("B"))[0], {nullptr, factor});
    expect_same_jit_results(func, sch.func(), 1);
  }
  PrimFunc mm = matmul(37, 53, 19);
  Schedule sch(mm);
  std::vector<LoopRV> loops = sch.get_loops(sch.get_block("C"));
  sch.split(loops[2], {2, nullptr, 4});
  sch.split(loops[0], {nullptr, 5});
  expect_same_jit_results(mm, sch.func(), 2);
}

TEST(ScheduleNumeric, Fuse) {
  PrimFunc mm = matmul(37, 53, 19);
  Schedule sch(mm);
  std::vector<LoopRV> loops = sch.get_loops(sch.get_block("C"));
  sch.fuse({loops[0], loops[1]});
  expect_same_jit_results(mm, sch.func(), 2);

  PrimFunc mul = multiply3d(5, 7, 9);
  Schedule all(mul);
  all.fuse(all.get_loops(all.get_block("C")));
  expect_same_jit_results(mul, all.func(), 2);
}

TEST(ScheduleNumeric, Reorder) {
  PrimFunc mm = matmul(37, 53, 19);
  Schedule sch(mm);
  std::vector<LoopRV> loops = sch.get_loops(sch.get_block("C"));
  sch.reorder({loops[2], loops[1], loops[0]});
  expect_same_jit_results(mm, sch.func(), 2);
}

TEST(ScheduleNumeric, LoopKindsOnATiledMatmul) {
  PrimFunc mm = matmul(37, 53, 19);
  Schedule sch(mm);
  std::vector<LoopRV> loops = sch.get_loops(sch.get_block("C"));
  std::vector<LoopRV> i = sch.split(loops[0], {nullptr, 8});
  std::vector<LoopRV> j = sch.split(loops[1], {nullptr, 16});
  std::vector<LoopRV> k = sch.split(loops[2], {nullptr, 4});
  sch.reorder({i[0], j[0], k[0], i[1], k[1], j[1]});
  sch.decompose_reduction(sch.get_block("C"), k[0]);
  sch.parallel(i[0]);
  sch.vectorize(j[1]);
  sch.unroll(k[1]);
  sch.annotate(j[0], "pragma_note", std::string("tile"));
  expect_same_jit_results(mm, sch.func(), 2);
}

TEST(ScheduleNumeric, ParallelFusedElementwise) {
  PrimFunc func = multiply3d(5, 7, 9);
  Schedule sch(func);
  std::vector<LoopRV> loops = sch.get_loops(sch.get_block("C"));
  LoopRV fused = sch.fuse({loops[0], loops[1]});
  sch.parallel(fused);
  sch.vectorize(loops[2]);
  expect_same_jit_results(func, sch.func(), 2);
}

TEST(ScheduleNumeric, DecomposeReductionAtEachLevel) {
  PrimFunc mm = matmul(37, 53, 19);
  for (int level = 0; level < 3; ++level) {
    Schedule sch(mm);
    std::vector<LoopRV> loops = sch.get_loops(sch.get_block("C"));
    sch.decompose_reduction(sch.get_block("C"), loops[size_t(level)]);
    expect_same_jit_results(mm, sch.func(), 2);
  }
}

// C[i, j] += A[i, k] * B[k, j] over 4x4x4 with symbolic strides and offsets.
PrimFunc gemm4(bool implementation) {
  auto buffer = [](const std::string& name) {
    return BufferNode::make_full(VarNode::make(name, DataType::handle()), DataType::float32(),
                                 {4, 4}, {VarNode::make(name + "_s0"), VarNode::make(name + "_s1")},
                                 VarNode::make(name + "_offset"), name, "global", 64);
  };
  Buffer a = buffer("A"), b = buffer("B"), c = buffer("C");
  Var i = VarNode::make("i"), j = VarNode::make("j"), k = VarNode::make("k");
  Stmt nest;
  if (implementation) {
    // k outermost, the 4 columns as vector lanes.
    Stmt update = store(c, load(c, {i, j}) + load(a, {i, k}) * load(b, {k, j}), {i, j});
    nest = for_loop(k, 0, 4, for_loop(i, 0, 4, for_loop(j, 0, 4, update, ForKind::Vectorized)));
  } else {
    IterVar vi = iter_var("vi", 4), vj = iter_var("vj", 4),
            vk = iter_var("vk", 4, IterKind::Reduce);
    Stmt update =
        store(c, load(c, {vi.var, vj.var}) + load(a, {vi.var, vk.var}) * load(b, {vk.var, vj.var}),
              {vi.var, vj.var});
    Block block = BlockNode::make({vi, vj, vk}, {}, {}, "update", update);
    nest = for_loop(
        i, 0, 4,
        for_loop(j, 0, 4,
                 for_loop(k, 0, 4, BlockRealizeNode::make({i, j, k}, const_true(), block))));
  }
  std::vector<Var> params;
  std::vector<std::pair<Var, Buffer>> buffer_map;
  for (const Buffer& buf : {a, b, c}) {
    params.push_back(VarNode::make(buf->name + "_handle", DataType::handle()));
    buffer_map.emplace_back(params.back(), buf);
  }
  return PrimFuncNode::make(params, buffer_map, nest);
}

TEST(ScheduleNumeric, TensorizedMatmul) {
  register_tensor_intrin("numeric.gemm4", {gemm4(false), gemm4(true)});
  PrimFunc mm = matmul(36, 52, 20);
  Schedule sch(mm);
  std::vector<LoopRV> loops = sch.get_loops(sch.get_block("C"));
  std::vector<LoopRV> i = sch.split(loops[0], {nullptr, 4});
  std::vector<LoopRV> j = sch.split(loops[1], {nullptr, 4});
  std::vector<LoopRV> k = sch.split(loops[2], {nullptr, 4});
  sch.reorder({i[0], j[0], k[0], i[1], j[1], k[1]});
  sch.decompose_reduction(sch.get_block("C"), k[0]);
  sch.tensorize(i[1], "numeric.gemm4");
  sch.parallel(i[0]);
  expect_same_jit_results(mm, sch.func(), 2);
}

}  // namespace
}  // namespace anvil::tir
