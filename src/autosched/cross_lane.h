// The cross-lane reduction rule: a reduction along its input's contiguous axis (a row sum, a
// softmax's max, a group norm's statistics) keeps a vector of partial results per output
// element (rfactor), steps it with full-width loads and folds the lanes at the end.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "anvil/autosched/auto_schedule.h"

namespace anvil::autosched {

struct CrossLanePlan {
  int64_t width = 0;      // lanes of the partial vector
  int64_t lanes = 0;      // lanes of one machine vector
  size_t fused_vars = 1;  // trailing reduction vars that form one contiguous row
};

// The plan for the block, or nullopt when the rule does not fit it: its innermost var must be
// a reduction along which some load is contiguous; the trailing reductions whose steps chain
// (a group's channels and plane) form the row, long enough for two vectors (or symbolic); and
// no spatial var may offer contiguous vectors instead (a pooling, a reduction over a leading
// axis). `vectors` (0: from the row's length) is the number of machine vectors in the partial
// vector.
std::optional<CrossLanePlan> plan_cross_lane(const tir::Schedule& sch, const std::string& block,
                                             const HostModel& host, int64_t vectors);

// Fuses the row's reductions, splits them by the width, factors the lanes out, folds them
// under the last spatial loop (a partial vector of several machine vectors first adds its
// vectors, then folds one vector's lanes) and makes the spatial loops parallel (up to
// parallel_grain iterations fused). Returns the rule's description; throws anvil::Error when a step
// is refused.
std::string apply_cross_lane(tir::Schedule& sch, const std::string& block,
                             const CrossLanePlan& plan, int64_t parallel_grain);

}  // namespace anvil::autosched
