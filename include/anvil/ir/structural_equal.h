// Structural equality and hashing: same shape of IR, with bound variables
// matched by position of definition rather than by identity.
#pragma once

#include <optional>
#include <string>

#include "anvil/ir/ir.h"

namespace anvil::ir {

// Equal modules: the same function names, each pair structurally equal.
bool structural_equal(const IRModule& a, const IRModule& b);

// Equal expressions. Free variables must be the same nodes unless map_free_vars.
bool structural_equal(const Expr& a, const Expr& b, bool map_free_vars = false);

// A description of the first difference ("@main: body: call 3: attr strides: [1, 1] vs [2, 2]"), or
// nullopt.
std::optional<std::string> structural_mismatch(const IRModule& a, const IRModule& b);

// A hash consistent with structural_equal (map_free_vars = true).
size_t structural_hash(const Expr& e);

}  // namespace anvil::ir
