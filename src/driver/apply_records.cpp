// The best tuning record per task, applied to the groups of a build.
#include "anvil/driver/apply_records.h"

#include "anvil/support/error.h"
#include "anvil/topi/knobs.h"

namespace anvil::driver {

TuningRecordsApplier::TuningRecordsApplier(const std::string& path, const std::string& target,
                                           bool strict)
    : strict_(strict), enabled_(!path.empty()) {
  if (!enabled_) return;
  TuningRecords records = read_tuning_records(path, strict);
  problems_ = records.problems;
  read_ = records.records.size();
  for (auto& [task, record] : best_records(records, target, problems_))
    best_.emplace(task, std::move(record));
  check();
}

const lower::KnobConfig* TuningRecordsApplier::config_for(const ir::Function& group,
                                                          const lower::LowerGroupOptions& options) {
  auto it = best_.find(workload_key(group));
  if (it == best_.end()) return nullptr;
  const TuningRecord& record = it->second;
  used_.insert(it->first);
  lower::GroupKnobSpace space = lower::group_knob_space(group, options);
  std::string why = space.strategy != record.strategy
                        ? "its strategy '" + record.strategy + "' is not the task's ('" +
                              (space.strategy.empty() ? std::string("generic") : space.strategy) +
                              "')"
                        : topi::config_mismatch(space.knobs, record.knobs, space.strategy);
  if (!why.empty()) {
    problems_.push_back("tuning records line " + std::to_string(record.line) + ": " + why +
                        "; the default schedule is kept");
    check();
    return nullptr;
  }
  if (record.knobs.empty()) {  // the heuristic's own schedule measured fastest
    ++kept_default_;
    return nullptr;
  }
  ++applied_;
  return &record.knobs;
}

void TuningRecordsApplier::install(BuildOptions& options) {
  if (!enabled_) return;
  options.config_for = [this](const ir::Function& group,
                              const lower::LowerGroupOptions& lower_options) {
    return config_for(group, lower_options);
  };
}

void TuningRecordsApplier::finish() {
  for (const auto& [task, record] : best_)
    if (!used_.count(task))
      problems_.push_back("tuning records line " + std::to_string(record.line) + ": task " + task +
                          " is not a task of this model");
  check();
}

void TuningRecordsApplier::check() const {
  if (strict_ && !problems_.empty()) throw Error(problems_.front());
}

}  // namespace anvil::driver
