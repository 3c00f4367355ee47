// Multi-level tiling of a block with data reuse, for CPUs: the loop nest becomes
//   outer tiles of every spatial var (the leading ones fused and parallel)
//     the reduction loops
//       reuse_tile iterations of the reuse var (unrolled)
//         vector_tiles x lanes iterations of the vector var (unrolled vectors)
// so that the reuse_tile x vector_tiles accumulators stay in registers across the whole
// reduction: every vector load feeds reuse_tile multiply-adds and every broadcast operand
// vector_tiles of them. The accumulators start in a split-off init block; the block's
// elementwise consumers run inside the outer tile, on the tile the reduction just finished.
#include "autosched/multi_level_tiling.h"

#include <algorithm>

#include "anvil/autosched/block_util.h"
#include "anvil/support/str_cat.h"
#include "anvil/tir/arith.h"
#include "autosched/block_access.h"
#include "autosched/parallel_loops.h"

namespace anvil::autosched {
namespace {

using tir::BlockRV;
using tir::LoopRV;
using tir::Schedule;

int64_t extent_or_zero(const tir::IterVar& iv) {
  return tir::as_const_int(iv.dom.extent).value_or(0);
}

// Accumulators a tile may hold: the registers less the operands in flight (a vector load per
// vector tile and a broadcast), and no more than 24, past which LLVM spills.
int64_t accumulator_budget(const HostModel& host) {
  return std::min<int64_t>(24, host.vector_registers - 4);
}

// The register tile's loops [reuse?, vector]: the vector loop split into whole vectors (the
// vectors unrolled), the reuse iterations unrolled.
void vectorize_tile(Schedule& sch, const std::vector<LoopRV>& tile_loops, int64_t lanes) {
  if (tile_loops.empty()) return;
  LoopRV vec = tile_loops.back();
  if (sch.loop_extent(vec).value_or(0) > lanes) {
    std::vector<LoopRV> parts = sch.split(vec, {nullptr, tir::make_int(lanes)});
    sch.unroll(parts[0]);
    vec = parts[1];
  }
  sch.vectorize(vec);
  for (size_t i = 0; i + 1 < tile_loops.size(); ++i) sch.unroll(tile_loops[i]);
}

}  // namespace

std::optional<TilePlan> plan_tiling(const Schedule& sch, const BlockRV& block_rv,
                                    const HostModel& host) {
  const tir::Block block = sch.get(block_rv);
  if (!has_reduce_vars(*block)) return std::nullopt;
  const std::vector<Access> accesses = block_accesses(*block);
  if (accesses.empty()) return std::nullopt;
  const size_t num_vars = block->iter_vars.size();
  // Lowering's loops are the iter vars, spatial first.
  if (sch.get_loops(block_rv).size() != num_vars) return std::nullopt;
  size_t num_spatial = 0;
  while (num_spatial < num_vars && block->iter_vars[num_spatial].kind == tir::IterKind::Spatial)
    ++num_spatial;
  for (size_t i = num_spatial; i < num_vars; ++i)
    if (block->iter_vars[i].kind != tir::IterKind::Reduce) return std::nullopt;
  if (num_spatial == 0) return std::nullopt;

  const Access& write = accesses[0];
  // The operands: loads of other buffers than the output that move with the reduction. A
  // block multiplies two of them (a convolution, a matmul); one that only reads a per-row
  // scalar (softmax's running maximum) has nothing to keep in registers.
  std::vector<const Access*> operands;
  for (size_t i = 1; i < accesses.size(); ++i) {
    bool reduced = false;
    for (size_t r = num_spatial; r < num_vars; ++r) reduced |= accesses[i].steps[r] != 0;
    if (accesses[i].buffer != write.buffer && reduced) operands.push_back(&accesses[i]);
  }
  if (operands.size() < 2) return std::nullopt;

  TilePlan plan;
  plan.block = block_rv.name;
  plan.num_spatial = num_spatial;
  const int bits = std::max(8, int(write.buffer->dtype.bits));
  plan.lanes = std::max(1, host.vector_bits / bits);
  for (size_t s = 0; s < num_spatial; ++s)
    if (write.steps[s] == 1 && extent_or_zero(block->iter_vars[s]) != 1) plan.vector_var = int(s);
  if (plan.vector_var < 0) return std::nullopt;
  const size_t v = size_t(plan.vector_var);
  plan.vector_extent = extent_or_zero(block->iter_vars[v]);

  // The reuse var: the one along which most of the operands loaded as vectors stay put (each
  // such vector then feeds reuse_tile accumulators); ties go to the longer known extent.
  int best_score = -1;
  int64_t best_extent = -1;
  for (size_t s = 0; s < num_spatial; ++s) {
    if (s == v) continue;
    const int64_t extent = extent_or_zero(block->iter_vars[s]);
    if (extent == 1) continue;
    int score = 0;
    for (const Access* a : operands) score += a->steps[v] != 0 && a->steps[s] == 0;
    const int64_t rank = extent == 0 ? 16 : extent;
    if (score > best_score || (score == best_score && rank > best_extent)) {
      best_score = score;
      best_extent = rank;
      plan.reuse_var = int(s);
    }
  }
  if (plan.reuse_var >= 0)
    plan.reuse_extent = extent_or_zero(block->iter_vars[size_t(plan.reuse_var)]);

  // Data reuse: some operand is invariant along some spatial var of more than one iteration.
  bool reuse = false;
  for (const Access* a : operands)
    for (size_t s = 0; s < num_spatial; ++s)
      reuse |= a->steps[s] == 0 && extent_or_zero(block->iter_vars[s]) != 1;
  if (!reuse) return std::nullopt;
  for (const Access* a : operands) plan.gathers |= a->steps[v] != 0 && a->steps[v] != 1;
  plan.inner_reduce_extent = extent_or_zero(block->iter_vars.back());
  plan.first_reduce_extent = extent_or_zero(block->iter_vars[num_spatial]);
  for (size_t r = num_spatial; r < num_vars; ++r)
    plan.reduce_size *= std::max<int64_t>(1, extent_or_zero(block->iter_vars[r]));
  plan.vector_bits = host.vector_bits;
  return plan;
}

TileKnobs default_tile_knobs(const TilePlan& plan, const HostModel& host) {
  TileKnobs knobs;
  const int64_t budget = accumulator_budget(host);
  const int64_t ev = plan.vector_extent;
  // Two vectors per tile where they divide the extent; else one, which leaves the shortest
  // tail (the tail runs scalar, under its guard; a size variable's extent has one too).
  knobs.vector_tiles = ev > 0 && ev % (2 * plan.lanes) == 0 ? 2 : 1;
  if (plan.reuse_var >= 0) {
    const int64_t most = std::max<int64_t>(1, budget / knobs.vector_tiles);
    const int64_t eu = plan.reuse_extent;
    if (eu > 0 && eu <= most) {
      knobs.reuse_tile = eu;
    } else {
      // A divisor leaves no guard; one much smaller than the registers allow costs more than
      // the guard of a tile that does not divide.
      const int64_t divisor = eu > 0 ? topi::largest_divisor_at_most(eu, most) : 1;
      knobs.reuse_tile = divisor * 3 >= most * 2 ? divisor : most;
    }
  }
  knobs.unroll_reduce = plan.inner_reduce_extent > 1 && plan.inner_reduce_extent <= 4;
  // The cache level (reduce_split, mid_tiles, mid_reuse) is left to tuning: no default of it
  // has been measured to pay on its own.
  return knobs;
}

std::vector<topi::KnobSpace> tile_space(const TilePlan& plan, const HostModel& host) {
  const TileKnobs defaults = default_tile_knobs(plan, host);
  auto with_default = [](std::vector<int64_t> values, int64_t d) {
    if (std::find(values.begin(), values.end(), d) == values.end()) values.push_back(d);
    std::sort(values.begin(), values.end());
    return values;
  };
  std::vector<int64_t> vector_tiles;
  for (int64_t n : {1, 2, 3, 4})
    if (n == 1 || plan.vector_extent == 0 || n * plan.lanes <= plan.vector_extent)
      vector_tiles.push_back(n);
  std::vector<int64_t> reuse = {1};
  if (plan.reuse_var >= 0)
    for (int64_t n : {2, 3, 4, 5, 6, 7, 8, 10, 12, 14, 16, 20, 24})
      if (plan.reuse_extent == 0 || n <= plan.reuse_extent) reuse.push_back(n);
  std::vector<int64_t> unroll = {0};
  if (plan.inner_reduce_extent > 1 && plan.inner_reduce_extent <= 16) unroll.push_back(1);
  std::vector<int64_t> chunks = {0};
  for (int64_t c : {4, 8, 16, 32, 64, 128})
    if (plan.first_reduce_extent > c && plan.first_reduce_extent % c == 0) chunks.push_back(c);
  return {{"vector_tiles", with_default(vector_tiles, defaults.vector_tiles)},
          {"reuse_tile", with_default(reuse, defaults.reuse_tile)},
          {"unroll_reduce", with_default(unroll, defaults.unroll_reduce)},
          {"parallel_grain", with_default({16, 64, 256}, defaults.parallel_grain)},
          {"reduce_split", with_default(chunks, defaults.reduce_split)},
          {"mid_tiles", with_default({1, 2, 4}, defaults.mid_tiles)},
          {"mid_reuse", with_default({1, 2, 4}, defaults.mid_reuse)}};
}

std::string apply_tiling(Schedule& sch, const TilePlan& plan, const TileKnobs& knobs,
                         const std::vector<std::string>& epilogue) {
  const BlockRV block = sch.get_block(plan.block);
  const tir::Block node = sch.get(block);
  std::vector<LoopRV> loops = sch.get_loops(block);
  const size_t num_spatial = plan.num_spatial;
  std::vector<LoopRV> reduce(loops.begin() + long(num_spatial), loops.end());
  const size_t v = size_t(plan.vector_var);
  const int64_t lanes = plan.lanes;

  // The vector var: vector_tiles vectors per tile, or the whole (short) extent.
  int64_t tile_v = knobs.vector_tiles * lanes;
  if (plan.vector_extent > 0 && plan.vector_extent < tile_v)
    tile_v = plan.vector_extent <= lanes ? plan.vector_extent
                                         : (plan.vector_extent + lanes - 1) / lanes * lanes;
  // The outer tiles keep the order of their vars, except that those whose tile does not
  // divide the extent (a size variable's, a prime's) go last: their guard then sits under
  // serial loops, which partition_loops cuts into guard-free tiles and a tail.
  // With a cache level, mid_tiles register tiles of the vector var and mid_reuse of the reuse
  // var (the middle loops) sweep one chunk of reduce_split iterations of the first reduction
  // var, whose operands then stay in L1 across the middle tile; the accumulators go through
  // memory between chunks.
  std::vector<LoopRV> outer, guarded, middle;
  std::optional<LoopRV> reuse_inner, vector_inner;
  for (size_t s = 0; s < num_spatial; ++s) {
    const LoopRV& loop = loops[s];
    const int64_t extent = sch.loop_extent(loop).value_or(0);
    int64_t tile = 1, mid = 1;
    if (s == v) tile = tile_v, mid = knobs.mid_tiles;
    if (int(s) == plan.reuse_var) tile = knobs.reuse_tile, mid = knobs.mid_reuse;
    if (tile <= 1) {
      outer.push_back(loop);
      continue;
    }
    LoopRV inner = loop;
    if (extent != tile) {
      if (mid > 1 && (extent == 0 || extent > tile * mid)) {
        std::vector<LoopRV> parts =
            sch.split(loop, {nullptr, tir::make_int(mid), tir::make_int(tile)});
        (extent > 0 && extent % (tile * mid) == 0 ? outer : guarded).push_back(parts[0]);
        middle.push_back(parts[1]);
        inner = parts[2];
      } else {
        std::vector<LoopRV> parts = sch.split(loop, {nullptr, tir::make_int(tile)});
        (extent > 0 && extent % tile == 0 ? outer : guarded).push_back(parts[0]);
        inner = parts[1];
      }
    }
    (s == v ? vector_inner : reuse_inner) = inner;
  }
  std::optional<LoopRV> chunk;
  if (knobs.reduce_split > 0) {
    const int64_t extent = sch.loop_extent(reduce.front()).value_or(0);
    if (extent > knobs.reduce_split && extent % knobs.reduce_split == 0) {
      std::vector<LoopRV> parts =
          sch.split(reduce.front(), {nullptr, tir::make_int(knobs.reduce_split)});
      chunk = parts[0];
      reduce.front() = parts[1];
    }
  }
  const size_t parallel_candidates = outer.size();
  outer.insert(outer.end(), guarded.begin(), guarded.end());
  std::vector<LoopRV> order = outer;
  if (chunk) order.push_back(*chunk);
  order.insert(order.end(), middle.begin(), middle.end());
  order.insert(order.end(), reduce.begin(), reduce.end());
  if (reuse_inner) order.push_back(*reuse_inner);
  if (vector_inner) order.push_back(*vector_inner);
  sch.reorder(order);

  // Parallel over the leading outer tiles, fused up to the grain (a size variable counts 16).
  const ParallelPrefix prefix = parallel_prefix(
      sch, std::vector<LoopRV>(outer.begin(), outer.begin() + long(parallel_candidates)),
      knobs.parallel_grain);
  const std::vector<LoopRV>& to_fuse = prefix.loops;
  std::optional<LoopRV> placed_under = outer.empty() ? std::nullopt : std::optional(outer.back());
  if (!to_fuse.empty() && prefix.iterations > 1) {
    LoopRV fused = fuse_parallel(sch, to_fuse);
    if (to_fuse.size() == outer.size()) placed_under = fused;
  }

  // The accumulators: an init block over the tile, then the vector loop split into whole
  // vectors, the vectors and the reuse iterations unrolled.
  tir::BlockRV init = sch.decompose_reduction(block, chunk ? *chunk : reduce.front());
  std::vector<LoopRV> tile_loops;
  if (reuse_inner) tile_loops.push_back(*reuse_inner);
  if (vector_inner) tile_loops.push_back(*vector_inner);
  vectorize_tile(sch, tile_loops, lanes);
  std::vector<LoopRV> init_loops = sch.get_loops(init);
  if (init_loops.size() >= tile_loops.size()) {
    std::vector<LoopRV> init_tile(init_loops.end() - long(tile_loops.size()), init_loops.end());
    sch.try_apply("vectorize the accumulators' init",
                  [&](Schedule& s) { vectorize_tile(s, init_tile, lanes); });
  }
  if (knobs.unroll_reduce)
    sch.try_apply("unroll the innermost reduction", [&](Schedule& s) { s.unroll(reduce.back()); });

  // The elementwise consumers, on the finished tile.
  for (const std::string& name : epilogue) {
    const BlockRV consumer = sch.get_block(name);
    const bool placed =
        placed_under && sch.try_apply("place " + name + " in the tile", [&](Schedule& s) {
          s.reverse_compute_at(consumer, *placed_under);
        });
    if (!placed) {
      parallel_vectorize(sch, name, plan.vector_bits, ParallelVectorizeKnobs{});
      continue;
    }
    std::vector<LoopRV> consumer_loops = sch.get_loops(consumer);
    size_t first_new = 0;
    for (size_t i = 0; i < consumer_loops.size(); ++i)
      if (consumer_loops[i].var.get() == placed_under->var.get()) first_new = i + 1;
    if (first_new >= consumer_loops.size()) continue;
    std::vector<LoopRV> fresh(consumer_loops.begin() + long(first_new), consumer_loops.end());
    sch.try_apply("vectorize " + name, [&](Schedule& s) {
      LoopRV vec = fresh.back();
      const int64_t extent = s.loop_extent(vec).value_or(0);
      if (extent == 0) throw_error("a symbolic extent");
      if (extent > lanes) {
        std::vector<LoopRV> parts = s.split(vec, {nullptr, tir::make_int(lanes)});
        vec = parts[1];
      }
      s.vectorize(vec);
    });
  }
  return str_cat(
      "vector ", node->iter_vars[v].var->name, ":", tile_v, plan.gathers ? " (gathers)" : "",
      plan.reuse_var >= 0 ? str_cat(", reuse ", node->iter_vars[size_t(plan.reuse_var)].var->name,
                                    ":", knobs.reuse_tile)
                          : std::string(),
      knobs.unroll_reduce ? ", reduction unrolled" : "",
      chunk ? str_cat(", chunks of ", knobs.reduce_split, " under ", knobs.mid_reuse, "x",
                      knobs.mid_tiles, " tiles")
            : std::string(),
      ", parallel ", to_fuse.size(), " loop(s)");
}

}  // namespace anvil::autosched
