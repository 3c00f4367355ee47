// The generic schedule on extents that no vector width divides (37, 197): the innermost loop
// still takes full vectors, with a guarded tail that partition_loops splits off, and the
// results equal the reference interpreter's. Its knobs (vectorize, parallel grain, unroll):
// every config of the space computes what the reference does, and each knob shows in the loops.
#include <gtest/gtest.h>

#include "anvil/ir/ir.h"
#include "anvil/lower/lower.h"
#include "anvil/tir/functor.h"
#include "anvil/tir/printer.h"
#include "anvil/tir/transform.h"
#include "anvil/topi/topi.h"
#include "topi/topi_test_util.h"
#include "topi/x86_schedule_check.h"

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

// The loops of `kind` in func.
int loops_of_kind(const tir::PrimFunc& func, tir::ForKind kind) {
  int loops = 0;
  tir::pre_order_visit(func->body, nullptr, [&](const tir::Stmt& s) {
    if (const auto* loop = tir::as<tir::ForNode>(s)) loops += loop->for_kind == kind;
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
  EXPECT_GE(loops_of_kind(func, tir::ForKind::Parallel), 1) << tir::print(func);
}

TEST(GenericSchedule, ElementwiseOnAPrimeExtentMatchesTheReference) {
  topi_test::check_group(R"(fn (%x: Tensor[(5, 197), float32], %y: Tensor[(5, 197), float32]) {
    %0 = add(%x, %y);
    tanh(%0)
  })",
                         {}, {1e-5, 1e-6});
}

// Transforms into a blocked layout gather their block's lanes a channel plane apart: the
// short innermost loop is unrolled rather than vectorized (LLVM's loop vectorizer then reads
// each input row contiguously), and the results are the reference's. The RGB input of an int8
// network (quantized, its channels padded to 4) and uint8 / float NCHW to NCHW8c.
TEST(GenericSchedule, BlockedLayoutTransformsUnrollTheirGatheredBlock) {
  const char* groups[] = {
      R"(fn (%x: Tensor[(1, 3, 9, 13), float32]) {
    %0 = qnn.quantize(%x, 0.04f, 130u8);
    %1 = nn.pad(%0, 130u8, pad_width=[0, 0, 0, 1, 0, 0, 0, 0]);
    layout_transform(%1, src_layout="NCHW", dst_layout="NCHW4c")
  })",
      R"(fn (%x: Tensor[(1, 24, 7, 11), uint8]) {
    layout_transform(%x, src_layout="NCHW", dst_layout="NCHW8c")
  })",
      R"(fn (%x: Tensor[(2, 16, 5, 6), float32]) {
    layout_transform(%x, src_layout="NCHW", dst_layout="NCHW8c")
  })"};
  for (const char* text : groups) {
    SCOPED_TRACE(text);
    topi_test::check_group(text, {}, {0, 0});
    tir::PrimFunc scheduled = lower::lower_primitive(topi_test::primitive_function(text), "kernel");
    EXPECT_EQ(loops_of_kind(scheduled, tir::ForKind::Vectorized), 0) << tir::print(scheduled);
    EXPECT_EQ(loops_of_kind(scheduled, tir::ForKind::Unrolled), 1) << tir::print(scheduled);
  }
  // The reverse transform reads a block's lane per pixel, 8 bytes apart along the width: a
  // gather as well. An elementwise op in a blocked layout reads contiguously: vectorized.
  const char* unblock = R"(fn (%x: Tensor[(1, 3, 7, 32, 8), uint8]) {
    layout_transform(%x, src_layout="NCHW8c", dst_layout="NCHW")
  })";
  topi_test::check_group(unblock, {}, {0, 0});
  tir::PrimFunc scheduled =
      lower::lower_primitive(topi_test::primitive_function(unblock), "kernel");
  EXPECT_EQ(loops_of_kind(scheduled, tir::ForKind::Vectorized), 0) << tir::print(scheduled);
  // A reshape that merges the block into the row splits the index (floordiv(j, 16),
  // floormod(j, 16)) but reads contiguously: vectorized too.
  const char* merged = R"(fn (%x: Tensor[(4, 2, 16), uint8], %y: Tensor[(4, 32), uint8]) {
    %0 = reshape(%x, newshape=[4, 32]);
    add(%0, %y)
  })";
  topi_test::check_group(merged, {}, {0, 0});
  scheduled = lower::lower_primitive(topi_test::primitive_function(merged), "kernel");
  EXPECT_EQ(loops_of_kind(scheduled, tir::ForKind::Vectorized), 1) << tir::print(scheduled);
  const char* blocked_add =
      R"(fn (%x: Tensor[(1, 3, 7, 5, 8), float32], %y: Tensor[(1, 3, 7, 5, 8), float32]) {
    add(%x, %y)
  })";
  topi_test::check_group(blocked_add, {}, {0, 0});
  scheduled = lower::lower_primitive(topi_test::primitive_function(blocked_add), "kernel");
  EXPECT_EQ(loops_of_kind(scheduled, tir::ForKind::Vectorized), 1) << tir::print(scheduled);
}

// A trailing axis of one (a transform into NCHW1c, a [N, C, 1, 1] result) is not the loop to
// vectorize: the width above it is, and it stays out of the parallel loop. Over symbolic sizes
// a fused parallel loop of single elements divides by the sizes at every element.
TEST(GenericSchedule, TrailingUnitAxesLeaveTheRowToTheVector) {
  tir::PrimFunc func = lower::lower_primitive(topi_test::primitive_function(R"(
    fn (%x: Tensor[(1, 3, h, w, 1), float32]) { nn.relu(%x) })"),
                                              "kernel");
  EXPECT_EQ(loops_of_kind(func, tir::ForKind::Vectorized), 1) << tir::print(func);
  EXPECT_GE(loops_of_kind(func, tir::ForKind::Parallel), 1) << tir::print(func);
  topi_test::check_group(R"(fn (%x: Tensor[(2, 3, 5, 37, 1), float32]) {
    nn.relu(%x)
  })",
                         {}, {0, 0});
}

// Every config of the parallel-vectorize knobs on groups of each shape of block: elementwise with
// a prime row (the generic schedule), a reduction over a leading axis and softmax (the
// auto-scheduler, whose reduction groups take the same knobs, and softmax's the cross-lane
// rule's too): the kernel matches the reference, and the scheduled loops show the knobs.
TEST(GenericSchedule, EveryKnobConfigMatchesTheReference) {
  const char* groups[] = {
      R"(fn (%x: Tensor[(6, 40, 197), float32], %y: Tensor[(6, 40, 197), float32]) {
    %0 = add(%x, %y);
    tanh(%0)
  })",
      R"(fn (%x: Tensor[(12, 197, 64), float32]) {
    sum(%x, axis=[1])
  })",
      kSoftmax};
  for (const char* text : groups) {
    ir::Function fn = topi_test::primitive_function(text);
    lower::GroupKnobSpace space = lower::group_knob_space(fn);
    ASSERT_EQ(space.strategy, text == groups[0] ? "generic" : "auto");
    std::vector<Tensor> inputs, expected;
    x86_test::reference_run(fn, inputs, expected);
    int64_t size = 1;
    bool cross_lane = false;
    for (const topi::KnobSpace& knob : space.knobs) {
      size *= int64_t(knob.values.size());
      cross_lane |= knob.name == "cross_lane_vectors";
    }
    // Softmax's fold of its partials is long enough for the cross-lane rule at AVX2's width.
    EXPECT_TRUE(!cross_lane || text == kSoftmax);
    ASSERT_EQ(size, cross_lane ? 96 : 24);
    for (int64_t point = 0; point < size; ++point) {
      lower::KnobConfig config;
      int64_t rest = point;
      for (const topi::KnobSpace& knob : space.knobs) {
        config[knob.name] = knob.values[size_t(rest % int64_t(knob.values.size()))];
        rest /= int64_t(knob.values.size());
      }
      std::string trace;
      for (const auto& [name, value] : config) trace += name + "=" + std::to_string(value) + " ";
      SCOPED_TRACE(trace);
      lower::LowerGroupOptions options;
      options.config_for = [&config](const ir::Function&, const lower::LowerGroupOptions&) {
        return &config;
      };
      tir::PrimFunc scheduled = lower::lower_primitive(fn, "kernel", options);
      EXPECT_EQ(scheduled->func_attrs.find(topi::kScheduleDeclinedAttr), nullptr);
      EXPECT_EQ(loops_of_kind(scheduled, tir::ForKind::Vectorized) > 0, config["vectorize"] == 1);
      EXPECT_EQ(loops_of_kind(scheduled, tir::ForKind::Parallel) > 0, config["parallel_grain"] > 0);
      if (text == groups[0]) {
        EXPECT_EQ(loops_of_kind(scheduled, tir::ForKind::Unrolled) > 0, config["unroll"] > 1);
      } else if (config["unroll"] == 1) {
        EXPECT_EQ(loops_of_kind(scheduled, tir::ForKind::Unrolled), 0);
      }
      x86_test::expect_kernel_matches(scheduled, inputs, expected, 1e-5, 1e-5);
      if (HasFailure()) return;
    }
  }
  // A knob outside the space: the heuristic's schedule, and the kernel says why.
  lower::KnobConfig bad = {{"unroll", 3}};
  lower::LowerGroupOptions options;
  options.config_for = [&bad](const ir::Function&, const lower::LowerGroupOptions&) {
    return &bad;
  };
  tir::PrimFunc declined =
      lower::lower_primitive(topi_test::primitive_function(kSoftmax), "kernel", options);
  const ir::AttrValue* why = declined->func_attrs.find(topi::kScheduleDeclinedAttr);
  ASSERT_NE(why, nullptr);
  EXPECT_NE(std::get<std::string>(*why).find("'unroll' = 3"), std::string::npos);
}

}  // namespace
}  // namespace anvil
