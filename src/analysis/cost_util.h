// Shared by the per-op and per-model halves of the cost analysis: sizes read from types, and the
// work of a function body.
#pragma once

#include <cstdint>
#include <vector>

#include "anvil/analysis/cost.h"
#include "anvil/ir/ir.h"

namespace anvil::analysis::detail {

// The dims of a tensor type (symbolic ones as -1); empty for a scalar, a tuple or unknown rank.
std::vector<int64_t> tensor_dims(const ir::Type& type, bool symbolic_as_minus_one = false);

// Elements of a tensor type, or of every field of a tuple type (symbolic dims count as 1).
int64_t elements(const ir::Type& type);

// Bytes of a tensor type, or of every field of a tuple type.
int64_t bytes(const ir::Type& type);

// MACs and FLOPs of one op call (none for calls of functions).
OpCost op_call_work(const ir::CallNode& call);

// MACs and FLOPs of every op call in a function's body, nested functions included.
OpCost body_work(const ir::FunctionNode& fn);

}  // namespace anvil::analysis::detail
