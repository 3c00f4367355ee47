// Scheduling of one fused group: injective producers inlined, then the anchor op's
// strategy records for the target (topi::find_strategies) or the generic default (parallel outer
// loops, vectorized innermost spatial loop).
#pragma once

#include "anvil/ir/ir.h"
#include "anvil/lower/lower.h"
#include "anvil/tir/tir.h"

namespace anvil::lower {

// func is create_prim_func's output for the group fn.
tir::PrimFunc schedule_group(const tir::PrimFunc& func, const ir::Function& fn,
                             const LowerGroupOptions& options);

}  // namespace anvil::lower
