// The auto-scheduler: schedules generated from a group's tensor-IR blocks rather than written
// for an op. Rules read each block's loops and accesses (which var the output is contiguous
// along, which operands each var reuses) and rewrite the function with schedule primitives:
//   - inline: injective producers move into their consumers, except guarded ones (a padding, a
//     spread input) that feed a block with data reuse, which stay a materialized stage;
//   - multi-level tiling: a block with data reuse (a convolution of any rank, a matmul, a
//     transposed convolution over its spread input) gets a register tile of accumulators, one
//     spatial var vectorized along the output's contiguous axis and one unrolled across the
//     operand it reuses, the reduction below the outer tiles, the leading outer tiles parallel
//     and its elementwise consumers placed in the tile;
//   - cross-lane reduction: a reduction along its input's contiguous axis (a row sum, a
//     softmax's max, a group norm's statistics) keeps a vector of partial results per output
//     element (rfactor), steps it with full-width loads and folds the lanes at the end;
//   - parallel-vectorize: every other block gets parallel outer loops, a vectorized innermost
//     loop and an unrolled loop above it (a pooling or a reduction over a leading axis
//     vectorizes its output's contiguous axis).
// Every knob's default comes from a model of the host (vector width and registers, cache sizes
// read from the machine, cores); the knobs form the search space `anvil tune` explores. The
// machinery is target-neutral: a target passes its own HostModel, and a GPU target would add
// its own rules (thread binding, shared-memory staging) beside these.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "anvil/tir/schedule.h"
#include "anvil/topi/knobs.h"

namespace anvil::autosched {

// The machine a schedule is generated for.
struct HostModel {
  int vector_bits = 512;        // the widest vector of the target
  int vector_registers = 32;    // architectural vector registers (16 with AVX2, 32 with AVX-512)
  int64_t l1_bytes = 32 << 10;  // per-core data caches
  int64_t l2_bytes = 1 << 20;
  int64_t l3_bytes = 32 << 20;  // shared
  int cores = 1;

  // This machine's caches and cores (sysfs; the defaults above where it says nothing), for a
  // target with vectors of vector_bits.
  static HostModel for_target(int vector_bits);
};

// The knobs of the parallel-vectorize rule, applied alike to every block it schedules.
struct ParallelVectorizeKnobs {
  int64_t vectorize = 1;        // 0: scalar loops
  int64_t parallel_grain = 64;  // fuse leading loops up to this many iterations; 0: serial
  int64_t unroll = 1;           // unroll the loop above the vector by this factor
};
std::vector<topi::KnobSpace> parallel_vectorize_space();
// Parallel, vectorized and unrolled loops for one block (spatial loops first, then reduction
// loops, as lowering creates them). Steps the schedule refuses are skipped and recorded.
void parallel_vectorize(tir::Schedule& sch, const std::string& block, int vector_bits,
                        const ParallelVectorizeKnobs& knobs);

struct AutoScheduleOptions {
  HostModel host;
  // The function's last num_outputs buffers are the group's outputs (never inlined).
  size_t num_outputs = 1;
  // Knob values (a tuner's or a record's); null: the host model's defaults.
  const topi::ScheduleConfig* config = nullptr;
};

struct AutoScheduleResult {
  // "<block>: <rule and its parameters>", one per block scheduled, in order.
  std::vector<std::string> rules;
  // True when a block with data reuse was tiled.
  bool tiled = false;
  // False when no block has data reuse or reduces (an elementwise group): the function is then
  // left as it came (the caller's plain schedule serves it as well).
  bool scheduled = false;
};

// Schedules the function of sch (unscheduled, as lowering creates it) by the rules above.
// Throws anvil::Error when config does not fit the function's space.
AutoScheduleResult auto_schedule(tir::Schedule& sch, const AutoScheduleOptions& options);

// The knobs of auto_schedule for this function (empty when it would not schedule it).
std::vector<topi::KnobSpace> auto_schedule_space(const tir::Schedule& sch,
                                                 const AutoScheduleOptions& options);

}  // namespace anvil::autosched
