// Every illegal use of the dataflow primitives is refused with a one-line
// message naming the primitive and the culprit, and leaves the function as it was.
#include <gtest/gtest.h>

#include <functional>

#include "anvil/support/error.h"
#include "anvil/tir/schedule.h"
#include "schedule_dataflow_programs.h"

namespace anvil::tir {
namespace {

using namespace testing;

void expect_error(Schedule& sch, const std::function<void()>& action, const std::string& message) {
  PrimFunc before = sch.func();
  try {
    action();
    ADD_FAILURE() << "no error, expected: " << message;
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), message);
  }
  EXPECT_EQ(sch.func().get(), before.get()) << "a refused primitive changed the function";
}

// B[i] = A[i] + 1 over 6; C[i, j] = B[i] * 2 over 6x4 (B broadcast along j).
PrimFunc broadcast_pipeline() {
  te::Tensor a = te::placeholder({6}, DataType::float32(), "A");
  te::Tensor b = te::compute(
      {6}, [&](const std::vector<Var>& i) { return a(i[0]) + f32(1); }, "B");
  te::Tensor c = te::compute(
      {6, 4}, [&](const std::vector<Var>& i) { return b(i[0]) * f32(2); }, "C");
  return te::create_prim_func({a, c});
}

// B = A + 1; C = B * 2; D = B * 3 (B has two consumers).
PrimFunc two_consumers() {
  te::Tensor a = te::placeholder({8}, DataType::float32(), "A");
  te::Tensor b = te::compute(
      {8}, [&](const std::vector<Var>& i) { return a(i[0]) + f32(1); }, "B");
  te::Tensor c = te::compute(
      {8}, [&](const std::vector<Var>& i) { return b(i[0]) * f32(2); }, "C");
  te::Tensor d = te::compute(
      {8}, [&](const std::vector<Var>& i) { return b(i[0]) * f32(3); }, "D");
  return te::create_prim_func({a, c, d});
}

TEST(DataflowErrors, ComputeInline) {
  Schedule sch(matmul_bias_relu());
  expect_error(
      sch, [&] { sch.compute_inline(BlockRV{"X"}); }, "compute_inline: no block named 'X'");
  expect_error(
      sch, [&] { sch.compute_inline(sch.get_block("D")); },
      "compute_inline: block 'D' is a reduction");
  expect_error(
      sch, [&] { sch.compute_inline(sch.get_block("F")); },
      "compute_inline: block 'F' writes output buffer 'F'");
}

TEST(DataflowErrors, ReverseComputeInline) {
  Schedule dense(matmul_bias_relu());
  expect_error(
      dense, [&] { dense.reverse_compute_inline(dense.get_block("E")); },
      "reverse_compute_inline: producer block 'D' is a reduction");
  expect_error(
      dense, [&] { dense.reverse_compute_inline(dense.get_block("D")); },
      "reverse_compute_inline: block 'D' is a reduction");

  Schedule pipeline(elementwise_pipeline());
  expect_error(
      pipeline, [&] { pipeline.reverse_compute_inline(pipeline.get_block("B")); },
      "reverse_compute_inline: block 'B' has no producer block");

  Schedule broadcast(broadcast_pipeline());
  expect_error(
      broadcast, [&] { broadcast.reverse_compute_inline(broadcast.get_block("C")); },
      "reverse_compute_inline: block 'C' does not read 'B' at distinct iteration "
      "variables covering its iteration space");

  Schedule shared(two_consumers());
  expect_error(
      shared, [&] { shared.reverse_compute_inline(shared.get_block("C")); },
      "reverse_compute_inline: buffer 'B' is also read by block 'D'");
}

TEST(DataflowErrors, ComputeAt) {
  Schedule sch(matmul_bias_relu());
  std::vector<LoopRV> f_loops = sch.get_loops(sch.get_block("F"));
  std::vector<LoopRV> e_loops = sch.get_loops(sch.get_block("E"));
  std::vector<LoopRV> d_loops = sch.get_loops(sch.get_block("D"));
  expect_error(
      sch, [&] { sch.compute_at(sch.get_block("D"), f_loops[0]); },
      "compute_at: consumer block 'E' of block 'D' is not under loop 'i'");
  expect_error(
      sch, [&] { sch.compute_at(sch.get_block("F"), e_loops[0]); },
      "compute_at: block 'F' writes output buffer 'F'");
  expect_error(
      sch, [&] { sch.compute_at(sch.get_block("D"), d_loops[1]); },
      "compute_at: block 'D' is already under loop 'j'");
  expect_error(
      sch, [&] { sch.compute_at(sch.get_block("D"), LoopRV{VarNode::make("q")}); },
      "compute_at: no loop over 'q' in the function");

  Schedule pipeline(elementwise_pipeline());
  std::vector<LoopRV> b_loops = pipeline.get_loops(pipeline.get_block("B"));
  expect_error(
      pipeline, [&] { pipeline.compute_at(pipeline.get_block("B"), b_loops[0]); },
      "compute_at: block 'B' is already under loop 'i'");
}

TEST(DataflowErrors, ReverseComputeAt) {
  Schedule sch(matmul_bias_relu());
  std::vector<LoopRV> d_loops = sch.get_loops(sch.get_block("D"));
  expect_error(
      sch, [&] { sch.reverse_compute_at(sch.get_block("E"), d_loops[2]); },
      "reverse_compute_at: loop 'k' iterates over reduction of block 'D'");
  expect_error(
      sch, [&] { sch.reverse_compute_at(sch.get_block("F"), d_loops[1]); },
      "reverse_compute_at: producer block 'E' of block 'F' is not under loop 'j'");

  Schedule pipeline(elementwise_pipeline());
  std::vector<LoopRV> c_loops = pipeline.get_loops(pipeline.get_block("C"));
  expect_error(
      pipeline, [&] { pipeline.reverse_compute_at(pipeline.get_block("B"), c_loops[0]); },
      "reverse_compute_at: block 'B' has no producer block under loop 'i'");
}

// B's loop split 4 x 2 and reordered, so that under one iteration of the inner part B writes
// every other element: C cannot be bounded by the hull of those (it would read the holes
// before they are written).
TEST(DataflowErrors, ReverseComputeAtUnderAStridedProducer) {
  Schedule sch(two_consumers());
  std::vector<LoopRV> parts = sch.split(sch.get_loops(sch.get_block("B"))[0], {nullptr, 2});
  sch.reorder({parts[1], parts[0]});
  expect_error(
      sch, [&] { sch.reverse_compute_at(sch.get_block("C"), parts[1]); },
      "reverse_compute_at: block 'B' writes 4 of the 7 elements of the part of 'B' it covers "
      "under loop 'i_1' (a strided region)");
  // Under the outer part the region is whole again.
  Schedule whole(two_consumers());
  std::vector<LoopRV> split = whole.split(whole.get_loops(whole.get_block("B"))[0], {nullptr, 2});
  EXPECT_NO_THROW(whole.reverse_compute_at(whole.get_block("C"), split[0]));
}

TEST(DataflowErrors, CacheRead) {
  Schedule sch(elementwise_pipeline());
  expect_error(
      sch, [&] { sch.cache_read(sch.get_block("B"), 1, "local"); },
      "cache_read: block 'B' has no read 1 (it reads 1 buffers)");
  expect_error(
      sch, [&] { sch.cache_read(sch.get_block("B"), -1, "local"); },
      "cache_read: block 'B' has no read -1 (it reads 1 buffers)");
  std::vector<LoopRV> c_loops = sch.get_loops(sch.get_block("C"));
  sch.compute_at(sch.get_block("B"), c_loops[0]);
  expect_error(
      sch, [&] { sch.cache_read(sch.get_block("C"), 0, "local"); },
      "cache_read: producer block 'B' and block 'C' share a loop nest");
}

TEST(DataflowErrors, CacheWrite) {
  Schedule sch(elementwise_pipeline());
  expect_error(
      sch, [&] { sch.cache_write(sch.get_block("B"), 2, "local"); },
      "cache_write: block 'B' has no write 2 (it writes 1 buffers)");
  std::vector<LoopRV> c_loops = sch.get_loops(sch.get_block("C"));
  sch.compute_at(sch.get_block("B"), c_loops[1]);
  expect_error(
      sch, [&] { sch.cache_write(sch.get_block("B"), 0, "local"); },
      "cache_write: consumer block 'C' and block 'B' share a loop nest");
}

}  // namespace
}  // namespace anvil::tir
