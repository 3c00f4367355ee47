// The task scheduler: spends measurements where the model's time is. Each tunable task first
// gets its heuristic schedule measured (the baseline every record is compared with) and one
// batch of proposals, heaviest tasks first; after that the next batch goes to the task with
// the largest expected saving, calls x best time x the relative gain its last batch brought
// (optimistically at least 1 / (batches + 1), so that a task that has not moved lately still
// gets a turn), in the spirit of Ansor's gradient scheme. A task leaves when its space is
// exhausted or, with early stopping, after that many trials without a better config.
#include <chrono>
#include <cmath>
#include <ctime>
#include <map>

#include "anvil/support/error.h"
#include "anvil/tune/tune.h"
#include "tune/search.h"

namespace anvil::tune {
namespace {

double gflops(const TuneTask& task, double ms) {
  return ms > 0 && std::isfinite(ms) ? double(task.flops) / (ms * 1e6) : 0.0;
}

driver::TuningRecord make_record(const TuneTask& task, const std::string& target,
                                 const topi::ScheduleConfig& knobs, const MeasureResult& result) {
  driver::TuningRecord record;
  record.task = task.key;
  record.name = task.name;
  record.strategy = task.space.strategy;
  record.target = target;
  record.knobs = knobs;
  record.costs_ms = result.costs_ms;
  record.error = result.error;
  record.timestamp = int64_t(std::time(nullptr));
  return record;
}

// Takes a measurement (new or prior) into the task's state; true when it is a new best.
bool account(TaskState& state, const std::optional<topi::ScheduleConfig>& knobs, int error,
             double mean_ms) {
  ++state.trials;
  const double cost =
      error == driver::kRecordOk ? mean_ms : std::numeric_limits<double>::infinity();
  if (error != driver::kRecordOk) ++state.errors;
  int64_t point = -1;
  if (!knobs || knobs->empty()) {
    state.default_measured = true;
    if (std::isfinite(cost)) state.default_ms = cost;
  } else {
    point = state.point(*knobs);
    if (point < 0) return false;
    state.tried.insert(point);
    state.samples.emplace_back(point, cost);
  }
  if (cost < state.best_ms) {
    state.best_ms = cost;
    state.best = point;
    state.since_best = 0;
    return true;
  }
  ++state.since_best;
  return false;
}

}  // namespace

std::vector<TaskOutcome> tune_tasks(const std::vector<TuneTask>& tasks, const TuneOptions& options,
                                    const TuneCallbacks& callbacks) {
  std::unique_ptr<Proposer> proposer = make_proposer(options.tuner);
  std::mt19937_64 rng(options.seed);
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };

  std::vector<TaskState> states;
  for (size_t i = 0; i < tasks.size(); ++i) {
    if (tasks[i].space.strategy.empty() || tasks[i].space.knobs.empty()) continue;
    TaskState state;
    state.index = i;
    state.task = &tasks[i];
    state.lower_options = tasks[i].lower_options;
    state.lower_options.config_for = nullptr;
    state.size = tasks[i].space_size();
    states.push_back(std::move(state));
  }
  std::map<std::string, TaskState*> by_key;
  for (TaskState& state : states) by_key[state.task->key] = &state;
  for (const driver::TuningRecord& record : options.prior) {
    auto it = by_key.find(record.task);
    if (it == by_key.end() || record.target != options.measure.target ||
        record.strategy != it->second->task->space.strategy)
      continue;
    account(*it->second, record.knobs, record.error, record.mean_ms());
  }
  // Heaviest first for the first round.
  std::stable_sort(states.begin(), states.end(), [](const TaskState& a, const TaskState& b) {
    return double(a.task->flops) * a.task->calls > double(b.task->flops) * b.task->calls;
  });
  for (TaskState& state : states)
    state.done = state.default_measured && int64_t(state.tried.size()) >= state.size;

  Measurer measurer(tasks, options.measure);
  int trials = 0;
  const int budget = options.trials > 0 ? options.trials : std::numeric_limits<int>::max();
  while (trials < budget && (options.total_time_s <= 0 || elapsed() < options.total_time_s)) {
    // The task to spend the next batch on.
    TaskState* next = nullptr;
    for (TaskState& state : states)
      if (!state.done && state.batches == 0) {
        next = &state;
        break;
      }
    if (!next) {
      double best_priority = -1;
      for (TaskState& state : states) {
        if (state.done) continue;
        const double best = std::isfinite(state.best_ms) ? state.best_ms : state.default_ms;
        const double priority = state.task->calls * std::max(best, 1e-6) *
                                std::max(state.gain_last, 1.0 / (state.batches + 1));
        if (priority > best_priority) {
          best_priority = priority;
          next = &state;
        }
      }
    }
    if (!next) break;
    TaskState& state = *next;

    const int room = std::min(options.batch_size, budget - trials);
    std::vector<MeasureInput> batch;
    if (!state.default_measured) batch.push_back({state.index, std::nullopt, ""});
    for (int64_t point : proposer->propose(state, room - int(batch.size()), rng)) {
      batch.push_back({state.index, state.config(point), ""});
      state.tried.insert(point);
    }
    if (batch.empty()) {
      state.done = true;
      continue;
    }
    const double best_before = state.best_ms;
    const std::vector<MeasureResult> results = measurer.measure(batch);
    double batch_best = std::numeric_limits<double>::infinity();
    for (size_t i = 0; i < batch.size(); ++i) {
      const MeasureResult& result = results[i];
      ++trials;
      account(state, batch[i].knobs, result.error, result.mean_ms());
      if (result.error == driver::kRecordOk) batch_best = std::min(batch_best, result.mean_ms());
      if (callbacks.record)
        callbacks.record(make_record(*state.task, options.measure.target,
                                     batch[i].knobs.value_or(topi::ScheduleConfig{}), result));
    }
    ++state.batches;
    state.gain_last = std::isfinite(best_before) && std::isfinite(state.best_ms)
                          ? (best_before - state.best_ms) / best_before
                          : 1.0;
    if (int64_t(state.tried.size()) >= state.size) state.done = true;
    if (options.early_stopping > 0 && state.since_best >= options.early_stopping) state.done = true;
    if (callbacks.progress) {
      TuneProgress progress;
      progress.task = state.index;
      progress.task_trials = state.trials;
      progress.task_space = state.size + 1;  // the default schedule counts as a trial
      progress.current_gflops = gflops(*state.task, batch_best);
      progress.best_gflops = gflops(*state.task, state.best_ms);
      progress.trials = trials;
      progress.elapsed_s = elapsed();
      progress.task_done = state.done;
      callbacks.progress(progress);
    }
  }

  std::vector<TaskOutcome> outcomes(tasks.size());
  for (const TaskState& state : states) {
    TaskOutcome& outcome = outcomes[state.index];
    outcome.default_ms = state.default_ms;
    outcome.best_ms = std::isfinite(state.best_ms) ? state.best_ms : 0;
    if (state.best >= 0) outcome.best_knobs = state.config(state.best);
    outcome.trials = state.trials;
    outcome.errors = state.errors;
  }
  return outcomes;
}

}  // namespace anvil::tune
