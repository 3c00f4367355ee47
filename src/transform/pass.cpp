// Running a list of passes under a PassContext: enablement, timing and dumps in one place.
#include "anvil/transform/pass.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

namespace anvil::transform {

bool PassContext::enabled(const std::string& pass, int min_level) const {
  if (opt_level < min_level) return false;
  return std::find(disabled_passes.begin(), disabled_passes.end(), pass) == disabled_passes.end();
}

std::string PassContext::get_config(const std::string& key, const std::string& fallback) const {
  auto it = config.find(key);
  return it == config.end() ? fallback : it->second;
}

void PassContext::remark(const std::string& pass, const std::string& text) const {
  if (on_remark) on_remark(pass, text);
}

ir::IRModule run_passes(const ir::IRModule& mod, const std::vector<Pass>& passes,
                        const PassContext& ctx) {
  ir::IRModule current = mod;
  std::vector<std::pair<std::string, double>> times;
  // The passes run under a context that also keeps their remarks for the report.
  std::vector<std::string> remarks;
  PassContext local = ctx;
  local.on_remark = [&](const std::string& pass, const std::string& text) {
    remarks.push_back(pass + ": " + text);
    ctx.remark(pass, text);
  };
  bool dump_all =
      std::find(ctx.dump_after.begin(), ctx.dump_after.end(), "all") != ctx.dump_after.end();
  for (const Pass& pass : passes) {
    if (!ctx.enabled(pass.name, pass.min_opt_level)) continue;
    auto start = std::chrono::steady_clock::now();
    current = pass.run(current, local);
    double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    times.emplace_back(pass.name, ms);
    bool dump = dump_all || std::find(ctx.dump_after.begin(), ctx.dump_after.end(), pass.name) !=
                                ctx.dump_after.end();
    if (dump && ctx.dump) ctx.dump(pass.name, current);
  }
  if (ctx.print_pass_times) {
    double total = 0;
    for (const auto& [name, ms] : times) total += ms;
    std::fprintf(stderr, "pass times (total %.2f ms):\n", total);
    for (const auto& [name, ms] : times)
      std::fprintf(stderr, "  %-28s %10.2f ms\n", name.c_str(), ms);
    if (!remarks.empty()) std::fprintf(stderr, "pass remarks:\n");
    for (const std::string& remark : remarks) std::fprintf(stderr, "  %s\n", remark.c_str());
  }
  return current;
}

}  // namespace anvil::transform
