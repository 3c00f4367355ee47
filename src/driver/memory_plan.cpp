// Storage reuse for a static graph, in two forms (memory_plan.h). TVM's graph planner walks the
// steps once and hands each output the best-fitting freed slot, growing one when none is large
// enough: a slot grown for one large value then stays large for the small ones after it, and a
// small value may take a large slot that a later large value needed. Placing the activations
// largest first avoids both. Slots alone still cannot reach the largest live set when the
// values alive together change sizes (the largest of each slot adds up), so anvil's executor
// places the activations at offsets in one arena, where a large value's bytes serve two
// smaller ones later; on the torchvision networks the arena comes within 15% of the largest
// live set, most at it (docs/fusion-and-memory.md).
#include "driver/memory_plan.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <numeric>
#include <set>
#include <utility>

#include "anvil/support/error.h"

namespace anvil::driver {
namespace {

// The steps during which an activation is alive: [first, last].
struct Lifetime {
  int first = 0;
  int last = 0;
};

// A slot of activations: its size (that of its first, largest value) and its values'
// lifetimes, disjoint, by first step.
struct SharedSlot {
  int64_t bytes = 0;
  std::map<int, int> lifetimes;  // first step -> last step

  bool free_during(Lifetime life) const {
    // Only the last lifetime starting at or before life.last can overlap: those before it end
    // before it starts.
    auto it = lifetimes.upper_bound(life.last);
    return it == lifetimes.begin() || std::prev(it)->second < life.first;
  }
};

// For each activation (by index), the slot (by index) it goes to, placed in `order`.
std::vector<int> plan_slots(const std::vector<int>& order, const std::vector<int64_t>& bytes,
                            const std::vector<Lifetime>& lives, std::vector<int64_t>& slot_bytes) {
  std::vector<SharedSlot> slots;
  std::set<std::pair<int64_t, int>> by_size;  // (bytes, slot)
  std::vector<int> slot_of(order.size(), -1);
  for (int a : order) {
    int chosen = -1;
    for (const auto& [size, slot] : by_size)
      if (slots[size_t(slot)].free_during(lives[size_t(a)])) {
        chosen = slot;
        break;
      }
    if (chosen < 0) {
      chosen = int(slots.size());
      slots.push_back(SharedSlot{bytes[size_t(a)], {}});
      by_size.emplace(bytes[size_t(a)], chosen);
    }
    slots[size_t(chosen)].lifetimes.emplace(lives[size_t(a)].first, lives[size_t(a)].last);
    slot_of[size_t(a)] = chosen;
  }
  for (const SharedSlot& slot : slots) slot_bytes.push_back(slot.bytes);
  return slot_of;
}

// Offsets of the activations in one arena, for a given placement order.
class ArenaPlanner {
 public:
  ArenaPlanner(std::vector<int64_t> footprint, const std::vector<Lifetime>& lives)
      : footprint_(std::move(footprint)), alive_with_(lives.size()) {
    // Each pair alive during a common step, found by a sweep over the first steps.
    std::vector<int> by_first(lives.size());
    for (size_t a = 0; a < lives.size(); ++a) by_first[a] = int(a);
    std::stable_sort(by_first.begin(), by_first.end(),
                     [&](int x, int y) { return lives[size_t(x)].first < lives[size_t(y)].first; });
    std::vector<int> open;
    for (int a : by_first) {
      int first = lives[size_t(a)].first;
      std::erase_if(open, [&](int b) { return lives[size_t(b)].last < first; });
      for (int b : open) {
        alive_with_[size_t(a)].push_back(b);
        alive_with_[size_t(b)].push_back(a);
      }
      open.push_back(a);
    }
  }

  // Places the activations in order, each in the smallest gap that fits among those already
  // placed and alive with it, else above them; returns the arena's size.
  int64_t place(const std::vector<int>& order, std::vector<int64_t>& offset) const {
    offset.assign(footprint_.size(), -1);
    int64_t top = 0;
    std::vector<std::pair<int64_t, int64_t>> taken;  // (offset, footprint)
    for (int a : order) {
      taken.clear();
      for (int b : alive_with_[size_t(a)])
        if (offset[size_t(b)] >= 0) taken.emplace_back(offset[size_t(b)], footprint_[size_t(b)]);
      std::sort(taken.begin(), taken.end());
      const int64_t need = footprint_[size_t(a)];
      int64_t end = 0, best = -1, best_gap = 0;
      for (auto [at, size] : taken) {
        int64_t gap = at - end;
        if (gap >= need && (best < 0 || gap < best_gap)) {
          best = end;
          best_gap = gap;
        }
        end = std::max(end, at + size);
      }
      offset[size_t(a)] = best >= 0 ? best : end;
      top = std::max(top, offset[size_t(a)] + need);
    }
    return top;
  }

  int64_t footprint(int a) const { return footprint_[size_t(a)]; }

 private:
  std::vector<int64_t> footprint_;
  std::vector<std::vector<int>> alive_with_;
};

// Rounds of giving the value at the arena's top the first place (memory_plan.h).
constexpr int kArenaRounds = 20;

}  // namespace

MemoryPlan plan_memory(const std::vector<PlanEntry>& entries, const std::vector<PlanStep>& steps,
                       int64_t alignment) {
  ANVIL_ICHECK(alignment >= 1, "memory plan: alignment ", alignment);
  const int num_entries = int(entries.size());
  auto check_entry = [&](int e) {
    ANVIL_ICHECK(e >= 0 && e < num_entries, "memory plan: entry ", e, " out of range (",
                 num_entries, " entries)");
  };

  // Each entry's writing step (-1: none) and last reading step.
  std::vector<int> writer(num_entries, -1), last_reader(num_entries, -1);
  for (int s = 0; s < int(steps.size()); ++s) {
    for (int e : steps[s].writes) {
      check_entry(e);
      ANVIL_ICHECK(writer[e] < 0, "memory plan: entry ", e, " is written twice");
      writer[e] = s;
    }
    for (int e : steps[s].reads) {
      check_entry(e);
      last_reader[e] = std::max(last_reader[e], s);
    }
  }
  for (int s = 0; s < int(steps.size()); ++s)
    for (int e : steps[s].reads)
      ANVIL_ICHECK(writer[e] < s, "memory plan: step ", s, " reads entry ", e,
                   " before any step writes it");

  // The activations, by index: entry, bytes, lifetime.
  std::vector<int> activation_entry;
  std::vector<int64_t> bytes;
  std::vector<Lifetime> lives;
  for (int e = 0; e < num_entries; ++e) {
    if (!entries[e].reusable || writer[e] < 0) continue;
    activation_entry.push_back(e);
    bytes.push_back(entries[e].bytes);
    lives.push_back(Lifetime{writer[e], std::max(writer[e], last_reader[e])});
  }
  const int num_activations = int(activation_entry.size());

  MemoryPlan plan;
  // The largest live set: the bytes entering and leaving per step, summed in order.
  std::vector<int64_t> change(steps.size() + 1, 0);
  for (int a = 0; a < num_activations; ++a) {
    change[size_t(lives[size_t(a)].first)] += bytes[size_t(a)];
    change[size_t(lives[size_t(a)].last) + 1] -= bytes[size_t(a)];
  }
  int64_t live = 0;
  for (int64_t delta : change) {
    live += delta;
    plan.largest_live_set = std::max(plan.largest_live_set, live);
  }

  // Largest first; among equal sizes the earlier entry.
  std::vector<int> order(activation_entry.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int x, int y) { return bytes[size_t(x)] > bytes[size_t(y)]; });

  std::vector<int64_t> slot_bytes;
  std::vector<int> slot_of = plan_slots(order, bytes, lives, slot_bytes);
  for (int64_t size : slot_bytes) plan.slot_activation_bytes += size;

  std::vector<int64_t> footprint;
  for (int64_t size : bytes)
    footprint.push_back(std::max(alignment, (size + alignment - 1) / alignment * alignment));
  ArenaPlanner arena(std::move(footprint), lives);
  std::vector<int64_t> offset, trial_offset;
  int64_t top = arena.place(order, offset);
  std::vector<bool> promoted(size_t(num_activations), false);
  for (int round = 0; round < kArenaRounds && num_activations > 0; ++round) {
    int at_top = *std::find_if(order.begin(), order.end(), [&](int a) {
      return offset[size_t(a)] + arena.footprint(a) == top;
    });
    if (promoted[size_t(at_top)]) break;
    promoted[size_t(at_top)] = true;
    std::vector<int> trial = {at_top};
    std::copy_if(order.begin(), order.end(), std::back_inserter(trial),
                 [&](int a) { return a != at_top; });
    int64_t trial_top = arena.place(trial, trial_offset);
    if (trial_top > top) continue;
    top = trial_top;
    order = std::move(trial);
    std::swap(offset, trial_offset);
  }
  // The arena ends at the last byte a value reaches (its rounding is only spacing).
  for (int a = 0; a < num_activations; ++a)
    plan.activation_bytes = std::max(plan.activation_bytes, offset[size_t(a)] + bytes[size_t(a)]);

  // Slot ids: the entries no step writes (inputs, params) first, then the others, each in
  // entry order; fixed entries one slot each, activations by the slot they were placed in.
  std::vector<int> activation_of(num_entries, -1);
  for (int a = 0; a < num_activations; ++a) activation_of[activation_entry[size_t(a)]] = a;
  plan.storage_id.assign(num_entries, -1);
  plan.arena_offset.assign(num_entries, -1);
  std::vector<int> id_of_slot(slot_bytes.size(), -1);
  std::vector<int> numbering;
  for (int e = 0; e < num_entries; ++e)
    if (writer[e] < 0) numbering.push_back(e);
  for (int e = 0; e < num_entries; ++e)
    if (writer[e] >= 0) numbering.push_back(e);
  for (int e : numbering) {
    int a = activation_of[e];
    if (a < 0) {
      plan.storage_id[e] = int(plan.storage_bytes.size());
      plan.storage_bytes.push_back(entries[e].bytes);
      plan.fixed_bytes += entries[e].bytes;
      continue;
    }
    plan.arena_offset[e] = offset[size_t(a)];
    int& id = id_of_slot[size_t(slot_of[size_t(a)])];
    if (id < 0) {
      id = int(plan.storage_bytes.size());
      plan.storage_bytes.push_back(slot_bytes[size_t(slot_of[size_t(a)])]);
    }
    plan.storage_id[e] = id;
  }
  return plan;
}

}  // namespace anvil::driver
