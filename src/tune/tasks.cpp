// Task extraction: the fused groups of @main, merged where structurally equal, each with the
// knob space of its anchor's strategy.
#include <unordered_map>

#include "anvil/analysis/cost.h"
#include "anvil/driver/build.h"
#include "anvil/driver/tuning_records.h"
#include "anvil/ir/functor.h"
#include "anvil/ir/structural_equal.h"
#include "anvil/lower/lower.h"
#include "anvil/tune/tune.h"

namespace anvil::tune {

int64_t TuneTask::space_size() const {
  int64_t size = 1;
  for (const topi::KnobSpace& knob : space.knobs) size *= int64_t(knob.values.size());
  return size;
}

std::vector<TuneTask> extract_tasks(const ir::IRModule& mod,
                                    const std::vector<std::pair<std::string, Tensor>>& params,
                                    const driver::BuildOptions& options) {
  driver::FusedGraph graph = driver::fuse_graph(mod, params, options);
  std::vector<TuneTask> tasks;
  std::unordered_map<size_t, std::vector<size_t>> by_hash;
  ir::post_order_visit(graph.fused.get_function("main")->body, [&](const ir::Expr& e) {
    const auto* call = ir::as<ir::CallNode>(e);
    const auto* fn = call ? ir::as<ir::FunctionNode>(call->callee) : nullptr;
    if (!fn || !fn->is_primitive()) return;
    ir::Function group = ir::downcast<ir::FunctionNode>(call->callee);
    const size_t hash = ir::structural_hash(group);
    for (size_t index : by_hash[hash])
      if (ir::structural_equal(tasks[index].group, group, true)) {
        ++tasks[index].calls;
        return;
      }
    TuneTask task;
    task.key = driver::workload_key(group);
    task.name = lower::kernel_name_hint(group);
    task.fused_ops = driver::fused_op_names(*group);
    task.flops = analysis::function_flops(*group);
    task.calls = 1;
    task.space = lower::group_knob_space(group, graph.lower_options);
    task.group = group;
    task.lower_options = graph.lower_options;
    task.lower_options.config_for = nullptr;
    by_hash[hash].push_back(tasks.size());
    tasks.push_back(std::move(task));
  });
  return tasks;
}

}  // namespace anvil::tune
