// Programs and checks shared by the tests of the loop primitives (split,
// fuse, reorder, loop kinds, decompose_reduction, tensorize): TE operators
// with odd shapes, lookups into the scheduled IR, and a numeric comparison of
// a scheduled function against the unscheduled one through the test
// interpreter (blocks lowered by convert_blocks_to_loops). Outputs start as
// NaN there, so an element computed twice from scratch or not at all shows.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "anvil/te/te.h"
#include "anvil/tir/functor.h"
#include "anvil/tir/printer.h"
#include "anvil/tir/schedule.h"
#include "anvil/tir/transform.h"
#include "loop_interpreter.h"

namespace anvil::tir::loop_testing {

inline PrimExpr f32(double value) { return make_const(DataType::float32(), value); }

// C[i, j] = sum over k of A[i, k] * B[k, j].
inline PrimFunc matmul(int64_t m, int64_t n, int64_t k_extent) {
  te::Tensor a = te::placeholder({m, k_extent}, DataType::float32(), "A");
  te::Tensor b = te::placeholder({k_extent, n}, DataType::float32(), "B");
  IterVar k = te::reduce_axis(k_extent, "k");
  te::Tensor c = te::compute(
      {m, n}, [&](const std::vector<Var>& i) { return sum(a(i[0], k.var) * b(k.var, i[1]), {k}); },
      "C");
  return te::create_prim_func({a, b, c}, "matmul");
}

// B[i] = A[i] + 1.
inline PrimFunc add_one(int64_t n) {
  te::Tensor a = te::placeholder({n}, DataType::float32(), "A");
  te::Tensor b = te::compute(
      {n}, [&](const std::vector<Var>& i) { return a(i[0]) + f32(1); }, "B");
  return te::create_prim_func({a, b}, "add_one");
}

// C[i, j, k] = A[i, j, k] * B[i, j, k].
inline PrimFunc multiply3d(int64_t x, int64_t y, int64_t z) {
  te::Tensor a = te::placeholder({x, y, z}, DataType::float32(), "A");
  te::Tensor b = te::placeholder({x, y, z}, DataType::float32(), "B");
  te::Tensor c = te::compute(
      {x, y, z},
      [&](const std::vector<Var>& i) { return a(i[0], i[1], i[2]) * b(i[0], i[1], i[2]); }, "C");
  return te::create_prim_func({a, b, c}, "multiply3d");
}

// B = A * 2; C = B + 1 (two blocks in the root block).
inline PrimFunc two_stage(int64_t n) {
  te::Tensor a = te::placeholder({n}, DataType::float32(), "A");
  te::Tensor b = te::compute(
      {n}, [&](const std::vector<Var>& i) { return a(i[0]) * f32(2); }, "B");
  te::Tensor c = te::compute(
      {n}, [&](const std::vector<Var>& i) { return b(i[0]) + f32(1); }, "C");
  return te::create_prim_func({a, c}, "two_stage");
}

// The root block's body as text: the loops and blocks the primitives rewrite.
inline std::string body_text(const PrimFunc& func) {
  return print(as<BlockRealizeNode>(func->body)->block->body);
}

// The statement nodes of func's body, pre-order.
inline std::vector<Stmt> all_stmts(const PrimFunc& func) {
  std::vector<Stmt> out;
  pre_order_visit(func->body, nullptr, [&](const Stmt& s) { out.push_back(s); });
  return out;
}

// The loop over var, or null.
inline For loop_of(const PrimFunc& func, const Var& var) {
  for (const Stmt& s : all_stmts(func))
    if (const auto* l = as<ForNode>(s); l && l->loop_var.get() == var.get()) return For(l);
  return For();
}

// The BlockRealize of the block called name, or null.
inline BlockRealize realize_of(const PrimFunc& func, const std::string& name) {
  for (const Stmt& s : all_stmts(func))
    if (const auto* r = as<BlockRealizeNode>(s); r && r->block->name == name)
      return BlockRealize(r);
  return BlockRealize();
}

// Names of the loops above block, outermost first.
inline std::vector<std::string> loop_names(const Schedule& sch, const std::string& block) {
  std::vector<std::string> names;
  for (const LoopRV& loop : sch.get_loops(sch.get_block(block))) names.push_back(loop.var->name);
  return names;
}

// Constant extents of the loops above block, outermost first (-1 when symbolic).
inline std::vector<int64_t> loop_extents(const Schedule& sch, const std::string& block) {
  std::vector<int64_t> extents;
  for (const LoopRV& loop : sch.get_loops(sch.get_block(block))) {
    auto c = as_const_int(loop_of(sch.func(), loop.var)->extent);
    extents.push_back(c ? *c : -1);
  }
  return extents;
}

inline int64_t element_count(const Buffer& buffer) {
  int64_t n = 1;
  for (const PrimExpr& d : buffer->shape) n *= *as_const_int(d);
  return n;
}

// Runs func (scheduled form) with the first inputs.size() parameters filled
// from inputs and the others (outputs) starting as NaN.
inline std::vector<std::vector<double>> run(const PrimFunc& func,
                                            const std::vector<std::vector<double>>& inputs) {
  PrimFunc loops = transform::convert_blocks_to_loops(func);
  std::vector<std::vector<double>> storage;
  for (size_t i = 0; i < func->buffer_map.size(); ++i) {
    if (i < inputs.size())
      storage.push_back(inputs[i]);
    else
      storage.emplace_back(size_t(element_count(func->buffer_map[i].second)), std::nan(""));
  }
  std::vector<std::vector<double>*> args;
  for (auto& s : storage) args.push_back(&s);
  tir::testing::LoopInterpreter interpreter;
  interpreter.run(loops, args);
  return storage;
}

// Random values in [-1, 1) for the first n_inputs parameters of func.
inline std::vector<std::vector<double>> random_inputs(const PrimFunc& func, size_t n_inputs,
                                                      unsigned seed = 11) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<std::vector<double>> inputs;
  for (size_t i = 0; i < n_inputs; ++i) {
    std::vector<double> values(size_t(element_count(func->buffer_map[i].second)));
    for (double& v : values) v = dist(rng);
    inputs.push_back(std::move(values));
  }
  return inputs;
}

// scheduled computes what original does: exactly (tolerance 0) when the
// arithmetic per element keeps its order, else within tolerance.
inline void expect_same_results(const PrimFunc& original, const PrimFunc& scheduled,
                                size_t n_inputs, double tolerance = 0) {
  auto inputs = random_inputs(original, n_inputs);
  auto expected = run(original, inputs);
  auto actual = run(scheduled, inputs);
  ASSERT_EQ(expected.size(), actual.size());
  for (size_t p = n_inputs; p < expected.size(); ++p) {
    ASSERT_EQ(expected[p].size(), actual[p].size());
    int mismatches = 0;
    for (size_t i = 0; i < expected[p].size(); ++i) {
      bool same = tolerance == 0 ? expected[p][i] == actual[p][i]
                                 : std::fabs(expected[p][i] - actual[p][i]) <= tolerance;
      if (same) continue;
      if (++mismatches <= 3)
        ADD_FAILURE() << "output " << p << " element " << i << ": expected " << expected[p][i]
                      << ", got " << actual[p][i];
    }
    EXPECT_EQ(mismatches, 0) << "of " << expected[p].size() << " elements";
  }
}

}  // namespace anvil::tir::loop_testing
