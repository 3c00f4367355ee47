// The symbolic half of DynamicToStatic: static forms of dyn.* calls (and range) whose shape
// operands are computed from symbolic dims, so that the result's type carries those dims.
#pragma once

#include "anvil/ir/ir.h"
#include "transform/symbolic_shape_values.h"

namespace anvil::transform::detail {

// The static form of a call of dyn.reshape, dyn.full, dyn.broadcast_to, dyn.strided_slice or
// range whose shape operands evaluate (through `values`) to dims that are certain, typed, or
// null when there is none whose type is certain to match the call's values.
ir::Expr symbolic_static_form(const ir::CallNode& call, SymbolicShapeEvaluator& values);

}  // namespace anvil::transform::detail
