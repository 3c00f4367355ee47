// compute_inline and reverse_compute_inline on TE pipelines: the shape of the
// result, its block regions, and its numbers against the unscheduled function.
#include <gtest/gtest.h>

#include <algorithm>

#include "anvil/support/error.h"
#include "anvil/tir/schedule.h"
#include "schedule_dataflow_programs.h"

namespace anvil::tir {
namespace {

using namespace testing;

TEST(ComputeInline, UnscheduledDenseMatchesPlainCpp) {
  // Anchors the numeric comparisons of this file: the unscheduled function
  // itself computes dense + bias + relu.
  PrimFunc func = matmul_bias_relu();
  auto inputs = random_inputs(func, 3);
  auto out = run_scheduled(func, inputs);
  for (int i = 0; i < 37; ++i)
    for (int j = 0; j < 53; ++j) {
      float acc = 0;
      for (int k = 0; k < 19; ++k)
        acc += float(inputs[0][i * 19 + k]) * float(inputs[1][k * 53 + j]);
      double expected = std::max(0.0, double(acc) + inputs[2][j]);
      ASSERT_NEAR(out[3][i * 53 + j], expected, 1e-4) << i << ", " << j;
    }
}

TEST(ComputeInline, ElementwiseProducerFoldsIntoConsumer) {
  PrimFunc func = elementwise_pipeline();
  Schedule sch(func);
  sch.compute_inline(sch.get_block("B"));
  PrimFunc out = sch.func();
  EXPECT_EQ(block_names(out), std::vector<std::string>{"C"});
  EXPECT_TRUE(root_allocations(out).empty());
  Block c = find_block(out, "C");
  EXPECT_EQ(region_buffers(c->reads), std::vector<std::string>{"A"});
  // C[vi, vj] = A[vi, vj] * 2 + 1, with C's own iteration variables.
  const auto* st = as<BufferStoreNode>(c->body);
  ASSERT_TRUE(st);
  const auto* add = as<AddNode>(st->value);
  ASSERT_TRUE(add);
  const auto* mul = as<MulNode>(add->a);
  ASSERT_TRUE(mul);
  const auto* load = as<BufferLoadNode>(mul->a);
  ASSERT_TRUE(load);
  EXPECT_EQ(load->buffer->name, "A");
  EXPECT_EQ(load->indices[0].get(), c->iter_vars[0].var.get());
  EXPECT_EQ(load->indices[1].get(), c->iter_vars[1].var.get());
  EXPECT_EQ(loop_extents(sch, "C"), (std::vector<int64_t>{37, 53}));
  expect_same_results(func, out, 1);
}

TEST(ComputeInline, BiasAndReluChainIntoOneEpilogueBlock) {
  PrimFunc func = matmul_bias_relu();
  Schedule sch(func);
  sch.compute_inline(sch.get_block("E"));
  EXPECT_EQ(block_names(sch.func()), (std::vector<std::string>{"D", "F"}));
  Block f = find_block(sch.func(), "F");
  std::vector<std::string> reads = region_buffers(f->reads);
  EXPECT_EQ(reads, (std::vector<std::string>{"D", "bias"}));
  EXPECT_EQ(root_allocations(sch.func()), std::vector<std::string>{"D"});
  expect_same_results(func, sch.func(), 3);
}

TEST(ComputeInline, PaddingInlinesIntoTheConvolution) {
  PrimFunc func = padded_conv();
  Schedule sch(func);
  sch.compute_inline(sch.get_block("P"));
  EXPECT_EQ(block_names(sch.func()), std::vector<std::string>{"C"});
  Block c = find_block(sch.func(), "C");
  EXPECT_EQ(region_buffers(c->reads), (std::vector<std::string>{"A", "W"}));
  expect_same_results(func, sch.func(), 2);
}

TEST(ReverseComputeInline, ReluFoldsIntoTheBiasBlock) {
  PrimFunc func = matmul_bias_relu();
  Schedule sch(func);
  sch.reverse_compute_inline(sch.get_block("F"));
  PrimFunc out = sch.func();
  EXPECT_EQ(block_names(out), (std::vector<std::string>{"D", "E"}));
  Block e = find_block(out, "E");
  EXPECT_EQ(region_buffers(e->writes), std::vector<std::string>{"F"});
  EXPECT_EQ(region_buffers(e->reads), (std::vector<std::string>{"D", "bias"}));
  // The store uses E's iteration variables, whose point it writes.
  const auto* st = as<BufferStoreNode>(e->body);
  ASSERT_TRUE(st);
  EXPECT_EQ(st->buffer->name, "F");
  EXPECT_EQ(st->indices[0].get(), e->iter_vars[0].var.get());
  EXPECT_TRUE(as<MaxNode>(st->value));
  EXPECT_EQ(root_allocations(out), std::vector<std::string>{"D"});
  expect_same_results(func, out, 3);
}

TEST(ReverseComputeInline, TransposedConsumerIsInjective) {
  te::Tensor a = te::placeholder({5, 7}, DataType::float32(), "A");
  te::Tensor b = te::compute(
      {5, 7}, [&](const std::vector<Var>& i) { return a(i[0], i[1]) + f32(3); }, "B");
  te::Tensor c = te::compute(
      {7, 5}, [&](const std::vector<Var>& i) { return b(i[1], i[0]) * f32(2); }, "C");
  PrimFunc func = te::create_prim_func({a, c});
  Schedule sch(func);
  sch.reverse_compute_inline(sch.get_block("C"));
  EXPECT_EQ(block_names(sch.func()), std::vector<std::string>{"B"});
  const auto* st = as<BufferStoreNode>(find_block(sch.func(), "B")->body);
  ASSERT_TRUE(st);
  EXPECT_EQ(st->buffer->name, "C");
  Block b_block = find_block(sch.func(), "B");
  // C[vj, vi] = (A[vi, vj] + 3) * 2 in B's variables.
  EXPECT_EQ(st->indices[0].get(), b_block->iter_vars[1].var.get());
  EXPECT_EQ(st->indices[1].get(), b_block->iter_vars[0].var.get());
  expect_same_results(func, sch.func(), 1);
}

TEST(ComputeInline, GoldenText) {
  Schedule sch(elementwise_pipeline());
  sch.compute_inline(sch.get_block("B"));
  expect_func_text(sch.func(), R"(@T.prim_func
def pipeline(A: T.handle, C: T.handle):
    T.func_attr({"global_symbol": "pipeline", "tir.noalias": 1})
    A_1 = T.match_buffer(A, (37, 53), "float32")
    C_1 = T.match_buffer(C, (37, 53), "float32")
    for i, j in T.grid(37, 53):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(A_1[vi, vj])
            T.writes(C_1[vi, vj])
            C_1[vi, vj] = A_1[vi, vj] * T.float32(2) + T.float32(1)
)");
}

TEST(ReverseComputeInline, GoldenText) {
  Schedule sch(matmul_bias_relu());
  sch.reverse_compute_inline(sch.get_block("F"));
  expect_func_text(sch.func(), R"(@T.prim_func
def dense(A: T.handle, W: T.handle, bias: T.handle, F: T.handle):
    T.func_attr({"global_symbol": "dense", "tir.noalias": 1})
    A_1 = T.match_buffer(A, (37, 19), "float32")
    W_1 = T.match_buffer(W, (19, 53), "float32")
    bias_1 = T.match_buffer(bias, (53,), "float32")
    F_1 = T.match_buffer(F, (37, 53), "float32")
    D = T.alloc_buffer((37, 53), "float32")
    for i, j, k in T.grid(37, 53, 19):
        with T.block("D"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            T.reads(A_1[vi, vk], W_1[vk, vj])
            T.writes(D[vi, vj])
            with T.init():
                D[vi, vj] = T.float32(0)
            D[vi, vj] = D[vi, vj] + A_1[vi, vk] * W_1[vk, vj]
    for i, j in T.grid(37, 53):
        with T.block("E"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(D[vi, vj], bias_1[vj])
            T.writes(F_1[vi, vj])
            F_1[vi, vj] = T.max(D[vi, vj] + bias_1[vj], T.float32(0))
)");
}

}  // namespace
}  // namespace anvil::tir
