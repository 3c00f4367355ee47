#include "autosched/parallel_loops.h"

#include "anvil/autosched/block_util.h"

namespace anvil::autosched {

bool worth_threads(const tir::Schedule& sch, const std::vector<tir::LoopRV>& loops,
                   int64_t inner_work) {
  int64_t work = inner_work;
  for (const tir::LoopRV& loop : loops) {
    const std::optional<int64_t> extent = sch.loop_extent(loop);
    if (!extent) return true;
    work *= *extent;
  }
  return work >= kMinParallelElements;
}

ParallelPrefix parallel_prefix(const tir::Schedule& sch, const std::vector<tir::LoopRV>& loops,
                               int64_t grain) {
  ParallelPrefix prefix;
  for (const tir::LoopRV& loop : loops) {
    prefix.loops.push_back(loop);
    prefix.iterations *= sch.loop_extent(loop).value_or(16);
    if (prefix.iterations >= grain) break;
  }
  return prefix;
}

tir::LoopRV fuse_parallel(tir::Schedule& sch, const std::vector<tir::LoopRV>& loops) {
  const tir::LoopRV fused = loops.size() == 1 ? loops[0] : sch.fuse(loops);
  sch.parallel(fused);
  return fused;
}

}  // namespace anvil::autosched
