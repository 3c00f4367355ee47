// The graph-pass pipeline of build(): the one place that says which passes run at which
// opt level, in which order.
#pragma once

#include "anvil/ir/ir.h"
#include "anvil/transform/pass.h"

namespace anvil::driver {

// The passes for ctx.opt_level, with params already bound; vector_lanes is the target's
// float32 SIMD width (AlterOpLayout's block size). Returns @main made of fused groups.
ir::IRModule optimize(const ir::IRModule& mod, const transform::PassContext& ctx, int vector_lanes);

}  // namespace anvil::driver
