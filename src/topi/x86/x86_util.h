// Pieces shared by the hand-written x86 schedules: knob configs, choosing tile sizes that
// divide, padding copies, placing epilogues.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "anvil/tir/schedule.h"
#include "anvil/topi/strategy.h"

namespace anvil::topi::x86 {

// Sets each knob that args.config names to the config's value; `space` (called only when there
// is a config) gives the allowed values. Throws Error for a knob the space does not have, or a
// value outside it.
void apply_config(const ScheduleArgs& args, const std::function<std::vector<KnobSpace>()>& space,
                  const std::string& strategy,
                  const std::vector<std::pair<std::string, int64_t*>>& knobs);

// The divisors of n, ascending, that are at most limit.
std::vector<int64_t> divisors_up_to(int64_t n, int64_t limit);

// Dimension `axis` of t as a constant; throws Error naming op and what ("data") when it is not
// static.
inline int64_t static_dim(const te::Tensor& t, int axis, const char* op, const char* what) {
  std::optional<int64_t> value = tir::as_const_int(t.shape()[axis]);
  if (!value) throw_error(op, ": ", what, " dim ", axis, " is not static");
  return *value;
}

// The largest power of two up to lanes that divides channels (1 when channels is odd): the
// channel block of a blocked layout.
int64_t channel_block(int64_t channels, int64_t lanes);

// The weight (argument 1) of a call a layout strategy packs: a contiguous constant; throws
// Error saying to bind the params otherwise.
const Tensor& constant_weight(const LayoutArgs& args);

// The padded copy of a convolution's input, when the function has one (a root block
// "pad_temp" with loops n, c_chunk, h, w, c_block, unit): a parallel copy, vectorized over the
// channel block when it fits a vector.
void schedule_padding(tir::Schedule& sch, int64_t lanes);

// Places the epilogue blocks (elementwise consumers of the anchor) under loop, one after the
// other, then vectorizes the innermost loop of each when its extent is `lanes` and unrolls the
// one above it. An epilogue that cannot move stays at the root with parallel outer loops.
void place_epilogue(tir::Schedule& sch, const std::vector<std::string>& epilogue_blocks,
                    const tir::LoopRV& loop, int64_t lanes);

}  // namespace anvil::topi::x86
