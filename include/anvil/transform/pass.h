// The graph-pass infrastructure: a pass is a named function from a typed module to a typed
// module, run under a PassContext that says which passes are on and what to report.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "anvil/ir/ir.h"

namespace anvil::transform {

// The settings every pass of one build runs under (TVM's PassContext).
struct PassContext {
  // 0..3; each pass has the lowest level at which it runs. 3, as build() uses without a
  // context, so a context made without arguments loses no pass.
  int opt_level = 3;
  // Passes (by name, e.g. "FoldConstant") that never run, whatever the level.
  std::vector<std::string> disabled_passes;
  // Free-form settings read by individual passes ("relay.FuseOps.max_depth" = "256").
  std::map<std::string, std::string> config;
  // Print one line per pass with its wall time to stderr after the pipeline.
  bool print_pass_times = false;
  // Called with (pass name, module) after each pass whose name is in dump_after
  // (or after every pass when dump_after holds "all").
  std::vector<std::string> dump_after;
  std::function<void(const std::string& pass, const ir::IRModule& mod)> dump;
  // Called with what a pass has to say about a decision it made (a strategy that declined an
  // op, and why). run_passes also prints the remarks with the pass times.
  std::function<void(const std::string& pass, const std::string& remark)> on_remark;

  // True when the pass is not disabled and opt_level >= min_level.
  bool enabled(const std::string& pass, int min_level) const;
  // The config value under key, or fallback.
  std::string get_config(const std::string& key, const std::string& fallback = "") const;
  // Passes a remark of `pass` to on_remark, when set.
  void remark(const std::string& pass, const std::string& text) const;
};

// One pass: its name (as TVM names it), the lowest opt level it runs at, and the function.
struct Pass {
  std::string name;
  int min_opt_level = 0;
  std::function<ir::IRModule(const ir::IRModule&, const PassContext&)> run;
};

// Runs the passes in order under ctx: skips the disabled ones, times each, calls the dump
// hook, and prints the times (and the passes' remarks) when asked. Returns the final module.
ir::IRModule run_passes(const ir::IRModule& mod, const std::vector<Pass>& passes,
                        const PassContext& ctx);

}  // namespace anvil::transform
