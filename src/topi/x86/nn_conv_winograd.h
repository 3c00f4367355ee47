// The knobs of the x86 schedule of nn.contrib_conv2d_winograd_NCHWc (F(4x4, 3x3)) and their
// heuristic defaults. The schedule reads every choice of its batched GEMM from WinogradKnobs,
// so that a tuner searches exactly these fields and a test can assert on what the heuristic
// picks. Whether a convolution takes Winograd at all is WinogradConv2D's rule (docs/winograd.md).
#pragma once

#include <cstdint>
#include <vector>

#include "anvil/tir/schedule.h"
#include "anvil/topi/strategy.h"

namespace anvil::topi::x86 {

// What the heuristic looks at: the extents of the batched GEMM (one per transform point).
struct WinogradShape {
  int64_t tiles = 0;      // 4x4 output tiles (the GEMM's rows)
  int64_t oc_chunks = 0;  // output channel blocks
  int64_t oc_bn = 0;      // output channels per block (one vector or less)
  int64_t ic_chunks = 0;  // input channel blocks
  int64_t ic_bn = 0;      // input channels per block
};

struct WinogradKnobs {
  int64_t rows = 1;      // tiles of the register tile
  int64_t oc_tile = 1;   // output channel blocks of the register tile (divides oc_chunks)
  int64_t ic_panel = 1;  // input channel blocks per reduction panel (divides ic_chunks)
};

// The heuristic default for `shape` on vectors of `vector_bits`; throws Error when the output
// block does not fit one vector (the schedule then declines).
WinogradKnobs default_winograd_knobs(const WinogradShape& shape, int vector_bits);

// The knobs' values a tuner may try: rows 1 to 8 (up to the tiles), oc_tile the divisors of
// the output blocks up to 4, ic_panel the divisors of the input blocks up to 16.
std::vector<KnobSpace> winograd_space(const WinogradShape& shape, int vector_bits);

// The schedule of nn.contrib_conv2d_winograd_NCHWc and its knobs' space for the group.
void schedule_conv2d_winograd(tir::Schedule& sch, const ScheduleArgs& args);
std::vector<KnobSpace> winograd_knob_space(const tir::Schedule& sch, const ScheduleArgs& args);

}  // namespace anvil::topi::x86
