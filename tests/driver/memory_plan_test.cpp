// Storage planning: reuse along chains, best fit, growth, and the entries never shared.
#include "driver/memory_plan.h"

#include <gtest/gtest.h>

#include <set>

#include "anvil/support/error.h"

namespace anvil::driver {
namespace {

PlanEntry fixed(int64_t bytes) { return PlanEntry{bytes, false}; }
PlanEntry temp(int64_t bytes) { return PlanEntry{bytes, true}; }

// input -> a -> b -> c -> d(output): a and b are both live while b is computed, then a's
// storage serves c. Expected ids by hand: input 0, a 1, b 2, c 1 (a's), d 3 (its own).
TEST(MemoryPlan, ChainReusesStorageAfterTheLastReader) {
  std::vector<PlanEntry> entries = {fixed(100), temp(100), temp(100), temp(100), fixed(100)};
  std::vector<PlanStep> steps = {{{0}, {1}}, {{1}, {2}}, {{2}, {3}}, {{3}, {4}}};
  MemoryPlan plan = plan_memory(entries, steps);
  EXPECT_EQ(plan.storage_id, (std::vector<int>{0, 1, 2, 1, 3}));
  EXPECT_EQ(plan.storage_bytes, (std::vector<int64_t>{100, 100, 100, 100}));
  EXPECT_EQ(plan.total_bytes(), 400);
}

// Free after step 2: storage 1 (100 bytes, from a) and storage 2 (50 bytes, from b). A 40-byte
// value takes the smaller one that fits, 2; then a 30-byte value takes 1, the only one left.
TEST(MemoryPlan, BestFitPicksTheSmallestStorageThatFits) {
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
  MemoryPlan plan = plan_memory(entries, steps);
  EXPECT_EQ(plan.storage_id, (std::vector<int>{0, 1, 2, 3, 2, 1, 4}));
  EXPECT_EQ(plan.storage_bytes, (std::vector<int64_t>{8, 100, 50, 8, 8}));
}

// When no free storage is large enough the largest free one grows instead of a new one.
TEST(MemoryPlan, TooSmallStorageGrows) {
  std::vector<PlanEntry> entries = {fixed(4), temp(10), temp(20), temp(100), fixed(4)};
  std::vector<PlanStep> steps = {{{0}, {1}}, {{1}, {2}}, {{2}, {3}}, {{3}, {4}}};
  MemoryPlan plan = plan_memory(entries, steps);
  EXPECT_EQ(plan.storage_id, (std::vector<int>{0, 1, 2, 1, 3}));
  EXPECT_EQ(plan.storage_bytes, (std::vector<int64_t>{4, 100, 20, 4}));
}

// Outputs and inputs keep their storage even after their last reader; a value nobody reads
// is freed right after the step that writes it.
TEST(MemoryPlan, FixedEntriesAreNeverSharedAndUnreadValuesFreeAtOnce) {
  std::vector<PlanEntry> entries = {fixed(16), fixed(16), temp(16), temp(16), fixed(16)};
  std::vector<PlanStep> steps = {
      {{0}, {1, 2}},  // writes an output (1) and a value nobody reads (2)
      {{1}, {3}},     // takes 2's storage
      {{3}, {4}},
  };
  MemoryPlan plan = plan_memory(entries, steps);
  EXPECT_EQ(plan.storage_id, (std::vector<int>{0, 1, 2, 2, 3}));
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

}  // namespace
}  // namespace anvil::driver
