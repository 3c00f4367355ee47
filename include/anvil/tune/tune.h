// Auto-tuning (tvmc tune): the tasks of a model and the knobs a tuner may turn for each. A task
// is one distinct kernel of the model as build() would lower it (structurally equal fused
// groups are one task), with the work it does per call and how many times the model calls it.
// The tuner knows no op: what it may change comes from the anchor op's schedule strategy
// (lower::group_knob_space).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "anvil/driver/build.h"
#include "anvil/ir/ir.h"
#include "anvil/lower/lower.h"

namespace anvil::tune {

struct TuneTask {
  // The workload key (driver::workload_key): equal for the same ops, shapes, dtypes, layouts
  // and attrs in any model, so that a record helps every model with that workload.
  std::string key;
  std::string name;       // a readable kernel name ("fused_nn_contrib_conv2d_NCHWc_add")
  std::string fused_ops;  // "nn.contrib_conv2d_NCHWc, add, nn.relu"
  int64_t flops = 0;      // per call
  int calls = 0;          // how many times the model calls it (its weight)
  // The anchor's strategy and its knobs (lower::group_knob_space); an empty strategy: nothing
  // to tune (generic schedule).
  lower::GroupKnobSpace space;
  ir::Function group;  // the fused group

  // The number of configs of the knobs' space (1 without knobs).
  int64_t space_size() const;
};

// The tasks of a model, in the order the model first calls them.
std::vector<TuneTask> extract_tasks(const ir::IRModule& mod,
                                    const std::vector<std::pair<std::string, Tensor>>& params,
                                    const driver::BuildOptions& options = {});

}  // namespace anvil::tune
