// Measurement in the worker process: candidates that crash, hang, compute a wrong result or do
// not compile are recorded with their error code and cost nothing else (the candidates after
// them in the batch are measured as usual); every config of a small space measures without
// error (each agrees with the heuristic schedule's output, itself checked against the
// reference interpreter elsewhere).
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "anvil/ir/parser.h"
#include "anvil/testing/workloads.h"
#include "anvil/tune/tune.h"

namespace anvil::tune {
namespace {

std::vector<TuneTask> small_resnet_tasks() {
  testing::Workload w = testing::resnet(18, 1, {3, 32, 32}, 10);
  return extract_tasks(w.mod, w.params);
}

MeasureOptions quick_options(double timeout_s = 3) {
  MeasureOptions options;
  options.worker_command = {ANVIL_BINARY, "tune-worker"};
  options.repeat = 2;
  options.min_repeat_ms = 1;
  options.timeout_s = timeout_s;
  return options;
}

// The first task whose anchor has a strategy with knobs of more than one value.
size_t first_tunable(const std::vector<TuneTask>& tasks, const std::string& strategy) {
  for (size_t i = 0; i < tasks.size(); ++i)
    if (tasks[i].space.strategy == strategy && tasks[i].space_size() > 1) return i;
  ADD_FAILURE() << "no task with " << strategy;
  return 0;
}

// A config of the task's space: each knob's `pick`-th value (wrapping).
topi::ScheduleConfig some_config(const TuneTask& task, size_t pick) {
  topi::ScheduleConfig config;
  for (const topi::KnobSpace& knob : task.space.knobs)
    config[knob.name] = knob.values[pick % knob.values.size()];
  return config;
}

TEST(Measure, CrashHangAndWrongResultCostOnlyTheirCandidate) {
  std::vector<TuneTask> tasks = small_resnet_tasks();
  const size_t t = first_tunable(tasks, "x86.conv2d_nchwc");
  Measurer measurer(tasks, quick_options(2));
  std::vector<MeasureInput> batch = {{t, std::nullopt, ""},
                                     {t, some_config(tasks[t], 1), "crash"},
                                     {t, some_config(tasks[t], 1), ""},
                                     {t, some_config(tasks[t], 2), "hang"},
                                     {t, some_config(tasks[t], 0), "wrong"},
                                     {t, some_config(tasks[t], 3), ""}};
  std::vector<MeasureResult> results = measurer.measure(batch);
  ASSERT_EQ(results.size(), batch.size());
  const int expected[] = {driver::kRecordOk,      driver::kRecordRuntimeError, driver::kRecordOk,
                          driver::kRecordTimeout, driver::kRecordWrongResult,  driver::kRecordOk};
  for (size_t i = 0; i < batch.size(); ++i) {
    EXPECT_EQ(results[i].error, expected[i]) << i << ": " << results[i].message;
    EXPECT_EQ(results[i].costs_ms.empty(), expected[i] != driver::kRecordOk) << i;
    for (double cost : results[i].costs_ms) EXPECT_GT(cost, 0) << i;
  }
  EXPECT_NE(results[1].message.find("crashed"), std::string::npos) << results[1].message;
  EXPECT_NE(results[4].message.find("default schedule"), std::string::npos) << results[4].message;
  // One worker at first, a new one after the crash and another after the hang.
  EXPECT_EQ(measurer.workers_started(), 3);

  // The measurer goes on after all that.
  std::vector<MeasureResult> again = measurer.measure({{t, some_config(tasks[t], 4), ""}});
  EXPECT_EQ(again[0].error, driver::kRecordOk) << again[0].message;
}

TEST(Measure, CompilerCrashInABatchIsPinnedOnItsCandidate) {
  std::vector<TuneTask> tasks = small_resnet_tasks();
  const size_t t = first_tunable(tasks, "x86.conv2d_nchwc");
  Measurer measurer(tasks, quick_options());
  std::vector<MeasureInput> batch;
  for (size_t i = 0; i < 4; ++i) batch.push_back({t, some_config(tasks[t], i), ""});
  batch[2].fault = "compile-crash";
  std::vector<MeasureResult> results = measurer.measure(batch);
  for (size_t i = 0; i < batch.size(); ++i)
    EXPECT_EQ(results[i].error, i == 2 ? driver::kRecordCompileError : driver::kRecordOk)
        << i << ": " << results[i].message;
  EXPECT_NE(results[2].message.find("compiler crashed"), std::string::npos) << results[2].message;
}

TEST(Measure, KnobsTheStrategyDeclinesAreACompileError) {
  std::vector<TuneTask> tasks = small_resnet_tasks();
  const size_t t = first_tunable(tasks, "x86.conv2d_nchwc");
  Measurer measurer(tasks, quick_options());
  topi::ScheduleConfig outside = some_config(tasks[t], 0);
  outside["oc_tile"] = 3;  // no channel block count divides by 3 here
  std::vector<MeasureResult> results =
      measurer.measure({{t, outside, ""}, {t, some_config(tasks[t], 1), ""}});
  EXPECT_EQ(results[0].error, driver::kRecordCompileError);
  EXPECT_NE(results[0].message.find("declined"), std::string::npos) << results[0].message;
  EXPECT_EQ(results[1].error, driver::kRecordOk) << results[1].message;
}

// Every config of the smallest space of each strategy in a model (generic, pool, classifier,
// direct and Winograd convolution, where the model has them) compiles and reproduces the default
// schedule's output.
TEST(Measure, EveryConfigOfTheSmallestSpacesIsValid) {
  std::vector<TuneTask> tasks = small_resnet_tasks();
  Measurer measurer(tasks, quick_options());
  std::map<std::string, size_t> smallest;  // by strategy
  for (size_t t = 0; t < tasks.size(); ++t) {
    if (tasks[t].space.knobs.empty()) continue;
    auto [it, inserted] = smallest.try_emplace(tasks[t].space.strategy, t);
    if (!inserted && tasks[t].space_size() < tasks[it->second].space_size()) it->second = t;
  }
  std::vector<MeasureInput> batch;
  std::set<std::string> strategies;
  for (const auto& [strategy, t] : smallest) {
    strategies.insert(strategy);
    for (int64_t point = 0; point < tasks[t].space_size(); ++point) {
      topi::ScheduleConfig config;
      int64_t rest = point;
      for (const topi::KnobSpace& knob : tasks[t].space.knobs) {
        config[knob.name] = knob.values[size_t(rest % int64_t(knob.values.size()))];
        rest /= int64_t(knob.values.size());
      }
      batch.push_back({t, config, ""});
    }
  }
  ASSERT_GE(strategies.size(), 4u);
  ASSERT_GE(batch.size(), 10u);
  std::vector<MeasureResult> results;
  for (size_t start = 0; start < batch.size(); start += 16) {
    std::vector<MeasureInput> part(batch.begin() + start,
                                   batch.begin() + std::min(batch.size(), start + 16));
    for (MeasureResult& result : measurer.measure(part)) results.push_back(std::move(result));
  }
  for (size_t i = 0; i < batch.size(); ++i)
    EXPECT_EQ(results[i].error, driver::kRecordOk)
        << tasks[batch[i].task].name << ": " << results[i].message;
}

// sqrt of the random inputs (half of them negative) is NaN where the default's is: that agrees,
// and a config that computes the same is measured, not reported as a wrong result.
TEST(Measure, NaNsWhereTheDefaultHasThemAgree) {
  ir::IRModule mod = ir::parse_module(R"(def @main(%x: Tensor[(4, 64, 48), float32]) {
    %0 = sqrt(%x);
    add(%0, %x)
  })");
  std::vector<TuneTask> tasks = extract_tasks(mod, {});
  ASSERT_EQ(tasks.size(), 1u);
  ASSERT_EQ(tasks[0].space.strategy, "generic");
  Measurer measurer(tasks, quick_options());
  std::vector<MeasureResult> results =
      measurer.measure({{0, std::nullopt, ""}, {0, some_config(tasks[0], 1), ""}});
  for (const MeasureResult& result : results)
    EXPECT_EQ(result.error, driver::kRecordOk) << result.message;
}

TEST(Measure, AWorkerThatCannotStartIsAnError) {
  std::vector<TuneTask> tasks = small_resnet_tasks();
  MeasureOptions options = quick_options();
  options.worker_command = {"/nonexistent/anvil-worker"};
  Measurer measurer(tasks, options);
  EXPECT_THROW(measurer.measure({{first_tunable(tasks, "x86.conv2d_nchwc"), std::nullopt, ""}}),
               Error);
}

}  // namespace
}  // namespace anvil::tune
