// The x86 schedule of pools in the blocked layout NCHW{b}c, applied directly and compared with
// the reference interpreter: windowed pools with and without padding, ceil mode and a fused
// epilogue, global pools of several chunk counts,
// small pools (one thread) and large ones (parallel), and the layouts it leaves to the generic
// schedule.
#include <gtest/gtest.h>

#include "anvil/tir/functor.h"
#include "topi/topi_test_util.h"
#include "topi/x86/nn_pool.h"
#include "topi/x86_schedule_check.h"

namespace anvil {
namespace {

TEST(X86PoolSchedule, MaxPoolCeilModeOnSqueezeNetShape) {
  // SqueezeNet's 55x55 map of 64 channels: 3x3 windows with stride 2 in ceil mode, enough work
  // for the parallel loop.
  x86_test::check_x86_schedule(R"(fn (%x: Tensor[(1, 4, 55, 55, 16), float32]) {
    nn.max_pool2d(%x, pool_size=[3, 3], strides=[2, 2], layout="NCHW16c", ceil_mode=True)
  })",
                               "nn.max_pool2d");
}

TEST(X86PoolSchedule, MaxPoolCeilModePastTheEdge) {
  // 8 -> 4 with 3x3 windows and stride 2 in ceil mode: the last window reaches past the input.
  x86_test::check_x86_schedule(R"(fn (%x: Tensor[(1, 2, 8, 8, 8), float32]) {
    nn.max_pool2d(%x, pool_size=[3, 3], strides=[2, 2], layout="NCHW8c", ceil_mode=True)
  })",
                               "nn.max_pool2d");
}

TEST(X86PoolSchedule, PaddedMaxPoolWithRelu) {
  // ResNet's stem pool (padded) with an elementwise op fused after it.
  x86_test::check_x86_schedule(R"(fn (%x: Tensor[(1, 2, 12, 12, 16), float32]) {
    %0 = nn.max_pool2d(%x, pool_size=[3, 3], strides=[2, 2], padding=[1, 1, 1, 1], layout="NCHW16c");
    nn.relu(%0)
  })",
                               "nn.max_pool2d");
}

TEST(X86PoolSchedule, AvgPoolExcludingPadding) {
  // The division by the taps inside the input is the epilogue, placed under the output row.
  x86_test::check_x86_schedule(R"(fn (%x: Tensor[(1, 3, 9, 9, 8), float32]) {
    nn.avg_pool2d(%x, pool_size=[3, 3], strides=[1, 1], padding=[1, 1, 1, 1], layout="NCHW8c")
  })",
                               "nn.avg_pool2d");
}

TEST(X86PoolSchedule, AvgPoolIncludingPaddingParallel) {
  x86_test::check_x86_schedule(R"(fn (%x: Tensor[(1, 8, 40, 40, 16), float32]) {
    nn.avg_pool2d(%x, pool_size=[2, 2], strides=[2, 2], padding=[1, 1, 1, 1], layout="NCHW16c", count_include_pad=True)
  })",
                               "nn.avg_pool2d");
}

TEST(X86PoolSchedule, GlobalAvgPoolOfSqueezeNet) {
  // 1000 channels in 125 chunks of 8: 5 chunks are reduced side by side.
  x86_test::check_x86_schedule(R"(fn (%x: Tensor[(1, 125, 13, 13, 8), float32]) {
    nn.global_avg_pool2d(%x, layout="NCHW8c")
  })",
                               "nn.global_avg_pool2d");
}

TEST(X86PoolSchedule, GlobalAvgPoolOfResNetParallel) {
  // 32 chunks of 16 over 7x7 maps, batch 8: enough taps for the parallel loop.
  x86_test::check_x86_schedule(R"(fn (%x: Tensor[(8, 32, 7, 7, 16), float32]) {
    nn.global_avg_pool2d(%x, layout="NCHW16c")
  })",
                               "nn.global_avg_pool2d");
}

TEST(X86PoolSchedule, GlobalMaxPoolThenSigmoid) {
  x86_test::check_x86_schedule(R"(fn (%x: Tensor[(1, 6, 5, 5, 4), float32]) {
    %0 = nn.global_max_pool2d(%x, layout="NCHW4c");
    sigmoid(%0)
  })",
                               "nn.global_max_pool2d");
}

TEST(X86PoolSchedule, GlobalPoolRunsSeveralChainsPerTask) {
  // The scheduled nest reduces 6 of the 12 chunks side by side under the window loops: the loop
  // above the vector is an unrolled loop of 6, and a pool this small has no parallel loop.
  std::vector<Tensor> inputs, expected;
  tir::PrimFunc scheduled =
      x86_test::schedule_group_with(R"(fn (%x: Tensor[(1, 12, 7, 7, 16), float32]) {
    nn.global_avg_pool2d(%x, layout="NCHW16c")
  })",
                                    "nn.global_avg_pool2d", inputs, expected);
  int vectorized = 0, unrolled_by_six = 0, parallel = 0;
  tir::pre_order_visit(scheduled->body, nullptr, [&](const tir::Stmt& s) {
    const auto* loop = tir::as<tir::ForNode>(s);
    if (!loop) return;
    std::optional<int64_t> extent = tir::as_const_int(loop->extent);
    vectorized += loop->for_kind == tir::ForKind::Vectorized && extent == 16;
    unrolled_by_six += loop->for_kind == tir::ForKind::Unrolled && extent == 6;
    parallel += loop->for_kind == tir::ForKind::Parallel;
  });
  EXPECT_GE(vectorized, 2) << tir::print(scheduled);  // init and update (and the epilogue)
  EXPECT_GE(unrolled_by_six, 2) << tir::print(scheduled);
  EXPECT_EQ(parallel, 0) << tir::print(scheduled);
}

TEST(X86PoolSchedule, LeavesPlainLayoutsToTheGenericSchedule) {
  // NCHW has no channel block to vectorize: the schedule declines, and the generic schedule
  // (run by check_group) computes the pool.
  std::vector<Tensor> inputs, expected;
  const std::string nchw = R"(fn (%x: Tensor[(1, 3, 8, 8), float32]) {
    nn.max_pool2d(%x, pool_size=[2, 2], strides=[2, 2])
  })";
  EXPECT_THROW(x86_test::schedule_group_with(nchw, "nn.max_pool2d", inputs, expected), Error);
  topi_test::check_group(nchw, {}, {1e-6, 1e-6});
  // A block of 2 channels is no vector either.
  EXPECT_THROW(x86_test::schedule_group_with(R"(fn (%x: Tensor[(1, 3, 4, 4, 2), float32]) {
    nn.global_avg_pool2d(%x, layout="NCHW2c")
  })",
                                             "nn.global_avg_pool2d", inputs, expected),
               Error);
}

}  // namespace
// The heuristic's picks: ResNet's 3x3 max pool over 112x112x64 is parallel and unrolled; a
// 7x7 global average pool of 2048 channels reduces 8 chunks side by side on one thread.
TEST(X86PoolKnobs, HeuristicPicks) {
  topi::x86::PoolShape windowed;
  windowed.window = 9, windowed.taps = int64_t(56) * 56 * 64 * 9, windowed.chunks = 4;
  topi::x86::PoolKnobs k = topi::x86::default_pool_knobs(windowed);
  EXPECT_TRUE(k.parallel);
  EXPECT_TRUE(k.unroll_window);
  EXPECT_EQ(k.chains, 1);
  windowed.window = 25, windowed.taps = 1000;
  k = topi::x86::default_pool_knobs(windowed);
  EXPECT_FALSE(k.parallel);
  EXPECT_FALSE(k.unroll_window);

  topi::x86::PoolShape global;
  global.global = true, global.window = 49, global.taps = 49 * 2048, global.chunks = 128;
  k = topi::x86::default_pool_knobs(global);
  EXPECT_FALSE(k.parallel);
  EXPECT_EQ(k.chains, 8);
  global.chunks = 125;  // SqueezeNet's 1000 classes in blocks of 8: 5 divides 125
  EXPECT_EQ(topi::x86::default_pool_knobs(global).chains, 5);
}

}  // namespace anvil
