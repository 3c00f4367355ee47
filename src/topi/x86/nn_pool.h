// The knobs of the x86 schedule of 2-D pools in the blocked layout and their heuristic
// defaults. The schedule reads every choice it makes from PoolKnobs, so that a tuner searches
// exactly these fields and a test can assert on what the heuristic picks.
#pragma once

#include <cstdint>
#include <vector>

#include "anvil/tir/schedule.h"
#include "anvil/topi/strategy.h"

namespace anvil::topi::x86 {

// What the heuristic looks at.
struct PoolShape {
  bool global = false;  // a global pool (one window over the whole map)
  int64_t taps = 0;     // output elements times window size
  int64_t window = 0;   // taps of one window (kh * kw)
  int64_t chunks = 0;   // channel blocks (global pools reduce several side by side)
};

struct PoolKnobs {
  bool parallel = false;       // parallel over the outer loops
  bool unroll_window = false;  // windowed pools: unroll kh and kw around the vector
  int64_t chains = 1;          // global pools: channel chunks reduced side by side (divides
                               // chunks)
};

// The heuristic default for `shape`.
PoolKnobs default_pool_knobs(const PoolShape& shape);

// The knobs' values a tuner may try: parallel 0 or 1, unroll_window 0 or 1 (windowed pools),
// chains the divisors of the chunks up to 8 (global pools).
std::vector<KnobSpace> pool_space(const PoolShape& shape);

// The schedule of 2-D pools in NCHW{b}c and its knobs' space for the group being scheduled.
void schedule_pool(tir::Schedule& sch, const ScheduleArgs& args);
std::vector<KnobSpace> pool_knob_space(const tir::Schedule& sch, const ScheduleArgs& args);

}  // namespace anvil::topi::x86
