// Tuning records applied to a build (anvil compile --tuning-records, anvil.build(...,
// tuning_records=...)): the best record of each task hands its knobs to the schedule through
// BuildOptions::config_for.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "anvil/driver/build.h"
#include "anvil/driver/tuning_records.h"
#include "anvil/lower/lower.h"

namespace anvil::driver {

// What cannot be applied (a bad line, another target, a task the model does not have, knobs
// outside the task's space) is a problem: kept for a warning, or with `strict` the Error.
class TuningRecordsApplier {
 public:
  // No records at all when path is empty.
  TuningRecordsApplier(const std::string& path, const std::string& target, bool strict);

  // The config of group's task, when a record has one that fits the group's knobs; null keeps
  // the heuristic's schedule.
  const lower::KnobConfig* config_for(const ir::Function& group,
                                      const lower::LowerGroupOptions& options);
  // Installs config_for into options (a no-op without records); this object must outlive the
  // build.
  void install(BuildOptions& options);
  // Reports the records whose task the model does not have (after the build).
  void finish();

  size_t read() const { return read_; }
  int applied() const { return applied_; }
  int kept_default() const { return kept_default_; }
  const std::vector<std::string>& problems() const { return problems_; }

 private:
  void check() const;

  bool strict_ = false;
  bool enabled_ = false;
  size_t read_ = 0;
  int applied_ = 0;
  int kept_default_ = 0;
  std::map<std::string, TuningRecord> best_;
  std::set<std::string> used_;
  std::vector<std::string> problems_;
};

}  // namespace anvil::driver
