// Pieces shared by the hand-written x86 schedules: looking up blocks and loops of the function
// being scheduled, trying a step that may be refused, and choosing tile sizes that divide.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "anvil/tir/functor.h"
#include "anvil/tir/schedule.h"
#include "anvil/topi/topi.h"

namespace anvil::topi::x86 {

// The block named `name` of the function being scheduled; throws Error when there is none.
inline const tir::BlockNode& block_node(const tir::Schedule& sch, const std::string& name) {
  const tir::BlockNode* found = nullptr;
  tir::pre_order_visit(sch.func()->body, nullptr, [&](const tir::Stmt& s) {
    if (const auto* block = tir::as<tir::BlockNode>(s))
      if (block->name == name) found = block;
  });
  if (!found) throw_error("x86 schedule: no block named '", name, "'");
  return *found;
}

// The constant extent of loop, or nullopt.
inline std::optional<int64_t> loop_extent(const tir::Schedule& sch, const tir::LoopRV& loop) {
  std::optional<int64_t> extent;
  tir::pre_order_visit(sch.func()->body, nullptr, [&](const tir::Stmt& s) {
    if (const auto* node = tir::as<tir::ForNode>(s))
      if (node->loop_var.get() == loop.var.get()) extent = tir::as_const_int(node->extent);
  });
  return extent;
}

// Runs step on a copy of sch and keeps the copy only when every primitive was accepted, so an
// optional refinement (vectorizing an epilogue, unrolling) never costs the rest of a schedule.
template <typename Step>
bool try_step(tir::Schedule& sch, Step step) {
  tir::Schedule attempt = sch;
  try {
    step(attempt);
  } catch (const Error&) {
    return false;
  }
  sch = attempt;
  return true;
}

// The largest divisor of n that is at most limit (1 when none above 1 exists).
inline int64_t largest_divisor_at_most(int64_t n, int64_t limit) {
  for (int64_t d = std::min(n, limit); d > 1; --d)
    if (n % d == 0) return d;
  return 1;
}

// Places the epilogue blocks (elementwise consumers of the anchor) under loop, one after the
// other, then vectorizes the innermost loop of each when its extent is `lanes` and unrolls the
// one above it. An epilogue that cannot move stays at the root with parallel outer loops.
void place_epilogue(tir::Schedule& sch, const std::vector<std::string>& epilogue_blocks,
                    const tir::LoopRV& loop, int64_t lanes);

// The x86 schedule of nn.contrib_conv2d_NCHWc (conv2d_nchwc.cpp).
void schedule_conv2d_nchwc(tir::Schedule& sch, const ScheduleArgs& args);
// The x86 schedule of nn.matmul without transposes (dense.cpp).
void schedule_dense(tir::Schedule& sch, const ScheduleArgs& args);

// The x86 schedule of 2-D pools in the blocked layout NCHW{b}c (pool.cpp).
void schedule_pool(tir::Schedule& sch, const ScheduleArgs& args);

// Registers the compute of nn.contrib_conv2d_NCHWc (conv2d_nchwc.cpp).
void register_conv2d_nchwc_compute();

}  // namespace anvil::topi::x86
