// Storage planning for a static graph: where each value lives. Knows nothing of the IR; graph
// codegen describes the graph as entries (values) and steps (kernel runs).
#pragma once

#include <cstdint>
#include <vector>

namespace anvil::driver {

// One value of the graph (a node output, TVM's "entry").
struct PlanEntry {
  int64_t bytes = 0;
  // False for graph inputs, params and outputs: they keep a storage of their own for the
  // executor's whole life, so no other value may overwrite them. An entry no step writes is
  // held fixed whatever this says.
  bool reusable = true;
};

// One kernel run, in execution order: the entries it reads and the entries it writes.
struct PlanStep {
  std::vector<int> reads;
  std::vector<int> writes;
};

// Two plans of one graph. The activations are the entries that are reusable and written by a
// step (the intermediate values); the others are fixed. An activation is alive from the step
// that writes it through the last step that reads it (only its writing step when nothing
// reads it); during a step everything it reads and writes is alive, since a kernel's outputs
// may not overwrite its inputs.
//
// Slots (storage_id): every entry has a slot, a buffer as large as its largest entry, as
// TVM's graph JSON says; activations never alive together may share one, a fixed entry has
// one to itself. An executor that reads only the slots (TVM's) allocates each.
//
// Arena (arena_offset): every activation also has a byte offset in one arena; two activations
// alive together never overlap in it. anvil's executor allocates the arena instead of the
// activations' slots: values of different sizes can share bytes there, which slots, each as
// large as its largest value, cannot.
struct MemoryPlan {
  std::vector<int> storage_id;         // per entry
  std::vector<int64_t> storage_bytes;  // per slot: its largest entry
  std::vector<int64_t> arena_offset;   // per entry: a multiple of the alignment; -1 if fixed

  // The arena's size, the bytes the plan spends on activations: the highest byte a value
  // reaches in it.
  int64_t activation_bytes = 0;
  // The most bytes of activations alive during one step, the least any plan for this step
  // order can spend on them: the values alive together all need bytes of their own.
  int64_t largest_live_set = 0;
  // The slots' bytes for activations, what an executor reading only the slots spends.
  int64_t slot_activation_bytes = 0;
  // The slots of fixed entries.
  int64_t fixed_bytes = 0;

  // What anvil's executor allocates: the fixed entries' slots and the arena.
  int64_t total_bytes() const { return fixed_bytes + activation_bytes; }
};

// Plans both. Fixed entries get a slot each. Both plans place the activations largest first
// (TFLite's greedy-by-size): a slot goes to the smallest slot placed so far whose values are
// all dead while the new one is alive, else it is a new slot of its size (so no slot grows);
// an arena offset is the smallest gap between the values placed so far and alive with it that
// fits, else the top of them. The arena plan then gives the value that reaches the arena's top
// the first place and plans again, kept when no larger, for a few rounds (a large value placed
// first at the bottom can leave a gap too small for its neighbours). Each activation takes
// its bytes rounded up to `alignment` (at least one unit) in the arena. Slot ids are numbered
// in order of each slot's first entry, the entries no step writes (inputs, params) first.
// Deterministic: ties go to the earlier entry, then the lower slot. Steps must be in an order where
// every entry is written before it is read; entries out of range are an internal error.
MemoryPlan plan_memory(const std::vector<PlanEntry>& entries, const std::vector<PlanStep>& steps,
                       int64_t alignment = 64);

}  // namespace anvil::driver
