// The knobs of the x86 schedule of nn.contrib_conv2d_NCHWc and their heuristic defaults. The
// schedule reads every choice it makes from Conv2dNCHWcKnobs, so that a tuner searches exactly
// these fields and a test can assert on what the heuristic picks.
#pragma once

#include <cstdint>
#include <vector>

#include "anvil/tir/schedule.h"
#include "anvil/topi/strategy.h"

namespace anvil::topi::x86 {

// What the heuristic looks at: the loop extents of the blocked convolution and its groups.
struct Conv2dNCHWcShape {
  int64_t oc_chunks = 0;     // output channel blocks
  int64_t out_width = 0;     // output pixels per row
  int64_t oc_bn = 0;         // output channels per block (one vector or less)
  int64_t ic_bn = 0;         // input channels per kernel block
  int64_t groups = 1;        // groups (depthwise: one per channel)
  int64_t in_per_group = 0;  // input channels of one group (1: depthwise)
};

struct Conv2dNCHWcKnobs {
  int64_t oc_tile = 1;    // output channel blocks in the register tile
  int64_t ow_block = 1;   // output pixels of a row in the register tile (a guarded split when
                          // it does not divide the width)
  int64_t ic_unroll = 1;  // channels of one input block unrolled at a time (1: a loop; divides
                          // ic_bn)
};

// The heuristic default for `shape` on vectors of `vector_bits`; throws Error when the output
// block does not fit one vector (the schedule then declines).
Conv2dNCHWcKnobs default_conv2d_nchwc_knobs(const Conv2dNCHWcShape& shape, int vector_bits);

// The knobs' values a tuner may try for `shape` (each combination is a valid schedule; the
// heuristic's picks among them): oc_tile the divisors of the blocks (of a group, for grouped
// convolutions) up to 6, ow_block 1, 2, 4, 7, 8, 14, 16, 28 up to the width (and the default),
// ic_unroll the divisors of the input block. Throws Error where the schedule declines.
std::vector<KnobSpace> conv2d_nchwc_space(const Conv2dNCHWcShape& shape, int vector_bits);

// The knobs for the group being scheduled: the heuristic's, overridden by args.config.
Conv2dNCHWcKnobs conv2d_nchwc_knobs(const Conv2dNCHWcShape& shape, const ScheduleArgs& args);

// The shape of the anchor block of args; throws Error when it is not a blocked convolution.
Conv2dNCHWcShape conv2d_nchwc_shape(const tir::Schedule& sch, const ScheduleArgs& args);

// The schedule of nn.contrib_conv2d_NCHWc and its knobs' space for the group being scheduled.
void schedule_conv2d_nchwc(tir::Schedule& sch, const ScheduleArgs& args);
std::vector<KnobSpace> conv2d_nchwc_knob_space(const tir::Schedule& sch, const ScheduleArgs& args);

}  // namespace anvil::topi::x86
