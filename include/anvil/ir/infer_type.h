// InferType: fills checked_type of every expression by running each op's type
// relation; symbolic dims flow through.
#pragma once

#include "anvil/ir/ir.h"

namespace anvil::ir {

// Returns the module with every graph function typed (ret_type filled in,
// checked_type set on every node). Throws Error on a type error, naming the
// call (op and bound variable), the argument or attribute, and the shapes.
IRModule infer_type(const IRModule& mod);

// Types a standalone expression whose free variables carry annotations;
// returns its type. Calls to GlobalVars need infer_type on a module instead.
// With reuse_cached_types, subexpressions that already carry checked_type are
// not typed again (builders that type as they go stay linear).
Type infer_expr_type(const Expr& expr, bool reuse_cached_types = false);

}  // namespace anvil::ir
