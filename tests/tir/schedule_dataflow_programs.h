// Programs and checks shared by the tests of the dataflow primitives
// (compute_inline, compute_at, cache_read, ...): TE pipelines with odd
// shapes, lookups into the scheduled IR, and a numeric comparison of a
// scheduled function against the unscheduled one through the test
// interpreter (blocks lowered by convert_blocks_to_loops). Intermediate
// buffers start as NaN there, so a value computed too late or not at all
// shows up as a mismatch.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "anvil/te/te.h"
#include "anvil/tir/functor.h"
#include "anvil/tir/parser.h"
#include "anvil/tir/printer.h"
#include "anvil/tir/schedule.h"
#include "anvil/tir/structural_equal.h"
#include "anvil/tir/transform.h"
#include "anvil/tir/verifier.h"
#include "loop_interpreter.h"

namespace anvil::tir::testing {

inline PrimExpr f32(double value) { return make_const(DataType::float32(), value); }

// B = A * 2; C = B + 1 over 37x53.
inline PrimFunc elementwise_pipeline() {
  te::Tensor a = te::placeholder({37, 53}, DataType::float32(), "A");
  te::Tensor b = te::compute(
      {37, 53}, [&](const std::vector<Var>& i) { return a(i[0], i[1]) * f32(2); }, "B");
  te::Tensor c = te::compute(
      {37, 53}, [&](const std::vector<Var>& i) { return b(i[0], i[1]) + f32(1); }, "C");
  return te::create_prim_func({a, c}, "pipeline");
}

// D = A x W (37x19 by 19x53); E = D + bias[j]; F = max(E, 0).
inline PrimFunc matmul_bias_relu() {
  te::Tensor a = te::placeholder({37, 19}, DataType::float32(), "A");
  te::Tensor w = te::placeholder({19, 53}, DataType::float32(), "W");
  te::Tensor bias = te::placeholder({53}, DataType::float32(), "bias");
  IterVar k = te::reduce_axis(19, "k");
  te::Tensor d = te::compute(
      {37, 53},
      [&](const std::vector<Var>& i) { return sum(a(i[0], k.var) * w(k.var, i[1]), {k}); }, "D");
  te::Tensor e = te::compute(
      {37, 53}, [&](const std::vector<Var>& i) { return d(i[0], i[1]) + bias(i[1]); }, "E");
  te::Tensor f = te::compute(
      {37, 53}, [&](const std::vector<Var>& i) { return max(e(i[0], i[1]), f32(0)); }, "F");
  return te::create_prim_func({a, w, bias, f}, "dense");
}

// P = A padded by one on each side (10x12 -> 12x14); C = 3x3 correlation of P with W.
inline PrimFunc padded_conv() {
  te::Tensor a = te::placeholder({10, 12}, DataType::float32(), "A");
  te::Tensor w = te::placeholder({3, 3}, DataType::float32(), "W");
  te::Tensor p = te::compute(
      {12, 14},
      [&](const std::vector<Var>& i) {
        PrimExpr inside =
            logical_and(logical_and(i[0] >= 1, i[0] < 11), logical_and(i[1] >= 1, i[1] < 13));
        return call_intrin(DataType::float32(), "if_then_else",
                           {inside, a(i[0] - 1, i[1] - 1), f32(0)});
      },
      "P");
  IterVar r = te::reduce_axis(3, "r");
  IterVar s = te::reduce_axis(3, "s");
  te::Tensor c = te::compute(
      {10, 12},
      [&](const std::vector<Var>& i) {
        return sum(p(i[0] + r.var, i[1] + s.var) * w(r.var, s.var), {r, s});
      },
      "C");
  return te::create_prim_func({a, w, c}, "conv");
}

// actual is well formed and structurally equal to the function written in
// expected_text (TVMScript-like text; names need not match).
inline void expect_func_text(const PrimFunc& actual, const std::string& expected_text) {
  verify(actual);
  PrimFunc expected = parse_prim_func(expected_text, "expected");
  EXPECT_TRUE(structural_equal(actual, expected)) << "got:\n"
                                                  << print(actual) << "\nexpected:\n"
                                                  << print(expected);
}

// The block called name, or null.
inline Block find_block(const PrimFunc& func, const std::string& name) {
  Block found;
  pre_order_visit(func->body, nullptr, [&](const Stmt& s) {
    if (const auto* b = as<BlockNode>(s); b && b->name == name) found = Block(b);
  });
  return found;
}

inline BlockRealize find_realize(const PrimFunc& func, const std::string& name) {
  BlockRealize found;
  pre_order_visit(func->body, nullptr, [&](const Stmt& s) {
    if (const auto* r = as<BlockRealizeNode>(s); r && r->block->name == name)
      found = BlockRealize(r);
  });
  return found;
}

// Names of every block but the root, in program order.
inline std::vector<std::string> block_names(const PrimFunc& func) {
  std::vector<std::string> names;
  pre_order_visit(func->body, nullptr, [&](const Stmt& s) {
    if (const auto* b = as<BlockNode>(s); b && b->name != "root") names.push_back(b->name);
  });
  return names;
}

// Names of the buffers of a block's regions, in order.
inline std::vector<std::string> region_buffers(const std::vector<BufferRegion>& regions) {
  std::vector<std::string> names;
  for (const BufferRegion& r : regions) names.push_back(r.buffer->name);
  return names;
}

inline Block root_block(const PrimFunc& func) { return as<BlockRealizeNode>(func->body)->block; }

inline std::vector<std::string> root_allocations(const PrimFunc& func) {
  std::vector<std::string> names;
  for (const Buffer& b : root_block(func)->alloc_buffers) names.push_back(b->name);
  return names;
}

// The loop over var, or null.
inline For find_loop(const PrimFunc& func, const Var& var) {
  For found;
  pre_order_visit(func->body, nullptr, [&](const Stmt& s) {
    if (const auto* l = as<ForNode>(s); l && l->loop_var.get() == var.get()) found = For(l);
  });
  return found;
}

// Constant extents of the loops above block, outermost first (-1 when symbolic).
inline std::vector<int64_t> loop_extents(const Schedule& sch, const std::string& block) {
  std::vector<int64_t> extents;
  for (const LoopRV& loop : sch.get_loops(sch.get_block(block))) {
    For f = find_loop(sch.func(), loop.var);
    auto c = as_const_int(f->extent);
    extents.push_back(c ? *c : -1);
  }
  return extents;
}

inline int64_t element_count(const Buffer& buffer) {
  int64_t n = 1;
  for (const PrimExpr& d : buffer->shape) n *= *as_const_int(d);
  return n;
}

// Runs func (scheduled form) on inputs; the buffers of the parameters are
// filled from inputs in order, the rest (outputs) start as NaN.
inline std::vector<std::vector<double>> run_scheduled(
    const PrimFunc& func, const std::vector<std::vector<double>>& inputs) {
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
  LoopInterpreter interpreter;
  interpreter.run(loops, args);
  return storage;
}

// Random values for the first n_inputs parameters of func.
inline std::vector<std::vector<double>> random_inputs(const PrimFunc& func, size_t n_inputs,
                                                      unsigned seed = 7) {
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

// The scheduled function computes exactly what the original does (same
// arithmetic in the same order per element, so equality is exact).
inline void expect_same_results(const PrimFunc& original, const PrimFunc& scheduled,
                                size_t n_inputs) {
  auto inputs = random_inputs(original, n_inputs);
  auto expected = run_scheduled(original, inputs);
  auto actual = run_scheduled(scheduled, inputs);
  ASSERT_EQ(expected.size(), actual.size());
  for (size_t p = n_inputs; p < expected.size(); ++p) {
    ASSERT_EQ(expected[p].size(), actual[p].size());
    int mismatches = 0;
    for (size_t i = 0; i < expected[p].size(); ++i) {
      if (expected[p][i] == actual[p][i]) continue;
      if (++mismatches <= 3)
        ADD_FAILURE() << "output " << p << " element " << i << ": expected " << expected[p][i]
                      << ", got " << actual[p][i];
    }
    EXPECT_EQ(mismatches, 0);
  }
}

}  // namespace anvil::tir::testing
