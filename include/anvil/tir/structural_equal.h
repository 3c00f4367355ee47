// Structural equality of tensor IR: same shape of tree, with variables and
// buffers matched by position of definition (alpha-equivalence), not by name.
#pragma once

#include <cstddef>

#include "anvil/tir/tir.h"

namespace anvil::tir {

bool structural_equal(const PrimFunc& a, const PrimFunc& b);
bool structural_equal(const Stmt& a, const Stmt& b);
// Free variables of the two expressions must be the very same Vars.
bool structural_equal(const PrimExpr& a, const PrimExpr& b);

// A hash consistent with structural_equal (names of variables do not matter).
size_t structural_hash(const PrimFunc& func);

}  // namespace anvil::tir
