// The search: resuming from prior records measures nothing twice; the trials budget holds and
// every record names a task; the cost model learns a cost that depends on the knobs and
// proposes the best untried config; each proposer proposes untried points of the space only.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "anvil/testing/workloads.h"
#include "anvil/tune/tune.h"
#include "tune/search.h"

namespace anvil::tune {
namespace {

std::vector<TuneTask> small_resnet_tasks() {
  testing::Workload w = testing::resnet(18, 1, {3, 32, 32}, 10);
  return extract_tasks(w.mod, w.params);
}

TuneOptions quick_options(const std::string& tuner, int trials) {
  TuneOptions options;
  options.tuner = tuner;
  options.trials = trials;
  options.measure.worker_command = {ANVIL_BINARY, "tune-worker"};
  options.measure.repeat = 1;
  options.measure.min_repeat_ms = 1;
  return options;
}

std::string record_point(const driver::TuningRecord& record) {
  std::string text = record.task + ":";
  for (const auto& [name, value] : record.knobs) text += name + "=" + std::to_string(value) + ",";
  return text;
}

TEST(Tuner, ResumingWithPriorRecordsMeasuresNothingTwice) {
  std::vector<TuneTask> tasks = small_resnet_tasks();
  std::set<std::string> keys;
  for (const TuneTask& task : tasks) keys.insert(task.key);

  std::vector<driver::TuningRecord> first;
  TuneCallbacks keep_first;
  keep_first.record = [&](const driver::TuningRecord& r) { first.push_back(r); };
  tune_tasks(tasks, quick_options("random", 24), keep_first);
  ASSERT_EQ(first.size(), 24u);

  TuneOptions resume = quick_options("random", 24);
  resume.prior = first;
  std::vector<driver::TuningRecord> second;
  TuneCallbacks keep_second;
  keep_second.record = [&](const driver::TuningRecord& r) { second.push_back(r); };
  std::vector<TaskOutcome> outcomes = tune_tasks(tasks, resume, keep_second);
  ASSERT_EQ(second.size(), 24u);

  std::set<std::string> measured;
  for (const driver::TuningRecord& record : first) {
    EXPECT_TRUE(keys.count(record.task)) << record.task;
    EXPECT_TRUE(measured.insert(record_point(record)).second) << record_point(record);
  }
  for (const driver::TuningRecord& record : second) {
    EXPECT_TRUE(keys.count(record.task)) << record.task;
    EXPECT_TRUE(measured.insert(record_point(record)).second)
        << "measured again: " << record_point(record);
    EXPECT_EQ(record.error, driver::kRecordOk) << record.name;
  }
  // The outcome counts the prior trials of each task too, and never reports a best slower
  // than the default.
  int trials = 0;
  for (const TaskOutcome& outcome : outcomes) {
    trials += outcome.trials;
    if (outcome.default_ms > 0) {
      EXPECT_LE(outcome.best_ms, outcome.default_ms);
    }
  }
  EXPECT_EQ(trials, 48);
}

TEST(Tuner, EveryProposerProposesUntriedPointsOfTheSpace) {
  std::vector<TuneTask> tasks = small_resnet_tasks();
  size_t t = 0;
  while (t < tasks.size() && tasks[t].space_size() < 50) ++t;
  ASSERT_LT(t, tasks.size());
  for (const char* tuner : {"grid", "random", "ga", "xgb"}) {
    SCOPED_TRACE(tuner);
    TaskState state;
    state.task = &tasks[t];
    state.lower_options = tasks[t].lower_options;
    state.size = tasks[t].space_size();
    std::mt19937_64 rng(3);
    std::unique_ptr<Proposer> proposer = make_proposer(tuner);
    // Feed it made-up costs, batch after batch, until the space is exhausted.
    for (int round = 0; round < 100 && int64_t(state.tried.size()) < state.size; ++round) {
      std::vector<int64_t> points = proposer->propose(state, 8, rng);
      ASSERT_FALSE(points.empty());
      for (int64_t point : points) {
        ASSERT_GE(point, 0);
        ASSERT_LT(point, state.size);
        ASSERT_TRUE(state.tried.insert(point).second) << "proposed twice: " << point;
        EXPECT_EQ(state.point(state.config(point)), point);
        state.samples.emplace_back(point, 1.0 + double(point % 7));
      }
    }
    EXPECT_EQ(int64_t(state.tried.size()), state.size);
    EXPECT_TRUE(proposer->propose(state, 8, rng).empty());
  }
  EXPECT_THROW(make_proposer("annealing"), Error);
}

// A cost that depends on the knobs only through a smooth bowl: after 40 random measurements
// the cost model's first batch holds the best untried config (chance alone: 8 in 80).
TEST(Tuner, TheCostModelProposesTheBestUntriedConfig) {
  std::vector<TuneTask> tasks = small_resnet_tasks();
  size_t t = 0;
  while (t < tasks.size() &&
         !(tasks[t].space.strategy == "x86.conv2d_nchwc" && tasks[t].space_size() >= 100))
    ++t;
  ASSERT_LT(t, tasks.size());
  TaskState state;
  state.task = &tasks[t];
  state.lower_options = tasks[t].lower_options;
  state.size = tasks[t].space_size();
  auto cost = [&](int64_t point) {
    double c = 1;
    for (const auto& [name, value] : state.config(point)) {
      const double x = std::log2(double(value) + 1) - 1.6;
      c += x * x;
    }
    return c;
  };
  int64_t best = 0;
  for (int64_t point = 1; point < state.size; ++point)
    if (cost(point) < cost(best)) best = point;
  std::mt19937_64 rng(5);
  std::unique_ptr<Proposer> random = make_proposer("random");
  while (state.samples.size() < 40) {
    for (int64_t point : random->propose(state, 8, rng)) {
      if (point == best || state.samples.size() >= 40) continue;
      state.tried.insert(point);
      state.samples.emplace_back(point, cost(point));
    }
  }
  std::vector<int64_t> proposed = make_proposer("xgb")->propose(state, 8, rng);
  EXPECT_NE(std::find(proposed.begin(), proposed.end(), best), proposed.end())
      << "best " << best << " not among the proposals";
}

}  // namespace
}  // namespace anvil::tune
