// Well-formedness checks of tensor IR; a violation is an InternalError naming
// the node (the IR came from a buggy pass), except in parsed text where the
// parser reports it as a user error first.
#pragma once

#include <string>

#include "anvil/tir/tir.h"

namespace anvil::tir {

enum class IrForm : uint8_t { Scheduled, Lowered };

// Checks: every Var is defined before use (params, loop vars, lets, block
// iter vars, buffer shape vars from buffer_map); each block name is unique;
// BlockRealize values match iter vars; buffers used are params, allocated or
// block-allocated; index counts match buffer ranks. With IrForm::Lowered also:
// no Block/BlockRealize/Reduce and every buffer access is one-dimensional.
// A buffer that shares the data variable of a defined buffer (a flattened
// view) counts as defined.
void verify(const PrimFunc& func, IrForm form = IrForm::Scheduled);

// The first violation verify() would report (one line naming the node), or "" when func is
// well formed.
std::string find_ir_violation(const PrimFunc& func, IrForm form = IrForm::Scheduled);

}  // namespace anvil::tir
