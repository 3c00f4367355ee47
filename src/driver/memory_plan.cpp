// Greedy storage reuse in execution order, as TVM's graph memory planner does for static
// graphs: liveness by last reader, best-fit choice among the freed storages.
#include "driver/memory_plan.h"

#include <algorithm>
#include <iterator>
#include <numeric>
#include <set>
#include <utility>

#include "anvil/support/error.h"

namespace anvil::driver {

int64_t MemoryPlan::total_bytes() const {
  return std::accumulate(storage_bytes.begin(), storage_bytes.end(), int64_t(0));
}

MemoryPlan plan_memory(const std::vector<PlanEntry>& entries, const std::vector<PlanStep>& steps) {
  const int num_entries = int(entries.size());
  auto check_entry = [&](int e) {
    ANVIL_ICHECK(e >= 0 && e < num_entries, "memory plan: entry ", e, " out of range (",
                 num_entries, " entries)");
  };

  // The last step reading each entry, and whether a step writes it.
  std::vector<int> last_reader(num_entries, -1);
  std::vector<bool> written(num_entries, false);
  for (int s = 0; s < int(steps.size()); ++s) {
    for (int e : steps[s].reads) {
      check_entry(e);
      last_reader[e] = s;
    }
    for (int e : steps[s].writes) {
      check_entry(e);
      ANVIL_ICHECK(!written[e], "memory plan: entry ", e, " is written twice");
      written[e] = true;
    }
  }

  MemoryPlan plan;
  plan.storage_id.assign(num_entries, -1);
  auto fresh = [&](int e) {
    plan.storage_id[e] = int(plan.storage_bytes.size());
    plan.storage_bytes.push_back(entries[e].bytes);
  };
  for (int e = 0; e < num_entries; ++e)
    if (!written[e]) fresh(e);

  // Free storages as (size, id): among equal sizes the lowest id is taken first.
  std::set<std::pair<int64_t, int>> free_by_size;
  auto take_free = [&](int e) -> bool {
    if (free_by_size.empty()) return false;
    auto fit = free_by_size.lower_bound({entries[e].bytes, -1});
    if (fit == free_by_size.end()) fit = std::prev(free_by_size.end());  // grow the largest
    int id = fit->second;
    free_by_size.erase(fit);
    plan.storage_id[e] = id;
    plan.storage_bytes[id] = std::max(plan.storage_bytes[id], entries[e].bytes);
    return true;
  };
  auto release = [&](int e) {
    if (!entries[e].reusable) return;
    int id = plan.storage_id[e];
    free_by_size.emplace(plan.storage_bytes[id], id);
  };

  for (int s = 0; s < int(steps.size()); ++s) {
    for (int e : steps[s].reads)
      ANVIL_ICHECK(plan.storage_id[e] >= 0, "memory plan: step ", s, " reads entry ", e,
                   " before any step writes it");
    for (int e : steps[s].writes)
      if (!entries[e].reusable || !take_free(e)) fresh(e);
    // Inputs are released only after the step, so no output overwrites what it still reads.
    std::vector<int> done;
    for (int e : steps[s].reads)
      if (last_reader[e] == s) done.push_back(e);
    for (int e : steps[s].writes)
      if (last_reader[e] < 0) done.push_back(e);  // nobody reads it: free at once
    std::sort(done.begin(), done.end());
    done.erase(std::unique(done.begin(), done.end()), done.end());
    for (int e : done) release(e);
  }
  return plan;
}

}  // namespace anvil::driver
