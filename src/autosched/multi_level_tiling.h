// The multi-level tiling rule for blocks with data reuse (see auto_schedule.h).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "anvil/autosched/auto_schedule.h"

namespace anvil::autosched {

// What the rule reads from one block: the var to vectorize (the output is contiguous along
// it), the var to unroll across the vector loads (the operands loaded as vectors are
// invariant along it), both as indices into the block's iter vars.
struct TilePlan {
  std::string block;
  size_t num_spatial = 0;  // its spatial iter vars, which come first
  int vector_var = -1;
  int reuse_var = -1;               // -1: none
  int64_t vector_extent = 0;        // 0: symbolic
  int64_t reuse_extent = 0;         // 0: symbolic (or no reuse var)
  int64_t inner_reduce_extent = 0;  // the innermost reduction loop's, 0: symbolic
  int64_t first_reduce_extent = 0;  // the outermost reduction loop's (input channels)
  int64_t reduce_size = 1;          // iterations of the whole reduction (symbolic ones as 1)
  int lanes = 1;                    // elements of the output dtype per vector
  int vector_bits = 512;
  bool gathers = false;  // a load steps by more than one element along the vector var
};

// The plan for block, or nullopt when it has no reduction, no var the output is contiguous
// along, or no operand that some output var reuses.
std::optional<TilePlan> plan_tiling(const tir::Schedule& sch, const tir::BlockRV& block,
                                    const HostModel& host);

struct TileKnobs {
  int64_t vector_tiles = 1;     // vectors along the vector var per register tile
  int64_t reuse_tile = 1;       // iterations of the reuse var per register tile
  int64_t unroll_reduce = 0;    // 1: unroll the innermost reduction loop
  int64_t parallel_grain = 64;  // fuse leading outer tiles up to this many iterations
  int64_t reduce_split = 0;     // chunk of the first reduction var (cache level); 0: none
  int64_t mid_tiles = 1;        // register tiles of the vector var in one cache tile
  int64_t mid_reuse = 1;        // register tiles of the reuse var in one cache tile
};

TileKnobs default_tile_knobs(const TilePlan& plan, const HostModel& host);
std::vector<topi::KnobSpace> tile_space(const TilePlan& plan, const HostModel& host);

// Tiles the block, places the epilogue blocks (its elementwise consumers) in the tile, and
// returns a description of the tile ("vector x:16, reuse f:6, ...").
std::string apply_tiling(tir::Schedule& sch, const TilePlan& plan, const TileKnobs& knobs,
                         const std::vector<std::string>& epilogue);

}  // namespace anvil::autosched
