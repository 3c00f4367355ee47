// The auto-scheduler's driver: inlines, picks the block to tile, and applies the rules in
// order (auto_schedule.h).
#include "anvil/autosched/auto_schedule.h"

#include <unordered_set>

#include "anvil/autosched/block_util.h"
#include "autosched/block_access.h"
#include "autosched/cross_lane.h"
#include "autosched/multi_level_tiling.h"

namespace anvil::autosched {
namespace {

using tir::BlockRV;
using tir::Schedule;

// The block the tiling rule takes: the last one with a plan (a group holds one anchor).
std::optional<TilePlan> find_tiled_block(const Schedule& sch, const HostModel& host) {
  std::optional<TilePlan> found;
  for (const BlockRV& block : sch.get_child_blocks(sch.get_block("root")))
    if (std::optional<TilePlan> plan = plan_tiling(sch, block, host)) found = plan;
  return found;
}

// The buffers a block reads.
bool reads_buffer(const tir::BlockNode& block, const tir::BufferNode* buffer) {
  for (const tir::BufferRegion& region : block.reads)
    if (region.buffer.get() == buffer) return true;
  return false;
}

// Inlines every producer that is neither an output nor a reduction, except guarded ones (a
// padding, a spread input) read by the tiled block (when there is one): inlined, their test
// would sit on every multiply-add of the tile.
void inline_producers(Schedule& sch, const AutoScheduleOptions& options, const std::string& tiled) {
  const auto outputs = output_buffers(sch.func(), options.num_outputs);
  const tir::Block tiled_block = tiled.empty() ? tir::Block() : sch.get(sch.get_block(tiled));
  for (const BlockRV& block : sch.get_child_blocks(sch.get_block("root"))) {
    const tir::Block node = sch.get(block);
    if (writes_any(*node, outputs) || has_reduce_vars(*node)) continue;
    if (tiled_block && has_guarded_value(*node) && !node->writes.empty() &&
        reads_buffer(*tiled_block, node->writes[0].buffer.get()))
      continue;
    sch.try_apply("inline " + block.name, [&](Schedule& s) { s.compute_inline(block); });
  }
}

TileKnobs knobs_from(const TilePlan& plan, const AutoScheduleOptions& options) {
  TileKnobs knobs = default_tile_knobs(plan, options.host);
  if (!options.config) return knobs;
  const std::string why =
      topi::config_mismatch(tile_space(plan, options.host), *options.config, "auto");
  if (!why.empty()) throw Error(why);
  for (const auto& [name, value] : *options.config) {
    if (name == "vector_tiles") knobs.vector_tiles = value;
    if (name == "reuse_tile") knobs.reuse_tile = value;
    if (name == "unroll_reduce") knobs.unroll_reduce = value;
    if (name == "parallel_grain") knobs.parallel_grain = value;
    if (name == "reduce_split") knobs.reduce_split = value;
    if (name == "mid_tiles") knobs.mid_tiles = value;
    if (name == "mid_reuse") knobs.mid_reuse = value;
  }
  return knobs;
}

// The knobs of a group without data reuse: the parallel-vectorize rule's, and the partial
// vector's length when some block takes the cross-lane rule.
std::vector<topi::KnobSpace> reduction_space(const Schedule& sch, const HostModel& host) {
  std::vector<topi::KnobSpace> space = parallel_vectorize_space();
  for (const BlockRV& block : sch.get_child_blocks(sch.get_block("root")))
    if (has_reduce_vars(*sch.get(block)) && plan_cross_lane(sch, block.name, host, 0)) {
      space.push_back({"cross_lane_vectors", {0, 1, 2, 4}});
      break;
    }
  return space;
}

bool any_reduction(const Schedule& sch) {
  for (const BlockRV& block : sch.get_child_blocks(sch.get_block("root")))
    if (has_reduce_vars(*sch.get(block))) return true;
  return false;
}

// A group whose blocks reduce without data reuse (pooling, norms, softmax, a mean): the
// cross-lane rule for reductions along their input's contiguous axis, parallel-vectorize for
// every other block (a pooling vectorizes its output's contiguous axis).
AutoScheduleResult schedule_reductions(Schedule& sch, const AutoScheduleOptions& options) {
  AutoScheduleResult result;
  ParallelVectorizeKnobs knobs;
  int64_t vectors = 0;
  if (options.config) {
    const std::string why =
        topi::config_mismatch(reduction_space(sch, options.host), *options.config, "auto");
    if (!why.empty()) throw Error(why);
    for (const auto& [name, value] : *options.config) {
      if (name == "vectorize") knobs.vectorize = value;
      if (name == "parallel_grain") knobs.parallel_grain = value;
      if (name == "unroll") knobs.unroll = value;
      if (name == "cross_lane_vectors") vectors = value;
    }
  }
  inline_producers(sch, options, "");
  for (const BlockRV& block : sch.get_child_blocks(sch.get_block("root"))) {
    const std::string& name = block.name;
    if (has_reduce_vars(*sch.get(block)) && knobs.vectorize) {
      if (std::optional<CrossLanePlan> plan = plan_cross_lane(sch, name, options.host, vectors)) {
        std::string rule;
        if (sch.try_apply("cross-lane " + name, [&](Schedule& s) {
              rule = apply_cross_lane(s, name, *plan, knobs.parallel_grain);
            })) {
          result.rules.push_back(name + ": " + rule);
          continue;
        }
      }
    }
    parallel_vectorize(sch, name, options.host.vector_bits, knobs);
    result.rules.push_back(name + ": parallel-vectorize");
  }
  result.scheduled = true;
  return result;
}

}  // namespace

AutoScheduleResult auto_schedule(Schedule& sch, const AutoScheduleOptions& options) {
  AutoScheduleResult result;
  std::optional<TilePlan> plan = find_tiled_block(sch, options.host);
  if (!plan) return any_reduction(sch) ? schedule_reductions(sch, options) : result;
  const TileKnobs knobs = knobs_from(*plan, options);
  inline_producers(sch, options, plan->block);
  // Inlining changes the block's reads, not its loops or its output: plan again on the
  // inlined block, whose accesses now name the group's inputs.
  const std::string tiled = plan->block;
  if (std::optional<TilePlan> again = plan_tiling(sch, sch.get_block(tiled), options.host))
    plan = again;
  result.tiled = result.scheduled = true;

  const std::vector<BlockRV> blocks = sch.get_child_blocks(sch.get_block("root"));
  size_t anchor = 0;
  while (blocks[anchor].name != tiled) ++anchor;
  std::vector<std::string> epilogue;
  for (size_t i = anchor + 1; i < blocks.size(); ++i)
    if (!has_reduce_vars(*sch.get(blocks[i]))) epilogue.push_back(blocks[i].name);
  std::unordered_set<std::string> at_root;
  for (size_t i = 0; i < blocks.size(); ++i) {
    const std::string& name = blocks[i].name;
    if (i == anchor) {
      result.rules.push_back(name + ": multi-level tiling (" +
                             apply_tiling(sch, *plan, knobs, epilogue) + ")");
      for (const BlockRV& block : sch.get_child_blocks(sch.get_block("root")))
        at_root.insert(block.name);
    } else if (i < anchor || has_reduce_vars(*sch.get(blocks[i]))) {
      parallel_vectorize(sch, name, options.host.vector_bits, ParallelVectorizeKnobs{});
      result.rules.push_back(name + ": parallel-vectorize");
    } else if (at_root.count(name)) {
      result.rules.push_back(name + ": parallel-vectorize (not placed in the tile)");
    } else {
      result.rules.push_back(name + ": in the tile of " + tiled);
    }
  }
  return result;
}

std::vector<topi::KnobSpace> auto_schedule_space(const Schedule& sch,
                                                 const AutoScheduleOptions& options) {
  if (std::optional<TilePlan> plan = find_tiled_block(sch, options.host))
    return tile_space(*plan, options.host);
  return any_reduction(sch) ? reduction_space(sch, options.host) : std::vector<topi::KnobSpace>{};
}

}  // namespace anvil::autosched
