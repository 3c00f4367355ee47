// The dataflow primitives (compute_inline, reverse_compute_inline,
// compute_at, reverse_compute_at, cache_read, cache_write) compiled for real:
// each scheduled function is lowered, JIT-compiled with LLVM and run on random
// inputs next to the unscheduled function; the results must agree.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>

#include "anvil/codegen/llvm.h"
#include "anvil/runtime/tensor.h"
#include "anvil/tir/schedule.h"
#include "anvil/tir/transform.h"
#include "tir/schedule_dataflow_programs.h"

namespace anvil {
namespace {

using tir::BlockRV;
using tir::LoopRV;
using tir::PrimFunc;
using tir::Schedule;

std::vector<int64_t> shape_of(const tir::Buffer& buffer) {
  std::vector<int64_t> shape;
  for (const tir::PrimExpr& d : buffer->shape) shape.push_back(*tir::as_const_int(d));
  return shape;
}

// Runs func compiled on the given inputs (the first parameters); returns
// every parameter tensor after the call.
std::vector<Tensor> run_compiled(const PrimFunc& func, const std::vector<Tensor>& inputs) {
  Module module = codegen::jit_compile({tir::transform::lower(func)});
  std::vector<Tensor> args = inputs;
  for (size_t i = inputs.size(); i < func->buffer_map.size(); ++i)
    args.push_back(Tensor::zeros(shape_of(func->buffer_map[i].second), DataType::float32()));
  PackedFunc kernel = module.function(func->global_symbol());
  switch (args.size()) {
    case 2:
      kernel(args[0], args[1]);
      break;
    case 3:
      kernel(args[0], args[1], args[2]);
      break;
    case 4:
      kernel(args[0], args[1], args[2], args[3]);
      break;
    default:
      ADD_FAILURE() << "unexpected parameter count " << args.size();
  }
  return args;
}

// Compiles original and original scheduled by `schedule`, and compares outputs.
void expect_same_compiled(const PrimFunc& original, size_t n_inputs,
                          const std::function<void(Schedule&)>& schedule) {
  Schedule sch(original);
  schedule(sch);
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<Tensor> inputs;
  for (size_t i = 0; i < n_inputs; ++i) {
    Tensor t = Tensor::zeros(shape_of(original->buffer_map[i].second), DataType::float32());
    auto* p = static_cast<float*>(t.data());
    for (int64_t e = 0; e < t.numel(); ++e) p[e] = dist(rng);
    inputs.push_back(t);
  }
  std::vector<Tensor> expected = run_compiled(original, inputs);
  std::vector<Tensor> actual = run_compiled(sch.func(), inputs);
  for (size_t p = n_inputs; p < expected.size(); ++p) {
    const auto* e = static_cast<const float*>(expected[p].data());
    const auto* a = static_cast<const float*>(actual[p].data());
    int mismatches = 0;
    for (int64_t i = 0; i < expected[p].numel(); ++i)
      if (!(std::fabs(e[i] - a[i]) <= 1e-5f * (1 + std::fabs(e[i]))) && ++mismatches <= 3)
        ADD_FAILURE() << "output " << p << " element " << i << ": expected " << e[i] << ", got "
                      << a[i];
    EXPECT_EQ(mismatches, 0);
  }
}

TEST(ScheduleNumericDataflow, ComputeInlineEpilogue) {
  expect_same_compiled(tir::testing::matmul_bias_relu(), 3,
                       [](Schedule& sch) { sch.compute_inline(sch.get_block("E")); });
}

TEST(ScheduleNumericDataflow, ComputeInlinePadding) {
  expect_same_compiled(tir::testing::padded_conv(), 2,
                       [](Schedule& sch) { sch.compute_inline(sch.get_block("P")); });
}

TEST(ScheduleNumericDataflow, ReverseComputeInlineRelu) {
  expect_same_compiled(tir::testing::matmul_bias_relu(), 3,
                       [](Schedule& sch) { sch.reverse_compute_inline(sch.get_block("F")); });
}

TEST(ScheduleNumericDataflow, ComputeAtPaddingWindow) {
  expect_same_compiled(tir::testing::padded_conv(), 2, [](Schedule& sch) {
    std::vector<LoopRV> loops = sch.get_loops(sch.get_block("C"));
    sch.compute_at(sch.get_block("P"), loops[1]);
  });
}

TEST(ScheduleNumericDataflow, ComputeAtUnderNonDividingTile) {
  expect_same_compiled(tir::testing::elementwise_pipeline(), 1, [](Schedule& sch) {
    std::vector<LoopRV> loops = sch.get_loops(sch.get_block("C"));
    std::vector<LoopRV> rows = sch.split(loops[0], {nullptr, 8});
    sch.compute_at(sch.get_block("B"), rows[0]);
  });
}

TEST(ScheduleNumericDataflow, ReverseComputeAtEpilogueAfterEachDotProduct) {
  expect_same_compiled(tir::testing::matmul_bias_relu(), 3, [](Schedule& sch) {
    std::vector<LoopRV> loops = sch.get_loops(sch.get_block("D"));
    sch.compute_inline(sch.get_block("E"));
    sch.reverse_compute_at(sch.get_block("F"), loops[1]);
  });
}

TEST(ScheduleNumericDataflow, PackedWeightPanelAndLocalAccumulatorTile) {
  expect_same_compiled(tir::testing::matmul_bias_relu(), 3, [](Schedule& sch) {
    std::vector<LoopRV> loops = sch.get_loops(sch.get_block("D"));
    std::vector<LoopRV> rows = sch.split(loops[0], {nullptr, 4});
    std::vector<LoopRV> cols = sch.split(loops[1], {nullptr, 16});
    sch.reorder({cols[0], rows[0], loops[2], rows[1], cols[1]});
    BlockRV pack = sch.cache_read(sch.get_block("D"), 1, "global");
    sch.compute_at(pack, cols[0]);
    BlockRV write_back = sch.cache_write(sch.get_block("D"), 0, "local");
    sch.reverse_compute_at(write_back, rows[0]);
    sch.compute_inline(sch.get_block("E"));
  });
}

}  // namespace
}  // namespace anvil
