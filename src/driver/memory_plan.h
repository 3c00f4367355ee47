// Storage planning for a static graph: which values may share one buffer. Knows nothing of
// the IR; graph codegen describes the graph as entries (values) and steps (kernel runs).
#pragma once

#include <cstdint>
#include <vector>

namespace anvil::driver {

// One value of the graph (a node output, TVM's "entry").
struct PlanEntry {
  int64_t bytes = 0;
  // False for graph inputs, params and outputs: they keep a storage of their own for the
  // executor's whole life, so no other value may overwrite them.
  bool reusable = true;
};

// One kernel run, in execution order: the entries it reads and the entries it writes.
struct PlanStep {
  std::vector<int> reads;
  std::vector<int> writes;
};

struct MemoryPlan {
  std::vector<int> storage_id;         // per entry
  std::vector<int64_t> storage_bytes;  // per storage id: the largest entry it holds

  // Bytes of all storages together: what the executor allocates.
  int64_t total_bytes() const;
};

// Assigns a storage to every entry. Entries no step writes (inputs, params) get theirs
// first, in entry order; then each step's outputs, in order. A reusable output takes the
// free storage of best fit (the smallest that is large enough, else the largest, which
// grows); a storage is freed once the last step reading its entry has run (or right after
// the writing step when nothing reads the entry). Steps must be in an order where every
// entry is written before it is read; entries out of range are an internal error.
MemoryPlan plan_memory(const std::vector<PlanEntry>& entries, const std::vector<PlanStep>& steps);

}  // namespace anvil::driver
