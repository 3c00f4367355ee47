// The generic schedule on extents that no vector width divides (37, 197): the innermost loop
// still takes full vectors, with a guarded tail that partition_loops splits off, and the
// results equal the reference interpreter's.
#include <gtest/gtest.h>

#include "anvil/lower/lower.h"
#include "anvil/tir/functor.h"
#include "anvil/tir/printer.h"
#include "anvil/tir/transform.h"
#include "topi/topi_test_util.h"

namespace anvil {
namespace {

// The lowered kernel of the one-group function `function_text` under the default schedule.
tir::PrimFunc lower_scheduled(const std::string& function_text) {
  tir::transform::LowerOptions options;
  options.packed_api = false;
  return tir::transform::lower(
      lower::lower_primitive(topi_test::primitive_function(function_text), "kernel"), options);
}

// The number of 16-lane calls of `intrinsic` in func (exp of a whole vector, say).
int vector_calls(const tir::PrimFunc& func, const std::string& intrinsic) {
  int calls = 0;
  tir::pre_order_visit(
      func->body,
      [&](const tir::PrimExpr& e) {
        if (const auto* call = tir::as<tir::CallNode>(e))
          calls += call->op == intrinsic && call->dtype.lanes == 16;
      },
      nullptr);
  return calls;
}

int parallel_loops(const tir::PrimFunc& func) {
  int loops = 0;
  tir::pre_order_visit(func->body, nullptr, [&](const tir::Stmt& s) {
    if (const auto* loop = tir::as<tir::ForNode>(s))
      loops += loop->for_kind == tir::ForKind::Parallel;
  });
  return loops;
}

constexpr const char* kSoftmax = R"(fn (%x: Tensor[(3, 37, 37), float32]) {
  nn.softmax(%x, axis=2)
})";

TEST(GenericSchedule, SoftmaxOnAPrimeExtentMatchesTheReference) {
  topi_test::check_group(kSoftmax, {}, {1e-5, 1e-6});
}

TEST(GenericSchedule, SoftmaxOnAPrimeExtentIsVectorized) {
  // 37 = two vectors of 16 and a tail of 5: the sum of exponentials (vectorized across rows)
  // and the output (along the row) both take 16-lane exps.
  tir::PrimFunc func = lower_scheduled(kSoftmax);
  EXPECT_GE(vector_calls(func, "exp"), 2) << tir::print(func);
}

TEST(GenericSchedule, ReductionsWithLongRowsRunInParallel) {
  // 12 x 197 outputs of a 197-long reduction: few outputs, but 465708 steps of work, which is
  // worth both threads (the output count alone was once the measure).
  tir::PrimFunc func = lower_scheduled(R"(fn (%x: Tensor[(12, 197, 197), float32]) {
    max(%x, axis=[2])
  })");
  EXPECT_GE(parallel_loops(func), 1) << tir::print(func);
}

TEST(GenericSchedule, ElementwiseOnAPrimeExtentMatchesTheReference) {
  topi_test::check_group(R"(fn (%x: Tensor[(5, 197), float32], %y: Tensor[(5, 197), float32]) {
    %0 = add(%x, %y);
    tanh(%0)
  })",
                         {}, {1e-5, 1e-6});
}

}  // namespace
}  // namespace anvil
