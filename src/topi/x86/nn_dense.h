// The knobs of the x86 schedule of matrix products (nn.contrib_dense_pack, nn.matmul, matmul)
// and their heuristic defaults. The schedule reads every choice it makes from DenseKnobs, so
// that a tuner searches exactly these fields and a test can assert on what the heuristic picks.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "anvil/tir/schedule.h"
#include "anvil/topi/strategy.h"

namespace anvil::topi::x86 {

// What the heuristic looks at: the extents of the product (nullopt: a size variable).
struct DenseShape {
  std::optional<int64_t> rows, cols, depth;
  int64_t batch = 1;            // product of the batch loops' constant extents
  bool symbolic_batch = false;  // a batch loop over a size variable
  int64_t packed_block = 0;     // column block of a packed weight (0: not packed)
};

struct DenseKnobs {
  int64_t lanes = 16;        // columns per vector (a full vector, or half/quarter of one)
  bool column_tail = false;  // columns cut into full vectors and a guarded last one
  int64_t tile_rows = 4;     // rows of the register tile
  int64_t vectors = 1;       // column vectors of the register tile (packed: the block / lanes)
  int64_t k_panel = 0;       // reduction panel kept in cache (0: a symbolic reduction, whole)
};

// The heuristic default for `shape` on vectors of `vector_bits`; throws Error when the
// schedule does not apply (the columns take no vector, an empty loop).
DenseKnobs default_dense_knobs(const DenseShape& shape, int vector_bits);

// The knobs' values a tuner may try (lanes and column_tail follow from the shape): tile_rows
// 1, 2, 3, 4, 6, 8 up to the rows, vectors the divisors of the column vectors up to 8 (the
// packed block's when packed), k_panel the divisors of the reduction among 16 .. 512 (and the
// default; 0 alone for a symbolic reduction).
std::vector<KnobSpace> dense_space(const DenseShape& shape, int vector_bits);

// The schedule of matrix products without transposes (nn.contrib_dense_pack, nn.matmul,
// matmul) and its knobs' space for the group being scheduled.
void schedule_dense(tir::Schedule& sch, const ScheduleArgs& args);
std::vector<KnobSpace> dense_knob_space(const tir::Schedule& sch, const ScheduleArgs& args);

}  // namespace anvil::topi::x86
