// Storage planning: slots and arena offsets on plans worked by hand, the planned bytes and the
// largest live set, and grids of generated graphs checked against a brute-force reading of
// the same plan.
#include "driver/memory_plan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <random>
#include <string>

#include "anvil/support/error.h"

namespace anvil::driver {
namespace {

PlanEntry fixed(int64_t bytes) { return PlanEntry{bytes, false}; }
PlanEntry temp(int64_t bytes) { return PlanEntry{bytes, true}; }

// Byte-exact arenas, so that the hand-worked numbers need no rounding.
MemoryPlan plan_unaligned(const std::vector<PlanEntry>& entries,
                          const std::vector<PlanStep>& steps) {
  return plan_memory(entries, steps, /*alignment=*/1);
}

// ---------------------------------------------------------------- plans worked by hand

// input -> a -> b -> c -> d(output): a and b are both alive while b is computed, then a's
// slot serves c. Expected ids by hand: input 0, a 1, b 2, c 1 (a's), d 3 (its own).
// Alive: a at step 0, a+b at 1, b+c at 2, c at 3: 200 bytes at most, what both plans spend.
TEST(MemoryPlan, ChainReusesStorageAfterTheLastReader) {
  std::vector<PlanEntry> entries = {fixed(100), temp(100), temp(100), temp(100), fixed(100)};
  std::vector<PlanStep> steps = {{{0}, {1}}, {{1}, {2}}, {{2}, {3}}, {{3}, {4}}};
  MemoryPlan plan = plan_unaligned(entries, steps);
  EXPECT_EQ(plan.storage_id, (std::vector<int>{0, 1, 2, 1, 3}));
  EXPECT_EQ(plan.storage_bytes, (std::vector<int64_t>{100, 100, 100, 100}));
  EXPECT_EQ(plan.slot_activation_bytes, 200);
  EXPECT_EQ(plan.largest_live_set, 200);
  EXPECT_EQ(plan.activation_bytes, 200);
  EXPECT_EQ(plan.fixed_bytes, 200);
  EXPECT_EQ(plan.total_bytes(), 400);
  EXPECT_EQ(plan.arena_offset[0], -1);
  EXPECT_EQ(plan.arena_offset[4], -1);
  EXPECT_NE(plan.arena_offset[1], plan.arena_offset[2]);
}

// Lifetimes (steps): a [0, 2], b [1, 2], c [2, 4], d [3, 4], e [4, 5]. Slots, largest first:
// a new (100), b new (50, a is alive), d into b's (free after 2; the smaller of the two), e
// into a's (d holds b's at 4), c new (8; both others are taken at 2).
// Alive by step: 100, 150, 158 (a, b, c), 48, 78, 30.
TEST(MemoryPlan, LargestFirstFillsTheSmallestSlotThatIsFree) {
  std::vector<PlanEntry> entries = {fixed(8), temp(100), temp(50), temp(8),
                                    temp(40), temp(30),  fixed(8)};
  std::vector<PlanStep> steps = {
      {{0}, {1}},     // a = f(input)
      {{0}, {2}},     // b = g(input)
      {{1, 2}, {3}},  // c = h(a, b); a and b die here
      {{3}, {4}},     // d (40 bytes)
      {{3, 4}, {5}},  // e (30 bytes); c and d die here
      {{5}, {6}},     // output
  };
  MemoryPlan plan = plan_unaligned(entries, steps);
  EXPECT_EQ(plan.storage_id, (std::vector<int>{0, 1, 2, 3, 2, 1, 4}));
  EXPECT_EQ(plan.storage_bytes, (std::vector<int64_t>{8, 100, 50, 8, 8}));
  EXPECT_EQ(plan.slot_activation_bytes, 158);
  EXPECT_EQ(plan.largest_live_set, 158);
  EXPECT_EQ(plan.activation_bytes, 158);
}

// A small value written while a large slot is free must not take it when a large value needs
// it later. Lifetimes: a (100) [0, 1], b (4) [1, 2], x (10) [2, 4], y (100) [3, 4]. Handing
// out freed slots in step order puts x into a's and then has to grow b's to 100 for y (200
// bytes); largest first gives y a's, x and b small slots of their own: 114. Alive by step:
// 100, 104, 14, 110, 110; the arena reaches 110 by putting b below a, so that x fits above y.
TEST(MemoryPlan, SmallValueDoesNotTakeTheSlotALargeOneNeedsLater) {
  std::vector<PlanEntry> entries = {fixed(4), temp(100), temp(4), temp(10), temp(100), fixed(4)};
  std::vector<PlanStep> steps = {
      {{0}, {1}}, {{1}, {2}}, {{2}, {3}}, {{3}, {4}}, {{3, 4}, {5}},
  };
  MemoryPlan plan = plan_unaligned(entries, steps);
  EXPECT_EQ(plan.storage_id, (std::vector<int>{0, 1, 2, 3, 1, 4}));
  EXPECT_EQ(plan.storage_bytes, (std::vector<int64_t>{4, 100, 4, 10, 4}));
  EXPECT_EQ(plan.slot_activation_bytes, 114);
  EXPECT_EQ(plan.largest_live_set, 110);
  EXPECT_EQ(plan.activation_bytes, 110);
  EXPECT_EQ(plan.arena_offset, (std::vector<int64_t>{-1, 4, 0, 100, 0, -1}));
}

// Slots cannot reach the live set when the values alive together change sizes. A (100) and B
// (1) are alive at steps 0-1, t (1) at 1-2, C (50) and D (50) at 2-3: the live set is 102 (A,
// B and t at step 1). t is alive beside every other value, so it needs a slot of its own; A
// and B are alive together, as are C and D, so of the two other slots one holds A and the
// other C or D: 151 bytes at least. In the arena C and D share A's bytes: 102.
TEST(MemoryPlan, TheArenaReachesTheLiveSetWhereSlotsCannot) {
  std::vector<PlanEntry> entries = {fixed(4), temp(100), temp(1), temp(1),
                                    temp(50), temp(50),  fixed(4)};
  std::vector<PlanStep> steps = {
      {{0}, {1, 2}},
      {{1, 2}, {3}},
      {{3}, {4, 5}},
      {{4, 5}, {6}},
  };
  MemoryPlan plan = plan_unaligned(entries, steps);
  EXPECT_EQ(plan.largest_live_set, 102);
  EXPECT_EQ(plan.slot_activation_bytes, 151);
  EXPECT_EQ(plan.storage_id, (std::vector<int>{0, 1, 2, 3, 1, 2, 4}));
  EXPECT_EQ(plan.activation_bytes, 102);
  EXPECT_EQ(plan.arena_offset, (std::vector<int64_t>{-1, 0, 100, 101, 0, 50, -1}));
}

// A chain of 800, 800, 400 and 1200 bytes, each alive with the next (live set 1600). Placed
// largest first, the 1200 takes the bottom, the two 800s stack beside it and the 400, alive
// with the second 800 and the 1200, lands on top: 2000. Given the first place, the 400 sits
// at the bottom with the 1200 above it and the 800s stacked beside: 1600.
TEST(MemoryPlan, TheValueAtTheTopIsPlacedFirstWhenThatShrinksTheArena) {
  std::vector<PlanEntry> entries = {fixed(4),  temp(800),  temp(800),
                                    temp(400), temp(1200), fixed(4)};
  std::vector<PlanStep> steps = {{{0}, {1}}, {{1}, {2}}, {{2}, {3}}, {{3}, {4}}, {{4}, {5}}};
  MemoryPlan plan = plan_unaligned(entries, steps);
  EXPECT_EQ(plan.largest_live_set, 1600);
  EXPECT_EQ(plan.activation_bytes, 1600);
  EXPECT_EQ(plan.arena_offset, (std::vector<int64_t>{-1, 0, 800, 0, 400, -1}));
}

// Outputs and inputs keep their slot even after their last reader; a value nobody reads is
// alive only during the step that writes it, so the next value may take its bytes.
TEST(MemoryPlan, FixedEntriesAreNeverSharedAndUnreadValuesFreeAtOnce) {
  std::vector<PlanEntry> entries = {fixed(16), fixed(16), temp(16), temp(16), fixed(16)};
  std::vector<PlanStep> steps = {
      {{0}, {1, 2}},  // writes an output (1) and a value nobody reads (2)
      {{1}, {3}},     // takes 2's slot
      {{3}, {4}},
  };
  MemoryPlan plan = plan_unaligned(entries, steps);
  EXPECT_EQ(plan.storage_id, (std::vector<int>{0, 1, 2, 2, 3}));
  EXPECT_EQ(plan.arena_offset, (std::vector<int64_t>{-1, -1, 0, 0, -1}));
  EXPECT_EQ(plan.activation_bytes, 16);
  EXPECT_EQ(plan.largest_live_set, 16);
}

// The live set counts a step's inputs and outputs together, leaves out inputs, params and
// outputs, and follows a value to its last reader even past steps that do not read it.
// Steps: 0 writes a (10) and b (20) from the input; 1 writes c (40) from a; 2 writes d (5)
// from c and b; 3 writes the output from d and a.
// Alive: step 0 a+b = 30; 1 a+b+c = 70; 2 a+b+c+d = 75; 3 a+d = 15.
TEST(MemoryPlan, LargestLiveSetByHand) {
  std::vector<PlanEntry> entries = {fixed(1000), temp(10), temp(20),
                                    temp(40),    temp(5),  fixed(1000)};
  std::vector<PlanStep> steps = {
      {{0}, {1, 2}},
      {{1}, {3}},
      {{3, 2}, {4}},
      {{4, 1}, {5}},
  };
  MemoryPlan plan = plan_unaligned(entries, steps);
  EXPECT_EQ(plan.largest_live_set, 75);
  // All four are alive at step 2, so none can share.
  EXPECT_EQ(plan.slot_activation_bytes, 75);
  EXPECT_EQ(plan.activation_bytes, 75);
  EXPECT_EQ(plan.total_bytes(), 2075);
}

// Each value takes its bytes rounded up to the alignment in the arena, at least one unit, so
// every offset is a multiple of it. Three values alive together, of 10, 100 and 0 bytes, take
// 64, 128 and 64; the arena ends where the highest value does.
TEST(MemoryPlan, ArenaOffsetsAreAligned) {
  std::vector<PlanEntry> entries = {fixed(4), temp(10), temp(100), temp(0), fixed(4)};
  std::vector<PlanStep> steps = {{{0}, {1, 2, 3}}, {{1, 2, 3}, {4}}};
  MemoryPlan plan = plan_memory(entries, steps, 64);
  EXPECT_EQ(plan.largest_live_set, 110);
  std::vector<std::pair<int64_t, int64_t>> taken;  // (offset, rounded bytes)
  int64_t top = 0;
  for (int e : {1, 2, 3}) {
    int64_t at = plan.arena_offset[size_t(e)];
    EXPECT_EQ(at % 64, 0) << e;
    taken.emplace_back(at, std::max<int64_t>(64, (entries[size_t(e)].bytes + 63) / 64 * 64));
    top = std::max(top, at + entries[size_t(e)].bytes);
  }
  std::sort(taken.begin(), taken.end());
  for (size_t i = 1; i < taken.size(); ++i)
    EXPECT_LE(taken[i - 1].first + taken[i - 1].second, taken[i].first);
  EXPECT_EQ(plan.activation_bytes, top);
  EXPECT_GE(plan.activation_bytes, 64 + 128);
}

TEST(MemoryPlan, ReadingAValueBeforeItIsWrittenIsAnInternalError) {
  std::vector<PlanEntry> entries = {fixed(4), temp(4), temp(4)};
  std::vector<PlanStep> steps = {{{2}, {1}}, {{1}, {2}}};
  try {
    plan_memory(entries, steps);
    FAIL() << "no error";
  } catch (const InternalError& e) {
    EXPECT_NE(std::string(e.what()).find("step 0 reads entry 2 before any step writes it"),
              std::string::npos)
        << e.what();
  }
}

// ---------------------------------------------------------------- generated graphs

// The figures of a plan read by brute force from the entries, steps and the plan's slots and
// offsets alone.
struct Reading {
  int64_t largest_live_set = 0;
  int64_t slot_activation_bytes = 0;
  int64_t arena_top = 0;  // the highest byte an activation reaches in the arena
  std::string problem;    // empty when both plans are safe and the slot sizes are right
};

Reading read_plan(const std::vector<PlanEntry>& entries, const std::vector<PlanStep>& steps,
                  const MemoryPlan& plan, int64_t alignment) {
  const int n = int(entries.size());
  std::vector<int> born(n, -1), dies(n, -1);
  for (int s = 0; s < int(steps.size()); ++s) {
    for (int e : steps[s].writes) born[e] = dies[e] = s;
    for (int e : steps[s].reads) dies[e] = std::max(dies[e], s);
  }
  auto activation = [&](int e) { return entries[e].reusable && born[e] >= 0; };
  auto together = [&](int a, int b) { return !(dies[a] < born[b] || dies[b] < born[a]); };
  Reading reading;
  for (int s = 0; s < int(steps.size()); ++s) {
    int64_t live = 0;
    for (int e = 0; e < n; ++e)
      if (activation(e) && born[e] <= s && s <= dies[e]) live += entries[e].bytes;
    reading.largest_live_set = std::max(reading.largest_live_set, live);
  }
  std::map<int, std::vector<int>> members;
  for (int e = 0; e < n; ++e) members[plan.storage_id.at(size_t(e))].push_back(e);
  if (members.size() != plan.storage_bytes.size()) reading.problem = "unused slot ids";
  for (const auto& [id, held] : members) {
    int64_t largest = 0;
    bool any_fixed = false;
    for (int e : held) {
      largest = std::max(largest, entries[e].bytes);
      any_fixed |= !activation(e);
    }
    if (plan.storage_bytes.at(size_t(id)) != largest)
      reading.problem = "slot " + std::to_string(id) + " is not its largest entry's size";
    if (any_fixed && held.size() > 1)
      reading.problem = "slot " + std::to_string(id) + " shares a fixed entry";
    if (!any_fixed) reading.slot_activation_bytes += largest;
    for (size_t i = 0; i < held.size(); ++i)
      for (size_t j = i + 1; j < held.size(); ++j)
        if (together(held[i], held[j]))
          reading.problem = "entries " + std::to_string(held[i]) + " and " +
                            std::to_string(held[j]) + " overlap in slot " + std::to_string(id);
  }
  for (int a = 0; a < n; ++a) {
    int64_t at = plan.arena_offset.at(size_t(a));
    if (!activation(a)) {
      if (at != -1) reading.problem = "fixed entry " + std::to_string(a) + " is in the arena";
      continue;
    }
    if (at < 0 || at % alignment != 0)
      reading.problem = "entry " + std::to_string(a) + " at arena offset " + std::to_string(at);
    reading.arena_top = std::max(reading.arena_top, at + entries[a].bytes);
    for (int b = a + 1; b < n; ++b) {
      int64_t other = plan.arena_offset.at(size_t(b));
      if (activation(b) && together(a, b) && at < other + entries[b].bytes &&
          other < at + entries[a].bytes)
        reading.problem = "entries " + std::to_string(a) + " and " + std::to_string(b) +
                          " overlap in the arena while both are alive";
    }
  }
  return reading;
}

struct GeneratedGraph {
  std::vector<PlanEntry> entries;
  std::vector<PlanStep> steps;
};

class Generator {
 public:
  explicit Generator(unsigned seed) : rng_(seed) {}
  int uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  bool chance(double p) { return std::bernoulli_distribution(p)(rng_); }
  template <typename T>
  T pick(std::initializer_list<T> choices) {
    return choices.begin()[uniform(0, int(choices.size()) - 1)];
  }

  int add(int64_t bytes, bool reusable) {
    graph.entries.push_back(PlanEntry{bytes, reusable});
    return int(graph.entries.size()) - 1;
  }
  // A step reading `reads` and writing one new value of `bytes`.
  int step(std::vector<int> reads, int64_t bytes) {
    int out = add(bytes, true);
    graph.steps.push_back(PlanStep{std::move(reads), {out}});
    return out;
  }

  GeneratedGraph graph;

 private:
  std::mt19937 rng_;
};

// A convolutional network drawn from the families torchvision has: plain chains (VGG), basic
// residual blocks (ResNet-18), bottlenecks with a 4x expansion (ResNet-50), inverted residuals
// with a 3-6x expansion (MobileNet), dense blocks whose concatenation grows by a fixed rate
// each layer (DenseNet), or a mix by stage. Stages quarter the feature map and double the
// channels; values are float32 feature maps of the sizes the blocks produce.
GeneratedGraph generate_network(unsigned seed) {
  Generator g(seed);
  enum Family { kPlain, kBasic, kBottleneck, kInverted, kDense, kMixed };
  Family family = Family(g.uniform(0, 5));
  int64_t map = g.pick<int64_t>({16, 24, 32, 48, 56});
  map *= map;
  int64_t c = g.pick<int64_t>({8, 16, 24, 32, 64});
  const int stages = g.uniform(1, 4);
  const int64_t expansion = g.pick<int64_t>({3, 4, 6});
  int x = g.add(4 * 3 * map * 16, false);  // the image, before the stem's stride 4
  x = g.step({x}, 4 * map * c);
  for (int stage = 0; stage < stages; ++stage) {
    if (stage > 0) {
      map /= 4;
      c *= 2;
    }
    Family kind = family == kMixed ? Family(g.uniform(0, 4)) : family;
    if (kind == kDense) {
      int64_t growth = std::max<int64_t>(4, c / 2), channels = c;
      int concat = g.step({x}, 4 * map * c);
      for (int layer = g.uniform(2, 8); layer > 0; --layer) {
        int bottleneck = g.step({concat}, 4 * map * 4 * growth);
        int fresh = g.step({bottleneck}, 4 * map * growth);
        channels += growth;
        concat = g.step({concat, fresh}, 4 * map * channels);
      }
      x = g.step({concat}, 4 * map * c);  // transition
      continue;
    }
    for (int block = g.uniform(1, 4), b = 0; b < block; ++b) {
      if (kind == kPlain) {
        x = g.step({x}, 4 * map * c);
      } else if (kind == kBasic) {
        int a = g.step({x}, 4 * map * c);
        int shortcut = b == 0 && stage > 0 ? g.step({x}, 4 * map * c) : x;
        x = g.step({a, shortcut}, 4 * map * c);
      } else if (kind == kBottleneck) {
        int a = g.step({x}, 4 * map * c);
        int m = g.step({a}, 4 * map * c);
        int shortcut = b == 0 ? g.step({x}, 4 * map * 4 * c) : x;
        x = g.step({m, shortcut}, 4 * map * 4 * c);
      } else {
        int a = g.step({x}, 4 * map * c * expansion);
        int m = g.step({a}, 4 * map * c * expansion);
        x = b == 0 ? g.step({m}, 4 * map * c) : g.step({m, x}, 4 * map * c);
      }
    }
  }
  int logits = g.step({x}, 4 * 10);
  g.graph.entries[size_t(logits)].reusable = false;  // the output
  return std::move(g.graph);
}

// A random graph: each step reads the value before it and now and then one a few steps back
// or several since the last stage change, some steps write two values (one of them sometimes
// unread), and every value has a size drawn from [1, 10^6].
GeneratedGraph generate_dag(unsigned seed) {
  Generator g(seed);
  const int num_steps = g.uniform(8, 150);
  const int num_stages = g.uniform(1, 5);
  std::vector<int> values = {g.add(4096, false)};
  std::vector<int> stage_start = {0};
  for (int s = 0; s < num_steps; ++s) {
    int stage = std::min(num_stages - 1, s * num_stages / num_steps);
    if (int(stage_start.size()) <= stage) stage_start.push_back(int(values.size()) - 1);
    PlanStep step;
    int back = int(values.size()) - 1;
    step.reads.push_back(values[size_t(back)]);
    if (back > 0 && g.chance(0.3))
      step.reads.push_back(values[size_t(g.uniform(std::max(0, back - 6), back - 1))]);
    if (g.chance(0.1))
      for (int k = stage_start[size_t(stage)]; k < back; ++k)
        if (g.chance(0.5)) step.reads.push_back(values[size_t(k)]);
    std::sort(step.reads.begin(), step.reads.end());
    step.reads.erase(std::unique(step.reads.begin(), step.reads.end()), step.reads.end());
    int outputs = g.chance(0.1) ? 2 : 1;
    for (int o = 0; o < outputs; ++o) {
      int e = g.add(g.uniform(1, 1000000), s < num_steps - 1);
      step.writes.push_back(e);
      if (o == 0 || g.chance(0.5)) values.push_back(e);
    }
    g.graph.steps.push_back(std::move(step));
  }
  return std::move(g.graph);
}

// Both plans are safe, the figures are those a brute-force reading finds, and the arena
// spends at least the largest live set and at most 1.2x it.
void check_grid(GeneratedGraph (*generate)(unsigned), int64_t alignment, const char* what) {
  double worst = 0;
  unsigned worst_seed = 0;
  for (unsigned seed = 0; seed < 200; ++seed) {
    GeneratedGraph g = generate(seed);
    MemoryPlan plan = plan_memory(g.entries, g.steps, alignment);
    Reading reading = read_plan(g.entries, g.steps, plan, alignment);
    ASSERT_EQ(reading.problem, "") << "seed " << seed;
    ASSERT_EQ(plan.largest_live_set, reading.largest_live_set) << "seed " << seed;
    ASSERT_EQ(plan.slot_activation_bytes, reading.slot_activation_bytes) << "seed " << seed;
    ASSERT_EQ(plan.activation_bytes, reading.arena_top) << "seed " << seed;
    ASSERT_GT(reading.largest_live_set, 0) << "seed " << seed;
    double ratio = double(plan.activation_bytes) / double(reading.largest_live_set);
    EXPECT_GE(ratio, 1.0) << "seed " << seed;
    EXPECT_LE(ratio, 1.2) << "seed " << seed;
    if (ratio > worst) {
      worst = ratio;
      worst_seed = seed;
    }
  }
  std::printf("%s: worst arena / largest live set over 200 seeds %.3f (seed %u)\n", what, worst,
              worst_seed);
}

TEST(MemoryPlan, GeneratedNetworksStayWithinTwentyPercentOfTheLiveSet) {
  check_grid(generate_network, 64, "networks");
}

TEST(MemoryPlan, GeneratedGraphsOfAnySizesStayWithinTwentyPercentOfTheLiveSet) {
  check_grid(generate_dag, 1, "random graphs");
}

// The same graph gives the same plan: ids and offsets depend on nothing but the graph.
TEST(MemoryPlan, IsDeterministic) {
  GeneratedGraph g = generate_network(7);
  MemoryPlan a = plan_memory(g.entries, g.steps), b = plan_memory(g.entries, g.steps);
  EXPECT_EQ(a.storage_id, b.storage_id);
  EXPECT_EQ(a.storage_bytes, b.storage_bytes);
  EXPECT_EQ(a.arena_offset, b.arena_offset);
}

}  // namespace
}  // namespace anvil::driver
