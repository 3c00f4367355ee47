// The knobs of hand-written schedules as a tuner and the compiler's callers see them: a knob's
// search space for one group, a config (knob values by name), and whether a config fits a
// space. Kept apart from topi.h so that lowering's and the driver's headers stay light.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace anvil::topi {

// A schedule's knob as a tuner sees it for one group: its name and the values it may take.
// Every combination of the values of a strategy's knobs is a valid schedule (it compiles and
// computes the same); the heuristic's default is one of them.
struct KnobSpace {
  std::string name;
  std::vector<int64_t> values;
};

// Knob values by name: one point of a strategy's search space.
using ScheduleConfig = std::map<std::string, int64_t>;

// Why `config` does not fit `space` of the strategy named `strategy` ("<strategy> has no knob
// 'x'", "knob 'x' = 5 is not one of {1, 2}"), or "" when every knob it names is in the space
// with one of its values.
std::string config_mismatch(const std::vector<KnobSpace>& space, const ScheduleConfig& config,
                            const std::string& strategy);

// The largest divisor of n that is at most limit (1 when none above 1 exists): the tile of a
// loop of n iterations that leaves no remainder, as schedules and their defaults pick it.
inline int64_t largest_divisor_at_most(int64_t n, int64_t limit) {
  for (int64_t d = limit < n ? limit : n; d > 1; --d)
    if (n % d == 0) return d;
  return 1;
}

}  // namespace anvil::topi
