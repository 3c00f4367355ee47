// The tuning run shared by `anvil tune` and anvil.tune: prior records in, tasks out, records
// written as they are measured. What a caller prints stays with the caller.
#include <chrono>
#include <cstdio>
#include <fstream>
#include <set>

#include "anvil/support/error.h"
#include "anvil/tune/tune.h"

namespace anvil::tune {

TuningRunResult run_tuning(const std::function<TuningModel()>& load,
                           const TuningRunOptions& options) {
  std::vector<driver::TuningRecord> prior;
  if (!options.prior_records_path.empty()) {
    driver::TuningRecords records = driver::read_tuning_records(options.prior_records_path);
    for (const std::string& problem : records.problems) {
      if (options.warning)
        options.warning(problem);
      else
        std::fprintf(stderr, "warning: %s\n", problem.c_str());
    }
    prior = std::move(records.records);
  }

  TuningModel model = load();
  driver::BuildOptions build_options;
  build_options.target = options.target;
  build_options.pass_context.opt_level = options.opt_level;
  if (!options.desired_layout.empty())
    build_options.pass_context.config["relay.desired_layout"] = options.desired_layout;
  TuningRunResult result;
  result.tasks = extract_tasks(model.mod, model.params, build_options);
  if (options.list_tasks) return result;

  // A records file other than the prior one starts with the prior records of this model's
  // tasks, so that it holds everything compile needs.
  const bool append = options.records_path == options.prior_records_path;
  std::ofstream out(options.records_path, append ? std::ios::app : std::ios::trunc);
  if (!out) throw Error("cannot write tuning records to '" + options.records_path + "'");
  if (!append) {
    std::set<std::string> keys;
    for (const TuneTask& task : result.tasks) keys.insert(task.key);
    for (const driver::TuningRecord& record : prior)
      if (keys.count(record.task)) out << driver::format_tuning_record(record) << "\n";
    out.flush();
  }

  TuneOptions tune_options = options.tune;
  tune_options.prior = std::move(prior);
  tune_options.measure.target = options.target;
  if (options.tasks_ready) options.tasks_ready(result.tasks);

  TuneCallbacks callbacks;
  callbacks.record = [&](const driver::TuningRecord& record) {
    out << driver::format_tuning_record(record) << "\n";
    out.flush();
  };
  callbacks.progress = options.progress;
  const auto start = std::chrono::steady_clock::now();
  result.outcomes = tune_tasks(result.tasks, tune_options, callbacks);
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!out) throw Error("cannot write tuning records to '" + options.records_path + "'");
  for (const TaskOutcome& outcome : result.outcomes) result.trials += outcome.trials;
  return result;
}

}  // namespace anvil::tune
