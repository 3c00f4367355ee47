// The per-op half of DynamicToStatic: which operands of each dyn.* op decide its output's
// shape, and the static op (with equivalent attrs) that a call becomes once they are constants.
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

#include "anvil/ir/ir.h"

namespace anvil::transform::detail {

// The positions of the operands of a dyn.* op that must be constants for its static form (the
// shape, axes, pads, sizes...), or empty for an op this pass does not convert.
std::vector<size_t> dyn_shape_operands(std::string_view op_name);

// The static form of a call of a dyn.* op whose shape operands are all constants, or null when
// these values have no static equivalent (the call then stays dynamic). The result is untyped.
ir::Expr static_form(const ir::CallNode& call);

}  // namespace anvil::transform::detail
