// The graph-pass pipeline of build(): the one place that says which passes run at which
// opt level, in which order.
#pragma once

#include <string>
#include <vector>

#include "anvil/ir/ir.h"
#include "anvil/transform/pass.h"

namespace anvil::driver {

// What the graph passes need to know of the target: its float32 SIMD width (AlterOpLayout's
// block size), the keys whose strategy records AlterOpLayout asks (empty: the CPU's), and
// whether it has a bfloat16 dot-product unit (what --precision auto asks).
struct PipelineTarget {
  int vector_lanes = 16;
  std::vector<std::string> strategy_keys;
  bool bf16_dot_product = false;
  // AMX tiles with tdpbf16ps: the bf16 layout strategies block channels for the tiles.
  bool amx_bf16 = false;
};

// The passes for ctx.opt_level, with params already bound. Returns @main made of fused groups.
ir::IRModule optimize(const ir::IRModule& mod, const transform::PassContext& ctx,
                      const PipelineTarget& target);

// optimize() without its last pass, FuseOps: the virtual machine fuses each control-flow region
// of the result itself.
ir::IRModule optimize_before_fusion(const ir::IRModule& mod, const transform::PassContext& ctx,
                                    const PipelineTarget& target);

// The precision the build runs its products in, from the pass config "anvil.precision" (fp32,
// bf16 or auto; fp32 when unset) and the target: auto is bf16 where the target has a bf16
// dot-product unit; bf16 on a target without one falls back to fp32 and says so on stderr,
// unless "anvil.bf16_emulate" is 1 (the bf16 kernels then widen their operands and compute the
// same sums with FMAs). Throws Error for any other value of either.
std::string resolve_precision(const transform::PassContext& ctx, const PipelineTarget& target);

// FuseOps at the fusion level and max depth that ctx selects (the last pass of optimize()).
ir::IRModule fuse_groups(const ir::IRModule& mod, const transform::PassContext& ctx);

}  // namespace anvil::driver
