// The parallel-vectorize rule: parallel outer loops, a vectorized innermost loop and an
// unrolled loop above it, for blocks without data reuse (elementwise, injective, pooling and
// plain reductions) and for every block of a group the other rules leave.
#include <optional>

#include "anvil/autosched/auto_schedule.h"
#include "anvil/autosched/block_util.h"
#include "autosched/block_access.h"
#include "autosched/parallel_loops.h"

namespace anvil::autosched {
namespace {

using tir::BlockRV;
using tir::LoopRV;
using tir::Schedule;

// The index among the block's iter vars of its k-th spatial one.
size_t spatial_iter_index(const tir::BlockNode& block, size_t k) {
  for (size_t i = 0; i < block.iter_vars.size(); ++i)
    if (block.iter_vars[i].kind == tir::IterKind::Spatial && k-- == 0) return i;
  return block.iter_vars.size() - 1;
}

int spatial_count(const tir::BlockNode& block) {
  int n = 0;
  for (const tir::IterVar& iv : block.iter_vars) n += iv.kind == tir::IterKind::Spatial;
  return n;
}

// The vector width for an innermost loop of `extent` elements of `bits` each.
int64_t pick_vector_width(int64_t extent, int bits, int vector_bits) {
  int64_t lanes = std::max<int64_t>(1, vector_bits / std::max(bits, 8));
  if (extent <= 1) return 1;
  if (extent <= lanes) return extent;
  for (int64_t v = lanes; v >= 4; --v)
    if (extent % v == 0) return v;
  return 1;
}

// True when a load of the block steps along its iter var `var` by anything but one element (or
// none) of its buffer: a gather when var's loop is vectorized. A layout transform into a
// blocked layout (NCHW to NCHW4c) reads its block's lanes a channel plane apart. The steps are
// block_accesses' (a split index, floordiv(j, 16) and floormod(j, 16), reads as the contiguous
// j it is); a load with a row of unknown length is taken not to gather.
bool gathers_along(const tir::BlockNode& block, size_t var) {
  for (const Access& access : block_accesses(block))
    if (!access.is_write && access.static_rows && access.steps[var] != 0 && access.steps[var] != 1)
      return true;
  return false;
}

}  // namespace

std::vector<topi::KnobSpace> parallel_vectorize_space() {
  return {{"vectorize", {0, 1}}, {"parallel_grain", {0, 16, 64, 256}}, {"unroll", {1, 2, 4}}};
}

void parallel_vectorize(Schedule& sch, const std::string& name, int vector_bits,
                        const ParallelVectorizeKnobs& knobs) {
  const tir::Block block = sch.get(sch.get_block(name));
  int num_spatial = spatial_count(*block);
  bool reduces = has_reduce_vars(*block);
  int bits = block->writes.empty() ? 32 : block->writes[0].buffer->dtype.bits;
  std::vector<LoopRV> loops = sch.get_loops(sch.get_block(name));
  if (num_spatial == 0 || int(loops.size()) < num_spatial) return;
  std::vector<LoopRV> spatial(loops.begin(), loops.begin() + num_spatial);
  std::vector<LoopRV> reduce(loops.begin() + num_spatial, loops.end());

  // The work of the block: its output elements times the length of its reduction.
  int64_t reduce_length = 1;
  for (const LoopRV& loop : reduce) reduce_length *= sch.loop_extent(loop).value_or(1);
  const bool threads = worth_threads(sch, spatial, reduce_length);

  // Vectorize the innermost spatial loop; under a reduction it moves below the reduce loops
  // and the init is split off first, so the update is a vector multiply-accumulate. Trailing
  // loops of one iteration (a layout transform into NCHW1c, a [N, C, 1, 1] result) do not
  // count: the loop above them is the innermost, otherwise that loop would be fused into the
  // parallel loop, one element per iteration, with a division per element where the extents
  // are symbolic.
  size_t inner_position = spatial.size() - 1;
  if (!reduces)
    while (inner_position > 0 && sch.loop_extent(spatial[inner_position]) == 1) --inner_position;
  LoopRV inner = spatial[inner_position];
  std::optional<LoopRV> outer_of_inner;
  const std::optional<int64_t> known = sch.loop_extent(inner);
  int64_t extent = known.value_or(0);
  int64_t width = extent > 0 && knobs.vectorize ? pick_vector_width(extent, bits, vector_bits) : 1;
  // An extent with no divisor of four or more lanes (197, 1000003), or a size variable, still
  // takes full vectors: the split leaves a guard, and partition_loops gives the full vectors a
  // guard-free loop of their own when the loop above the vector is serial (below a leading
  // parallel loop).
  const int64_t full_width = std::max<int64_t>(1, vector_bits / std::max(bits, 8));
  if (knobs.vectorize && width == 1 && (extent > full_width || !known) && inner_position >= 1)
    width = full_width;
  // A short innermost loop that gathers (a transform into a blocked layout) is unrolled instead
  // of made a short vector of gathered lanes: the loop above it then reads each input row
  // contiguously and writes the blocks interleaved, which LLVM's loop vectorizer turns into
  // full-width loads and shuffles (an RGB image into NCHW4c uint8: 3.5x faster).
  bool gather_unrolled = false;
  if (!reduces && known && width == extent && extent < full_width && inner_position >= 1 &&
      gathers_along(*block, spatial_iter_index(*block, inner_position)))
    gather_unrolled = sch.try_apply("unroll the gathering loop of " + name,
                                    [&](Schedule& s) { s.unroll(inner); });
  if (gather_unrolled) width = 1;
  if (width > 1) {
    sch.try_apply("vectorize " + name, [&](Schedule& s) {
      LoopRV vec = inner;
      if (!known || width < extent) {
        std::vector<LoopRV> parts = s.split(inner, {nullptr, tir::make_int(width)});
        outer_of_inner = parts[0];
        vec = parts[1];
      }
      if (reduces && !reduce.empty()) {
        std::vector<LoopRV> order = reduce;
        order.push_back(vec);
        s.reorder(order);
        BlockRV init = s.decompose_reduction(s.get_block(name), reduce.front());
        std::vector<LoopRV> init_loops = s.get_loops(init);
        if (!init_loops.empty()) {
          if (s.loop_extent(init_loops.back()) == width) s.vectorize(init_loops.back());
        }
      }
      s.vectorize(vec);
    });
  }

  // Parallel over the leading spatial loops (fused) when there is enough work.
  std::vector<LoopRV> leading(spatial.begin(), spatial.begin() + inner_position);
  if (outer_of_inner && leading.empty()) leading.push_back(*outer_of_inner);
  // Fuse only as many leading loops as needed for a few tasks per thread.
  std::vector<LoopRV> to_fuse;
  if (threads && knobs.parallel_grain > 0)
    to_fuse = parallel_prefix(sch, leading, knobs.parallel_grain).loops;
  // Unroll the serial loop right above the vector (the innermost loop when scalar), in
  // elementwise blocks only: under a reduction that loop is outside the reduction, and
  // unrolling it would copy the whole reduction.
  if (knobs.unroll > 1 && !reduces) {
    std::optional<LoopRV> above;
    if (outer_of_inner &&
        (to_fuse.empty() || to_fuse.back().var.get() != outer_of_inner->var.get()))
      above = outer_of_inner;
    else if (!outer_of_inner && width > 1 && leading.size() > to_fuse.size())
      above = leading.back();
    else if (width == 1)  // scalar: the innermost loop itself
      above = inner;
    if (above)
      sch.try_apply("unroll " + name, [&](Schedule& s) {
        std::vector<LoopRV> parts = s.split(*above, {nullptr, tir::make_int(knobs.unroll)});
        s.unroll(parts[1]);
      });
  }
  if (to_fuse.empty()) return;
  sch.try_apply("parallel " + name, [&](Schedule& s) { fuse_parallel(s, to_fuse); });
}

}  // namespace anvil::autosched
