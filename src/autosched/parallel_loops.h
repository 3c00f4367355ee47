// Which loops the rules make parallel, and when: one answer for the tiling, cross-lane and
// parallel-vectorize rules.
#pragma once

#include <cstdint>
#include <vector>

#include "anvil/tir/schedule.h"

namespace anvil::autosched {

// True when a nest holds enough work to be worth threads (kMinParallelElements iterations of
// its loops times inner_work); a loop over a size variable (a batch, a sequence) is taken to
// be long enough.
bool worth_threads(const tir::Schedule& sch, const std::vector<tir::LoopRV>& loops,
                   int64_t inner_work = 1);

// The leading loops to fuse into the parallel loop: as many as reach `grain` iterations (a
// size variable counts 16), and the iterations they make.
struct ParallelPrefix {
  std::vector<tir::LoopRV> loops;
  int64_t iterations = 1;
};
ParallelPrefix parallel_prefix(const tir::Schedule& sch, const std::vector<tir::LoopRV>& loops,
                               int64_t grain);

// The loops fused (a single one kept as it is) and made parallel.
tir::LoopRV fuse_parallel(tir::Schedule& sch, const std::vector<tir::LoopRV>& loops);

}  // namespace anvil::autosched
