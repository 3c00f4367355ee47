// The graph-pass pipeline of build(): the one place that says which passes run at which
// opt level, in which order.
#pragma once

#include <string>
#include <vector>

#include "anvil/ir/ir.h"
#include "anvil/transform/pass.h"

namespace anvil::driver {

// The passes for ctx.opt_level, with params already bound; vector_lanes is the target's
// float32 SIMD width (AlterOpLayout's block size), strategy_keys the target keys whose strategy
// records AlterOpLayout asks (empty: the CPU's). Returns @main made of fused groups.
ir::IRModule optimize(const ir::IRModule& mod, const transform::PassContext& ctx, int vector_lanes,
                      const std::vector<std::string>& strategy_keys = {});

// optimize() without its last pass, FuseOps: the virtual machine fuses each control-flow region
// of the result itself.
ir::IRModule optimize_before_fusion(const ir::IRModule& mod, const transform::PassContext& ctx,
                                    int vector_lanes,
                                    const std::vector<std::string>& strategy_keys = {});

// FuseOps at the fusion level and max depth that ctx selects (the last pass of optimize()).
ir::IRModule fuse_groups(const ir::IRModule& mod, const transform::PassContext& ctx);

}  // namespace anvil::driver
