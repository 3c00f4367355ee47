#include "autosched/cross_lane.h"

#include <algorithm>

#include "anvil/autosched/block_util.h"
#include "autosched/block_access.h"
#include "autosched/parallel_loops.h"

namespace anvil::autosched {

using tir::BlockRV;
using tir::LoopRV;
using tir::Schedule;

std::optional<CrossLanePlan> plan_cross_lane(const Schedule& sch, const std::string& name,
                                             const HostModel& host, int64_t vectors) {
  const tir::Block block = sch.get(sch.get_block(name));
  const std::vector<tir::IterVar>& vars = block->iter_vars;
  if (vars.empty() || vars.back().kind != tir::IterKind::Reduce) return std::nullopt;
  const size_t inner = vars.size() - 1;
  const std::vector<Access> accesses = block_accesses(*block, /*through_guards=*/true);
  if (accesses.empty() || accesses[0].buffer->dtype.lanes != 1) return std::nullopt;
  const int bits = std::max(8, int(accesses[0].buffer->dtype.bits));
  const int64_t lanes = std::max(1, host.vector_bits / bits);
  const Access* row = nullptr;
  for (const Access& a : accesses)
    if (!a.is_write && a.steps[inner] == std::optional<int64_t>(1)) row = &a;
  if (!row) return std::nullopt;
  // A spatial var with a full vector of contiguous output and loads serves a plain vector loop.
  for (size_t v = 0; v < vars.size(); ++v) {
    if (vars[v].kind != tir::IterKind::Spatial) continue;
    const std::optional<int64_t> extent = tir::as_const_int(vars[v].dom.extent);
    if (extent && *extent < lanes) continue;
    bool all_contiguous = true;
    for (const Access& a : accesses)
      all_contiguous &=
          a.steps[v] == std::optional<int64_t>(0) || a.steps[v] == std::optional<int64_t>(1);
    if (all_contiguous && accesses[0].steps[v] == std::optional<int64_t>(1)) return std::nullopt;
  }
  // The row: the innermost reduction, and each reduction outside it whose step is the length
  // of the row so far (static extents only).
  CrossLanePlan plan;
  std::optional<int64_t> length = tir::as_const_int(vars[inner].dom.extent);
  for (size_t v = inner; length && v-- > 0;) {
    const std::optional<int64_t> extent = tir::as_const_int(vars[v].dom.extent);
    if (vars[v].kind != tir::IterKind::Reduce || !extent || row->steps[v] != length) break;
    *length *= *extent;
    ++plan.fused_vars;
  }
  if (length && *length < 2 * lanes) return std::nullopt;
  // Enough partial vectors to cover the add latency, no more than the row fills.
  if (vectors <= 0) vectors = !length ? 2 : *length >= 8 * lanes ? 4 : *length >= 4 * lanes ? 2 : 1;
  plan.width = lanes * vectors;
  plan.lanes = lanes;
  return plan;
}

std::string apply_cross_lane(Schedule& sch, const std::string& name, const CrossLanePlan& plan,
                             int64_t parallel_grain) {
  const int64_t width = plan.width;
  const BlockRV block = sch.get_block(name);
  const tir::Block node = sch.get(block);
  size_t num_spatial = 0;
  for (const tir::IterVar& iv : node->iter_vars) num_spatial += iv.kind == tir::IterKind::Spatial;
  const std::vector<LoopRV> loops = sch.get_loops(block);
  if (loops.size() != node->iter_vars.size())
    throw Error("cross-lane: block '" + name + "' has loops other than its iter vars'");
  const std::vector<LoopRV> spatial(loops.begin(), loops.begin() + long(num_spatial));
  const std::vector<LoopRV> reduce(loops.begin() + long(num_spatial), loops.end());

  const bool threads = worth_threads(sch, loops);

  if (plan.fused_vars == 0 || plan.fused_vars > reduce.size())
    throw Error("cross-lane: block '" + name + "' has fewer reductions than the plan fuses");
  const std::vector<LoopRV> row_loops(reduce.end() - long(plan.fused_vars), reduce.end());
  const LoopRV row = row_loops.size() == 1 ? row_loops[0] : sch.fuse(row_loops);
  const std::vector<LoopRV> k = sch.split(row, {nullptr, tir::make_int(width)});
  const BlockRV partial = sch.rfactor(block, k[1]);
  if (!spatial.empty()) sch.reverse_compute_at(sch.get_block(name), spatial.back());
  const bool outer_reduce = reduce.size() > plan.fused_vars;
  const BlockRV init = sch.decompose_reduction(partial, outer_reduce ? reduce.front() : k[0]);
  const std::vector<LoopRV> init_loops = sch.get_loops(init);
  if (!init_loops.empty() && sch.loop_extent(init_loops.back()) == width)
    sch.vectorize(init_loops.back());
  sch.vectorize(k[1]);
  // A fold of several machine vectors adds them as vectors first (rfactor once more, by one
  // vector's lanes), so that only one vector's lanes fold one by one: for a row of 197 and
  // four vectors of 16, 3 vector adds and 16 scalar ones instead of 64 scalar ones.
  if (width > plan.lanes && plan.lanes > 1 && width % plan.lanes == 0)
    sch.try_apply("fold " + name + " by vectors", [&](Schedule& s) {
      const LoopRV fold_lane = s.get_loops(s.get_block(name)).back();
      const std::vector<LoopRV> parts = s.split(fold_lane, {nullptr, tir::make_int(plan.lanes)});
      const BlockRV vectors = s.rfactor(s.get_block(name), parts[1]);
      if (!spatial.empty()) s.reverse_compute_at(s.get_block(name), spatial.back());
      const BlockRV vectors_init = s.decompose_reduction(vectors, parts[0]);
      s.vectorize(s.get_loops(vectors_init).back());
      s.vectorize(parts[1]);
    });

  std::string description = "cross-lane: " + std::to_string(width) + " partial lanes";
  if (plan.fused_vars > 1)
    description += " over " + std::to_string(plan.fused_vars) + " fused axes";
  if (spatial.empty() || !threads || parallel_grain <= 0) return description;
  fuse_parallel(sch, parallel_prefix(sch, spatial, parallel_grain).loops);
  return description + ", parallel";
}

}  // namespace anvil::autosched
