// The x86 schedule of 2-D pools in the blocked layout NCHW{b}c that AlterOpLayout gives them:
// the channel block is the vector, the pooling window is unrolled around it, and the average's
// division (and any fused elementwise op) runs on the tile while it is still in L1.
//
// Windowed pools (nn.max_pool2d, nn.avg_pool2d):
//   parallel  fused(n, c_chunk, oh)        (only when the pool is large enough, see below)
//     ow
//       init                               vectorized
//       kh, kw                             unrolled
//         c_block                          vectorized
//       epilogue                           vectorized
//
// Global pools (nn.global_avg_pool2d, nn.global_max_pool2d) reduce a whole map per channel: a
// single accumulator is one long chain of dependent adds (169 on SqueezeNet's 13x13 map), so up
// to eight channel chunks (a divisor of the chunk count) are reduced together, as independent
// chains:
//   parallel  fused(n, c_chunk_outer)
//     kh, kw
//       c_chunk_inner                      unrolled (up to 8)
//         c_block                          vectorized
//     epilogue                             vectorized
//
// A parallel launch wakes the other threads, which costs more than a small pool itself takes
// (ResNet-18's global pool runs in 7 us on one thread; on a loaded machine its two-thread launch
// waited 0.3 ms for the second thread), so pools of little work stay on the calling thread.
// Other layouts fall to the auto-scheduler (parallel-vectorize over the output's last axis).
#include "topi/x86/nn_pool.h"

#include <string>
#include <vector>

#include "anvil/ir/op.h"
#include "topi/x86/families.h"
#include "topi/x86/x86_util.h"

namespace anvil::topi::x86 {
namespace {

// Below this many taps (output elements times window size) a pool runs on one thread: about
// 70 us of single-thread work at the measured 3.7 G taps/s.
constexpr int64_t kMinParallelTaps = int64_t(1) << 18;

// The product of the constant extents of loops.
int64_t product_of_extents(const tir::Schedule& sch, const std::vector<tir::LoopRV>& loops) {
  int64_t product = 1;
  for (const tir::LoopRV& loop : loops) product *= sch.loop_extent(loop).value_or(1);
  return product;
}

void schedule_windowed(tir::Schedule& sch, const ScheduleArgs& args,
                       const std::vector<tir::LoopRV>& loops, int64_t block,
                       const PoolKnobs& knobs) {
  // n, c_chunk, oh, ow, c_block | kh, kw
  tir::LoopRV c_block = loops[4], kh = loops[5], kw = loops[6];
  sch.reorder({loops[0], loops[1], loops[2], loops[3], kh, kw, c_block});
  tir::BlockRV init = sch.decompose_reduction(sch.get_block(args.anchor_block), kh);
  sch.vectorize(sch.get_loops(init).back());
  sch.vectorize(c_block);
  if (knobs.unroll_window) {
    sch.unroll(kw);
    sch.unroll(kh);
  }
  if (knobs.parallel) sch.parallel(sch.fuse({loops[0], loops[1], loops[2]}));
  place_epilogue(sch, args.epilogue_blocks, loops[3], block);
}

void schedule_global(tir::Schedule& sch, const ScheduleArgs& args,
                     const std::vector<tir::LoopRV>& loops, int64_t block, const PoolKnobs& knobs) {
  // n, c_chunk, 1, 1, c_block | kh, kw
  std::vector<tir::LoopRV> c = sch.split(loops[1], {nullptr, tir::make_int(knobs.chains)});
  tir::LoopRV c_block = loops[4], kh = loops[5], kw = loops[6];
  sch.reorder({loops[0], c[0], loops[2], loops[3], kh, kw, c[1], c_block});
  tir::BlockRV init = sch.decompose_reduction(sch.get_block(args.anchor_block), kh);
  std::vector<tir::LoopRV> init_loops = sch.get_loops(init);  // ..., c_chunk_inner, c_block
  sch.vectorize(init_loops.back());
  sch.unroll(init_loops[init_loops.size() - 2]);
  sch.vectorize(c_block);
  sch.unroll(c[1]);
  if (knobs.parallel) sch.parallel(sch.fuse({loops[0], c[0]}));
  place_epilogue(sch, args.epilogue_blocks, loops[3], block);
}

}  // namespace

PoolKnobs default_pool_knobs(const PoolShape& shape) {
  PoolKnobs knobs;
  knobs.parallel = shape.taps >= kMinParallelTaps;
  knobs.unroll_window = !shape.global && shape.window <= 16;
  knobs.chains = shape.global ? largest_divisor_at_most(shape.chunks, 8) : 1;
  return knobs;
}

std::vector<KnobSpace> pool_space(const PoolShape& shape) {
  return {{"parallel", {0, 1}},
          {"unroll_window", shape.global ? std::vector<int64_t>{0} : std::vector<int64_t>{0, 1}},
          {"chains", shape.global ? divisors_up_to(shape.chunks, 8) : std::vector<int64_t>{1}}};
}

namespace {

// The pool's loops (n, c_chunk, oh, ow, c_block | kh, kw) and what the heuristic looks at;
// throws Error for a pool the schedule was not written for.
PoolShape pool_shape(const tir::Schedule& sch, const ScheduleArgs& args,
                     std::vector<tir::LoopRV>& loops, int64_t& block) {
  const std::string& op = args.anchor.op()->name;
  const std::string layout = ir::call_string_attr(args.anchor, "layout");
  const std::string out_layout = ir::call_string_attr(args.anchor, "out_layout");
  loops = sch.get_loops(sch.get_block(args.anchor_block));
  if (loops.size() != 7)
    throw_error("pool schedule: expected 7 loops (blocked NCHW{b}c), found ", loops.size());
  block = sch.loop_extent(loops[4]).value_or(0);
  const std::string blocked = "NCHW" + std::to_string(block) + "c";
  if (layout != blocked || !(out_layout.empty() || out_layout == blocked))
    throw_error("pool schedule: layout ", layout, " is not NCHW{b}c");
  if (block < 4 || block > args.vector_bits / 32)
    throw_error("pool schedule: channel block ", block, " is no vector");
  PoolShape shape;
  shape.global = op == "nn.global_avg_pool2d" || op == "nn.global_max_pool2d";
  shape.taps = product_of_extents(sch, loops);
  shape.window = product_of_extents(sch, {loops[5], loops[6]});
  shape.chunks = sch.loop_extent(loops[1]).value_or(1);
  return shape;
}

}  // namespace

std::vector<KnobSpace> pool_knob_space(const tir::Schedule& sch, const ScheduleArgs& args) {
  std::vector<tir::LoopRV> loops;
  int64_t block = 0;
  return pool_space(pool_shape(sch, args, loops, block));
}

void schedule_pool(tir::Schedule& sch, const ScheduleArgs& args) {
  std::vector<tir::LoopRV> loops;
  int64_t block = 0;
  const PoolShape shape = pool_shape(sch, args, loops, block);
  PoolKnobs knobs = default_pool_knobs(shape);
  int64_t parallel = knobs.parallel, unroll_window = knobs.unroll_window;
  apply_config(
      args, [&] { return pool_space(shape); }, "x86.pool_nchwc",
      {{"parallel", &parallel}, {"unroll_window", &unroll_window}, {"chains", &knobs.chains}});
  knobs.parallel = parallel != 0;
  knobs.unroll_window = unroll_window != 0;
  if (shape.global)
    schedule_global(sch, args, loops, block, knobs);
  else
    schedule_windowed(sch, args, loops, block, knobs);
}

void register_nn_pool_strategies() {
  // Pools compute in whatever layout their "layout" attr names, so they follow a blocked
  // producer, and take their own schedule there.
  for (const char* pool :
       {"nn.max_pool2d", "nn.avg_pool2d", "nn.global_avg_pool2d", "nn.global_max_pool2d"})
    register_strategy(pool, "x86",
                      {.name = "x86.pool_nchwc",
                       .layout_role = LayoutRole::Follows,
                       .follow = FollowRule::Pool,
                       .schedule = schedule_pool,
                       .space = pool_knob_space});
}
}  // namespace anvil::topi::x86
