// The search inside one task: the state the tuner keeps per task (what was measured, the best
// so far) and the proposers (--tuner grid / random / ga / xgb) that pick the next batch of
// configs from the task's knob space. A config is a point of the space, numbered in mixed
// radix over the knobs' value lists, so that "measured" is a set of integers.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <unordered_set>
#include <vector>

#include "anvil/tune/tune.h"

namespace anvil::tune {

struct TaskState {
  size_t index = 0;  // into the tasks
  const TuneTask* task = nullptr;
  lower::LowerGroupOptions lower_options;  // for features: the candidate's lowered loops
  int64_t size = 1;                        // configs in the space
  std::unordered_set<int64_t> tried;       // measured (or measured before, --prior-records)
  // Measured configs and their cost in ms (infinity after an error), for the cost model.
  std::vector<std::pair<int64_t, double>> samples;
  std::map<int64_t, std::vector<float>> features;  // cache
  bool default_measured = false;
  double default_ms = 0;
  double best_ms = std::numeric_limits<double>::infinity();
  int64_t best = -1;  // the best config; -1: the default schedule
  int trials = 0, errors = 0, since_best = 0, batches = 0;
  double gain_last = 1.0;  // relative improvement of the best by the last batch
  bool done = false;

  topi::ScheduleConfig config(int64_t point) const;
  // The point of `knobs`, or -1 when it is not in the space.
  int64_t point(const topi::ScheduleConfig& knobs) const;
  // The point's cost-model features (loop features of its lowered kernel, then its knob
  // values); empty when the strategy declines it.
  const std::vector<float>& features_of(int64_t point);
};

class Proposer {
 public:
  virtual ~Proposer() = default;
  // Up to n untried points of the task's space, not in `tried`.
  virtual std::vector<int64_t> propose(TaskState& state, int n, std::mt19937_64& rng) = 0;
};

// "grid", "random", "ga" or "xgb"; throws Error for another name.
std::unique_ptr<Proposer> make_proposer(const std::string& tuner);

}  // namespace anvil::tune
