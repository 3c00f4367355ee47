// Pieces shared by the hand-written x86 schedules: trying a step that may be refused, choosing
// tile sizes that divide, placing epilogues.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "anvil/tir/schedule.h"
#include "anvil/topi/topi.h"

namespace anvil::topi::x86 {

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

// Sets each knob that args.config names to the config's value; `space` (called only when there
// is a config) gives the allowed values. Throws Error for a knob the space does not have, or a
// value outside it.
void apply_config(const ScheduleArgs& args, const std::function<std::vector<KnobSpace>()>& space,
                  const std::string& strategy,
                  const std::vector<std::pair<std::string, int64_t*>>& knobs);

// The divisors of n, ascending, that are at most limit.
std::vector<int64_t> divisors_up_to(int64_t n, int64_t limit);

// The largest divisor of n that is at most limit (1 when none above 1 exists).
inline int64_t largest_divisor_at_most(int64_t n, int64_t limit) {
  for (int64_t d = std::min(n, limit); d > 1; --d)
    if (n % d == 0) return d;
  return 1;
}

// Dimension `axis` of t as a constant; throws Error naming op and what ("data") when it is not
// static.
inline int64_t static_dim(const te::Tensor& t, int axis, const char* op, const char* what) {
  std::optional<int64_t> value = tir::as_const_int(t.shape()[axis]);
  if (!value) throw_error(op, ": ", what, " dim ", axis, " is not static");
  return *value;
}

// The padded copy of a convolution's input, when the function has one (a root block
// "pad_temp" with loops n, c_chunk, h, w, c_block, unit): a parallel copy, vectorized over the
// channel block when it fits a vector.
void schedule_padding(tir::Schedule& sch, int64_t lanes);

// Places the epilogue blocks (elementwise consumers of the anchor) under loop, one after the
// other, then vectorizes the innermost loop of each when its extent is `lanes` and unrolls the
// one above it. An epilogue that cannot move stays at the root with parallel outer loops.
void place_epilogue(tir::Schedule& sch, const std::vector<std::string>& epilogue_blocks,
                    const tir::LoopRV& loop, int64_t lanes);

// The x86 schedule of nn.contrib_conv2d_NCHWc and its knobs' space (conv2d_nchwc.cpp).
void schedule_conv2d_nchwc(tir::Schedule& sch, const ScheduleArgs& args);
std::vector<KnobSpace> conv2d_nchwc_knob_space(const tir::Schedule& sch, const ScheduleArgs& args);
// The x86 schedule of matrix products without transposes and its knobs' space (dense.cpp).
void schedule_dense(tir::Schedule& sch, const ScheduleArgs& args);
std::vector<KnobSpace> dense_knob_space(const tir::Schedule& sch, const ScheduleArgs& args);

// The x86 schedule of 2-D pools in the blocked layout NCHW{b}c and its knobs' space (pool.cpp).
void schedule_pool(tir::Schedule& sch, const ScheduleArgs& args);
std::vector<KnobSpace> pool_knob_space(const tir::Schedule& sch, const ScheduleArgs& args);

// The layout strategies of nn.conv2d (conv2d_layout.cpp) and of nn.dense / nn.matmul with a
// constant weight (dense_layout.cpp).
void register_conv2d_layout();
void register_dense_layout();

// The int8 convolution: qnn.conv2d's layout strategy (conv2d_int8_layout.cpp), and the compute,
// tensor intrinsics and schedule of qnn.contrib_conv2d_NCHWc (conv2d_int8.cpp).
void register_conv2d_int8_layout();
void register_conv2d_int8();

// Registers the compute of nn.contrib_conv2d_NCHWc (conv2d_nchwc.cpp).
void register_conv2d_nchwc_compute();

// The compute and schedule of nn.contrib_conv2d_winograd_NCHWc (conv2d_winograd.cpp).
void register_conv2d_winograd_compute();
void schedule_conv2d_winograd(tir::Schedule& sch, const ScheduleArgs& args);
std::vector<KnobSpace> winograd_knob_space(const tir::Schedule& sch, const ScheduleArgs& args);

}  // namespace anvil::topi::x86
