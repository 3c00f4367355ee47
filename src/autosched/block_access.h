// What the rules read from a block: for every buffer access of its body and every iter var,
// how far the access's row-major offset moves when the var moves by one (0: invariant, 1:
// contiguous, anything else or unknown: a gather).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "anvil/tir/tir.h"

namespace anvil::autosched {

struct Access {
  const tir::BufferNode* buffer = nullptr;
  bool is_write = false;
  // True when every dim after the first is a constant (the row-major strides are known).
  bool static_rows = true;
  // Per iter var of the block (in its order): the step of the offset, nullopt when it is not
  // a constant (a division by the var, a symbolic row length).
  std::vector<std::optional<int64_t>> steps;
};

// The store of the block's body and every load of its value, the store first. Empty when the
// body is not a single store; with through_guards, a store under ifs without else (a reduction
// over a symbolic extent guards its update) counts as one.
std::vector<Access> block_accesses(const tir::BlockNode& block, bool through_guards = false);

// True when the block's value reads a guarded element (if_then_else or select): a padding or
// a spread input, cheaper to materialize once than to test on every multiply-add.
bool has_guarded_value(const tir::BlockNode& block);

}  // namespace anvil::autosched
